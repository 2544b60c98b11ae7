#!/usr/bin/env node
// wikidex's browser search against Pagefind (npm `pagefind`, pinned in bindings-node), side by
// side in one headless Chromium run, on CACM and on this project's book.
//
// wikidex: the search bundle `wikidex site` writes (target/debug/wikidex; no model): site.json,
// the search UI's worker (bindings-wasm/ui/worker.js) on the lexical wasm search module
// (bindings-wasm/pkg-search, `make wasm`), as the CLI ships them (not minified), and the blob,
// which the worker reads by HTTP range requests (exactly its head first, then the parts each
// search reads; bench/browser/server.mjs answers ranges as static hosts do). For CACM, of its
// documents written as Markdown pages (one page each, the document's title as the page title,
// its text as the body: what `wikidex build --beir` makes of a BEIR corpus) with `wikidex site
// --url-pattern '{path}.html'`; for the book, the bundle `make book` wrote (target/book/wikidex).
// Pagefind: `pagefind --site` over the same documents rendered as one HTML page each (the title
// as <title> and <h1>, the text as paragraphs), and over the book's HTML pages as MkDocs built
// them (target/book, its 404 page left out). Both are driven by small harness pages
// (bench/browser/) that use each runtime as its UI does, and served from 127.0.0.1 by
// bench/browser/server.mjs, which gzips what a static host would and logs the bytes of every
// response.
//
// Figures, for each engine:
// - bytes before the first result: what the server sent for the engine's runtime (JS, wasm)
//   and index (the parts of the blob fetched by range requests; Pagefind's meta, index chunks and the fragments of the first 10
//   results) from page load to the first query's results, in a fresh browser context (empty
//   cache), for each of the "typical queries" (the two longest words of a query, in the query's
//   order: `TSS operating`-like keyword queries rather than whole sentences);
// - time to first result: from navigation start to those results (performance.now() in the
//   page), median over the same queries (after one discarded run);
// - per-keystroke latency: each query typed one character at a time, one search per keystroke
//   (after the index is loaded, one context), timed from the request to the results on the
//   page's thread: wikidex 10 page hits with snippets (the UI's worker; the core matches the
//   last word as a prefix), Pagefind `search(prefix)` and the data of its first 10 results;
//   p50 and p95 over every keystroke of every query;
// - nDCG@10 and MAP (CACM only, trec_eval's definitions as in bench/compare_node.mjs) of the
//   full queries: wikidex's first 100 page hits; Pagefind's first 100 results (the data of
//   each loaded to read its URL, mapped back to the document id).
//
// Usage (from the repo root; in `make bench`):
//   node bench/compare_browser.mjs ../shared/data/cacm [--json] [--first-queries 10]
//        [--keystroke-queries 64]
import { createRequire } from 'node:module'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execFileSync } from 'node:child_process'
import { serve } from './browser/server.mjs'
import { STEP_MS, firstResult, keystrokes, loaded, median, withTimeout } from './browser/measure.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const requireNode = createRequire(join(ROOT, 'bindings-node', 'package.json'))
const { chromium } = requireNode('playwright-core')
const PAGEFIND_DIR = join(ROOT, 'bindings-node', 'node_modules', 'pagefind')
const PAGEFIND = join(ROOT, 'bindings-node', 'node_modules', '.bin', 'pagefind')
const WIKIDEX = process.env.WIKIDEX_BIN ?? join(ROOT, 'target', 'debug', 'wikidex')
// The book with its search bundle, as `make book` built it.
const BOOK = join(ROOT, 'target', 'book')
// As bindings-wasm/tests/browser/chromium.mjs launches it.
const CHROMIUM = '/usr/bin/chromium'
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
// Questions a reader of the book asks, each answered by one of its pages.
const BOOK_QUERIES = ['how do I add search to a docs site', 'what does a coded error look like', 'range requests for big sites', 'choosing an embedding model', 'how are typos tolerated', 'verify the citations in an answer']

