// Where the docs site puts a page (shared by build.mjs, which writes the pages, and the search
// page, which links to them). Page ids are `key` or `user/<name>/<key>`; keys are flat
// tokens, so `.` cannot clash.
export const pageHref = (id) => `pages/${id.replaceAll('/', '.')}.html`
