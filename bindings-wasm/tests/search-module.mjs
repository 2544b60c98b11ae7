// How the search module (bindings-wasm/pkg-search) runs the shared vectors, for its Node run
// (search.test.mjs) and its Chromium run (browser/vectors.test.mjs): the ops it lacks. No
// imports: a browser loads this file as it is.

const NO_WRITES = 'the search module has no page writes'
const AGENT_SIDE = 'the search module leaves out the agent side (feature agent): tools, citation checks, lint, graph walks'
const RANGED_ONLY = 'the search module has RangedIndex only (no feature index): search, not chunk or Index.fromBytes'
const NO_RECORDS = "the search module has no page records (no feature page-record): a site's pages are HTML"

/** The ops the search module does not have, as the runner's `api.lacks` takes them. */
export const LACKS = {
  build_report: RANGED_ONLY,
  page_record: NO_RECORDS,
  lint: AGENT_SIDE,
  neighbors: AGENT_SIDE,
  verify: AGENT_SIDE,
  check_answer: AGENT_SIDE,
  uncited_support: AGENT_SIDE,
  pointers: AGENT_SIDE,
  parse_headers: AGENT_SIDE,
  upsert_page: NO_WRITES,
  delete_page: NO_WRITES,
  rename_page: NO_WRITES,
  from_bytes: RANGED_ONLY,
  call_tool: AGENT_SIDE,
  chunk: RANGED_ONLY,
}

/**
 * The runner's `api` for the search module: each case's wiki built by the whole module
 * (`full`), written as a blob and given whole to the search module's
 * `RangedIndex.open` (every part loaded), as a site's worker does with a blob that comes whole.
 * Vectors a case sets go to the whole index; the blob is written after them.
 */
export function searchApi(full, search) {
  const open = (whole) => {
    let ranged = null
    const get = () => (ranged ??= search.RangedIndex.open(whole.toBytes()))
    return {
      setVectors: (...args) => {
        whole.setVectors(...args)
        ranged = null
      },
      search: (query, options) => get().search(query, options),
      // What a search hit's snippet offset is checked against: the page's body, from the whole
      // module (the search module has no page records; its page_record cases are skipped).
      pageRecord: (key, scope) => whole.pageRecord(key, scope),
    }
  }
  const absent = (what) => () => {
    throw new Error(`the search module has no ${what}`)
  }
  return {
    build: (files, config) => open(full.Index.build(files, { config })),
    search: (index, query, options) => index.search(query, options),
    lint: absent('lint'),
    fromBytes: absent('Index.fromBytes'),
    parseHeaders: absent('parseHeaders'),
    isCoreError: (e) => typeof e?.code === 'string',
    lacks: LACKS,
  }
}
