#!/usr/bin/env python3
"""Fails when a file of the ModelStore library uses a type declared in a layer above its own.

The layers, lowest first, are the folders of Sources/ModelStore (see docs/ARCHITECTURE.md).
A file may use what its own folder and the folders below declare. The check reads the
sources as text: it collects the type names (struct, class, enum, protocol, actor, typealias)
and the function names of files that extend `Session`, then looks for those type names as
whole words, and for calls of those functions that no lower folder declares, in the code of every file of a lower
folder (comments and string literals removed). Known exceptions, each a debt with a
reason, are listed in ALLOWED; an exception that no longer occurs is an error too, so the list
only shrinks.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Sources", "ModelStore")
LAYERS = ["Support", "Database", "Coding", "Schema", "Migration", "Query", "Store", "Engine", "Relationships", "Operations", "API"]

# (file relative to Sources/ModelStore, type it uses from above): why it is still allowed.
ALLOWED: dict = {}

FUNCTION = re.compile(r"\bfunc\s+([a-z][A-Za-z0-9_]*)")

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
    # A DocC catalog (`*.docc`) holds documentation, not code.
    present = [
        layer for layer in os.listdir(ROOT)
        if os.path.isdir(os.path.join(ROOT, layer)) and not layer.endswith(".docc")
    ]
    unknown = sorted(set(present) - set(LAYERS))
    if unknown:
        print(f"check-layers: folders with no place in the layer order: {', '.join(unknown)}")
        return 1
    declared = {}
    functions = {}
    everywhere = {}
    code = {}
    for layer in LAYERS:
        for path in files(layer):
            with open(path, encoding="utf-8") as handle:
                text = strip(handle.read())
            code[path] = (layer, text)
            for name in DECLARATION.findall(text):
                declared.setdefault(name, layer)
            for name in FUNCTION.findall(text):
                everywhere.setdefault(name, set()).add(layer)
                if "extension Session" in text:
                    functions.setdefault(name, set()).add(layer)
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
        # Functions too: the Engine's and the graph path's operations are methods on
        # `Session`, so a call of a function that only files of layers above declare beside
        # an `extension Session` — bare, or on `self` or `session` — reaches up. A name some
        # layer at or below this one also declares is an overload, so it is left alone.
        for name, layers in functions.items():
            if min(LAYERS.index(owner) for owner in everywhere[name]) <= rank:
                continue
            if re.search(r"(?:(?<![A-Za-z0-9_.])|\b(?:self|session)\.)" + re.escape(name) + r"\s*\(", text):
                owner = LAYERS[min(LAYERS.index(owner) for owner in layers)]
                if (relative, name) in ALLOWED:
                    seen.add((relative, name))
                else:
                    problems.append(f"{relative} ({layer}) calls {name}(), declared only in {owner}/ and above")
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
