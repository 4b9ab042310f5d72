#!/usr/bin/env python3
"""Fails when a file of the ModelStore library uses what a layer above its own declares.

The layers, lowest first, are the folders of Sources/ModelStore (see docs/ARCHITECTURE.md).
A file may use what its own folder and the folders below declare. Only `Database/`, the
layer that wraps SQLite's C API, may import `ModelStoreCSQLite` or name its symbols
(`sqlite3_*`, `SQLITE_*`, the shims' `csqlite_*`), and no file imports `ModelStorePostgres`.

The check reads the sources as tokens, without comments and string literals (it keeps the
code of a string's interpolations). It collects, each with the layer of the file that
declares it:

- types (struct, class, enum, protocol, actor, typealias, associatedtype);
- the members of each type: functions (with their argument labels and result types),
  initializers, properties (stored, computed, static, with their types), enum cases and
  nested types, declared in the type's body or in an `extension` of it, in whatever layer the
  extension sits, and the labels of tuples;
- top-level functions, variables and constants.

A `private` or `fileprivate` declaration (or one in a `private extension`) is seen only by
its own file. Then it looks at every use:

- a type name, bare, qualified, as a constraint or conformance, extended, or `@Wrapper`;
- an initializer, `Type(...)` or `Type.init(...)`, or a subscript, `value[...]` (on a
  value whose type the check can tell), that an extension declares;
- a member, `receiver.member`, called or not: receivers `s.`, `$0.`, `self.`, `x?.`,
  `Type.`, chains of calls and properties, key paths (`\\Type.member`, `\\.member`), and the
  implicit `.member`;
- a bare name inside a type or an extension of it (an implicit `self.member`), and a
  top-level name.

The check tells the receiver's type where simple reading does: `Type.member`; `self.member`
and bare members inside the body or an extension of a type; parameters, locals and closure
parameters declared `x: Type`; locals bound to `Type(...)` or to a chain of properties and
calls whose types it knows (`let t = session.table(for: M.self)`); `for` elements, `$0` and
the closure parameters of `map`/`filter`/`forEach`... of an array whose element type it
knows; subscripts of such arrays. It then looks the member up on that type (its extensions,
protocols and superclasses); otherwise, by name among the members of every type. Overloads
that the call's argument labels cannot reach are left out. A use whose every remaining
declaration lies in a layer above the file's is a violation, so a lower overload cannot
mask an upper one. A use that may reach a declaration at or below the file's layer and one
above it (an untyped receiver, or a name Swift, Foundation or Dispatch also declare:
PLATFORM_NAMES) is ambiguous: nothing is reported for it, but their number is printed, so
the blind spot stays visible (`--ambiguous` lists each). Unseen: operators declared above,
and subscripts declared above on receivers whose type the check cannot tell.

Known exceptions, each a debt with a reason, are listed in ALLOWED; an exception that no
longer occurs is an error too, so the list only shrinks.

`--self-test` plants one violation of each kind, each alone and all at once, in copies of a
small clean tree in a temporary directory, and fails unless each is caught (and nothing
else), the clean tree passes, ALLOWED excuses, and a stale ALLOWED entry fails.
"""
import os
import re
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Sources", "ModelStore")
LAYERS = ["Support", "Database", "Coding", "Schema", "Migration", "Query", "Store", "Engine", "Relationships", "Operations", "API"]
# The one layer that may import the C module and name its symbols.
C_LAYER = "Database"
C_MODULE = "ModelStoreCSQLite"
C_SYMBOL = re.compile(r"^(?:sqlite3\w*|SQLITE_\w+|csqlite_\w+)$")
# Modules the library must never import, wherever the file sits.
FORBIDDEN_IMPORTS = {"ModelStorePostgres"}

# (file relative to Sources/ModelStore, name it uses from above): why it is still allowed.
# The name is a type, a member or function name, `import ModelStoreCSQLite`, or a C API
# symbol.
def debt(path, reason, *names):
    """ALLOWED entries for the names one file uses from above, for one reason."""
    return {(path, name): reason for name in names}


ALLOWED: dict = {}

# Member and function names that Swift, Foundation or Dispatch also declare (only those that
# some ModelStore declaration shares). A use of one whose receiver the check cannot type may
# be the platform's, so it is counted as ambiguous rather than reported. The first part is
# what `--platform-names` prints for the toolchain's Swift, _Concurrency, _StringProcessing,
# Synchronization and Glibc interfaces; the second is chosen by hand, as Linux toolchains
# ship Foundation and Dispatch without an interface (and tuple labels are no declarations).
# When a new declaration shares a platform name and the check reports a use of the
# platform's, regenerate or add the name here.
PLATFORM_NAMES = set("""
    Context Iterator Kind Storage add all allKeys any append appendInterpolation appendLiteral applying
    arguments assign base bool cancel cancelled capacity clear codingPath components container contains
    context copy count current currentIndex decode decodeIfPresent decodeNil delete description double
    drop eager element empty encode encodeNil end equal error exactly failure filter find finish
    finished first flags float forEach format grow handle hasPrefix hasSuffix hash high id identity
    index insert int inverse isASCII isAtEnd isCancelled isEmpty isSubset isValid join key keys kind
    last less load low make makeAsyncIterator matches max maximum measure min name nestedContainer
    nestedUnkeyedContainer next none null numeric offset open optional owner predicate prefix previous
    properties range rawValue release remove removeAll reset resume run seconds set shared
    singleValueContainer split start starts storage store suffix sum superDecoder superEncoder text
    transform tuple type unkeyedContainer update userInfo value valueType values withLock words
    wrappedValue write
""".split()) | set("""
    Code ascending caseInsensitive close code compare data date errorDescription failureReason iso8601
    localizedDescription lock order path plain read recoverySuggestion schedule signal timedOut unlock uuid wait
    inserted memberAfterInsert element offset
""".split())

KEYWORDS = set("""
associatedtype class deinit enum extension fileprivate func import init inout internal let open
operator private precedencegroup protocol public rethrows static struct subscript typealias var
break case catch continue default defer do else fallthrough for guard if in repeat return throw
switch where while as await false is nil self Self super throws true try async some any
convenience dynamic final indirect lazy mutating nonmutating optional override required unowned
weak nonisolated isolated package consuming borrowing sending macro _ Type Protocol
""".split())
MODIFIERS = set("""
public internal private fileprivate open package static class final override mutating nonmutating
lazy weak unowned convenience required dynamic indirect nonisolated optional isolated distributed
""".split())
TYPE_KEYWORDS = {"struct", "class", "enum", "protocol", "actor", "extension"}
ACCESSORS = {"get", "set", "willSet", "didSet", "_modify", "_read", "unsafeAddress", "unsafeMutableAddress"}
PLATFORM = "<platform>"  # a receiver's type that ModelStore does not declare


# ---------------------------------------------------------------------------------------------
# Reading: comments and string literals out, tokens in.

def strip(source):
    """The code with comments and the text of string literals blanked (newlines kept), and the
    code of interpolations kept."""
    out = list(source)
    n = len(source)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    def code(i, closing):
        """Scans code from i; returns the index after the `)` that closes an interpolation
        (closing) or the end."""
        depth = 0
        while i < n:
            c = source[i]
            if c == "/" and source.startswith("//", i):
                j = source.find("\n", i)
                j = n if j < 0 else j
                blank(i, j)
                i = j
            elif c == "/" and source.startswith("/*", i):
                j, level = i + 2, 1
                while j < n and level:
                    if source.startswith("/*", j):
                        level, j = level + 1, j + 2
                    elif source.startswith("*/", j):
                        level, j = level - 1, j + 2
                    else:
                        j += 1
                blank(i, j)
                i = j
            elif c == '"' or (c == "#" and re.match(r'#+"', source[i:i + 8])):
                i = string(i)
            elif closing and c == "(":
                depth += 1
                i += 1
            elif closing and c == ")":
                if depth == 0:
                    return i + 1
                depth -= 1
                i += 1
            else:
                i += 1
        return i

    def string(i):
        hashes = 0
        while source[i] == "#":
            hashes += 1
            i += 1
        multi = source.startswith('"""', i)
        opener = 3 if multi else 1
        end = ('"""' if multi else '"') + "#" * hashes
        escape = "\\" + "#" * hashes
        start = i + opener
        j = start
        while j < n:
            if source.startswith(escape, j):
                k = j + len(escape)
                if k < n and source[k] == "(":
                    blank(start, j)
                    j = code(k + 1, True)
                    start = j
                    continue
                j = k + 1
                continue
            if source.startswith(end, j):
                blank(start, j)
                return j + len(end)
            if source[j] == "\n" and not multi:
                blank(start, j)
                return j
            j += 1
        blank(start, n)
        return n

    code(0, False)
    return "".join(out)


