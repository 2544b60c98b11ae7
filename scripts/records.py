#!/usr/bin/env python3
"""The record declarations, written once (types/records.d.ts), on every surface.

types/records.d.ts declares the core's serde records (and the options both JavaScript surfaces
take alike). Each JavaScript surface's hand-written declarations hold a copy of it between a
BEGIN and an END line: bindings-node/types.d.ts (napi's `dtsHeaderFile`: `napi build` puts it
first in index.d.ts) and bindings-wasm/types.d.ts (the module's TypeScript section,
`include_str!` in bindings-wasm/src/lib.rs): each package ships the records, nothing is read
from outside it. The Python stubs type the same records as TypedDicts.

usage: scripts/records.py write          copy the records into both files (only those that differ)
       scripts/records.py check          make lint: exit 1 on any drift (below)
       scripts/records.py shipped FILE.. a built declaration file holds the records
                                         (scripts/wasm-build.sh: each module's wikidex_wasm.d.ts)

`check` fails when:
- a surface's copy differs from types/records.d.ts (run `write`), or the file declares a
  record's name outside its copy (a record declared twice by hand);
- bindings-node/index.d.ts (napi's output, committed) does not start with the Node header as
  it is now (run `make node` and commit), or declares a record a second time (a
  `#[napi(object)]` of the same name);
- bindings-py/python/wikidex/_wikidex.pyi lacks a TypedDict for a record, or has one that
  differs from the interface: field names, optional keys (`x?:` is `NotRequired`), and types
  (`T | null` is `Optional[T]`, `number` is `int` or `float`, `T[]` is `List[T]`,
  `Record<string, V>` is `Dict[str, V]`, `unknown` is `Any`, an alias of string literals is a
  `Literal`, an inline object type is a TypedDict of any name with its fields). A declaration
  Python has no TypedDict for on purpose is in NOT_IN_PYTHON, with the reason.
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

ROOT = Path(__file__).resolve().parent.parent
RECORDS = ROOT / "types" / "records.d.ts"
HEADERS = [ROOT / "bindings-node" / "types.d.ts", ROOT / "bindings-wasm" / "types.d.ts"]
NODE_HEADER, NODE_DTS = HEADERS[0], ROOT / "bindings-node" / "index.d.ts"
PYI = ROOT / "bindings-py" / "python" / "wikidex" / "_wikidex.pyi"
BEGIN = "// BEGIN types/records.d.ts: copied by `python3 scripts/records.py write`; edit that file, not this copy\n"
END = "// END types/records.d.ts\n"

# Declarations of types/records.d.ts that the Python stubs do not mirror, and why.
OPTIONS = "options: Python takes them as keyword arguments (the native module as a JSON string)"
NOT_IN_PYTHON = {
    "WikidexError": "Python raises wikidex.WikidexError, an exception class (_errors.py)",
    "Config": OPTIONS,
    "SearchOptions": OPTIONS,
    "TraverseOptions": OPTIONS,
    "EvidenceOptions": OPTIONS,
    "WriteOptions": OPTIONS,
    "ToolLimits": OPTIONS,
    "SiteOptions": "`wikidex site` (the CLI, and the Node package's `npx wikidex site`); Python has no site build",
    "SiteManifest": "the site bundle's site.json, written by `wikidex site`; Python has no site build",
    "SiteSemantic": "a site bundle's model, in site.json, written by `wikidex site`; Python has no site build",
    "SiteReport": "what `wikidex site` wrote; Python has no site build",
    "SiteLinkRules": "site.json's links, read by the browser module; Python has no site build",
}


class Drift(Exception):
    """What the caller prints before exiting with 1."""


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


# -- TypeScript -------------------------------------------------------------------------------

def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


DECLARATION = re.compile(
    r"^[ \t]*(?:export[ \t]+)?(?:declare[ \t]+)?(?:interface|type|class|enum|const|function)[ \t]+(\w+)", re.M)


def declared(text: str) -> List[str]:
    """Names a declaration file declares at its top level, once per declaration."""
    return DECLARATION.findall(strip_comments(text))


# A type, the same for both languages: ("str",), ("num",), ("bool",), ("none",), ("any",),
# ("lit", value), ("list", T), ("dict", K, V), ("ref", name), ("union", (T, ...)) and, from
# TypeScript only, ("obj", fields) for an inline object type.
Type = Tuple[Any, ...]
Field = Tuple[str, bool, Type]  # name, optional key, type

TOKEN = re.compile(r"\s*(?:(=>)|([A-Za-z_$][\w$]*)|('[^']*'|\"[^\"]*\")|([{}\[\]<>|,;:?()=]))")


class TsTypes:
    """The interfaces and aliases of a declaration file of plain records."""

    def __init__(self, text: str):
        text = strip_comments(text)
        self.raw_aliases = {m.group(1): m.group(2) for m in
                            re.finditer(r"^\s*export\s+type\s+(\w+)\s*=\s*([^\n]+)", text, re.M)}
        self.aliases: Dict[str, Type] = {}
        for name in self.raw_aliases:
            self.aliases[name] = self.alias(name, ())
        self.interfaces: Dict[str, List[Field]] = {}
        for m in re.finditer(r"^\s*export\s+interface\s+(\w+)(?:\s+extends\s+\w+)?\s*\{", text, re.M):
            depth, at = 1, m.end()
            while depth:
                if at >= len(text):
                    raise Drift(f"types/records.d.ts: interface {m.group(1)} has no closing brace")
                depth += {"{": 1, "}": -1}.get(text[at], 0)
                at += 1
            parser = TsParser(self, text[m.end():at - 1], m.group(1), ())
            self.interfaces[m.group(1)] = parser.fields(end=None)

    def alias(self, name: str, seen: Tuple[str, ...]) -> Type:
        if name in self.aliases:
            return self.aliases[name]
        if name in seen:
            raise Drift(f"types/records.d.ts: type {name} refers to itself")
        parser = TsParser(self, self.raw_aliases[name], name, seen + (name,))
        t = parser.union()
        if parser.peek() is not None:
            raise Drift(f"types/records.d.ts: type {name}: cannot read `{self.raw_aliases[name]}`")
        return t


class TsParser:
    """A TypeScript type (or the fields of an interface's body), as far as plain records go."""

    SIMPLE = {"string": ("str",), "number": ("num",), "boolean": ("bool",), "null": ("none",),
              "unknown": ("any",), "any": ("any",)}

    def __init__(self, types: TsTypes, text: str, where: str, seen: Tuple[str, ...]):
        self.types, self.where, self.seen = types, where, seen
        self.tokens: List[str] = []
        self.at = 0
        pos = 0
        while text[pos:].strip():
            m = TOKEN.match(text, pos)
            if not m:
                raise Drift(f"types/records.d.ts: {where}: cannot read `{text[pos:pos + 40].strip()}`")
            self.tokens.append(next(g for g in m.groups() if g is not None))
            pos = m.end()

    def peek(self) -> Optional[str]:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, want: Optional[str] = None) -> str:
        tok = self.peek()
        if tok is None or (want is not None and tok != want):
            raise Drift(f"types/records.d.ts: {self.where}: expected {want or 'more'}, found {tok}")
        self.at += 1
        return tok

    def fields(self, end: Optional[str]) -> List[Field]:
        out: List[Field] = []
        while self.peek() != end:
            if self.peek() in (";", ","):
                self.at += 1
                continue
            name = self.take()
            optional = self.peek() == "?"
            if optional:
                self.at += 1
            self.take(":")
            out.append((name, optional, self.union()))
        return out

    def union(self) -> Type:
        members = [self.postfix()]
        while self.peek() == "|":
            self.at += 1
            members.append(self.postfix())
        return union(members)

    def postfix(self) -> Type:
        t = self.primary()
        while self.peek() == "[":
            self.take("[")
            self.take("]")
            t = ("list", t)
        return t

    def primary(self) -> Type:
        tok = self.take()
        if tok == "{":
            fields = self.fields(end="}")
            self.take("}")
            return ("obj", tuple(fields))
        if tok == "(":
            t = self.union()
            self.take(")")
            return t
        if tok[0] in "'\"":
            return ("lit", tok[1:-1])
        args: List[Type] = []
        if self.peek() == "<":
            self.at += 1
            args.append(self.union())
            while self.peek() == ",":
                self.at += 1
                args.append(self.union())
            self.take(">")
        if tok in self.SIMPLE and not args:
            return self.SIMPLE[tok]
        if tok == "Array" and len(args) == 1:
            return ("list", args[0])
        if tok == "Record" and len(args) == 2:
            return ("dict", args[0], args[1])
        if tok in self.types.raw_aliases and not args:
            return self.types.alias(tok, self.seen)
        if not args and re.fullmatch(r"[A-Z]\w*", tok):
            return ("ref", tok)
        raise Drift(f"types/records.d.ts: {self.where}: records are plain data; cannot read `{tok}`")


