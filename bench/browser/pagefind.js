// The Pagefind side of bench/compare_browser.mjs: its own runtime (pagefind.js, which runs
// its wasm in its Web Worker, pagefind-worker.js), used as its UI uses it: `search(term)`,
// then `data()` of each result shown (the page's URL, title and excerpt: one fragment file
// each).
//
// ?site=/pf-cacm/ (the site folder holding pagefind/) [&q=QUERY]
// With q, the query is searched as soon as the page loads and `window.first` is set when the
// data of its first 10 results is in: { t (ms since navigation start), n (results) } or
// { error }.
const params = new URLSearchParams(location.search)
const site = new URL(params.get('site'), location.href)
const loading = import(new URL('pagefind/pagefind.js', site).href)
const ready = loading.then(async (pagefind) => {
  await pagefind.options({ basePath: new URL('pagefind/', site).pathname })
  return pagefind
})

/** One search, then the data of its first n results (what the UI shows, or what nDCG needs). */
async function search(query, n) {
  const pagefind = await ready
  const start = performance.now()
  const found = await pagefind.search(query)
  const data = await Promise.all(found.results.slice(0, n).map((r) => r.data()))
  const ms = performance.now() - start
  return { ms, total: found.results.length, ids: data.map((d) => d.url) }
}

window.bench = { ready: ready.then(() => true), search }
const q = params.get('q')
if (q !== null) {
  search(q, 10).then(
    (r) => (window.first = { t: performance.now(), n: r.total }),
    (e) => (window.first = { error: String(e?.message ?? e) }),
  )
}
