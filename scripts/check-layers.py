#!/usr/bin/env python3
"""Fails when a file of the ModelStore library uses a type declared in a layer above its own.

The layers, lowest first, are the folders of Sources/ModelStore (see docs/ARCHITECTURE.md).
A file may use what its own folder and the folders below declare. The check reads the
sources as text: it collects the type names (struct, class, enum, protocol, actor, typealias)
each folder declares, then looks for those names as whole words in the code of every file of
a lower folder (comments and string literals removed). Known exceptions, each a debt with a
reason, are listed in ALLOWED; an exception that no longer occurs is an error too, so the list
only shrinks.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Sources", "ModelStore")
LAYERS = ["Support", "SQLite", "Coding", "Schema", "Query", "Store", "Engine", "Relationships", "API"]

# (file relative to Sources/ModelStore, type it uses from above): why it is still allowed.
ALLOWED = {
    ("Engine/Session+Save.swift", "GraphSaver"):
        "a save of a model with relationships turns to the graph saver; issue 10 item 1 moves that decision above both",
    ("Engine/Session+Batch.swift", "GraphSaver"):
        "the same decision for batch saves",
}

DECLARATION = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|internal|private|fileprivate|final|indirect|nonisolated)\s+)*"
                         r"(?:struct|class|enum|protocol|actor|typealias)\s+([A-Z][A-Za-z0-9_]*)", re.M)


def strip(source):
    """The code without comments and string literals."""
    source = re.sub(r'"""[\s\S]*?"""', '""', source)
    source = re.sub(r"/\*[\s\S]*?\*/", "", source)
    source = re.sub(r"//[^\n]*", "", source)
    source = re.sub(r'#?"(?:\\.|[^"\\\n])*"#?', '""', source)
    return source


def files(layer):
    folder = os.path.join(ROOT, layer)
    for directory, _, names in os.walk(folder):
        for name in sorted(names):
            if name.endswith(".swift"):
                yield os.path.join(directory, name)


def main():
    present = [layer for layer in os.listdir(ROOT) if os.path.isdir(os.path.join(ROOT, layer))]
    unknown = sorted(set(present) - set(LAYERS))
    if unknown:
        print(f"check-layers: folders with no place in the layer order: {', '.join(unknown)}")
        return 1
    declared = {}
    code = {}
    for layer in LAYERS:
        for path in files(layer):
            with open(path, encoding="utf-8") as handle:
                text = strip(handle.read())
            code[path] = (layer, text)
            for name in DECLARATION.findall(text):
                declared.setdefault(name, layer)
    problems = []
    seen = set()
    for path, (layer, text) in code.items():
        relative = os.path.relpath(path, ROOT)
        rank = LAYERS.index(layer)
        for name, owner in declared.items():
            if LAYERS.index(owner) <= rank:
                continue
            if re.search(r"(?<![A-Za-z0-9_.])" + re.escape(name) + r"(?![A-Za-z0-9_])", text):
                if (relative, name) in ALLOWED:
                    seen.add((relative, name))
                else:
                    problems.append(f"{relative} ({layer}) uses {name}, declared in {owner}/, a layer above")
    for stale in sorted(set(ALLOWED) - seen):
        problems.append(f"ALLOWED lists {stale[0]} using {stale[1]}, which no longer happens: remove it")
    for problem in sorted(problems):
        print("check-layers:", problem)
    if problems:
        print(f"check-layers: {len(problems)} problem(s); layers, lowest first: {' < '.join(LAYERS)}")
        return 1
    print(f"check-layers: ok ({len(code)} files; {' < '.join(LAYERS)}; {len(ALLOWED)} known exceptions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
