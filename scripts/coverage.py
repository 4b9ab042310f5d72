#!/usr/bin/env python3
"""Prints the line coverage of the library and of the PostgreSQL driver from
`swift test --traits PostgreSQL --enable-code-coverage` and fails when either is below its
floor. Raise a floor as tests are added; never lower it.

Usage: python3 scripts/coverage.py "$(swift test --traits PostgreSQL --show-codecov-path)"
"""
import json
import sys

# Percent of the lines of each product's folder under Sources/.
FLOORS = {"ModelStore": 96.0, "ModelStorePostgres": 91.0}


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    with open(sys.argv[1], encoding="utf-8") as handle:
        report = json.load(handle)
    failed = 0
    for product, floor in FLOORS.items():
        failed |= check(report, product, floor)
    return failed


def check(report, product, floor):
    marker = f"/Sources/{product}/"
    covered = total = 0
    files = []
    for entry in report["data"][0]["files"]:
        name = entry["filename"]
        if marker not in name:
            continue
        lines = entry["summary"]["lines"]
        covered += lines["covered"]
        total += lines["count"]
        files.append((lines["percent"], name.split(marker, 1)[1]))
    if total == 0:
        print(f"coverage: no {product} files in the report (was the PostgreSQL trait on?)")
        return 1
    percent = 100 * covered / total
    print(f"coverage: {product} {percent:.1f}% of {total} lines (floor {floor}%); least covered:")
    for file_percent, name in sorted(files)[:8]:
        print(f"  {file_percent:5.1f}%  {name}")
    if percent < floor:
        print(f"coverage: {product} {percent:.1f}% is below the floor of {floor}%")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
