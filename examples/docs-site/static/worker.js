// The docs site's search, off the main thread: loads the wasm module and the blob, then
// answers each search message with the core's results as they are (ranking, filters,
// snippets, explanations all come from the module; nothing is computed here).
import init, { Index } from './pkg/wikidex_wasm.js'

let index = null

async function load(url) {
  try {
    await init() // fetches pkg/wikidex_wasm_bg.wasm next to the module
    const res = await fetch(url)
    if (!res.ok) throw new Error(`HTTP ${res.status}${res.statusText ? ' ' + res.statusText : ''}`)
    index = Index.fromBytes(new Uint8Array(await res.arrayBuffer()))
    postMessage({ type: 'ready', pages: index.pageCount, chunks: index.chunkCount })
  } catch (e) {
    postMessage({ type: 'error', url, code: e?.code ?? null, message: String(e?.message ?? e) })
  }
}

onmessage = ({ data }) => {
  if (data.type === 'load') {
    load(data.url)
  } else if (data.type === 'search' && index) {
    try {
      const start = performance.now()
      const results = index.search(data.query, data.options)
      postMessage({ type: 'results', seq: data.seq, results, ms: performance.now() - start })
    } catch (e) {
      postMessage({ type: 'search-error', seq: data.seq, code: e?.code ?? null, message: String(e?.message ?? e) })
    }
  }
}