def union(members: List[Type]) -> Type:
    flat: List[Type] = []
    for m in members:
        for x in (m[1] if m[0] == "union" else (m,)):
            if x not in flat:
                flat.append(x)
    return flat[0] if len(flat) == 1 else ("union", tuple(flat))


def show(t: Type) -> str:
    kind = t[0]
    if kind == "lit":
        return repr(t[1])
    if kind == "list":
        return f"{show(t[1])}[]"
    if kind == "dict":
        return f"Record<{show(t[1])}, {show(t[2])}>"
    if kind == "ref":
        return str(t[1])
    if kind == "union":
        return " | ".join(show(m) for m in t[1])
    if kind == "obj":
        return "{ " + "; ".join(f"{n}{'?' if o else ''}: {show(x)}" for n, o, x in t[1]) + " }"
    return {"str": "string", "num": "number", "bool": "boolean", "none": "null", "any": "unknown"}[str(kind)]


# -- Python stubs -----------------------------------------------------------------------------

class PyTypes:
    """The TypedDicts of a stub file (class syntax, and the functional syntax for field names
    that are Python keywords, such as `from`) and the aliases they use."""

    def __init__(self, path: Path):
        self.path = path
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        self.aliases: Dict[str, ast.expr] = {}
        self.typeddicts: Dict[str, List[Field]] = {}
        raw: Dict[str, Tuple[List[str], List[Tuple[str, bool, ast.expr]]]] = {}
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and any(
                    self._is(b, "TypedDict") or (isinstance(b, ast.Name) and b.id in raw) for b in node.bases):
                total = self._total(node.keywords)
                fields = []
                for item in node.body:
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        fields.append(self._field(item.target.id, item.annotation, total))
                bases = [b.id for b in node.bases if isinstance(b, ast.Name) and b.id != "TypedDict"]
                raw[node.name] = (bases, fields)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name, value = node.targets[0].id, node.value
                if isinstance(value, ast.Call) and self._is(value.func, "TypedDict"):
                    total = self._total(value.keywords)
                    spec = value.args[1] if len(value.args) > 1 else None
                    if not isinstance(spec, ast.Dict):
                        raise Drift(f"{rel(path)}: {name}: TypedDict(name, {{fields}}) expected")
                    fields = []
                    for k, v in zip(spec.keys, spec.values):
                        if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                            raise Drift(f"{rel(path)}: {name}: field names must be strings")
                        fields.append(self._field(k.value, v, total))
                    raw[name] = ([], fields)
                else:
                    self.aliases[name] = value
        self._raw = raw
        for name in raw:
            self.typeddicts[name] = [(n, o, self.convert(a, f"{name}.{n}")) for n, o, a in self._flat(name, ())]

    @staticmethod
    def _is(node: ast.expr, name: str) -> bool:
        return ((isinstance(node, ast.Name) and node.id == name)
                or (isinstance(node, ast.Attribute) and node.attr == name))

    @staticmethod
    def _total(keywords: List[ast.keyword]) -> bool:
        return not any(k.arg == "total" and isinstance(k.value, ast.Constant) and k.value.value is False
                       for k in keywords)

    def _field(self, name: str, annotation: ast.expr, total: bool) -> Tuple[str, bool, ast.expr]:
        optional = not total
        while isinstance(annotation, ast.Subscript) and (
                self._is(annotation.value, "NotRequired") or self._is(annotation.value, "Required")):
            optional = self._is(annotation.value, "NotRequired")
            annotation = annotation.slice
        return name, optional, annotation

    def _flat(self, name: str, seen: Tuple[str, ...]) -> List[Tuple[str, bool, ast.expr]]:
        if name in seen:
            raise Drift(f"{rel(self.path)}: TypedDict {name} inherits from itself")
        bases, fields = self._raw[name]
        out: List[Tuple[str, bool, ast.expr]] = []
        for b in bases:
            if b not in self._raw:
                raise Drift(f"{rel(self.path)}: {name}: base {b} is not a TypedDict of the stubs")
            out += self._flat(b, seen + (name,))
        return out + fields

    def public(self) -> Set[str]:
        return {n for n in self.typeddicts if not n.startswith("_")}

    def convert(self, node: ast.expr, where: str, seen: Tuple[str, ...] = ()) -> Type:
        if isinstance(node, ast.Constant):
            if node.value is None:
                return ("none",)
            if isinstance(node.value, str):  # a forward reference
                return self.convert(ast.parse(node.value, mode="eval").body, where, seen)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return union([self.convert(node.left, where, seen), self.convert(node.right, where, seen)])
        if isinstance(node, (ast.Name, ast.Attribute)):
            name = node.id if isinstance(node, ast.Name) else node.attr
            simple = {"str": ("str",), "int": ("num",), "float": ("num",), "bool": ("bool",),
                      "Any": ("any",), "object": ("any",)}
            if name in simple:
                return simple[name]
            if name in self._raw:
                return ("ref", name)
            if name in self.aliases and name not in seen:
                return self.convert(self.aliases[name], where, seen + (name,))
        if isinstance(node, ast.Subscript):
            head = node.value.id if isinstance(node.value, ast.Name) else getattr(node.value, "attr", "")
            args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
            if head == "Optional" and len(args) == 1:
                return union([self.convert(args[0], where, seen), ("none",)])
            if head == "Union":
                return union([self.convert(a, where, seen) for a in args])
            if head in ("List", "list") and len(args) == 1:
                return ("list", self.convert(args[0], where, seen))
            if head in ("Dict", "dict") and len(args) == 2:
                return ("dict", self.convert(args[0], where, seen), self.convert(args[1], where, seen))
            if head == "Literal":
                lits: List[Type] = []
                for a in args:
                    if not (isinstance(a, ast.Constant) and isinstance(a.value, str)):
                        raise Drift(f"{rel(self.path)}: {where}: only string literals")
                    lits.append(("lit", a.value))
                return union(lits)
        raise Drift(f"{rel(self.path)}: {where}: cannot read `{ast.unparse(node)}`")


