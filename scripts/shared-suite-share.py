#!/usr/bin/env python3
"""How much of the test suite runs one body on both backends.

A test runs on both when its arguments are the backends (`Backend.available` or
`StoreKind.everywhere`). The share that counts is over the behaviour
suites: every suite but those whose promise cannot be the same on a server today. Each such
suite is listed below with the reason; nothing else is left out, and a behaviour test that runs
on SQLite alone counts against the share (its source says why it does).

    python3 scripts/shared-suite-share.py            # the share, by suite
    python3 scripts/shared-suite-share.py --min 0.8  # fails below 80% (CI)
"""
import glob
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

# Suites left out of the behaviour share, by file (a prefix of the path under Tests/ModelStoreTests/).
REFUSED = "a feature a PostgreSQL store refuses with .unsupported today (issue 28)"
FILE = "a promise about SQLite's file, its locks or the C layer"
SERVER = "the PostgreSQL driver's own behaviour, server-only by nature"
INTERNAL = "a unit test of one internal type, no store behind it"
FTS5 = "SQLite's FTS5 index: its triggers and tables, dropped behind a store's back (a server's index is part of its table)"
# Migrations run on a server since round 3; these suites were written on SQLite files (backups,
# process kills, older files, raw checks through SQLite's catalog). What they promise for a
# server runs in Migration/MigrationsOnBothBackendsTests.
MIGRATION_FILES = "migrations written on SQLite files (backups, SQLite's catalog); their server half is MigrationsOnBothBackendsTests"
LEFT_OUT = {
    "Migration/HistoryTests": MIGRATION_FILES,
    "Migration/MigrationAttackTests": MIGRATION_FILES,
    "Migration/MigrationProcessTests": MIGRATION_FILES,
    "Migration/MigrationStepTests": MIGRATION_FILES,
    "Migration/OlderProgramTests": MIGRATION_FILES,
    "Migration/RenameAndStepTests": MIGRATION_FILES,
    "Migration/RenameTests": MIGRATION_FILES,
    "Reliability/SearchIndexBehindTheBackTests": FTS5,
    "BackupTests": REFUSED,
    "Reliability/MaintenanceTests": REFUSED,
    "SQLiteLayerTests": FILE,
    "Reliability/BadFileTests": FILE,
    "Reliability/IOErrorTests": FILE,
    "Reliability/CrashTests": FILE,
    "Reliability/DiskFullTests": FILE,
    "Reliability/CompanionFileTests": FILE,
    "Reliability/DescriptorExhaustionTests": FILE,
    "Reliability/LockTests": FILE,
    "Reliability/SharedFileTests": FILE,
    "Backends/PostgresReliabilityTests": SERVER,
    "Backends/PostgresTLSTests": SERVER,
    "Backends/PostgresServiceTests": SERVER,
    "Backends/PostgresObservationTests": SERVER,
    "Backends/DialectTests": SERVER,
    "Backends/ServerSearchTests": SERVER,
    "StoreQueueTests": INTERNAL,
    "Coverage/ColumnMaskTests": INTERNAL,
    "KeyIndexTests": INTERNAL,
}
# `Backend.available.filter { … }` picks one backend: not shared.
BOTH = re.compile(r"Backend\.available(?!\.filter)|StoreKind\.everywhere")


def count(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    tests = both = 0
    for index, line in enumerate(lines):
        if "@Test" in line:
            tests += 1
            if BOTH.search(" ".join(lines[index:index + 3])):
                both += 1
    return tests, both


def main():
    minimum = None
    if "--min" in sys.argv:
        minimum = float(sys.argv[sys.argv.index("--min") + 1])
    base = os.path.join(ROOT, "Tests", "ModelStoreTests")
    totals = {"behaviour": [0, 0], "left out": [0, 0]}
    unused = set(LEFT_OUT)
    rows = []
    for path in sorted(glob.glob(os.path.join(base, "**", "*.swift"), recursive=True)):
        name = os.path.relpath(path, base)
        tests, both = count(path)
        if tests == 0:
            continue
        reason = next((LEFT_OUT[p] for p in LEFT_OUT if name.startswith(p)), None)
        for prefix in LEFT_OUT:
            if name.startswith(prefix):
                unused.discard(prefix)
        kind = "left out" if reason else "behaviour"
        totals[kind][0] += tests
        totals[kind][1] += both
        rows.append((name, tests, both, reason))
    if unused:
        print("shared-suite-share: listed suites that no longer exist: " + ", ".join(sorted(unused)))
        return 1
    for name, tests, both, reason in rows:
        if reason is None and both < tests:
            print(f"  {tests - both:3d} of {tests:3d} on SQLite only  {name}")
    (tests, both), (out_tests, out_both) = totals["behaviour"], totals["left out"]
    share = both / tests if tests else 1.0
    everything = (both + out_both) / (tests + out_tests)
    print(f"Behaviour suites: {both} of {tests} tests run on both backends ({share:.1%}).")
    print(f"All tests: {both + out_both} of {tests + out_tests} ({everything:.1%}); "
          f"{out_tests} tests in suites left out, by reason (each moves into the share when a server store has its feature):")
    for reason in (REFUSED, MIGRATION_FILES, FILE, SERVER, INTERNAL):
        n = sum(t for _, t, _, r in rows if r == reason)
        print(f"  {n:4d}  {reason}")
    if minimum is not None and share < minimum:
        print(f"shared-suite-share: {share:.1%} of the behaviour tests run on both backends, below {minimum:.0%}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
