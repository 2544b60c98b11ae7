// The docs site's search, off the main thread: loads the wasm search module and opens the
// blob, then answers each search message with the core's results as they are (ranking,
// filters, snippets, explanations all come from the module; nothing is computed here).
//
// The blob is sectioned (`wikidex build --sectioned`): ranged.js fetches its head, then for
// each search the byte ranges the core says it reads (HTTP range requests; a part once
// fetched stays), so the first result comes before the whole blob would have. A server that
// does not answer range requests sends the whole blob, and the search runs on it as it is.
//
// The semantic toggle: `model` loads the full module (pkg-full: the model runner), the model
// and its tokenizer.json from the URLs the page gives, reporting the bytes as they arrive;
// the same blob is loaded into the full module and the model attached to it. Until then every
// search runs on the search module, and its semantic lane reports itself skipped; from then
// on searches with the toggle on run on the full module, all three lanes.
// The search module has `RangedIndex` only (no `Index`): ranged.js takes the namespace as it is.
import init, * as wasm from './pkg/wikidex_wasm.js'
import { openBlob } from './pkg/ranged.js'

let index = null // a BlobSearch (pkg/ranged.js)
let blobUrl = null
let semantic = null // the full module's index with the model attached, once loaded
let modelLoading = false

/** Opens the blob at `url`; `headBytes`, when the page knows it, is the length of its head. */
async function load(url, headBytes) {
  try {
    blobUrl = url
    // init() fetches pkg/wikidex_wasm_bg.wasm next to the module; the blob's first bytes are
    // requested meanwhile: the head exactly when its length is known.
    index = await openBlob(url, wasm, { ready: init(), ...(headBytes > 0 ? { prefix: headBytes } : {}) })
    postMessage({ type: 'ready', pages: index.pageCount, chunks: index.chunkCount, ranged: index.inParts, fetched: index.fetched })
  } catch (e) {
    postMessage({ type: 'error', url, code: e?.code ?? null, message: String(e?.message ?? e) })
  }
}

/** The bytes at `url`, posting `{type: 'model-progress'}` as they arrive. */
async function fetchBytes(url, progress) {
  const res = await fetch(url)
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}${res.statusText ? ' ' + res.statusText : ''}`)
  const total = Number(res.headers.get('content-length')) || null
  const reader = res.body.getReader()
  const parts = []
  let loaded = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    parts.push(value)
    loaded += value.length
    progress(loaded, total)
  }
  const out = new Uint8Array(loaded)
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

async function loadModel({ model, tokenizer, maxLength }) {
  if (modelLoading || semantic) return
  modelLoading = true
  const start = performance.now()
  try {
    // The full module loads the whole blob (its vectors included): fetched here, with the model.
    const bytes = { model: [0, null], tokenizer: [0, null], blob: [0, null] }
    const progress = (which) => (loaded, total) => {
      bytes[which] = [loaded, total]
      const parts = Object.values(bytes)
      const known = parts.every(([, total]) => total !== null)
      const sum = (i) => parts.reduce((n, p) => n + p[i], 0)
      postMessage({ type: 'model-progress', loaded: sum(0), total: known ? sum(1) : null })
    }
    const [full, modelBytes, tokenizerBytes, blob] = await Promise.all([
      import('./pkg-full/wikidex_wasm.js').then(async (m) => {
        await m.default() // fetches pkg-full/wikidex_wasm_bg.wasm
        return m
      }),
      fetchBytes(model, progress('model')),
      fetchBytes(tokenizer, progress('tokenizer')),
      fetchBytes(blobUrl, progress('blob')),
    ])
    const loaded = full.Index.fromBytes(blob)
    loaded.attachModel(full.Model.fromBytes(modelBytes, tokenizerBytes, { maxLength }))
    semantic = loaded
    postMessage({ type: 'model-ready', ms: performance.now() - start, bytes: modelBytes.length + tokenizerBytes.length })
  } catch (e) {
    postMessage({ type: 'model-error', code: e?.code ?? null, message: String(e?.message ?? e) })
  } finally {
    modelLoading = false
  }
}

onmessage = async ({ data }) => {
  if (data.type === 'load') {
    load(data.url, data.headBytes)
  } else if (data.type === 'model') {
    loadModel(data)
  } else if (data.type === 'search' && index) {
    try {
      const start = performance.now()
      const target = data.semantic && semantic ? semantic : index
      const options = data.semantic ? data.options : { ...data.options, lanes: ['lexical', 'token'] }
      // Fetches what the search reads first, when the blob is read in parts.
      const results = await target.search(data.query, options)
      postMessage({ type: 'results', seq: data.seq, results, ms: performance.now() - start, fetched: index.fetched })
    } catch (e) {
      postMessage({ type: 'search-error', seq: data.seq, code: e?.code ?? null, message: String(e?.message ?? e) })
    }
  }
}