TOKEN = re.compile(r"""
    (?P<id>`[A-Za-z_][A-Za-z0-9_]*`|[A-Za-z_][A-Za-z0-9_]*)
  | (?P<dollar>\$[A-Za-z0-9_]+)
  | (?P<num>\d[0-9A-Za-z_]*(?:\.\d[0-9A-Za-z_]*)?)
  | (?P<nl>\n)
  | (?P<punct>->|\.\.\.|\.\.<|[.,:;(){}\[\]?!@#\\<>=&|+\-*/%^~"'])
""", re.X)


def tokenize(code):
    tokens, lines = [], []
    line = 1
    for m in TOKEN.finditer(code):
        if m.lastgroup == "nl":
            line += 1
            continue
        text = m.group()
        if text[0] == "`":
            text = text[1:-1]
        tokens.append(text)
        lines.append(line)
    return tokens, lines


def is_id(t):
    return t[:1].isalpha() or t[:1] == "_"


# ---------------------------------------------------------------------------------------------
# Declarations.

class Scope:
    __slots__ = ("kind", "key", "parent", "locals", "returns")

    def __init__(self, kind, key, parent):
        self.kind = kind        # "file", "type" or "code"
        self.key = key          # the type's key ("Outer.Inner") for "type"
        self.parent = parent
        self.locals = {}        # name -> type text, ("=", start, end), ("in", start, end), ("closure", brace) or None
        self.returns = None     # for a function's or computed property's body: the type it returns


class Decl:
    __slots__ = ("layer", "rank", "file", "private", "kind", "type", "params", "owner", "generics")

    def __init__(self, layer, rank, file, private, kind, type_):
        self.layer, self.rank, self.file, self.private, self.kind, self.type = layer, rank, file, private, kind, type_
        self.params = None   # a function's or enum case's parameters: [(label, defaulted, variadic)]
        self.owner = None    # the key of the type a member belongs to
        self.generics = ()   # the generic parameters its type may name


def parts(tokens, j):
    """The comma-separated parts of the bracketed list at j, as (start, end) index pairs, and
    the index of its closing bracket."""
    result = []
    depth = 0
    start = j + 1
    k = j
    while k < len(tokens):
        t = tokens[k]
        if t in ("(", "[", "{"):
            depth += 1
        elif t in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                if k > start:
                    result.append((start, k))
                return result, k
        elif t == "," and depth == 1:
            result.append((start, k))
            start = k + 1
        k += 1
    return result, len(tokens) - 1


def signature(tokens, j):
    """The parameters of the declaration whose list opens at j: (label or None, defaulted,
    variadic) each."""
    if j >= len(tokens) or tokens[j] != "(":
        return []
    params = []
    for a, b in parts(tokens, j)[0]:
        colon = next((k for k in range(a, b) if tokens[k] == ":"), None)
        names = [t for t in tokens[a:colon] if is_id(t)] if colon is not None else []
        label = names[0] if names else None
        if label == "_":
            label = None
        params.append((label, "=" in tokens[a:b], "..." in tokens[a:b]))
    return params


def arguments(tokens, i):
    """The labels of the call whose name is at i (None for each unlabeled argument), and how
    many trailing closures follow it; None when it is no call."""
    n = len(tokens)
    labels = []
    k = i + 1
    if k < n and tokens[k] == "(":
        found, k = parts(tokens, k)
        for a, b in found:
            labels.append(tokens[a] if b - a >= 2 and tokens[a + 1] == ":" and is_id(tokens[a]) else None)
        k += 1
    elif not (k < n and tokens[k] == "{"):
        return None
    trailing = 0
    while k < n and tokens[k] == "{":
        trailing += 1
        k = match(tokens, k, "{", "}") + 1
        if k + 2 < n and is_id(tokens[k]) and tokens[k + 1] == ":" and tokens[k + 2] == "{":
            k += 2
    return labels, trailing


def accepts(params, call):
    """Whether a call with these labels and trailing closures can reach a declaration with
    these parameters."""
    if params is None or call is None:
        return True
    labels, trailing = call
    p = 0
    for label in labels:
        while p < len(params) and params[p][0] != label:
            if params[p][1] or params[p][2]:
                p += 1
            else:
                return False
        if p == len(params):
            return False
        if not params[p][2]:
            p += 1
    # A `{` after the call may be a trailing closure or the body of an `if`: it may fill
    # the parameters left, never refuse the declaration.
    return sum(1 for param in params[p:] if not param[1] and not param[2]) <= trailing


# Members of an array that give one of its elements, or an array of them, and the methods
# whose closure takes its elements.
ELEMENT_MEMBERS = {"first", "last", "randomElement", "min", "max", "popLast", "removeFirst", "removeLast", "remove"}
ARRAY_MEMBERS = {"filter", "sorted", "reversed", "shuffled", "prefix", "suffix", "dropFirst", "dropLast"}
ELEMENT_CLOSURES = {"map", "compactMap", "flatMap", "filter", "forEach", "contains", "allSatisfy", "first", "firstIndex",
                    "last", "lastIndex", "sorted", "sort", "min", "max", "removeAll", "partition", "drop", "prefix"}


def element(typ):
    """The element type of an array type `[key]`, else None."""
    return typ[1:-1] if typ and typ.startswith("[") else None


def match_back(tokens, i):
    """The index of the token that opens the bracket that closes at i."""
    closer = tokens[i]
    opener = {")": "(", "]": "[", "}": "{", ">": "<"}[closer]
    depth = 0
    for j in range(i, -1, -1):
        if tokens[j] == closer:
            depth += 1
        elif tokens[j] == opener:
            depth -= 1
            if depth == 0:
                return j
    return 0


def match(tokens, i, opener, closer):
    """The index of the token that closes the bracket at i."""
    depth = 0
    for j in range(i, len(tokens)):
        if tokens[j] == opener:
            depth += 1
        elif tokens[j] == closer:
            depth -= 1
            if depth == 0:
                return j
    return len(tokens) - 1


def type_text(tokens, i):
    """The type written at i (`Foo`, `Foo.Bar`, `Foo<T>?`): its dotted name, PLATFORM for
    arrays, dictionaries, tuples and functions, None when there is none."""
    while i < len(tokens) and tokens[i] in ("inout", "some", "any", "borrowing", "consuming", "sending", "@", "escaping", "Sendable", "autoclosure"):
        i += 1
    if i >= len(tokens):
        return None
    if tokens[i] == "[":
        inner = type_text(tokens, i + 1)
        e = match(tokens, i, "[", "]")
        if inner and inner != PLATFORM and not inner.startswith("[") and ":" not in tokens[i:e]:
            return "[" + inner + "]"
        return PLATFORM
    if tokens[i] == "(":
        return PLATFORM
    if not is_id(tokens[i]) or tokens[i] in KEYWORDS:
        return None
    name = tokens[i]
    while i + 2 < len(tokens) and tokens[i + 1] == "." and is_id(tokens[i + 2]) and tokens[i + 2] not in ("Type", "Protocol", "self"):
        name += "." + tokens[i + 2]
        i += 2
    return name


class SourceFile:
    def __init__(self, path, relative, layer, rank, text):
        self.path, self.relative, self.layer, self.rank = path, relative, layer, rank
        self.code = strip(text)
        self.tokens, self.lines = tokenize(self.code)
        self.scopes = [None] * len(self.tokens)   # the scope each token sits in
        self.skip = set()                          # indexes of names being declared
        self.imports = []                          # (module, line)


class Index:
    def __init__(self):
        self.types = {}      # key -> [Decl]
        self.members = {}    # type key -> name -> [Decl]
        self.by_name = {}    # member name -> [Decl]
        self.globals = {}    # name -> [Decl]
        self.inherits = {}   # type key -> set of type texts

    def add_member(self, key, name, decl):
        self.members.setdefault(key, {}).setdefault(name, []).append(decl)
        self.by_name.setdefault(name, []).append(decl)