const args = process.argv.slice(2)
const opt = (name, dflt) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : dflt)
const asJson = args.includes('--json')
const firstQueries = opt('--first-queries', 10)
const keystrokeQueries = opt('--keystroke-queries', Infinity)
const data = args.find((a, i) => !a.startsWith('--') && !['--first-queries', '--keystroke-queries'].includes(args[i - 1])) ?? join(ROOT, '..', 'shared', 'data', 'cacm')
const say = (...m) => asJson || console.error(...m)

for (const [what, path] of [
  ['target/debug/wikidex (cargo build -p wikidex-cli)', WIKIDEX],
  ['the book with its search bundle (make book)', join(BOOK, 'wikidex', 'site.json')],
  ['pagefind (make node-deps)', PAGEFIND],
  ['Chromium (scripts/chromium.sh)', CHROMIUM],
  ['the collection', join(data, 'corpus.jsonl')],
]) {
  if (!existsSync(path)) {
    console.error(`compare_browser: ${what} not found at ${path}`)
    process.exit(2)
  }
}

// --- the collection (as bench/compare_node.mjs reads it) ---

const readJsonl = (path) => readFileSync(path, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l))

function loadCollection(path) {
  const docs = readJsonl(join(path, 'corpus.jsonl')).map((d) => ({ id: String(d._id), title: d.title ?? '', text: d.text ?? '' }))
  const qrels = {}
  readFileSync(join(path, 'qrels', 'test.tsv'), 'utf8').split('\n').forEach((line, i) => {
    const p = line.split('\t')
    if ((i === 0 && p[0] === 'query-id') || p.length < 3) return
    ;(qrels[p[0]] ??= {})[p[1]] = Number(p[2])
  })
  const queries = readJsonl(join(path, 'queries.jsonl'))
    .filter((q) => Object.values(qrels[String(q._id)] ?? {}).some((g) => g > 0))
    .map((q) => ({ id: String(q._id), text: q.text }))
  return { docs, queries, qrels }
}

function metrics(runs, qrels) {
  let ndcg = 0, map = 0
  const ids = Object.keys(runs)
  for (const q of ids) {
    const judged = qrels[q]
    const relevant = Object.values(judged).filter((g) => g > 0)
    let hits = 0, ap = 0, dcg = 0
    runs[q].forEach((d, i) => {
      const g = judged[d] ?? 0
      if (g > 0) {
        hits++
        ap += hits / (i + 1)
      }
      if (i < 10) dcg += Math.max(g, 0) / Math.log2(i + 2)
    })
    const ideal = relevant.sort((a, b) => b - a).slice(0, 10).reduce((s, g, i) => s + g / Math.log2(i + 2), 0)
    ndcg += dcg / ideal
    map += ap / relevant.length
  }
  return { ndcg10: ndcg / ids.length, map: map / ids.length }
}

/** A typical search-box query from a long one: its two longest words, in their order. */
function keywords(text) {
  const words = text.match(/[\p{L}\p{N}]+/gu) ?? []
  const keep = new Set(words.map((w, i) => [w, i]).sort((a, b) => b[0].length - a[0].length || a[1] - b[1]).slice(0, 2).map(([, i]) => i))
  return words.filter((_, i) => keep.has(i)).join(' ')
}

const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
// --- the sites ---