# -- comparing --------------------------------------------------------------------------------

class Compare:
    """Records of types/records.d.ts against the stubs' TypedDicts; `errors` says what differs."""

    def __init__(self, py: PyTypes):
        self.py = py
        self.errors: List[str] = []
        self.inline: Set[str] = set()  # TypedDicts standing for an inline object type

    def fields(self, where: str, ts: List[Field], py_name: str) -> None:
        py = {n: (o, t) for n, o, t in self.py.typeddicts[py_name]}
        tsd = {n: (o, t) for n, o, t in ts}
        for n in sorted(set(tsd) - set(py)):
            self.errors.append(f"{where}: field `{n}` is missing from TypedDict {py_name}")
        for n in sorted(set(py) - set(tsd)):
            self.errors.append(f"{where}: TypedDict {py_name} has `{n}`, the record has no such field")
        for n in sorted(tsd.keys() & py.keys()):
            (to, tt), (po, pt) = tsd[n], py[n]
            if to != po:
                want = "optional (NotRequired)" if to else "required"
                self.errors.append(f"{where}.{n}: the key is {want} in types/records.d.ts, not in {py_name}")
            why = self.type(f"{where}.{n}", tt, pt)
            if why:
                self.errors.append(f"{where}.{n}: `{show(tt)}` in types/records.d.ts; {py_name} has {why}")

    def type(self, where: str, ts: Type, py: Type) -> Optional[str]:
        """None when the stubs' `py` is the records' `ts`, else what the stubs have."""
        if ts[0] == "obj" and py[0] == "ref":
            name, before = str(py[1]), len(self.errors)
            self.fields(where, list(ts[1]), name)
            self.inline.add(name)
            return None if len(self.errors) == before else f"{name}, whose fields differ (above)"
        if ts[0] != py[0]:
            return f"`{show(py)}`"
        if ts[0] == "union":
            left = list(py[1])
            if len(left) != len(ts[1]):
                return f"`{show(py)}`"
            for member in ts[1]:
                match = next((p for p in left if self.same(where, member, p)), None)
                if match is None:
                    return f"`{show(py)}`"
                left.remove(match)
            return None
        if ts[0] == "list":
            return self.type(where, ts[1], py[1])
        if ts[0] == "dict":
            return self.type(where, ts[1], py[1]) or self.type(where, ts[2], py[2])
        return None if ts == py else f"`{show(py)}`"

    def same(self, where: str, ts: Type, py: Type) -> bool:
        errors = list(self.errors)
        ok = self.type(where, ts, py) is None
        self.errors = errors
        return ok