def starts_declaration(tokens, lines, i):
    """Whether only attributes and modifiers stand before token i on its line."""
    k = i - 1
    while k >= 0 and lines[k] == lines[i]:
        if tokens[k] in MODIFIERS or tokens[k] == "@":
            k -= 1
        elif is_id(tokens[k]) and k > 0 and tokens[k - 1] == "@":
            k -= 2
        else:
            return False
    return True


def declarations(f, index):
    """Walks one file's tokens: records its declarations in index, and the scope of each token
    and the locals of each scope in f."""
    tokens = f.tokens
    n = len(tokens)
    scope = Scope("file", None, None)
    pending_type = None        # (key, private) of a type whose body the next `{` opens
    pending_locals = {}        # parameters for the next code scope
    pending_returns = [None]   # the type the next code scope returns (a function's body)
    private_scopes = set()     # scopes whose members are private (private extension/type)
    i = 0
    filled = 0

    def modifiers(j):
        """The modifiers before the declaration keyword at j: (private, static)."""
        private = static = False
        k = j - 1
        while k >= 0:
            t = tokens[k]
            if t == ")" and k >= 3 and tokens[k - 2] == "(" and tokens[k - 3] in MODIFIERS:
                k -= 3          # private(set): the getter is not private
                continue
            if t in MODIFIERS:
                if t in ("private", "fileprivate"):
                    private = True
                if t in ("static", "class"):
                    static = True
                k -= 1
                continue
            if is_id(t) and k >= 1 and tokens[k - 1] == "@":
                k -= 2
                continue
            if t == ")" and k >= 1:
                o = k
                depth = 0
                while o >= 0:
                    if tokens[o] == ")":
                        depth += 1
                    elif tokens[o] == "(":
                        depth -= 1
                        if depth == 0:
                            break
                    o -= 1
                if o >= 2 and is_id(tokens[o - 1]) and tokens[o - 2] == "@":
                    k = o - 3
                    continue
            break
        return private, static

    def in_private(s):
        while s is not None:
            if s in private_scopes:
                return True
            s = s.parent
        return False

    def declare(name, kind, private, type_, params=None):
        """A declaration of name in the current scope."""
        if scope.kind == "code":
            scope.locals[name] = type_
            return
        decl = Decl(f.layer, f.rank, f.relative, private or in_private(scope), kind, type_)
        decl.params = params
        decl.owner = scope.key
        generic = set(pending_locals)
        s = scope
        while s is not None:
            generic.update(name for name, value in s.locals.items() if value is None or name[:1].isupper())
            s = s.parent
        decl.generics = generic
        if scope.kind == "type":
            index.add_member(scope.key, name, decl)
        elif kind != "type":
            index.globals.setdefault(name, []).append(decl)

    def generics(j):
        """Generic parameters at j (`<`): bound as locals of the scope to come."""
        if j < n and tokens[j] == "<":
            e = match(tokens, j, "<", ">")
            for k in range(j + 1, e):
                if is_id(tokens[k]) and tokens[k - 1] in ("<", ",") and tokens[k + 1] in (":", ",", ">"):
                    pending_locals[tokens[k]] = type_text(tokens, k + 2) if tokens[k + 1] == ":" else None
                    f.skip.add(k)
            return e + 1
        return j

    def parameters(j):
        """The parameter list at j (`(`): its names become locals of the body to come."""
        if j >= n or tokens[j] != "(":
            return j
        e = match(tokens, j, "(", ")")
        depth = 0
        k = j
        while k < e:
            t = tokens[k]
            if t in ("(", "[", "<"):
                depth += 1
            elif t in (")", "]", ">"):
                depth -= 1
            elif depth == 1 and t == ":" and is_id(tokens[k - 1]):
                pending_locals[tokens[k - 1]] = type_text(tokens, k + 1)
                f.skip.add(k - 1)
                if is_id(tokens[k - 2]) and tokens[k - 2] not in KEYWORDS:
                    f.skip.add(k - 2)   # the argument label
            k += 1
        return e + 1

    def binding(j, kind):
        """The pattern after let/var at j: declares its names."""
        private, _ = modifiers(j - 1)
        k = j
        if k < n and tokens[k] == ".":
            k += 2 if k + 1 < n and is_id(tokens[k + 1]) else 1
        if k < n and tokens[k] == "(":
            e = match(tokens, k, "(", ")")
            for m in range(k + 1, e):
                if is_id(tokens[m]) and tokens[m] not in KEYWORDS and tokens[m + 1] in (",", ")") and tokens[m - 1] != ".":
                    if tokens[m - 1] != ":" or scope.kind == "code":
                        f.skip.add(m)
                        scope.locals[tokens[m]] = None
            return
        if k < n and is_id(tokens[k]) and tokens[k] not in KEYWORDS:
            name = tokens[k]
            f.skip.add(k)
            type_ = None
            if k + 1 < n and tokens[k + 1] == ":":
                type_ = type_text(tokens, k + 2)
                m = k + 2
                while m < n and f.lines[m] == f.lines[k] and (is_id(tokens[m]) or tokens[m] in (".", "?", "!", "<", ">", "[", "]", ",", ":", "(", ")", "->")):
                    m += 1
                if m < n and tokens[m] == "{":
                    pending_returns[0] = type_      # a computed property: its body returns the type
            elif k + 1 < n and tokens[k + 1] == "=":
                m = k + 2
                while m < n and tokens[m] in ("try", "await", "!", "?"):
                    m += 1
                t = type_text(tokens, m)
                end = m + (2 * t.count(".") + 1 if t and t != PLATFORM else 0)
                if t and t != PLATFORM and t[:1].isupper() and end < n and tokens[end] in ("(", "{"):
                    type_ = t
                elif t == PLATFORM:
                    type_ = PLATFORM
                elif scope.kind == "code":
                    # the expression's extent: to the end of its line, or a `{`, `,` or `else`
                    e = m
                    depth = 0
                    while e < n:
                        u = tokens[e]
                        if depth == 0 and (u in ("{", ",", ";", "else", "}", ")", "]") or (f.lines[e] != f.lines[e - 1] and u != ".")):
                            break
                        if u in ("(", "[", "{"):
                            depth += 1
                        elif u in (")", "]", "}"):
                            depth -= 1
                        e += 1
                    type_ = ("=", k + 2, e)
            declare(name, kind, private, type_)
            # `let a = 1, b = 2`
            m = k + 1
            depth = 0
            while m < n and scope.kind != "code":
                t = tokens[m]
                if t in ("(", "[", "{"):
                    if t == "{" and depth == 0:
                        break
                    depth += 1
                elif t in (")", "]", "}"):
                    if depth == 0:
                        break
                    depth -= 1
                elif depth == 0 and f.lines[m] != f.lines[k] and tokens[m - 1] != ",":
                    break
                elif depth == 0 and t == "," and m + 2 < n and is_id(tokens[m + 1]) and tokens[m + 2] in (":", "="):
                    f.skip.add(m + 1)
                    declare(tokens[m + 1], kind, private, type_text(tokens, m + 3) if tokens[m + 2] == ":" else None)
                m += 1

    while i < n:
        while filled < i:
            f.scopes[filled] = scope
            filled += 1
        t = tokens[i]
        f.scopes[i] = scope
        prev = tokens[i - 1] if i else ""
        if prev == ".":
            i += 1
            continue
        if t == "#" and i + 1 < n and tokens[i + 1] in ("if", "elseif", "else", "endif", "warning", "error", "sourceLocation"):
            line = f.lines[i]
            while i < n and f.lines[i] == line:
                f.scopes[i] = scope
                f.skip.add(i)
                i += 1
            continue
        if t == "import" and starts_declaration(tokens, f.lines, i):
            j = i + 1
            while j < n and tokens[j] in ("struct", "class", "enum", "protocol", "func", "var", "let", "typealias"):
                j += 1
            if j < n:
                f.imports.append((tokens[j], f.lines[i]))
            while j < n and f.lines[j] == f.lines[i]:
                f.skip.add(j)
                j += 1
            i = j
            continue
        if t in TYPE_KEYWORDS and i + 1 < n and is_id(tokens[i + 1]) and tokens[i + 1] not in KEYWORDS and tokens[i + 1] not in MODIFIERS and prev != "@" \
                and not (t == "class" and tokens[i + 1] in ("func", "var", "let", "subscript", "init")):
            private, _ = modifiers(i)
            name = type_text(tokens, i + 1)
            if name is None or name == PLATFORM or (t == "actor" and name[:1].islower()):
                i += 1
                continue
            j = i + 2 + 2 * name.count(".")
            if t == "extension":
                key = name
            else:
                key = name if scope.kind != "type" else scope.key + "." + name
                f.skip.add(i + 1)
                if scope.kind == "code":
                    scope.locals[name] = None
                else:
                    decl = Decl(f.layer, f.rank, f.relative, private or in_private(scope), "type", None)
                    index.types.setdefault(key, []).append(decl)
                    if scope.kind == "type":
                        index.add_member(scope.key, name, decl)
            pending_locals = {}
            j = generics(j)
            if j < n and tokens[j] == ":":
                k = j + 1
                while k < n and tokens[k] not in ("{", "where"):
                    if is_id(tokens[k]) and tokens[k - 1] in (":", ",", "&"):
                        index.inherits.setdefault(key, set()).add(type_text(tokens, k))
                    k += 1
            pending_type = (key, private and t == "extension")
            i += 1
            continue
        if t in ("typealias", "associatedtype") and i + 1 < n and is_id(tokens[i + 1]):
            private, _ = modifiers(i)
            name = tokens[i + 1]
            f.skip.add(i + 1)
            if scope.kind == "code":
                scope.locals[name] = None
            else:
                key = name if scope.kind != "type" else scope.key + "." + name
                decl = Decl(f.layer, f.rank, f.relative, private or in_private(scope), "type", None)
                index.types.setdefault(key, []).append(decl)
                if scope.kind == "type":
                    index.add_member(scope.key, name, decl)
            i += 2
            continue
        if t == "func" and i + 1 < n:
            private, _ = modifiers(i)
            name = tokens[i + 1]
            pending_locals = {}
            j = i + 2
            if not is_id(name):
                while j < n and tokens[j] != "(":     # an operator
                    j += 1
            j = generics(j)
            if is_id(name):
                f.skip.add(i + 1)
                if scope.kind == "code":
                    scope.locals[name] = None
                else:
                    e = match(tokens, j, "(", ")") if j < n and tokens[j] == "(" else j
                    k = e + 1
                    while k < n and tokens[k] in ("async", "throws", "rethrows"):
                        k += 1
                    returns = type_text(tokens, k + 1) if k < n and tokens[k] == "->" else None
                    declare(name, "func", private, returns, signature(tokens, j))
                    pending_returns[0] = returns
            j = parameters(j)
            i = j
            continue
        if t in ("init", "subscript") and i + 1 < n and tokens[i + 1] in ("(", "<", "?", "!"):
            pending_locals = {}
            j = i + 1
            if tokens[j] in ("?", "!"):
                j += 1
            j = generics(j)
            if j < n and tokens[j] == "(" and (scope.kind != "code" or t == "subscript"):
                if scope.kind == "type":
                    e = match(tokens, j, "(", ")")
                    returns = type_text(tokens, e + 2) if t == "subscript" and e + 1 < n and tokens[e + 1] == "->" else None
                    declare(t, t, modifiers(i)[0], returns, signature(tokens, j))
                i = parameters(j)
                continue
            i += 1
            continue
        if t in ("let", "var") and prev != "case":
            binding(i + 1, "var")
            i += 1
            continue
        if t == "case":
            if scope.kind == "type":
                # enum cases: `case a, b(Int), c = 1`
                private, _ = modifiers(i)
                j = i + 1
                while j < n and is_id(tokens[j]):
                    f.skip.add(j)
                    declare(tokens[j], "case", private, None, signature(tokens, j + 1) if j + 1 < n and tokens[j + 1] == "(" else [])
                    j += 1
                    if j < n and tokens[j] == "(":
                        j = match(tokens, j, "(", ")") + 1
                    if j < n and tokens[j] == "=":
                        j += 2
                    if j < n and tokens[j] == ",":
                        j += 1
                    else:
                        break
                i = j
                continue
            if i + 1 < n and tokens[i + 1] in ("let", "var"):
                binding(i + 2, "var")
                i += 2
                continue
        if t == "for" and scope.kind == "code":
            j = i + 1
            if j < n and tokens[j] in ("try", "await"):
                j += 1
            if j < n and tokens[j] == "case":
                i += 1
                continue
            first = j
            while j < n and tokens[j] != "in" and j < i + 20:
                if is_id(tokens[j]) and tokens[j] not in KEYWORDS and tokens[j + 1] in (",", ")", "in", ":"):
                    scope.locals[tokens[j]] = None
                    f.skip.add(j)
                j += 1
            if j < n and j == first + 1 and tokens[j] == "in" and is_id(tokens[first]):
                # `for x in sequence {`: x is an element of the sequence
                e = j + 1
                depth = 0
                while e < n and not (depth == 0 and tokens[e] in ("{", "where")):
                    if tokens[e] in ("(", "["):
                        depth += 1
                    elif tokens[e] in (")", "]"):
                        depth -= 1
                    e += 1
                scope.locals[tokens[first]] = ("in", j + 1, e)
            i += 1
            continue
        if t == "(" and not (is_id(prev) and prev not in KEYWORDS or prev in (")", "]", ">", "?", "!")):
            # a tuple, type or value: its labels are members of a type with no name, declared here
            e = match(tokens, i, "(", ")")
            depth = 0
            for k in range(i, e):
                if tokens[k] in ("(", "[", "{"):
                    depth += 1
                elif tokens[k] in (")", "]", "}"):
                    depth -= 1
                elif depth == 1 and tokens[k] == ":" and is_id(tokens[k - 1]) and tokens[k - 2] in ("(", ","):
                    decl = Decl(f.layer, f.rank, f.relative, False, "label", None)
                    index.by_name.setdefault(tokens[k - 1], []).append(decl)
        if t == "@" and i + 2 < n and is_id(tokens[i + 1]) and tokens[i + 1][:1].islower() and tokens[i + 2] == "(":
            # an attribute's arguments (`@available(*, unavailable)`) name nothing
            e = match(tokens, i + 2, "(", ")")
            for k in range(i, e + 1):
                f.skip.add(k)
            i = e + 1
            continue
        if t == "catch" and scope.kind == "code":
            pending_locals = {"error": None}
        if t == "{":
            if pending_type is not None:
                key, private = pending_type
                scope = Scope("type", key, scope)
                scope.locals.update(pending_locals)
                pending_locals = {}
                if private:
                    private_scopes.add(scope)
                pending_type = None
            else:
                scope = Scope("code", None, scope)
                scope.locals.update(pending_locals)
                pending_locals = {}
                if prev in ("set", "willSet", "didSet"):
                    scope.locals.update({"newValue": None, "oldValue": None})
                # the body of the function or computed property just declared
                if pending_returns[0] is not None and tokens[i - 1] not in ("=", "(", ",", ":", "in"):
                    scope.returns = pending_returns[0]
                pending_returns[0] = None
                # closure parameters: `{ a, b in`, `{ (a: T, b) in`, `{ [weak self] a in`
                j = i + 1
                if j < n and tokens[j] == "[":
                    j = match(tokens, j, "[", "]") + 1
                k = j
                while k < n and k < j + 40 and tokens[k] not in ("in", "{", "}", "=", ";") and (f.lines[k] == f.lines[i] or tokens[k - 1] in (",", "(")):
                    k += 1
                if k < n and tokens[k] == "in":
                    for m in range(j, k):
                        if is_id(tokens[m]) and tokens[m] not in KEYWORDS and tokens[m + 1] in (",", ")", "in", ":") and tokens[m - 1] != ":":
                            scope.locals[tokens[m]] = type_text(tokens, m + 2) if tokens[m + 1] == ":" else ("closure", i)
                            f.skip.add(m)
            f.scopes[i] = scope
            i += 1
            continue
        if t == "}":
            if scope.parent is not None:
                scope = scope.parent
            pending_type = None
            pending_returns[0] = None
            i += 1
            continue
        i += 1
    while filled < n:
        f.scopes[filled] = scope
        filled += 1


