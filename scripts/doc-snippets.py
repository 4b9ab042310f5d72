#!/usr/bin/env python3
"""Compiles every Swift block of README.md, CHANGELOG.md and the DocC catalog, and runs the
README's tour as a program.

    scripts/doc-snippets.py              # compile every block, run the tour, check the mistakes
    scripts/doc-snippets.py --postgres   # also the blocks that import ModelStorePostgres
    scripts/doc-snippets.py --list       # how each block is handled, without building

Set SWIFT to the driver to run (default `swift`; on a shared machine `/work/bin/swift-locked`).

A reader copies a block into a program of their own; so does this script. It writes a scratch
package in .build-docs/ (git-ignored) that depends on this package by path, with one module
per document: a module is one reader's program, so blocks of one document see each other's
declarations, as a reader of the page would, and documents never clash. Within a block:

- `import` lines go to the top of the module's file;
- declarations at the block's top level (struct, enum, class, actor, protocol, extension,
  func, typealias) stay at file scope;
- the statements are the body of a function of their own, `async` when the block awaits,
  the way a reader pastes a fragment into a function. So a block that needs `await` says so,
  and one that redeclares a name fails, as it would for the reader.

What a page assumes without showing it (a `store`, the `Snack` model of the README) is
declared in scripts/doc-snippets/Context.swift, and per page in
scripts/doc-snippets/<Page>.swift; a page's own declaration of a name replaces the context's.
Errors point at the Markdown file and line (#sourceLocation). A warning fails the run, except
unused values (fragments often show a result without using it).

A block the script must not compile says so, and why, in an HTML comment on the line before
the fence:

    <!-- no-compile: a fragment of a Package.swift manifest -->

A block that is a whole program (top-level code, run as it is) is marked

    <!-- program: readme-tour -->

and is built as an executable of that name and run in a temporary folder: it must exit 0.

Manifest fragments (blocks that begin with `dependencies:`, `.package(`, `.target(` …) are
wrapped in a `Package(...)` as a reader's Package.swift would hold them, and evaluated with
`swift package dump-package`.

Blocks that `import ModelStorePostgres` need the PostgreSQL product, whose dependencies take
minutes to build: they are compiled with --postgres (or MODELSTORE_DOCS_POSTGRES=1), and
listed as not compiled otherwise.

The files in scripts/doc-snippets/mistakes/ are mistakes a newcomer makes that must not
compile, each with the message the compiler must give: a line ending in
`// expected-error: TEXT` must have an error containing TEXT, and no other line may have one.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CATALOG = os.path.join("Sources", "ModelStore", "ModelStore.docc")
CONTEXT_DIR = os.path.join(ROOT, "scripts", "doc-snippets")
SCRATCH = os.path.join(ROOT, ".build-docs")
SWIFT = os.environ.get("SWIFT", "swift").split()

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)")
MARKER = re.compile(r"^\s*<!--\s*(no-compile|program)\s*:\s*(.*?)\s*-->\s*$")
DECLARATION = re.compile(
    r"^(?:(?:@\w+(?:\([^)]*\))?\s+)*)(?:(?:public|internal|fileprivate|private|final|indirect|nonisolated)\s+)*"
    r"(struct|enum|class|actor|protocol|extension|func|typealias|import)\b\s*([A-Za-z_][\w.]*)?"
)
MANIFEST_START = re.compile(r"^(dependencies:|targets:|products:|\.package\(|\.target\(|\.executableTarget\(|\.product\(|let package = Package\()")
UNUSED = re.compile(r"never used|never mutated|is unused|\[#no-usage\]")
DIAGNOSTIC = re.compile(r"^(.*?):(\d+):(\d+): (error|warning): (.*)$")


class Block:
    def __init__(self, document, line, language, text, marker):
        self.document = document  # path relative to ROOT
        self.line = line  # line of the first line of code (1-based)
        self.language = language
        self.text = text
        self.marker = marker  # (kind, argument) or None

    @property
    def where(self):
        return f"{self.document}:{self.line}"

    @property
    def kind(self):
        if self.marker and self.marker[0] == "no-compile":
            return "no-compile"
        first = next((line.strip() for line in self.text.splitlines() if line.strip() and not line.strip().startswith("//")), "")
        if MANIFEST_START.match(first):
            return "manifest"
        if re.search(r"^\s*import\s+ModelStorePostgres\b", self.text, re.M):
            return "postgres"
        if self.marker and self.marker[0] == "program":
            return "program"
        return "library"


def documents():
    names = ["README.md", "CHANGELOG.md"]
    names += sorted(os.path.join(CATALOG, name) for name in os.listdir(os.path.join(ROOT, CATALOG)) if name.endswith(".md"))
    return [name for name in names if os.path.exists(os.path.join(ROOT, name))]


def blocks_of(document):
    """The fenced blocks of a Markdown file, with the marker comment before each."""
    lines = open(os.path.join(ROOT, document), encoding="utf-8").read().split("\n")
    found, index = [], 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        indent, fence, language = match.group(1), match.group(2), match.group(3).lower()
        start, body = index + 1, []
        index += 1
        while index < len(lines):
            stripped = lines[index].strip()
            if stripped.startswith(fence[0] * len(fence)) and stripped.strip(fence[0]) == "":
                break
            body.append(lines[index][len(indent) :] if lines[index].startswith(indent) else lines[index].lstrip())
            index += 1
        index += 1
        previous = start - 2
        while previous >= 0 and not lines[previous].strip():
            previous -= 1
        marker = None
        if previous >= 0:
            found_marker = MARKER.match(lines[previous])
            if found_marker:
                marker = (found_marker.group(1), found_marker.group(2))
                if not marker[1]:
                    sys.exit(f"{document}:{previous + 1}: a <!-- {marker[0]}: … --> marker must say why (or the program's name)")
        found.append(Block(document, start + 1, language, "\n".join(body), marker))
    return found


def depths(text):
    """The bracket depth at the start of each line, skipping strings, interpolations and comments."""
    result, depth, modes, i = [0], 0, ["code"], 0
    interpolation = []  # parenthesis depth inside each open interpolation
    while i < len(text):
        c, mode = text[i], modes[-1]
        two, three = text[i : i + 2], text[i : i + 3]
        if c == "\n":
            if mode == "line-comment":
                modes.pop()
            result.append(depth)
            i += 1
            continue
        if mode in ("code", "interpolation"):
            if two == "//":
                modes.append("line-comment")
                i += 2
                continue
            if two == "/*":
                modes.append("block-comment")
                i += 2
                continue
            if three == '"""':
                modes.append("multiline-string")
                i += 3
                continue
            if c == '"':
                modes.append("string")
                i += 1
                continue
            if mode == "interpolation":
                if c == "(":
                    interpolation[-1] += 1
                elif c == ")":
                    if interpolation[-1] == 0:
                        interpolation.pop()
                        modes.pop()
                    else:
                        interpolation[-1] -= 1
            elif c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            i += 1
            continue
        if mode == "block-comment":
            if two == "*/":
                modes.pop()
                i += 2
                continue
            i += 1
            continue
        if mode in ("string", "multiline-string"):
            if two == "\\(":
                modes.append("interpolation")
                interpolation.append(0)
                i += 2
                continue
            if c == "\\":
                i += 2
                continue
            if mode == "string" and c == '"':
                modes.pop()
            elif mode == "multiline-string" and three == '"""':
                modes.pop()
                i += 3
                continue
            i += 1
            continue
        i += 1  # line comment
    return result