function buildSites(T, c) {
  const root = join(T, 'root')
  mkdirSync(join(root, 'bench'), { recursive: true })
  for (const f of ['wikidex.html', 'wikidex.js', 'pagefind.html', 'pagefind.js']) cpSync(join(ROOT, 'bench', 'browser', f), join(root, 'bench', f))
  const run = (cmd, argv) => execFileSync(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000, encoding: 'utf8' })

  // wikidex on CACM: Markdown pages, and the bundle `wikidex site` writes for them (the pages'
  // HTML is Pagefind's below; the links are not followed here).
  const md = join(T, 'cacm-md')
  mkdirSync(md)
  for (const d of c.docs) writeFileSync(join(md, `${d.id}.md`), `---\ntitle: ${JSON.stringify(d.title || d.id)}\n---\n${d.text}\n`)
  run(WIKIDEX, ['site', md, '--out', join(root, 'wx-cacm'), '--url-pattern', '{path}.html'])

  // Pagefind on CACM: one HTML page per document.
  const pf = join(root, 'pf-cacm')
  mkdirSync(join(pf, 'docs'), { recursive: true })
  for (const d of c.docs) {
    const paras = d.text.split(/\n\s*\n/).filter((p) => p.trim()).map((p) => `<p>${esc(p.trim())}</p>`).join('\n')
    writeFileSync(join(pf, 'docs', `${d.id}.html`), `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${esc(d.title)}</title></head>\n<body><main><h1>${esc(d.title)}</h1>\n${paras}\n</main></body></html>\n`)
  }
  run(PAGEFIND, ['--site', pf])

  // The book: its search bundle as `make book` wrote it, and Pagefind over its pages (the
  // theme's files and all; its 404 page, which is no page of the book, left out).
  cpSync(join(BOOK, 'wikidex'), join(root, 'wx-book', 'wikidex'), { recursive: true })
  cpSync(BOOK, join(root, 'pf-book'), { recursive: true, filter: (src) => ![join(BOOK, 'wikidex'), join(BOOK, '404.html')].includes(src) })
  run(PAGEFIND, ['--site', join(root, 'pf-book')])
  return root
}

// --- the measurements ---

const ENGINES = {
  // `site`: the site's folder; its bundle is wikidex/ in it.
  wikidex: (site) => ({ page: `/bench/wikidex.html?bundle=${site}wikidex/`, prefix: site }),
  pagefind: (site) => ({ page: `/bench/pagefind.html?site=${site}`, prefix: site }),
}

/** The first 100 results of each full query, mapped to document ids; and how many had any. */
function rankings(browser, server, engine, queries, docOf) {
  return loaded(browser, server, engine, async (page) => {
    const runs = {}
    let empty = 0
    for (const q of queries) {
      const r = await withTimeout(page.evaluate((q) => window.bench.search(q, 100, 'full'), q.text), STEP_MS, `${engine.page}: "${q.text}"`)
      runs[q.id] = r.ids.map(docOf)
      if (!r.total) empty++
    }
    return { runs, empty }
  })
}

async function compare(browser, server, name, engines, typing, first, quality) {
  const out = { collection: name }
  for (const [tool, engine] of Object.entries(engines)) {
    say(`${name}: ${tool}: first results`)
    await firstResult(browser, server, engine, first[0]) // discarded: Chromium's own first-use costs
    const firsts = []
    for (const q of first) firsts.push(await firstResult(browser, server, engine, q))
    say(`${name}: ${tool}: keystrokes`)
    const keys = await keystrokes(browser, server, engine, typing)
    const r = { firsts, firstMs: median(firsts.map((f) => f.ms)), firstWire: median(firsts.map((f) => f.wire)), keys }
    r.firstWireMin = Math.min(...firsts.map((f) => f.wire))
    r.firstWireMax = Math.max(...firsts.map((f) => f.wire))
    r.firstRaw = median(firsts.map((f) => f.raw))
    r.runtimeWire = median(firsts.map((f) => f.runtimeWire))
    r.indexWire = median(firsts.map((f) => f.indexWire))
    r.firstEmpty = firsts.filter((f) => !f.results).length
    if (quality) {
      say(`${name}: ${tool}: rankings`)
      const { runs, empty } = await rankings(browser, server, engine, quality.queries, quality.docOf[tool])
      Object.assign(r, metrics(runs, quality.qrels), { emptyQueries: empty })
    }
    out[tool] = r
  }
  return out
}

// --- the run ---