# ---------------------------------------------------------------------------------------------
# Uses.

class Checker:
    def __init__(self, index, layers):
        self.index = index
        self.layers = layers
        self.problems = {}   # (file, name) -> message
        self.ambiguous = 0
        self.ambiguous_names = {}
        self.ambiguous_sites = []
        # what extensions of types ModelStore does not declare (Array, String, ...) add
        self.platform_members = {}
        for key, members in index.members.items():
            if key not in index.types:
                for name, decls in members.items():
                    self.platform_members.setdefault(name, []).extend(decls)

    def visible(self, decls, f):
        return [d for d in decls if not d.private or d.file == f.relative]

    def lookup_type(self, name, scope):
        """The key of the type called name from scope: nested in an enclosing type first."""
        s = scope
        while s is not None:
            if s.kind == "type":
                key = s.key
                parts = key.split(".")
                for cut in range(len(parts), 0, -1):
                    candidate = ".".join(parts[:cut]) + "." + name
                    if candidate in self.index.types:
                        return candidate
            s = s.parent
        if name in self.index.types:
            return name
        if "." in name:
            head, _, rest = name.partition(".")
            base = self.lookup_type(head, scope)
            if base is not None and base != PLATFORM and base + "." + rest in self.index.types:
                return base + "." + rest
        return None

    def local(self, name, scope):
        s = scope
        while s is not None:
            if name in s.locals:
                return True, s.locals[name]
            s = s.parent
        return False, None

    def resolve(self, text, scope):
        """A type text as a type key, PLATFORM, or None (unknown, e.g. a generic parameter)."""
        if text is None:
            return None
        if text == PLATFORM:
            return PLATFORM
        if text.startswith("["):
            inner = self.resolve(text[1:-1], scope)
            return "[" + inner + "]" if inner and inner != PLATFORM and not inner.startswith("[") else PLATFORM
        found, value = self.local(text.split(".")[0], scope)
        if found:
            # a generic parameter: its constraint, when it has one
            if "." not in text and isinstance(value, str) and value != PLATFORM and value != text and not value.startswith("["):
                return self.lookup_type(value, None)
            return None
        key = self.lookup_type(text, scope)
        if key is not None:
            return key
        if text in ("Self",):
            return self.enclosing(scope)
        return PLATFORM

    def enclosing(self, scope):
        s = scope
        while s is not None:
            if s.kind == "type":
                return s.key
            s = s.parent
        return None

    def member(self, key, name, f, seen=None):
        """The visible declarations of member name on the type key, its protocols and
        superclasses; None when it has none the check knows."""
        seen = seen or set()
        if key in seen:
            return None
        seen.add(key)
        decls = self.visible(self.index.members.get(key, {}).get(name, []), f)
        if decls:
            return decls
        for parent in self.index.inherits.get(key, ()):
            if parent is None:
                continue
            pkey = parent if parent in self.index.types else None
            if pkey is None:
                continue
            found = self.member(pkey, name, f, seen)
            if found:
                return found
        return None

    def decl_type(self, d, scope):
        """The type key of a value d declares (a property's, a function's result, an enum
        case's enum), PLATFORM, or None."""
        if d.kind == "case":
            return d.owner
        text = d.type
        if text is None or (text != PLATFORM and text.split(".")[0] in d.generics):
            return None
        if text == "Self":
            return d.owner
        if text != PLATFORM and not text.startswith("[") and d.owner:
            parts = d.owner.split(".")
            for cut in range(len(parts), 0, -1):
                candidate = ".".join(parts[:cut]) + "." + text
                if candidate in self.index.types:
                    return candidate
        return self.resolve(text, scope)

    def result(self, decls, f, i, scope):
        """The one type the declarations of the name at i give its use, or None."""
        call = arguments(f.tokens, i) if i + 1 < len(f.tokens) and f.tokens[i + 1] == "(" else None
        if call is not None:
            chosen = [d for d in decls if d.kind in ("func", "case") and accepts(d.params, call)]
            if any(d.kind == "var" for d in decls):
                return None
        else:
            chosen = [d for d in decls if d.kind in ("var", "case")]
            if any(d.kind == "func" for d in decls):
                return None
        types = {self.decl_type(d, scope) for d in chosen}
        return types.pop() if len(types) == 1 else None

    def local_type(self, f, value, scope, depth):
        if not isinstance(value, tuple):
            return self.resolve(value, scope) if value else None
        if value[0] == "=":
            return self.chain_type(f, value[1], value[2], depth + 1)
        if value[0] == "in":
            return element(self.chain_type(f, value[1], value[2], depth + 1))
        return self.closure_element(f, value[1], depth + 1)

    def closure_element(self, f, brace, depth):
        """The element type of the array whose method (`map`, `filter`, ...) takes the closure
        that opens at brace, which its parameters are."""
        tokens = f.tokens
        k = brace - 1
        if k >= 1 and tokens[k] == ":" and is_id(tokens[k - 1]):
            k -= 2
        if k >= 0 and tokens[k] in ("(", ","):
            depth_ = 0
            while k >= 0:
                if tokens[k] in (")", "]"):
                    depth_ += 1
                elif tokens[k] in ("(", "["):
                    if depth_ == 0:
                        break
                    depth_ -= 1
                k -= 1
            k -= 1
        elif k >= 0 and tokens[k] == ")":
            k = match_back(tokens, k) - 1
        if k < 2 or not is_id(tokens[k]) or tokens[k] not in ELEMENT_CLOSURES or tokens[k - 1] != ".":
            return None
        return element(self.receiver_type(f, k - 2, depth))

    def dollar(self, f, i, depth):
        """The type of `$0`/`$1` at i: an element of the array whose method takes its closure."""
        level = 0
        k = i - 1
        while k >= 0:
            if f.tokens[k] == "}":
                level += 1
            elif f.tokens[k] == "{":
                if level == 0:
                    return self.closure_element(f, k, depth)
                level -= 1
            k -= 1
        return None

    def receiver_type(self, f, r, depth=0):
        """The type of the receiver that ends at token r (`a.b(c)?.d`), if the check can tell:
        a type key, `[key]` for an array of one, PLATFORM, or None."""
        tokens = f.tokens
        k = r
        if depth > 8:
            return None
        while k >= 0:
            t = tokens[k]
            if t == "]":
                o = match_back(tokens, k)
                if o > 0 and (is_id(tokens[o - 1]) or tokens[o - 1] in (")", "]", "?", "!")):
                    k = o - 1
                    continue
                return None
            if t[:1] == "$":
                return self.chain_type(f, k, r + 1, depth)
            if t in ("?", "!") and k > 0 and (is_id(tokens[k - 1]) or tokens[k - 1] in (")", "]")):
                k -= 1
            elif t == ")":
                depth = 0
                o = k
                while o >= 0:
                    if tokens[o] == ")":
                        depth += 1
                    elif tokens[o] == "(":
                        depth -= 1
                        if depth == 0:
                            break
                    o -= 1
                if o > 0 and is_id(tokens[o - 1]) and tokens[o - 1] not in KEYWORDS:
                    k = o - 1
                else:
                    return None
            elif is_id(t):
                if k > 1 and tokens[k - 1] == "." and (is_id(tokens[k - 2]) or tokens[k - 2] in (")", "]", "?", "!") or tokens[k - 2][:1] == "$"):
                    k -= 2
                elif k > 0 and tokens[k - 1] == ".":
                    return None
                else:
                    return self.chain_type(f, k, r + 1, depth)
            else:
                return None
        return None

    def chain_type(self, f, s, e, depth):
        """The type of the chain of names, calls and `?`/`!` at tokens [s, e), if the check
        can tell."""
        if depth > 8:
            return None
        tokens = f.tokens
        scope = f.scopes[s]
        k = s
        while k < e and tokens[k] in ("try", "await", "?", "!"):
            k += 1
        if k >= e:
            return None
        t = tokens[k]
        call = k + 1 < len(tokens) and tokens[k + 1] == "("
        if t in ("self", "Self"):
            typ = self.enclosing(scope)
            k += 1
        elif t[:1] == "$":
            typ = self.dollar(f, k, depth)
            k += 1
        elif not is_id(t) or t in KEYWORDS:
            return None
        else:
            found, value = self.local(t, scope)
            if found:
                if call:
                    return None
                typ = self.local_type(f, value, scope, depth)
                k += 1
            elif t[:1].isupper():
                typ = self.lookup_type(t, scope) or PLATFORM
                k += 1
                if k < e and tokens[k] == "<":
                    k = match(tokens, k, "<", ">") + 1
                if k < e and tokens[k] == "(":
                    k = match(tokens, k, "(", ")") + 1
            else:
                decls = None
                c = scope
                while c is not None and not decls:
                    if c.kind == "type":
                        decls = self.member(c.key, t, f)
                    c = c.parent
                decls = decls or self.visible(self.index.globals.get(t, []), f)
                typ = self.result(decls, f, k, scope) if decls else None
                k += 1
                if call:
                    k = match(tokens, k, "(", ")") + 1
        while k < e:
            t = tokens[k]
            if t in ("?", "!"):
                k += 1
                continue
            if t == "[" and typ and typ.startswith("["):
                typ = element(typ)
                k = match(tokens, k, "[", "]") + 1
                continue
            if t != "." or k + 1 >= e or not is_id(tokens[k + 1]) or typ is None or typ == PLATFORM:
                return None
            name = tokens[k + 1]
            if typ.startswith("["):
                # an array of a ModelStore type: what its element-keeping members give
                if name in ELEMENT_MEMBERS:
                    typ = element(typ)
                elif name not in ARRAY_MEMBERS:
                    return None
                k += 2
                if k < e and tokens[k] == "(":
                    k = match(tokens, k, "(", ")") + 1
                while k < e and tokens[k] == "{":
                    k = match(tokens, k, "{", "}") + 1
                continue
            decls = self.member(typ, name, f)
            if not decls:
                return None
            if all(d.kind == "type" for d in decls):
                typ = typ + "." + name if typ + "." + name in self.index.types else None
                k += 2
                if k < e and tokens[k] == "(":
                    k = match(tokens, k, "(", ")") + 1
                continue
            typ = self.result(decls, f, k + 1, scope)
            k += 2
            if k < e and tokens[k] == "(":
                k = match(tokens, k, "(", ")") + 1
        return typ

    def judge(self, f, i, name, decls, platform, what):
        # Overloads the call's argument labels cannot reach are left out (unless none can be
        # reached, when the check knows too little to leave any out).
        call = arguments(f.tokens, i)
        reachable = [d for d in decls if accepts(d.params, call)]
        if reachable:
            decls = reachable
        ranks = {d.rank for d in decls}
        if platform:
            ranks.add(-1)
        if not ranks:
            return
        if min(ranks) > f.rank:
            owner = self.layers[min(ranks)]
            self.report(f, name, f"{f.relative}:{f.lines[i]} ({f.layer}) uses {what} {name}, declared only in {owner}/ and above")
        elif max(ranks) > f.rank:
            self.ambiguous += 1
            self.ambiguous_names[name] = self.ambiguous_names.get(name, 0) + 1
            where = ", ".join("the platform" if rank < 0 else self.layers[rank] + "/" for rank in sorted(ranks))
            self.ambiguous_sites.append(f"{f.relative}:{f.lines[i]} ({f.layer}) {name}: declared in {where}")

    def implicit_type(self, f, k):
        """The type of an implicit member expression, `.member`, after token k: what the
        function returns (`return .x`, a body of just `.x`), or what it is assigned to or
        compared with (`x = .y`, `x == .y`, `x != .y`, `let x: T = .y`)."""
        tokens = f.tokens
        t = tokens[k]
        scope = f.scopes[k + 1]
        if t in ("return", "{"):
            if t == "{" and (k + 1 >= len(tokens) or f.scopes[k + 1] is None):
                return None
            if scope is not None and scope.kind == "code" and scope.returns:
                return self.resolve(scope.returns, scope)
            return None
        if t == "=":
            j = k - 1
            if j >= 0 and tokens[j] in ("=", "!"):
                j -= 1
            if j >= 0 and (is_id(tokens[j]) or tokens[j] in (")", "]", "?")) and tokens[j] not in KEYWORDS:
                return self.receiver_type(f, j)
        return None

    def initializer(self, f, i, key, written):
        """`Type(...)` or `Type.init(...)`, the call's name at i: an initializer an extension
        above declares counts as a member of that layer. A call no declared initializer takes
        (a memberwise or synthesized one) is left alone."""
        call = arguments(f.tokens, i)
        if call is None or i + 1 >= len(f.tokens) or f.tokens[i + 1] != "(":
            return
        decls = [d for d in self.member(key, "init", f) or [] if accepts(d.params, call)]
        if decls:
            self.judge(f, i, written + ".init", decls, False, "initializer")

    def report(self, f, name, message):
        self.problems.setdefault((f.relative, name), message)

    def check(self, f):
        tokens = f.tokens
        n = len(tokens)
        for module, line in f.imports:
            if module == C_MODULE and f.layer != C_LAYER:
                self.report(f, "import " + module, f"{f.relative}:{line} ({f.layer}) imports {module}, which only {C_LAYER}/ may import")
            if module in FORBIDDEN_IMPORTS:
                self.report(f, "import " + module, f"{f.relative}:{line} ({f.layer}) imports {module}, which the library never imports")
        for i in range(n):
            t = tokens[i]
            if t == "[" and i > 0 and i not in f.skip and (is_id(tokens[i - 1]) and tokens[i - 1] not in KEYWORDS or tokens[i - 1] in (")", "]", "?", "!")):
                # a subscript that an extension declares
                base = self.receiver_type(f, i - 1)
                if base and base != PLATFORM and not base.startswith("["):
                    decls = self.member(base, "subscript", f)
                    if decls:
                        self.judge(f, i, base.split(".")[-1] + ".subscript", decls, False, "subscript")
                continue
            if i in f.skip or not is_id(t):
                continue
            if C_SYMBOL.match(t):
                if f.layer != C_LAYER:
                    self.report(f, t, f"{f.relative}:{f.lines[i]} ({f.layer}) uses the C API {t}, which only {C_LAYER}/ may use")
                continue
            if t == "init" and i >= 2 and tokens[i - 1] == ".":
                base = self.receiver_type(f, i - 2) if is_id(tokens[i - 2]) else None
                if base and base != PLATFORM and not base.startswith("["):
                    self.initializer(f, i, base, tokens[i - 2])
                continue
            if t in KEYWORDS or t == "init":
                continue
            prev = tokens[i - 1] if i else ""
            after = tokens[i + 1] if i + 1 < n else ""
            scope = f.scopes[i]
            if t in ACCESSORS and prev != "." and after != "(":
                continue
            if prev == ".":
                # receiver.member, Type.member, `.member`
                receiver = i - 2
                base = self.receiver_type(f, receiver) if receiver >= 0 and (is_id(tokens[receiver]) or tokens[receiver] in ("?", "!", ")", "]") or tokens[receiver][:1] == "$") else None
                if base == PLATFORM or base and base.startswith("["):
                    # Swift's or Foundation's type: only what ModelStore adds to such types counts
                    decls = self.visible(self.platform_members.get(t, []), f)
                    if decls:
                        self.judge(f, i, t, decls, t in PLATFORM_NAMES, "member")
                    continue
                if base is None and receiver >= 0:
                    base = self.implicit_type(f, receiver)
                if base is not None and base != PLATFORM and not base.startswith("["):
                    decls = self.member(base, t, f)
                    if decls:
                        self.judge(f, i, t, decls, False, "member")
                        continue
                decls = self.visible(self.index.by_name.get(t, []), f)
                self.judge(f, i, t, decls, t in PLATFORM_NAMES or (base is None and t[:1].isupper() and not decls), "member")
                continue
            if prev == "@" or after == ":" and prev in ("(", ",") and t[:1].islower():
                if prev == "@" and t[:1].isupper():
                    key = self.lookup_type(t, scope)
                    if key:
                        self.judge(f, i, t, self.visible(self.index.types[key], f), False, "type")
                continue
            found, _ = self.local(t, scope)
            if found:
                continue
            if t[:1].isupper():
                key = self.lookup_type(t, scope)
                if key is not None:
                    self.judge(f, i, t, self.visible(self.index.types[key], f), False, "type")
                    j = match(tokens, i + 1, "<", ">") if after == "<" else i
                    self.initializer(f, j, key, t)
                continue
            # a bare name: a member of the type around it, a top-level name, or a member of a
            # type the check cannot name (a protocol's, a superclass's)
            key = self.enclosing(scope)
            if key is not None:
                s = scope
                decls = None
                while s is not None and not decls:
                    if s.kind == "type":
                        decls = self.member(s.key, t, f)
                    s = s.parent
                if decls:
                    self.judge(f, i, t, decls, False, "member")
                    continue
            decls = self.visible(self.index.globals.get(t, []), f)
            if decls:
                self.judge(f, i, t, decls, t in PLATFORM_NAMES, "function or variable")
                continue
            decls = self.visible(self.index.by_name.get(t, []), f)
            if decls:
                self.judge(f, i, t, decls, t in PLATFORM_NAMES or key is None, "member")