def split(text):
    """(imports, declarations, statements): each a list of (line offset, [lines]) runs."""
    lines = text.split("\n")
    at = depths(text)
    imports, declarations, statements = [], [], []
    index = 0
    pending_attributes = []
    while index < len(lines):
        stripped = lines[index].strip()
        if at[index] != 0 or not stripped:
            statements.append((index, [lines[index]]))
            index += 1
            continue
        if re.fullmatch(r"(@\w+(\([^)]*\))?\s*)+", stripped):
            pending_attributes.append(index)
            index += 1
            continue
        match = DECLARATION.match(stripped)
        if not match:
            statements += [(attribute, [lines[attribute]]) for attribute in pending_attributes]
            pending_attributes = []
            statements.append((index, [lines[index]]))
            index += 1
            continue
        end = index
        while end + 1 < len(lines) and at[end + 1] != 0:
            end += 1
        start = pending_attributes[0] if pending_attributes else index
        pending_attributes = []
        chunk = lines[start : end + 1]
        if match.group(1) == "import":
            imports.append((start, chunk))
        else:
            declarations.append((start, chunk))
        index = end + 1
    return imports, declarations, statements


def declared_names(declarations):
    names = set()
    for _, chunk in declarations:
        match = DECLARATION.match(chunk[0].strip()) or DECLARATION.match(" ".join(line.strip() for line in chunk))
        if match and match.group(1) in ("struct", "enum", "class", "actor", "protocol", "typealias", "func") and match.group(2):
            names.add(match.group(2))
    return names


