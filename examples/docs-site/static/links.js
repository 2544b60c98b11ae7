// Where the docs site puts a page (shared by build.mjs, which writes the pages, and the search
// page, which links to them). Page ids are `key` or `user/<name>/<key>`; keys are flat
// tokens, so `.` cannot clash. `pageFile`: the file's path in the site; `pageHref`: the same
// as a relative URL, the file name percent-encoded (a key may hold `#`, `?`, `%`, quotes).
export const pageFile = (id) => `pages/${id.replaceAll('/', '.')}.html`
export const pageHref = (id) => `pages/${encodeURIComponent(id.replaceAll('/', '.'))}.html`