# ---------------------------------------------------------------------------------------------

def run(root, layers, allowed):
    """Checks the tree at root; returns (problems, ambiguous count, files, seconds)."""
    started = time.time()
    present = [
        layer for layer in os.listdir(root)
        if os.path.isdir(os.path.join(root, layer)) and not layer.endswith(".docc")
    ]
    unknown = sorted(set(present) - set(layers))
    if unknown:
        return [f"folders with no place in the layer order: {', '.join(unknown)}"], 0, 0, 0
    index = Index()
    sources = []
    for rank, layer in enumerate(layers):
        folder = os.path.join(root, layer)
        for directory, dirs, names in os.walk(folder):
            dirs.sort()
            for name in sorted(names):
                if not name.endswith(".swift"):
                    continue
                path = os.path.join(directory, name)
                with open(path, encoding="utf-8") as handle:
                    text = handle.read()
                f = SourceFile(path, os.path.relpath(path, root), layer, rank, text)
                declarations(f, index)
                sources.append(f)
    checker = Checker(index, layers)
    for f in sources:
        checker.check(f)
    problems = []
    seen = set()
    for key, message in checker.problems.items():
        if key in allowed:
            seen.add(key)
        else:
            problems.append(message)
    for stale in sorted(set(allowed) - seen):
        problems.append(f"ALLOWED lists {stale[0]} using {stale[1]}, which no longer happens: remove it")
    return sorted(problems), checker, len(sources), time.time() - started


