#!/usr/bin/env python3
"""What each crate costs in the browser module (run by scripts/wasm-size.sh; standard library only).

    scripts/wasm-size.py MODULE.wasm LINK.map [-v]

MODULE.wasm is wasm-bindgen's output with the name section kept (--keep-debug), LINK.map the
linker's map of the same link (wasm-ld --Map). Prints one row per crate: its function bodies
(code) and its read-only data (tables, strings), raw and gzip -9 alone.

- Code: each function by its (demangled) name; a generic instantiation belongs to the first
  crate of ours or of a dependency named in it (`<Vec<wikidex::Page> as Clone>::clone` is
  wikidex's), else to core/alloc/std; an exported function (wasm-bindgen names them
  `index_search` & co.) is the binding's.
- Data: after LTO most of .rodata is anonymous (`.Lanon.<hash>.<n>`). A piece belongs to the
  crate of the functions whose code holds its address (an `i32.const` of its start, or a
  load's offset inside it);
  the pieces of one `<hash>` (one source module) go together, to the crate that loads most of them.
  Pieces no function loads by address (loaded through other tables) follow their `<hash>`.
  An inlined function's loads count for the crate it was inlined into. `-v` prints the votes.

gzip of a crate's bytes alone is an estimate of its share: the whole module compresses better
than the sum of its parts (the total row says by how much).
"""
import bisect
import collections
import re
import sys
import zlib

OURS = ["wikidex_wasm", "wikidex"]
DEPS = [
    "pulldown_cmark", "yaml_rust2", "serde_json", "rust_stemmers", "unicode_normalization",
    "unicode_segmentation", "unicase", "blake3", "postcard", "hashlink", "hashbrown", "arraydeque",
    "tinyvec", "memchr", "zmij", "itoa", "thiserror", "dlmalloc", "wasm_bindgen", "js_sys",
    "serde_core", "serde",
]
STD = ["core", "alloc", "std"]


def leb(b, i):
    r = s = 0
    while True:
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, i


def sections(b):
    i = 8
    while i < len(b):
        sid = b[i]
        n, j = leb(b, i + 1)
        yield sid, b[j : j + n]
        i = j + n


def function_names(custom):
    """The function names of a `name` custom section."""
    n, i = leb(custom, 0)
    assert custom[i : i + n] == b"name"
    i += n
    names = {}
    while i < len(custom):
        kind = custom[i]
        size, i = leb(custom, i + 1)
        end = i + size
        if kind == 1:
            count, i = leb(custom, i)
            for _ in range(count):
                idx, i = leb(custom, i)
                ln, i = leb(custom, i)
                names[idx] = custom[i : i + ln].decode("utf-8", "replace")
                i += ln
        i = end
    return names


def imported_functions(body):
    count, i = leb(body, 0)
    funcs = 0
    for _ in range(count):
        for _ in range(2):
            ln, i = leb(body, i)
            i += ln
        kind = body[i]
        i += 1
        if kind == 0:
            _, i = leb(body, i)
            funcs += 1
        elif kind == 1:
            i += 1
            flags = body[i]
            _, i = leb(body, i + 1)
            if flags & 1:
                _, i = leb(body, i)
        elif kind == 2:
            flags = body[i]
            _, i = leb(body, i + 1)
            if flags & 1:
                _, i = leb(body, i)
        elif kind == 3:
            i += 2
        else:
            _, i = leb(body, i + 1)
    return funcs


def addresses(body):
    """Constants in a function body that may be data addresses: `i32.const` values and the
    offsets of loads and stores (LLVM folds a table's address into the offset). A byte scan, not
    a decoder: a stray match is possible, and the vote per source module outweighs it."""
    for m in re.finditer(rb"[\x41\x28-\x3e]", body):
        j = m.end()
        if j + 4 > len(body):
            continue
        exact = body[j - 1] == 0x41
        if not exact:
            if body[j] > 4:  # alignment exponent of a memarg
                continue
            j += 1
        v, _ = leb(body, j)
        if v >= 0x100000:
            yield v, exact


def export_names(body):
    count, i = leb(body, 0)
    names = set()
    for _ in range(count):
        ln, i = leb(body, i)
        names.add(body[i : i + ln].decode("utf-8", "replace"))
        _, i = leb(body, i + ln + 1)
    return names


def crate_of(name, exports=()):
    if name in exports:
        # The binding's exported functions, named by wasm-bindgen; LTO inlines into them.
        return "wikidex_wasm"
    toks = re.findall(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[[0-9a-f]+\])?::", name)
    for group in (OURS, DEPS, STD):
        for t in toks:
            if t in group:
                return t
    return "(wasm-bindgen glue and other)"


