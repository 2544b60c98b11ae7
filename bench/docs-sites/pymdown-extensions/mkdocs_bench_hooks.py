"""The MkDocs hook of bench/docs-sites/pymdown-extensions/mkdocs.yml: the pages'
`icon: lucide/...` frontmatter names Zensical's Lucide icons, which Material for MkDocs does
not have (its templates fail on a missing icon), so the icon is dropped; nothing else is
touched."""


def on_page_markdown(markdown, page, **kwargs):
    icon = page.meta.get("icon")
    if isinstance(icon, str) and icon.startswith("lucide/"):
        del page.meta["icon"]
    return markdown