const c = loadCollection(data)
const T = mkdtempSync(join(tmpdir(), 'wikidex-browser-bench-'))
let server, browser
const report = { pagefind: JSON.parse(readFileSync(join(PAGEFIND_DIR, 'package.json'), 'utf8')).version, docs: c.docs.length, queries: c.queries.length, firstQueries: 0 }
try {
  say(`building the sites in ${T}`)
  const root = buildSites(T, c)
  server = await serve(root)
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: STEP_MS })
  report.chromium = browser.version()
  const cacmFirst = c.queries.slice(0, firstQueries).map((q) => keywords(q.text))
  report.firstQueries = cacmFirst.length
  report.cacm = await compare(
    browser, server, 'cacm',
    { wikidex: ENGINES.wikidex('/wx-cacm/'), pagefind: ENGINES.pagefind('/pf-cacm/') },
    c.queries.slice(0, keystrokeQueries).map((q) => q.text),
    cacmFirst,
    {
      queries: c.queries, qrels: c.qrels,
      docOf: {
        wikidex: (path) => path.replace(/\.md$/, ''), // the source files are `${id}.md`
        pagefind: (url) => decodeURIComponent(url.match(/([^/]+)\.html$/)?.[1] ?? url),
      },
    },
  )
  report.book = await compare(
    browser, server, 'the book (target/book)',
    { wikidex: ENGINES.wikidex('/wx-book/'), pagefind: ENGINES.pagefind('/pf-book/') },
    BOOK_QUERIES,
    BOOK_QUERIES.map(keywords),
    null,
  )
} finally {
  await browser?.close().catch(() => {})
  await server?.close()
  rmSync(T, { recursive: true, force: true })
}

if (asJson) {
  console.log(JSON.stringify(report, null, 2))
} else {
  const kb = (n) => (n / 1024).toFixed(1)
  const f = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '–')
  const ratio = (a, b) => (b ? `${(a / b).toFixed(2)}x` : '–')
  console.log(`wikidex (lexical wasm, the wikidex site bundle) vs Pagefind ${report.pagefind} in Chromium ${report.chromium}`)
  for (const r of [report.cacm, report.book]) {
    const { wikidex: w, pagefind: p } = r
    const rows = [
      ['KB gzipped before first result (median)', kb(w.firstWire), kb(p.firstWire), ratio(w.firstWire, p.firstWire)],
      ['  of which runtime (JS + wasm)', kb(w.runtimeWire), kb(p.runtimeWire), ratio(w.runtimeWire, p.runtimeWire)],
      ['  of which index (median)', kb(w.indexWire), kb(p.indexWire), ratio(w.indexWire, p.indexWire)],
      ['  uncompressed (median)', kb(w.firstRaw), kb(p.firstRaw), ratio(w.firstRaw, p.firstRaw)],
      ['  range over the first queries', `${kb(w.firstWireMin)}-${kb(w.firstWireMax)}`, `${kb(p.firstWireMin)}-${kb(p.firstWireMax)}`, ''],
      ['ms page load to first result (median)', f(w.firstMs, 0), f(p.firstMs, 0), ratio(w.firstMs, p.firstMs)],
      ['first queries with no result', `${w.firstEmpty}/${w.firsts.length}`, `${p.firstEmpty}/${p.firsts.length}`, ''],
      ['ms per keystroke p50', f(w.keys.p50, 2), f(p.keys.p50, 2), ratio(w.keys.p50, p.keys.p50)],
      ['ms per keystroke p95', f(w.keys.p95, 2), f(p.keys.p95, 2), ratio(w.keys.p95, p.keys.p95)],
    ]
    if (w.ndcg10 !== undefined) {
      rows.push(['nDCG@10', f(w.ndcg10, 3), f(p.ndcg10, 3), ratio(w.ndcg10, p.ndcg10)])
      rows.push(['MAP', f(w.map, 3), f(p.map, 3), ratio(w.map, p.map)])
      rows.push(['full queries with no result', `${w.emptyQueries}/${report.queries}`, `${p.emptyQueries}/${report.queries}`, ''])
    }
    console.log(`\n${r.collection}: ${w.keys.keystrokes} keystrokes (wikidex), ${p.keys.keystrokes} (Pagefind); first results over ${w.firsts.length} keyword queries`)
    console.log(`${''.padEnd(42)}${'wikidex'.padStart(12)}${'Pagefind'.padStart(12)}${'ratio'.padStart(9)}`)
    for (const [label, a, b, x] of rows) console.log(`${label.padEnd(42)}${a.padStart(12)}${b.padStart(12)}${x.padStart(9)}`)
  }
}