def platform_names(paths):
    """Prints the member and top-level names that the module interfaces at paths
    (`.swiftinterface` files) declare and ModelStore's declarations share: the generated part
    of PLATFORM_NAMES."""
    platform = set()
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as handle:
            module = Index()
            declarations(SourceFile(path, path, "platform", -1, handle.read()), module)
        platform.update(name for name, decls in module.by_name.items() if any(not d.private for d in decls))
        platform.update(module.globals)
    index = Index()
    for rank, layer in enumerate(LAYERS):
        for directory, _, names in os.walk(os.path.join(ROOT, layer)):
            for name in names:
                if name.endswith(".swift"):
                    path = os.path.join(directory, name)
                    with open(path, encoding="utf-8") as handle:
                        declarations(SourceFile(path, os.path.relpath(path, ROOT), layer, rank, handle.read()), index)
    shared = sorted((set(index.by_name) | set(index.globals)) & platform)
    line = ""
    for name in shared:
        if len(line) + len(name) + 1 > 100:
            print(line)
            line = ""
        line = (line + " " + name).strip()
    print(line)
    return 0


def main(argv):
    if "--self-test" in argv:
        return self_test()
    if argv[:1] == ["--platform-names"]:
        return platform_names(argv[1:])
    problems, checker, count, seconds = run(ROOT, LAYERS, ALLOWED)
    for problem in problems:
        print("check-layers:", problem)
    ambiguous = ""
    if checker and checker.ambiguous:
        top = sorted(checker.ambiguous_names.items(), key=lambda item: -item[1])[:8]
        ambiguous = (f"; {checker.ambiguous} ambiguous uses not checked (a name declared both at or below the file's layer and"
                     f" above, on a receiver whose type the check cannot tell; most: {', '.join(f'{k} {v}' for k, v in top)})")
    if "--ambiguous" in argv and checker:
        for site in checker.ambiguous_sites:
            print("check-layers: ambiguous:", site)
    if problems:
        print(f"check-layers: {len(problems)} problem(s); layers, lowest first: {' < '.join(LAYERS)}{ambiguous}")
        return 1
    print(f"check-layers: ok ({count} files in {seconds:.1f} s; {' < '.join(LAYERS)}; {len(ALLOWED)} known exceptions{ambiguous})")
    return 0