def swift_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def located(path, offset, chunk):
    return [f"#sourceLocation(file: {swift_string(path)}, line: {offset})", *chunk, "#sourceLocation()"]


def context_for(page, own_names):
    """The common context and the page's own, leaving out what the page declares itself."""
    out, imports = [], []
    page_context = os.path.join(CONTEXT_DIR, page + ".swift")
    if os.path.exists(page_context):
        # The page's context replaces the common one's declarations of the same names.
        own_names = own_names | declared_names(split(open(page_context, encoding="utf-8").read())[1])
    for name in ("Context.swift", page + ".swift"):
        path = os.path.join(CONTEXT_DIR, name)
        if not os.path.exists(path):
            continue
        relative = os.path.relpath(path, ROOT)
        text = open(path, encoding="utf-8").read()
        found_imports, declarations, statements = split(text)
        imports += [line for _, chunk in found_imports for line in chunk]
        for offset, chunk in declarations + statements:
            if not "".join(chunk).strip():
                continue
            if name == "Context.swift" and declared_names([(offset, chunk)]) & own_names:
                continue
            out += located(relative, offset + 1, chunk)
    return imports, out


def module_source(page, blocks):
    """One document's blocks as one Swift file, and the imports it needs."""
    imports, body, own = ["import Foundation", "import ModelStore"], [], set()
    parts = []
    for block in blocks:
        found_imports, declarations, statements = split(block.text)
        own |= declared_names(declarations)
        parts.append((block, found_imports, declarations, statements))
    context_imports, context = context_for(page, own)
    for block, found_imports, declarations, statements in parts:
        imports += [line.strip() for _, chunk in found_imports for line in chunk]
        body.append(f"// {block.where}")
        for offset, chunk in declarations:
            body += located(block.document, block.line + offset, chunk)
        code = [(offset, chunk) for offset, chunk in statements if "".join(chunk).strip()]
        if code:
            awaits = re.search(r"\bawait\b", "\n".join(line for _, chunk in code for line in chunk))
            body.append(f"func block_{block.line}() {'async ' if awaits else ''}throws {{")
            following = None  # the offset that continues the run of lines just written
            for offset, chunk in statements:
                if offset != following:
                    body.append(f"#sourceLocation(file: {swift_string(block.document)}, line: {block.line + offset})")
                body += chunk
                following = offset + len(chunk)
            body += ["#sourceLocation()", "}"]
    unique = []
    for line in imports + context_imports:
        if line not in unique:
            unique.append(line)
    header = [f"// Generated by scripts/doc-snippets.py from {blocks[0].document}: do not edit.", *unique, ""]
    return "\n".join(header + context + [""] + body) + "\n"


def module_name(document):
    stem = os.path.splitext(os.path.basename(document))[0]
    return "Doc" + re.sub(r"\W", "", stem[:1].upper() + stem[1:])


def page_name(document):
    return os.path.splitext(os.path.basename(document))[0]


