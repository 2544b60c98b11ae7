"""MkDocs hook: leave out the lines of ```rust blocks that rustdoc hides (`# ...`), as the crate's
own docs do; the doc tests (`pub mod book` in core/src/lib.rs) still run them."""

import re

FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([^\s`]*)")


def on_page_markdown(markdown, **_):
    out = []
    fence = None
    for line in markdown.split("\n"):
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence = (m.group(2), m.group(3).lower() == "rust")
            out.append(line)
            continue
        if line.strip().startswith(fence[0]):
            fence = None
            out.append(line)
            continue
        body = line.strip()
        if fence[1] and (body == "#" or body.startswith("# ")):
            continue
        out.append(line)
    return "\n".join(out)
