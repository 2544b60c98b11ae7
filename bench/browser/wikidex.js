// The wikidex side of bench/compare_browser.mjs and bench/docs-sites/compare.mjs: the search bundle `wikidex site` writes
// (site.json, the UI's worker.js, the wasm search module, the blob), driven as its UI (ui.js)
// drives it: site.json fetched, worker.js started from the bundle folder, `open` with the
// manifest (the worker then reads the blob's head, exactly `head_end` bytes, while the module
// compiles), then one `search` message per query. The UI's element and rendering are left
// out, as Pagefind's UI is on its side.
//
// ?bundle=/wx-cacm/wikidex/ (the bundle folder) [&q=QUERY]
// With q, the query is searched as soon as the page loads and `window.first` is set when its
// results are back: { t (ms since navigation start), n (hits) } or { error }.
const params = new URLSearchParams(location.search)
const bundle = new URL(params.get('bundle'), location.href)
const waiting = new Map()
let seq = 0
let loaded, failed
const ready = new Promise((ok, fail) => {
  loaded = ok
  failed = fail
})
const worker = new Worker(new URL('worker.js', bundle), { type: 'module' })
worker.onmessage = ({ data }) => {
  if (data.type === 'ready') loaded(data)
  else if (data.type === 'error') failed(new Error(`${data.code}: ${data.message}`))
  else if (data.type === 'results' || data.type === 'search-error') {
    waiting.get(data.id)?.(data)
    waiting.delete(data.id)
  }
}
worker.onerror = (e) => failed(new Error(`worker: ${e.message}`))
fetch(new URL('site.json', bundle))
  .then((res) => (res.ok ? res.json() : Promise.reject(new Error(`site.json: HTTP ${res.status}`))))
  .then((site) => worker.postMessage({ type: 'open', site }), failed)

// What a search asks for. `keystroke`: the UI's results list, here 10 page hits with snippets
// and highlights (the UI also asks for `explain`, left out here as Pagefind has no such
// panel). `full`: the ranking only, as deep as the bench asks (100 for MAP, 10 for nDCG@10). The worker adds each hit's
// URL, as it does for the UI.
const OPTIONS = {
  keystroke: (n) => ({ limit: n }),
  full: (n) => ({ limit: n, snippets: false }),
}

/** One search as the UI sends it: time from postMessage to the results on this thread. */
async function search(query, n, kind) {
  await ready
  const start = performance.now()
  const data = await new Promise((ok) => {
    const id = ++seq
    waiting.set(id, ok)
    worker.postMessage({ type: 'search', id, query, options: OPTIONS[kind](n) })
  })
  const ms = performance.now() - start
  if (data.type === 'search-error') throw new Error(`${data.code}: ${data.message}`)
  return { ms, total: data.results.hits.length, ids: data.results.hits.map((h) => h.path) }
}

window.bench = { ready, search }
const q = params.get('q')
if (q !== null) {
  search(q, 10, 'keystroke').then(
    (r) => (window.first = { t: performance.now(), n: r.total }),
    (e) => (window.first = { error: String(e?.message ?? e) }),
  )
}