def run(command, cwd=ROOT, env=None, capture=True):
    result = subprocess.run(command, cwd=cwd, env=env, text=True, stdout=subprocess.PIPE if capture else None, stderr=subprocess.STDOUT if capture else None)
    return result.returncode, result.stdout or ""


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.exists(path) and open(path, encoding="utf-8").read() == text:
        return  # unchanged files keep their dates, so the next build compiles only what changed
    with open(path, "w", encoding="utf-8") as file:
        file.write(text)


def package_manifest(library_modules, postgres_modules, programs, identity):
    product = lambda name: f'.product(name: "{name}", package: "{identity}")'
    targets = []
    for name in library_modules:
        targets.append(f'        .target(name: "{name}", dependencies: [{product("ModelStore")}], path: "Sources/{name}"),')
    for name in postgres_modules:
        targets.append(
            f'        .target(name: "{name}", dependencies: [{product("ModelStore")}, {product("ModelStorePostgres")}], path: "Sources/{name}"),'
        )
    everything = ", ".join(f'"{name}"' for name in library_modules + postgres_modules)
    targets.append(f'        .executableTarget(name: "EveryPage", dependencies: [{everything}], path: "Sources/EveryPage"),')
    for name in programs:
        targets.append(f'        .executableTarget(name: "{name}", dependencies: [{product("ModelStore")}], path: "Sources/{name}"),')
    targets.append(f'        .target(name: "DocMistakes", dependencies: [{product("ModelStore")}], path: "Sources/DocMistakes"),')
    return "\n".join(
        [
            "// swift-tools-version:6.1",
            "// Generated by scripts/doc-snippets.py: every Swift block of the documentation, as a reader would compile it.",
            "import PackageDescription",
            "",
            "let package = Package(",
            '    name: "DocSnippets",',
            "    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],",
            f'    products: [{", ".join(f".executable(name: {chr(34)}{name}{chr(34)}, targets: [{chr(34)}{name}{chr(34)}])" for name in ["EveryPage", *programs])}],',
            # The PostgreSQL blocks need the package's PostgreSQL trait, as a reader's manifest would.
            f'    dependencies: [.package(path: "{ROOT}"{", traits: [" + chr(34) + "PostgreSQL" + chr(34) + "]" if postgres_modules else ""})],',
            "    targets: [",
            *targets,
            "    ],",
            "    swiftLanguageModes: [.v6]",
            ")",
            "",
        ]
    )


def report(output, label):
    """The diagnostics that fail the run (errors, and warnings other than unused values)."""
    failures, seen = [], set()
    for line in output.splitlines():
        match = DIAGNOSTIC.match(line.strip())
        if not match:
            continue
        path, row, column, level, message = match.groups()
        if level == "warning" and UNUSED.search(message):
            continue
        if "/.build/checkouts/" in path or (path.startswith(ROOT) and "/.build-docs/" not in path and not path.endswith(".md")):
            continue  # the library's own diagnostics are its build's business
        key = (os.path.relpath(path, ROOT) if path.startswith("/") else path, row, level, message)
        if key not in seen:
            seen.add(key)
            failures.append(f"{key[0]}:{row}:{column}: {level}: {message}")
    if failures:
        print(f"\n{label}:")
        for failure in failures:
            print("  " + failure)
    return failures


