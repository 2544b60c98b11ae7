// The search UI's worker (ui.js starts it from the bundle folder): the wasm search module and
// the site's blob, off the page's thread. It answers each search with the core's results as
// they are, and each hit's URL: the page the site's generator built from the hit's source file,
// with the anchor of the heading the hit is under (the module's `SiteLinks`, from site.json's
// `links`), resolved against the site's root (site.json's `root`, relative to this folder),
// and the headings it is shown under, as the site renders them.
//
// The blob is read with range requests (ranged.js): exactly its head first (`head_end`), then
// the parts each search reads. A server that ignores ranges sends it whole; the answers are
// the same.
//
// A search with `semantic` set (the UI's toggle, offered when site.json has `semantic`) embeds
// the query with the bundle's model, run by the module with the model runner (both loaded the
// first time, from site.json's `semantic` paths), and gives the vector to the search: the
// semantic lane then ranks beside the lexical ones.

const base = new URL('./', import.meta.url)

/** Gives `e` the code `code` unless it has one (the core's and ranged.js's errors do). */
const tag = (code) => (e) => {
  throw Object.assign(e instanceof Error ? e : new Error(String(e)), { code: e?.code ?? code })
}

// Imported here rather than at the top of the file: a missing or broken module is then an
// error the page shows with its code, where a static import fails the worker without a word.
const modules = Promise.all([import('./wikidex_wasm.js'), import('./ranged.js')]).catch(tag('wasm'))
// Reported once the page asks to open; not as an unhandled rejection meanwhile.
modules.catch(() => {})
let opened = null
let model = null
/** The last query embedded, and its vector: the why panel asks for the same query again. */
let embedded = { query: null, vector: null }

async function open(site) {
  const url = new URL(site.blob, base)
  // The module's wasm and the blob's head are requested at once, while the module's JS
  // loads (a round trip less on a slow link); the wasm compiles as it arrives.
  const binary = fetch(new URL('wikidex_wasm_bg.wasm', base))
  let head = fetch(url, { headers: { Range: `bytes=0-${site.head_end - 1}` } })
  // Handled where they are used; not unhandled rejections meanwhile.
  binary.catch(() => {})
  head.catch(() => {})
  // ranged.js's first request is the head's: the one already under way.
  const fetchFn = (input, init) => {
    const early = head
    head = null
    return early ?? fetch(input, init)
  }
  const [wasm, { openBlob }] = await modules
  const ready = wasm.default({ module_or_path: binary }).catch(tag('wasm'))
  const [, blob] = await Promise.all([ready, openBlob(url, wasm, { ready, prefix: site.head_end, fetch: fetchFn }).catch(tag('network'))])
  const links = new wasm.SiteLinks(site.links)
  return { blob, links, root: new URL(site.root, base), site }
}

async function fetchBytes(path) {
  const url = new URL(path, base)
  const res = await fetch(url).catch(tag('network'))
  if (!res.ok) throw Object.assign(new Error(`${url}: HTTP ${res.status} ${res.statusText}`.trim()), { code: 'http' })
  return new Uint8Array(await res.arrayBuffer())
}

/** The bundle's model, loaded with the module that runs it. */
async function loadModel(semantic) {
  if (!semantic) throw Object.assign(new Error('this bundle has no model (`wikidex site --model`)'), { code: 'no_model' })
  const [full, onnx, tokenizer] = await Promise.all([
    import(new URL(semantic.module, base).href).catch(tag('wasm')),
    fetchBytes(semantic.onnx),
    fetchBytes(semantic.tokenizer),
  ])
  await full.default().catch(tag('wasm'))
  return full.Model.fromBytes(onnx, tokenizer, { modelId: semantic.model_id, prompts: semantic.prompts })
}

/** The search's options, with the query's vector when the search is semantic. */
async function options(data, site) {
  if (!data.semantic) return data.options
  if (embedded.query !== data.query) {
    model ??= loadModel(site.semantic)
    // A model that failed to load is tried again by the next semantic search.
    const m = await model.catch((e) => {
      model = null
      throw e
    })
    embedded = { query: data.query, vector: Array.from(m.embed([data.query], 'query')[0]) }
  }
  return { ...data.options, query_vector: embedded.vector }
}

const report = (e) => ({ code: e?.code ?? e?.name ?? 'error', message: String(e?.message ?? e) })

onmessage = async ({ data }) => {
  if (data.type === 'open') {
    opened ??= open(data.site)
    opened.then(
      () => postMessage({ type: 'ready' }),
      (e) => postMessage({ type: 'error', ...report(e) }),
    )
    return
  }
  try {
    const { blob, links, root, site } = await opened
    const results = await blob.search(data.query, await options(data, site))
    if (data.type === 'explain') {
      // The why panel's hit, found again with its explanation.
      const hit = results.hits.find((h) => h.chunk === data.chunk) ?? null
      postMessage({ type: 'explained', id: data.id, chunk: data.chunk, hit })
      return
    }
    const urls = results.hits.map((h) => new URL(links.href(h.path, h.title, h.headings), root).href)
    const trails = results.hits.map((h) => links.trail(h.title, h.headings))
    postMessage({ type: 'results', id: data.id, results, urls, trails, semantic: !!data.semantic })
  } catch (e) {
    postMessage({ type: data.type === 'explain' ? 'explained' : 'search-error', id: data.id, chunk: data.chunk, ...report(e) })
  }
}