def check_python(ts: TsTypes, errors: List[str]) -> int:
    py = PyTypes(PYI)
    cmp = Compare(py)
    for name in sorted(set(NOT_IN_PYTHON) - set(ts.interfaces)):
        errors.append(f"scripts/records.py: NOT_IN_PYTHON names {name}, which types/records.d.ts does not declare")
    checked = 0
    for name, fields in ts.interfaces.items():
        if name in NOT_IN_PYTHON:
            continue
        if name not in py.typeddicts:
            errors.append(f"{rel(PYI)}: no TypedDict {name} (types/records.d.ts declares it; "
                          "or list it in NOT_IN_PYTHON in scripts/records.py, with why)")
            continue
        cmp.fields(name, fields, name)
        checked += 1
    for name in sorted(py.public() - set(ts.interfaces) - cmp.inline):
        errors.append(f"{rel(PYI)}: TypedDict {name} is no record of types/records.d.ts (declare the record there)")
    errors += [f"{rel(PYI)}: {e}" for e in cmp.errors]
    return checked


# -- the copies -------------------------------------------------------------------------------

def region(records: str) -> str:
    return BEGIN + records + END


def split(path: Path, text: str) -> Tuple[str, str, str]:
    """The file's text before its copy of the records, the copy, and after it."""
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise Drift(f"{rel(path)}: needs the records' BEGIN and END lines once each, in order:\n  {BEGIN}  {END}")
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[:start], text[start:end], text[end:]