def check_manifests(blocks):
    failures = []
    for number, block in enumerate(blocks):
        folder = os.path.join(SCRATCH, "manifests", f"m{number}")
        # Comment lines ("// swift-tools-version:6.1", "// …") are the reader's context.
        lines = [line for line in block.text.strip().splitlines() if not line.strip().startswith("//")]
        text = "\n".join(lines).strip()
        packages = [line for line in lines if line.strip().startswith(".package(")]
        targets = [line for line in lines if line.strip().startswith((".target(", ".executableTarget("))]
        if packages and targets and len(packages) + len(targets) == len([line for line in lines if line.strip()]):
            # A dependency line and a target line, as a reader adds them to their manifest.
            body = (
                'let package = Package(\n    name: "Reader",\n    dependencies: [\n' + "\n".join(packages)
                + "\n    ],\n    targets: [\n" + "\n".join(targets) + "\n    ]\n)"
            )
        elif text.startswith("let package = Package("):
            body = text
        elif text.startswith((".target(", ".executableTarget(")):
            # The reader's manifest also depends on this package, as the README's line says.
            body = (
                'let package = Package(\n    name: "Reader",\n'
                '    dependencies: [.package(url: "https://github.com/OWNER/ModelStore.git", from: "0.1.0")],\n'
                "    targets: [\n" + text + "\n    ]\n)"
            )
        elif text.startswith(".package("):
            body = 'let package = Package(\n    name: "Reader",\n    dependencies: [\n' + text + "\n    ]\n)"
        else:
            body = 'let package = Package(\n    name: "Reader",\n' + text.rstrip(",") + "\n)"
        # 6.1: package traits (`traits: ["PostgreSQL"]`) need it.
        manifest = "// swift-tools-version:6.1\nimport PackageDescription\n\n" + body + "\n"
        write(os.path.join(folder, "Package.swift"), manifest)
        status, output = run(SWIFT + ["package", "--package-path", folder, "dump-package"])
        if status != 0:
            failures.append(f"{block.where}: this Package.swift fragment does not evaluate:\n{output[-2000:]}")
    for failure in failures:
        print(failure)
    return failures


def check_mistakes(output):
    """Each expected error at its line, and no error elsewhere."""
    folder = os.path.join(CONTEXT_DIR, "mistakes")
    expected = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".swift"):
            for number, line in enumerate(open(os.path.join(folder, name), encoding="utf-8"), start=1):
                match = re.search(r"// expected-error: (.*)$", line)
                if match:
                    expected[(name, number)] = match.group(1).strip()
    found = {}
    for line in output.splitlines():
        match = DIAGNOSTIC.match(line.strip())
        if match and match.group(4) == "error" and "/DocMistakes/" in match.group(1):
            found.setdefault((os.path.basename(match.group(1)), int(match.group(2))), []).append(match.group(5))
    failures = []
    for key, text in expected.items():
        messages = found.get(key, [])
        if not any(text in message for message in messages):
            failures.append(f"scripts/doc-snippets/mistakes/{key[0]}:{key[1]}: expected an error containing '{text}', got {messages or 'none'}")
    for key, messages in found.items():
        if key not in expected:
            failures.append(f"scripts/doc-snippets/mistakes/{key[0]}:{key[1]}: unexpected error: {messages}")
    if failures:
        print("\nMistakes the compiler must name:")
        for failure in failures:
            print("  " + failure)
    return failures


