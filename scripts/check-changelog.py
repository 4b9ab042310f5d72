#!/usr/bin/env python3
"""Fails when CHANGELOG.md, the README's dependency line and the Upgrading article disagree.

- CHANGELOG.md opens with `## [Unreleased]`, then `## [X.Y.Z] - YYYY-MM-DD` headings,
  newest first: versions descending, dates never increasing;
- each version's subsections are Keep a Changelog's (Added, Changed, Deprecated, Removed,
  Fixed, Security), each at most once, none empty;
- every version has a link reference at the bottom;
- the README's `.package(url: …, from: "X.Y.Z")` (and Getting started's) names the newest
  released version;
- the *Upgrading* article exists and has a section for every released version whose Changed
  or Removed entries ask for an edit ("Edit:" other than "Edit: none"), and for Unreleased
  when it does.
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SECTIONS = ["Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"]
UPGRADING = os.path.join("Sources", "ModelStore", "ModelStore.docc", "Upgrading.md")
DEPENDENCY_LINES = ["README.md", os.path.join("Sources", "ModelStore", "ModelStore.docc", "GettingStarted.md")]


def read(path):
    full = os.path.join(ROOT, path)
    if not os.path.exists(full):
        sys.exit(f"{path} is missing")
    return open(full, encoding="utf-8").read()


def version_key(version):
    return tuple(int(part) for part in version.split("."))


def main():
    problems = []
    lines = read("CHANGELOG.md").split("\n")
    versions = []  # (name, date, line number, {section: [entries]})
    current = None
    section = None
    for number, line in enumerate(lines, start=1):
        heading = re.match(r"^## (.*)$", line)
        if heading:
            text = heading.group(1)
            released = re.fullmatch(r"\[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})", text)
            if text == "[Unreleased]":
                current = ("Unreleased", None, number, {})
            elif released:
                current = (released.group(1), released.group(2), number, {})
            else:
                problems.append(f"CHANGELOG.md:{number}: '## {text}' is neither '## [Unreleased]' nor '## [X.Y.Z] - YYYY-MM-DD'")
                current = None
            if current:
                versions.append(current)
            section = None
            continue
        subsection = re.match(r"^### (.*)$", line)
        if subsection and current:
            section = subsection.group(1)
            if section not in SECTIONS:
                problems.append(f"CHANGELOG.md:{number}: '### {section}' is not one of {', '.join(SECTIONS)}")
            elif section in current[3]:
                problems.append(f"CHANGELOG.md:{number}: a second '### {section}' in {current[0]}")
            current[3][section] = []
            continue
        if section and current and line.startswith("- "):
            current[3][section].append(line[2:])
        elif section and current and line.startswith("  ") and current[3][section]:
            current[3][section][-1] += " " + line.strip()

    if not versions or versions[0][0] != "Unreleased":
        problems.append("CHANGELOG.md: the first version heading must be '## [Unreleased]'")
    released = [version for version in versions if version[0] != "Unreleased"]
    for newer, older in zip(released, released[1:]):
        if version_key(newer[0]) <= version_key(older[0]):
            problems.append(f"CHANGELOG.md:{older[2]}: {older[0]} comes after {newer[0]}: newest first")
        if newer[1] < older[1]:
            problems.append(f"CHANGELOG.md:{older[2]}: {older[0]} is dated after {newer[0]}")
    for name, _, number, sections in versions:
        for title, entries in sections.items():
            if not entries:
                problems.append(f"CHANGELOG.md:{number}: {name}'s '### {title}' lists nothing")
        if not re.search(rf"^\[{re.escape(name)}\]: \S+", "\n".join(lines), re.M):
            problems.append(f"CHANGELOG.md: no link reference '[{name}]: …' at the bottom")

    newest = released[0][0] if released else None
    for path in DEPENDENCY_LINES:
        found = re.findall(r'\.package\(url: "[^"]*ModelStore[^"]*", from: "([^"]+)"\)', read(path))
        if not found:
            problems.append(f'{path}: no `.package(url: "…ModelStore…", from: "X.Y.Z")` line')
        for version in found:
            if version != newest:
                problems.append(f"{path}: the dependency line says {version}; the newest version in CHANGELOG.md is {newest}")

    upgrading = read(UPGRADING)
    headings = re.findall(r"^## (.*)$", upgrading, re.M)
    for name, _, number, sections in versions:
        asks = [
            entry
            for title in ("Changed", "Removed")
            for entry in sections.get(title, [])
            if "Edit:" in entry and not re.search(r"Edit: none\b", entry)
        ]
        if not asks:
            continue
        wanted = "unreleased" if name == "Unreleased" else name
        if not any(wanted in heading.lower() for heading in headings):
            problems.append(
                f"{UPGRADING}: no section for {name} ('## To {wanted}…'), whose changes ask for edits (CHANGELOG.md:{number})"
            )

    if problems:
        print("CHANGELOG.md, the dependency lines and the Upgrading article disagree:")
        for problem in problems:
            print("  " + problem)
        return 1
    print(f"Changelog: {len(released)} versions and Unreleased, the dependency lines name {newest}, Upgrading covers each edit.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