def own_declarations(path: Path, outside: str, names: Set[str], errors: List[str]) -> None:
    for name in declared(outside):
        if name in names:
            errors.append(f"{rel(path)}: declares {name} outside its copy of the records: "
                          "a record is declared once, in types/records.d.ts")


def normalized(text: str) -> List[str]:
    """Lines without their indentation (wasm-bindgen indents the TypeScript section anew)."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def check_shipped(path: Path, records: str, names: Set[str], errors: List[str], rebuild: str) -> None:
    """A built declaration file holds the records (indentation aside) once, and declares none of
    them elsewhere."""
    if not path.exists():
        errors.append(f"{rel(path)}: missing")
        return
    lines, want = normalized(path.read_text(encoding="utf-8")), normalized(region(records))
    at = [i for i in range(len(lines) - len(want) + 1) if lines[i:i + len(want)] == want]
    if len(at) != 1:
        errors.append(f"{rel(path)}: holds the records of types/records.d.ts {len(at)} times, not once: "
                      f"{rebuild}")
        return
    rest = "\n".join(lines[:at[0]] + lines[at[0] + len(want):])
    own_declarations(path, rest, names, errors)


def check(records: str, names: Set[str], errors: List[str]) -> str:
    """The checks of `check` (the module's docs); what was checked, for the summary line."""
    for path in HEADERS:
        before, copy, after = split(path, path.read_text(encoding="utf-8"))
        if copy != region(records):
            errors.append(f"{rel(path)}: its copy of the records differs from types/records.d.ts: run "
                          "`python3 scripts/records.py write` (and edit types/records.d.ts, not a copy)")
        own_declarations(path, before + after, names, errors)
    header, dts = NODE_HEADER.read_text(encoding="utf-8"), NODE_DTS.read_text(encoding="utf-8")
    if not dts.startswith(header):
        errors.append(f"{rel(NODE_DTS)}: does not start with {rel(NODE_HEADER)} as it is now: "
                      "run `make node` and commit index.d.ts")
    check_shipped(NODE_DTS, records, names, errors, "run `make node` and commit index.d.ts")
    checked = check_python(TsTypes(records), errors)
    return (f"{len(names)} declarations in types/records.d.ts, copied into "
            f"{', '.join(rel(p) for p in HEADERS)} and {rel(NODE_DTS)}; "
            f"{checked} TypedDicts of {rel(PYI)} match their records")


def write(records: str) -> None:
    for path in HEADERS:
        before, copy, after = split(path, path.read_text(encoding="utf-8"))
        if copy != region(records):
            path.write_text(before + region(records) + after, encoding="utf-8")
            print(f"records.py: wrote the records into {rel(path)}")


def main(argv: List[str]) -> int:
    if len(argv) < 2 or argv[1] not in ("write", "check", "shipped"):
        print(__doc__.split("\n\n")[2], file=sys.stderr)
        return 2
    records = RECORDS.read_text(encoding="utf-8")
    errors: List[str] = []
    summary = ""
    try:
        TsTypes(records)  # the records are plain data this script reads, before any copy is made
        listed = declared(records)
        names = set(listed)
        for name in sorted(n for n in names if listed.count(n) > 1):
            errors.append(f"types/records.d.ts: declares {name} {listed.count(name)} times")
        if argv[1] == "write" and not errors:
            write(records)
        elif argv[1] == "shipped":
            for file in argv[2:]:
                check_shipped(Path(file).resolve(), records, names, errors, "build it again")
        elif argv[1] == "check":
            summary = check(records, names, errors)
    except Drift as e:
        errors.append(str(e))
    for msg in errors:
        print(f"records.py: {msg}", file=sys.stderr)
    if summary and not errors:
        print(f"records.py: {summary}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