# ---------------------------------------------------------------------------------------------
# Self-test.

# A clean tree: each layer uses only its own and lower layers' declarations, with what could
# fool a check by name (a lower `save` beside an upper one, Swift's `count` beside Row's,
# upper names in comments and strings, a private upper member, an ambiguous `$0.name`).
CLEAN = {
    "Database/Connection.swift": """
import Foundation
import ModelStoreCSQLite

/// EngineThing, engineOnly() and Session in a comment do not count; /* nor /* nested */ here */
final class Connection {
    var name: String = "main"
    func save(_ text: String) {}
    func flush(_ pages: Int) {}
    func step() -> Int32 { sqlite3_step(nil) == SQLITE_OK ? 1 : 0 }
    static let shared = Connection()
}

enum Speed { case brisk, slow }

func quote(_ text: String) -> String { "\\"" + text + "\\"" }
""",
    "Coding/Row.swift": """
struct Row {
    var values: [String] = []
    var count: Int { values.count }
    func describe(_ connection: Connection) -> String {
        let label = "EngineThing \\(values.count) engineOnly() \\(quote("x.engineCache"))"
        return label + connection.name + quote(connection.name) + #"raw \\(engineOnly)"#
    }
}

func quoteUp(_ text: String) -> String { text }
""",
    "Store/Session.swift": """
final class Session {
    let connection: Connection
    init(connection: Connection) { self.connection = connection }
    func run(_ body: (Session) -> Void) { body(self) }
}

struct Pace { let value: Int }

protocol Model {
    func describe(_ value: Int) -> String
}

enum Summary { case summary }

func speed() -> Speed { .brisk }

func isBrisk(_ speed: Speed) -> Bool { return speed == .brisk }

final class Store {
    func write(_ body: (Session) -> Void) {}
    func session() -> Session { Session(connection: Connection()) }
}

extension Connection {
    func session() -> Session { Session(connection: self) }
}

extension Session {
    func clean(_ rows: [Row], text: String) {
        connection.save(text)
        connection.flush(1)
        self.connection.save(text)
        let local = Connection()
        local.save(text)
        let total = rows.count + rows[0].count + [1, 2].count
        _ = total
        run { s in s.connection.save(text) }
        _ = Connection.shared.name
        _ = [local].map { $0.name }
        [local].forEach { $0.flush(2) }
        _ = quoteUp(text)
    }
}
""",
    "Engine/Engine.swift": """
struct EngineThing {
    var name: String
    static let engineDefault = EngineThing(name: "x")
    private var count: Int { 0 }
}

enum EngineMode { case engineFast, engineSlow(Int) }

struct EngineRecord { var upperStored: Int = 0 }

extension Pace {
    static let brisk = Pace(value: 2)
}

extension Model {
    func describe(_ value: Int) -> String { "" }
    func summary() -> String { "" }
    static var upperName: String { "" }
}

extension Connection {
    convenience init(engine: Int) { self.init() }
    subscript(setting: String) -> Int { 0 }
}

protocol EngineProtocol {}

extension Session {
    func engineOnly() {}
    func engineOther() -> Int { 1 }
    var engineCache: [String: Int] { [:] }
    static var engineDefault: Int { 0 }
    func save(_ value: Int, mode: Int) {}
    func flush(_ records: Int) {}
    func uses() {
        engineOnly()
        _ = EngineThing.engineDefault
        save(1, mode: 2)
        clean([], text: "")
        connection.save("")
    }
}
""",
}

