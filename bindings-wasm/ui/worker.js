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

async function open(site) {
  const [wasm, { openBlob }] = await modules
  const ready = wasm.default().catch(tag('wasm'))
  const url = new URL(site.blob, base)
  // The blob's head is requested while the module compiles.
  const [, blob] = await Promise.all([ready, openBlob(url, wasm, { ready, prefix: site.head_end }).catch(tag('network'))])
  const links = new wasm.SiteLinks(site.links)
  return { blob, links, root: new URL(site.root, base) }
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
    const { blob, links, root } = await opened
    const results = await blob.search(data.query, data.options)
    const urls = results.hits.map((h) => new URL(links.href(h.path, h.title, h.headings), root).href)
    const trails = results.hits.map((h) => links.trail(h.title, h.headings))
    postMessage({ type: 'results', id: data.id, results, urls, trails })
  } catch (e) {
    postMessage({ type: 'search-error', id: data.id, ...report(e) })
  }
}
