// The wikidex side of bench/compare_browser.mjs: the docs site's own search worker
// (examples/docs-site/static/worker.js: the wasm module, the blob read by range requests, then one
// `index.search` per message), driven as the site's search page drives it.
//
// ?site=/wx-cacm/ (where worker.js, pkg/ and the blob are) &blob=cacm.wdx [&head=BYTES]
// [&q=QUERY]; `head`: the blob's head length, which the docs site's page hands its worker
// With q, the query is searched as soon as the page loads and `window.first` is set when its
// results are back: { t (ms since navigation start), n (hits) } or { error }.
const params = new URLSearchParams(location.search)
const site = new URL(params.get('site'), location.href)
const worker = new Worker(new URL('worker.js', site), { type: 'module' })
const waiting = new Map()
let seq = 0
let loaded, failed
const ready = new Promise((ok, fail) => {
  loaded = ok
  failed = fail
})
worker.onmessage = ({ data }) => {
  if (data.type === 'ready') loaded(data)
  else if (data.type === 'error') failed(new Error(`${data.code}: ${data.message}`))
  else if (data.type === 'results' || data.type === 'search-error') {
    waiting.get(data.seq)?.(data)
    waiting.delete(data.seq)
  }
}
worker.onerror = (e) => failed(new Error(`worker: ${e.message}`))
worker.postMessage({ type: 'load', url: new URL(params.get('blob'), site).href, headBytes: Number(params.get('head')) || null })

// What a search asks for. `keystroke`: the site's results list (10 page hits, snippets with
// highlights; the site also asks for `explain`, left out here as Pagefind has no such panel).
// `full`: the ranking only, 100 deep, for nDCG@10 and MAP.
const OPTIONS = {
  keystroke: (n) => ({ limit: n, always: 'separate' }),
  full: (n) => ({ limit: n, always: 'separate', snippets: false }),
}

/** One search as the site sends it: time from postMessage to the results on this thread. */
async function search(query, n, kind) {
  await ready
  const start = performance.now()
  const data = await new Promise((ok) => {
    const s = ++seq
    waiting.set(s, ok)
    worker.postMessage({ type: 'search', seq: s, query, options: OPTIONS[kind](n) })
  })
  const ms = performance.now() - start
  if (data.type === 'search-error') throw new Error(`${data.code}: ${data.message}`)
  return { ms, inner: data.ms, total: data.results.hits.length, ids: data.results.hits.map((h) => h.page_id) }
}

window.bench = { ready, search }
const q = params.get('q')
if (q !== null) {
  search(q, 10, 'keystroke').then(
    (r) => (window.first = { t: performance.now(), n: r.total }),
    (e) => (window.first = { error: String(e?.message ?? e) }),
  )
}