# One planted violation each: (what it plants, file, its code, the (file, name) to be caught).
PLANTED = [
    ("a type of a layer above", "Coding/TypeUse.swift",
     "struct Holder { var thing: EngineThing? }\n", {"EngineThing"}),
    ("an extension of a type of a layer above", "Coding/Extension.swift",
     "extension EngineThing {\n    func n() {}\n}\n", {"EngineThing"}),
    ("a protocol of a layer above, as a generic constraint", "Coding/Constraint.swift",
     "func o<M: EngineProtocol>(_ model: M) {}\n", {"EngineProtocol"}),
    ("a call on a closure's `s.`", "Store/ClosureS.swift",
     "extension Store {\n    func a() { write { s in s.engineOnly() } }\n}\n", {"engineOnly"}),
    ("a call on `$0.`", "Store/Dollar.swift",
     "func b(_ store: Store) { store.write { _ = $0.engineOther() } }\n", {"engineOther"}),
    ("an upper overload masked by a lower `flush` of the same labels, on a parameter's type", "Store/Masked.swift",
     "func c(_ session: Session) { session.flush(1) }\n", {"flush"}),
    ("the same, on a local `let x = Type(`", "Store/MaskedLocal.swift",
     "func c2() {\n    let session = Session(connection: Connection())\n    session.flush(1)\n}\n", {"flush"}),
    ("the same, on a local `let x: Type`", "Store/MaskedTyped.swift",
     "func c3(_ make: () -> Session) {\n    let session: Session = make()\n    session.flush(1)\n}\n", {"flush"}),
    ("the same, on `self.`", "Store/MaskedSelf.swift",
     "extension Session {\n    func c4() { self.flush(1) }\n}\n", {"flush"}),
    ("the same, on `Type.`", "Store/MaskedType.swift",
     "func c5() -> (Session) -> (Int) -> Void { Session.flush }\n", {"flush"}),
    ("an upper overload masked by a lower `save`, told apart by its labels", "Store/MaskedLabels.swift",
     "func d(_ store: Store) { store.write { $0.save(1, mode: 2) } }\n", {"save"}),
    ("the same, on `$0` of an array's `forEach`", "Store/MaskedDollar.swift",
     "func c6(_ sessions: [Session]) { sessions.forEach { $0.flush(1) } }\n", {"flush"}),
    ("the same, on a named closure parameter of an array's `map`", "Store/MaskedClosure.swift",
     "func c7(_ sessions: [Session]) { _ = sessions.map { s in s.flush(1) } }\n", {"flush"}),
    ("the same, on a `for` loop's element", "Store/MaskedFor.swift",
     "func c8(_ sessions: [Session]) {\n    for s in sessions.filter({ _ in true }) { s.flush(1) }\n}\n", {"flush"}),
    ("the same, on a chain of calls and properties", "Store/MaskedChain.swift",
     "func c9(_ store: Store) { store.session().connection.session().flush(1) }\n", {"flush"}),
    ("the same, called bare in an extension", "Store/MaskedBare.swift",
     "extension Session {\n    func e() { flush(3) }\n}\n", {"flush"}),
    ("a computed property declared in an upper extension", "Store/Property.swift",
     "func f(_ session: Session) -> Int { session.engineCache.count }\n", {"engineCache"}),
    ("a stored property, on a receiver of unknown type", "Store/Stored.swift",
     "func g(_ records: [Int]) -> Int { records.map { $0.upperStored }.count }\n", {"upperStored"}),
    ("a static member declared in an upper extension", "Store/Static.swift",
     "func h() -> Int { Session.engineDefault }\n", {"engineDefault"}),
    ("an enum case, as an implicit member", "Coding/Case.swift",
     "func i(_ take: (Any) -> Void) { take(.engineFast) }\n", {"engineFast"}),
    ("a static member masked by a lower enum case, as an implicit member a function returns", "Store/Returned.swift",
     "func i2() -> Pace {\n    return .brisk\n}\n", {"brisk"}),
    ("the same, as the body of a computed property", "Store/Computed.swift",
     "extension Session {\n    var pace: Pace { .brisk }\n}\n", {"brisk"}),
    ("the same, compared with a value of its type", "Store/Compared.swift",
     "func i3(_ pace: Pace) -> Bool { pace != .brisk }\n", {"brisk"}),
    ("the same, assigned to a variable of its type", "Store/Assigned.swift",
     "func i4() {\n    var pace: Pace = Pace(value: 0)\n    pace = .brisk\n}\n", {"brisk"}),
    ("a member of a protocol's upper extension, on a value of a constrained generic type", "Store/Generic.swift",
     "func i5<M: Model>(_ model: M) -> String { model.describe(1) + model.summary() + M.upperName }\n", {"summary", "upperName"}),
    ("a key path", "Store/KeyPath.swift",
     "func j() -> Any { \\Session.engineCache }\n", {"engineCache"}),
    ("a top-level function, inside a string interpolation", "Database/Interpolation.swift",
     "func k() -> String { \"name: \\(quoteUp(\"x\"))\" }\n", {"quoteUp"}),
    ("an import of the C module above Database/", "Coding/Import.swift",
     "import ModelStoreCSQLite\n\nfunc l() {}\n", {"import ModelStoreCSQLite"}),
    ("an initializer declared in an upper extension of a lower type", "Store/Init.swift",
     "func p() -> Connection { Connection(engine: 1) }\n", {"Connection.init"}),
    ("the same, as `.init`", "Store/DotInit.swift",
     "func q() -> Connection { Connection.init(engine: 2) }\n", {"Connection.init"}),
    ("an import of the PostgreSQL driver, which the library never imports", "Engine/Postgres.swift",
     "@preconcurrency import ModelStorePostgres\n", {"import ModelStorePostgres"}),
    ("a subscript declared in an upper extension of a lower type", "Store/Subscript.swift",
     "func r(_ connection: Connection) -> Int { connection[\"pages\"] }\n", {"Connection.subscript"}),
    ("a C API call above Database/", "Store/CCall.swift",
     "func m(_ db: OpaquePointer?) -> Int32 { sqlite3_changes(db) }\n", {"sqlite3_changes"}),
]


def self_test():
    """Plants each violation in a copy of the clean tree and fails unless it alone is caught,
    the clean tree passes, ALLOWED excuses a violation, and a stale ALLOWED entry fails."""
    failures = []

    def tree(directory, extra):
        for relative, text in list(CLEAN.items()) + list(extra.items()):
            path = os.path.join(directory, relative)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text.lstrip("\n"))

    def check(title, extra, allowed, expected, stale=0):
        with tempfile.TemporaryDirectory() as directory:
            tree(directory, extra)
            problems, checker, _, _ = run(directory, LAYERS, allowed)
        found = set(checker.problems) if checker else set()
        stale_found = sum(1 for problem in problems if "no longer happens" in problem)
        missed, extra_found = expected - found, found - expected
        ok = not missed and not extra_found and stale_found == stale and (len(problems) == 0) == (not (expected - set(allowed)) and not stale)
        print(f"check-layers self-test: {'ok     ' if ok else 'FAILED '} {title}"
              + (f"; missed {sorted(missed)}" if missed else "") + (f"; reported too {sorted(extra_found)}" if extra_found else "")
              + (f"; {stale_found} stale entries reported, {stale} expected" if stale_found != stale else ""))
        if not ok:
            failures.append(title)
        return checker

    checker = check("the clean tree passes", {}, {}, set())
    if checker is None or checker.ambiguous == 0:
        print("check-layers self-test: FAILED  the clean tree's ambiguous `$0.name` is not counted")
        failures.append("ambiguous count")
    every = {}
    expected_all = set()
    for title, path, code, names in PLANTED:
        expected = {(path, name) for name in names}
        check(title, {path: code}, {}, expected)
        every[path] = code
        expected_all |= expected
    check("every violation at once", every, {}, expected_all)
    title, path, code, names = PLANTED[0]
    check("an ALLOWED entry excuses its violation", {path: code}, {(path, name): "a debt" for name in names}, {(path, name) for name in names})
    check("a stale ALLOWED entry fails", {}, {("Store/Session.swift", "EngineThing"): "no longer a debt"}, set(), stale=1)
    if failures:
        print(f"check-layers self-test: {len(failures)} of {len(PLANTED) + 4} cases failed")
        return 1
    print(f"check-layers self-test: ok ({len(PLANTED) + 4} cases)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