def main(module, mapfile, *_flags):
    b = open(module, "rb").read()
    secs = list(sections(b))
    names = {}
    exports = set()
    nimports = 0
    code = None
    for sid, body in secs:
        if sid == 0 and body[1:5] == b"name":
            names = function_names(body)
        elif sid == 2:
            nimports = imported_functions(body)
        elif sid == 7:
            exports = export_names(body)
        elif sid == 10:
            code = body
    data_syms = []
    in_data = False
    for line in open(mapfile):
        p = line.split(None, 4)
        if len(p) >= 4 and p[0] == "-" and (p[3].isupper() or p[3].startswith("CUSTOM")):
            in_data = p[3] == "DATA"
            continue
        if in_data and len(p) == 4 and p[0] != "-" and not p[3].startswith(("/", ".rodata")):
            data_syms.append((int(p[0], 16), int(p[2], 16), p[3]))
    data_syms.sort()
    starts = [a for a, _, _ in data_syms]

    code_bytes = collections.defaultdict(bytearray)
    loads = collections.defaultdict(collections.Counter)  # data symbol -> crate -> loads
    count, i = leb(code, 0)
    for k in range(count):
        size, i = leb(code, i)
        body = code[i : i + size]
        i += size
        crate = crate_of(names.get(nimports + k, ""), exports)
        code_bytes[crate] += body
        for v, exact in addresses(body):
            k2 = bisect.bisect_right(starts, v) - 1
            if k2 >= 0 and (v == starts[k2] or not exact and v < starts[k2] + data_syms[k2][1]):
                loads[data_syms[k2][2]][crate] += 1

    module_of = lambda s: (m.group(1) if (m := re.match(r"\.Lanon\.([0-9a-f]+)\.", s)) else None)
    per_module = collections.defaultdict(collections.Counter)
    for sym, c in loads.items():
        mod = module_of(sym)
        if mod:
            per_module[mod].update(c)
    if "-v" in sys.argv:
        for mod, c in per_module.items():
            print(mod[:6], c.most_common(4), file=sys.stderr)
    data_bytes = collections.defaultdict(bytearray)
    # The map's file offsets are the linker's output's; wasm-bindgen rewrote the file but kept
    # the memory addresses, so read each piece at its address in the data segments.
    wasm_data = next(body for sid, body in secs if sid == 11)
    seg_count, j = leb(wasm_data, 0)
    segments = []
    for _ in range(seg_count):
        flags, j = leb(wasm_data, j)
        assert flags == 0, "only active segments of memory 0 are read"
        assert wasm_data[j] == 0x41
        addr, j = leb(wasm_data, j + 1)
        assert wasm_data[j] == 0x0B
        n, j = leb(wasm_data, j + 1)
        segments.append((addr, wasm_data[j : j + n]))
        j += n

    def read(addr, n):
        for a, seg in segments:
            if a <= addr and addr + n <= a + len(seg):
                return seg[addr - a : addr - a + n]
        return b"\0" * n  # .bss: zeros, not in any segment

    for addr, size, name in data_syms:
        if name.startswith("<internal>") or name == ".bss":
            continue
        if name.startswith(".Lanon"):
            c = loads.get(name) or per_module.get(module_of(name))
            crate = c.most_common(1)[0][0] if c else "(data not attributed)"
        else:
            crate = crate_of(name) if "::" in name else crate_of(demangle_path(name))
        data_bytes[crate] += read(addr, size)

    gz = lambda x: len(zlib.compress(bytes(x), 9))
    rows = []
    for crate in set(code_bytes) | set(data_bytes):
        c, d = code_bytes.get(crate, b""), data_bytes.get(crate, b"")
        rows.append((gz(c + d), len(c), len(d), gz(c), gz(d), crate))
    rows.sort(reverse=True)
    print(f"{'crate':32} {'code':>8} {'data':>8} {'code gz':>8} {'data gz':>8} {'both gz':>8}")
    for both, c, d, cg, dg, crate in rows:
        print(f"{crate:32} {c:8d} {d:8d} {cg:8d} {dg:8d} {both:8d}")
    tc = sum(r[1] for r in rows)
    td = sum(r[2] for r in rows)
    print(f"{'sum of the rows':32} {tc:8d} {td:8d} {'':8} {'':8} {sum(r[0] for r in rows):8d}")
    # The module without its custom sections (names, producers): what wasm-bindgen ships.
    shipped = bytearray(b[:8])
    i = 8
    while i < len(b):
        n, j = leb(b, i + 1)
        if b[i] != 0:
            shipped += b[i : j + n]
        i = j + n
    print(f"{'the module without custom sections':32} {len(shipped):17d} {'':17} {gz(shipped):8d}")


def demangle_path(sym):
    """Crate names of a mangled symbol (v0 `Cs<hash>_<n><name>` or legacy `_ZN<n><name>`)."""
    parts = re.findall(r"(?:Cs[0-9A-Za-z]+_|N)(\d+)([A-Za-z_][A-Za-z0-9_]*)", sym)
    out = []
    for n, rest in parts:
        out.append(rest[: int(n)])
    return "::".join(out) + "::"


if __name__ == "__main__":
    main(*sys.argv[1:])