def main():
    arguments = sys.argv[1:]
    postgres = "--postgres" in arguments or os.environ.get("MODELSTORE_DOCS_POSTGRES") == "1"
    listing = "--list" in arguments
    by_document = {document: [block for block in blocks_of(document) if block.language == "swift"] for document in documents()}
    every = [block for blocks in by_document.values() for block in blocks]

    kinds = {}
    for block in every:
        kinds.setdefault(block.kind, []).append(block)
    if listing:
        for block in every:
            note = f" ({block.marker[1]})" if block.marker else ""
            print(f"{block.where}: {block.kind}{note}")
        return 0

    library_modules, postgres_modules, programs = [], [], []
    sources = {}
    for document, blocks in by_document.items():
        ordinary = [block for block in blocks if block.kind == "library"]
        server = [block for block in blocks if block.kind == "postgres"]
        if ordinary:
            name = module_name(document)
            library_modules.append(name)
            sources[os.path.join("Sources", name, "Blocks.swift")] = module_source(page_name(document), ordinary)
        if server and postgres:
            name = module_name(document) + "Postgres"
            postgres_modules.append(name)
            sources[os.path.join("Sources", name, "Blocks.swift")] = module_source(page_name(document), server)
        for block in blocks:
            if block.kind == "program":
                name = block.marker[1]
                programs.append(name)
                sources[os.path.join("Sources", name, "main.swift")] = "\n".join(
                    [f"// Generated by scripts/doc-snippets.py from {block.where}: do not edit.", *located(block.document, block.line, block.text.split("\n"))]
                ) + "\n"
    if not programs:
        sys.exit("no block is marked <!-- program: NAME -->: the README's tour must be")
    sources[os.path.join("Sources", "EveryPage", "main.swift")] = (
        "// Generated by scripts/doc-snippets.py: depends on every page's module, so one build compiles them all.\n"
    )
    mistakes = os.path.join(CONTEXT_DIR, "mistakes")
    for name in sorted(os.listdir(mistakes)):
        if name.endswith(".swift"):
            sources[os.path.join("Sources", "DocMistakes", name)] = open(os.path.join(mistakes, name), encoding="utf-8").read()

    # Start from a clean Sources/, keeping .build/ (the library's compiled modules).
    shutil.rmtree(os.path.join(SCRATCH, "Sources"), ignore_errors=True)
    identity = os.path.basename(ROOT).lower()
    write(os.path.join(SCRATCH, "Package.swift"), package_manifest(library_modules, postgres_modules, programs, identity))
    for path, text in sources.items():
        write(os.path.join(SCRATCH, path), text)

    compiled = len(kinds.get("library", [])) + len(kinds.get("program", [])) + (len(kinds.get("postgres", [])) if postgres else 0)
    print(
        f"Documentation: {len(every)} Swift blocks in {len(by_document)} files — {compiled} compiled, "
        f"{len(kinds.get('manifest', []))} manifest fragments evaluated, {len(kinds.get('no-compile', []))} marked no-compile, "
        f"{0 if postgres else len(kinds.get('postgres', []))} PostgreSQL blocks left out (--postgres compiles them)"
    )
    for block in kinds.get("no-compile", []):
        print(f"  not compiled: {block.where} ({block.marker[1]})")
    if not postgres:
        for block in kinds.get("postgres", []):
            print(f"  not compiled without --postgres: {block.where}")

    failures = check_manifests(kinds.get("manifest", []))

    # One build of every page (EveryPage depends on each page's module), then the programs.
    status, output = run(SWIFT + ["build", "--package-path", SCRATCH, "--product", "EveryPage"])
    for name in programs:
        program_status, program_output = run(SWIFT + ["build", "--package-path", SCRATCH, "--product", name])
        status, output = max(status, program_status), output + "\n" + program_output
    if status != 0:
        # SwiftPM stops at the first module that fails: build each alone to list every failure.
        for name in library_modules + postgres_modules:
            output += "\n" + run(SWIFT + ["build", "--package-path", SCRATCH, "--target", name])[1]
    failures += report(output, "Blocks that do not compile as a reader would")
    if status != 0 and not failures:
        print(output[-4000:])
        failures.append("the snippets' build failed")

    status, output = run(SWIFT + ["build", "--package-path", SCRATCH, "--target", "DocMistakes"])
    failures += check_mistakes(output)
    if status == 0:
        failures.append("scripts/doc-snippets/mistakes/ compiled: every file there must fail as it says")

    if not failures and "--no-run" not in arguments:
        status, output = run(SWIFT + ["build", "--package-path", SCRATCH, "--show-bin-path"])
        bin_path = output.strip().splitlines()[-1]
        for name in programs:
            with tempfile.TemporaryDirectory(prefix=f"{name}-") as folder:
                env = dict(os.environ, XDG_DATA_HOME=os.path.join(folder, "data"), HOME=folder)
                status, output = run([os.path.join(bin_path, name)], cwd=folder, env=env)
                print(f"\n$ {name}  (in a new folder)\n" + output.rstrip())
                if status != 0:
                    failures.append(f"the program {name} exited with status {status}")

    if failures:
        print(f"\n{len(failures)} documentation check(s) failed:")
        for failure in failures:
            print("  " + failure.splitlines()[0])
        return 1
    print("\nEvery compiled block compiles, every manifest fragment evaluates and the mistakes are named" + ("." if "--no-run" in arguments else "; the programs ran."))
    return 0


if __name__ == "__main__":
    sys.exit(main())
