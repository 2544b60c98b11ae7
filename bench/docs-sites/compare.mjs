#!/usr/bin/env node
// wikidex's search for a static docs site against Pagefind (npm `pagefind`, pinned in
// bindings-node), side by side in one headless Chromium run, on real documentation projects:
// each one's Markdown and the site its own generator builds from it (scripts/docs-project.sh;
// bench/docs-sites/README.md says which projects and how their queries were judged).
//
// wikidex: `wikidex site DOCS --out SITE --layout mkdocs` (WIKIDEX_BIN, else the newer of
// target/release/wikidex and target/debug/wikidex) indexes the Markdown the generator read and
// writes its bundle into SITE/wikidex/: site.json, the blob, the wasm search module
// (`make wasm`'s pkg-search) and the UI's worker, which reads the blob by HTTP range requests.
// The harness page (bench/browser/wikidex.js, as for compare_browser.mjs) drives that worker as the bundle's
// ui.js does.
// Pagefind: `pagefind --site SITE` over the generator's HTML, driven by bench/browser/pagefind.js
// (its runtime as its UI uses it: search, then the data of the results shown).
// Both are served from 127.0.0.1 by bench/browser/server.mjs, which gzips what a static host
// would, answers byte ranges, and logs the bytes of every response.
//
// Figures, for each engine and project:
// - bytes before the first result: what the server sent under the engine's folder (runtime:
//   JS and wasm; index: the rest: site.json and the blob's ranges, or Pagefind's meta, index
//   chunks and the fragments of the first 10 results) from page load to the first query's
//   results, in a fresh browser context (empty cache), median over the first queries;
// - time to first result: navigation start to those results, median (after one discarded run);
// - per-keystroke latency: each query typed one character at a time, one search of the text
//   so far per keystroke, after the index is loaded, in one context; from the request to the
//   results on the page's thread (wikidex: 10 page hits with snippets; Pagefind: `search()`
//   and the data of its first 10 results); p50 and p95 over every keystroke of every query;
// - relevance of the full queries against the judgments (bench/docs-sites/NAME/queries.tsv,
//   source paths relative to the docs folder, grade 2 the answer, 1 related): nDCG@10
//   (gain = grade, log2 discount) and recall@10 (judged pages in the first 10). wikidex hits
//   are mapped by `hit.path`; Pagefind's result URLs back to source paths by MkDocs' rule
//   (`a/b.md` is `a/b/`, `a/index.md` is `a/`).
//
// Usage (from the repo root, after `make wasm` and a CLI build: `make release`, or the debug
// CLI of `cargo test`/`cargo build -p wikidex-cli`):
//   node bench/docs-sites/compare.mjs [--json [FILE]] [--first-queries 10] [--project NAME]...
//                                     [--network RTT_MS:KBPS]
// --json alone prints the JSON instead of the tables; --json FILE writes it there as well.
// --network 150:1600 loads each page for the first results over a throttled link (DevTools'
// network emulation: 150 ms round trips, 1.6 Mbit/s down, as a slow 4G phone), where bytes and
// round trips cost what they cost a reader; the keystrokes and rankings are not affected.
import { createRequire } from 'node:module'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir, cpus, arch } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execFileSync, spawnSync } from 'node:child_process'
import { serve } from '../browser/server.mjs'
import { STEP_MS, firstResult, keystrokes, loaded, median, parseNetwork, withTimeout } from '../browser/measure.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = join(HERE, '..', '..')
const requireNode = createRequire(join(ROOT, 'bindings-node', 'package.json'))
const { chromium } = requireNode('playwright-core')
const PAGEFIND_DIR = join(ROOT, 'bindings-node', 'node_modules', 'pagefind')
const PAGEFIND = join(ROOT, 'bindings-node', 'node_modules', '.bin', 'pagefind')
const PROJECTS = ['pymdown-extensions', 'python-markdown']
// As bindings-wasm/tests/browser/chromium.mjs launches it.
const CHROMIUM = '/usr/bin/chromium'
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

const args = process.argv.slice(2)
const valueOf = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined)
const jsonAt = args.indexOf('--json')
const jsonFile = jsonAt >= 0 && args[jsonAt + 1] && !args[jsonAt + 1].startsWith('--') ? args[jsonAt + 1] : null
const jsonOnly = jsonAt >= 0 && !jsonFile
const firstQueries = Number(valueOf('--first-queries') ?? 10)
const network = args.includes('--network') ? parseNetwork(valueOf('--network')) : null
const projects = args.flatMap((a, i) => (args[i - 1] === '--project' ? [a] : []))
const chosen = projects.length ? projects : PROJECTS
const say = (...m) => console.error(...m)

for (const p of chosen) {
  if (!PROJECTS.includes(p)) {
    say(`compare.mjs: unknown project ${p} (known: ${PROJECTS.join(', ')})`)
    process.exit(2)
  }
}

/** The wikidex CLI: WIKIDEX_BIN, else the most recently built of release and debug. */
function wikidexBin() {
  if (process.env.WIKIDEX_BIN) return process.env.WIKIDEX_BIN
  const built = ['release', 'debug'].map((p) => join(ROOT, 'target', p, 'wikidex')).filter((f) => existsSync(f))
  built.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)
  return built[0] ?? join(ROOT, 'target', 'debug', 'wikidex')
}
const WIKIDEX = wikidexBin()

for (const [what, path] of [
  ['the wikidex CLI (make release, or cargo build -p wikidex-cli)', WIKIDEX],
  ['pagefind (make node-deps)', PAGEFIND],
  ['Chromium (scripts/chromium.sh)', CHROMIUM],
]) {
  if (!existsSync(path)) {
    say(`compare.mjs: ${what} not found at ${path}`)
    process.exit(2)
  }
}

// --- the projects ---

/** scripts/docs-project.sh NAME: the docs folder, the built site and the generator's layout. */
function project(name) {
  const out = execFileSync(join(ROOT, 'scripts', 'docs-project.sh'), [name, join(ROOT, 'target', 'docs-projects', name)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 900_000,
  })
  const field = (k) => out.match(new RegExp(`^${k}=(.*)$`, 'm'))?.[1]
  return { name, docs: field('docs'), site: field('site'), layout: field('layout') }
}

/** The judgments: { queries: [text...], qrels: { text: { path: grade } } }, in file order. */
function judgments(name) {
  const qrels = {}
  const queries = []
  readFileSync(join(HERE, name, 'queries.tsv'), 'utf8').split('\n').forEach((line, i) => {
    const [q, path, grade] = line.split('\t')
    if ((i === 0 && q === 'query') || !line.trim() || line.startsWith('#')) return
    if (!(q in qrels)) {
      qrels[q] = {}
      queries.push(q)
    }
    qrels[q][path] = Number(grade)
  })
  return { queries, qrels }
}

/** Every Markdown file under `dir`, as `/`-separated paths relative to it. */
function markdownFiles(dir, sub = '') {
  return readdirSync(join(dir, sub), { withFileTypes: true }).flatMap((e) => {
    const rel = sub ? `${sub}/${e.name}` : e.name
    if (e.isDirectory()) return markdownFiles(dir, rel)
    return /\.(md|markdown)$/i.test(e.name) ? [rel] : []
  })
}

/** MkDocs' URL of a source page (use_directory_urls): `a/b.md` is `a/b/`, `a/index.md` `a/`. */
function mkdocsUrl(path) {
  const stem = path.replace(/\.(md|markdown)$/i, '')
  const m = stem.match(/^(.*?)(?:^|\/)(index|readme)$/i)
  if (m) return m[1] ? `${m[1]}/` : ''
  return `${stem}/`
}

/** Maps a Pagefind result URL (site-relative, maybe under the served prefix) to a source path. */
function pagefindToPath(files, prefix) {
  const byUrl = new Map()
  for (const f of files) if (!byUrl.has(mkdocsUrl(f))) byUrl.set(mkdocsUrl(f), f)
  return (url) => {
    let u = decodeURIComponent(new URL(url, 'http://x/').pathname)
    if (u.startsWith(prefix)) u = u.slice(prefix.length - 1)
    u = u.replace(/^\/+/, '').replace(/index\.html$/, '')
    return byUrl.get(u) ?? `(url) ${u}`
  }
}

function sizeOf(dir) {
  let n = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) n += e.isDirectory() ? sizeOf(join(dir, e.name)) : statSync(join(dir, e.name)).size
  return n
}

const run = (cmd, argv, opts = {}) => execFileSync(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000, encoding: 'utf8', ...opts })

/** The wikidex bundle in SITE/wikidex/, written by `wikidex site`. */
function buildWikidex(p) {
  const t0 = performance.now()
  const r = spawnSync(WIKIDEX, ['site', p.docs, '--out', p.site, '--layout', p.layout], { encoding: 'utf8', timeout: 600_000 })
  const ms = performance.now() - t0
  if (r.status !== 0) throw new Error(`${p.name}: \`wikidex site\` failed: ${(r.stderr || r.error?.message || '').trim()}`)
  const manifest = JSON.parse(readFileSync(join(p.site, 'wikidex', 'site.json'), 'utf8'))
  return { buildMs: ms, pages: manifest.pages, chunks: manifest.chunks }
}

function buildPagefind(p) {
  rmSync(join(p.site, 'pagefind'), { recursive: true, force: true })
  const t0 = performance.now()
  const out = run(PAGEFIND, ['--site', p.site])
  const ms = performance.now() - t0
  const pages = Number(out.match(/Indexed (\d+) pages?/)?.[1] ?? NaN)
  return { buildMs: ms, pages }
}

// --- the measurements (bench/browser/measure.mjs, as bench/compare_browser.mjs takes them) ---

/** The first 10 results of each full query, as source paths; and how many had none. */
function rankings(browser, server, engine, queries, toPath) {
  return loaded(browser, server, engine, async (page) => {
    const runs = {}
    let empty = 0
    for (const q of queries) {
      const r = await withTimeout(page.evaluate((q) => window.bench.search(q, 10, 'full'), q), STEP_MS, `${engine.page}: "${q}"`)
      runs[q] = [...new Set(r.ids.map(toPath))].slice(0, 10)
      if (!r.total) empty++
    }
    return { runs, empty }
  })
}

/** nDCG@10 (gain = grade) and recall@10 (judged pages found), averaged over the queries. */
function relevance(runs, qrels) {
  let ndcg = 0, recall = 0
  const perQuery = {}
  const qs = Object.keys(qrels)
  for (const q of qs) {
    const judged = qrels[q]
    const grades = Object.values(judged).filter((g) => g > 0).sort((a, b) => b - a)
    const top = (runs[q] ?? []).slice(0, 10)
    const dcg = top.reduce((s, d, i) => s + (judged[d] ?? 0) / Math.log2(i + 2), 0)
    const ideal = grades.slice(0, 10).reduce((s, g, i) => s + g / Math.log2(i + 2), 0)
    const found = top.filter((d) => (judged[d] ?? 0) > 0).length
    perQuery[q] = { ndcg10: dcg / ideal, recall10: found / grades.length, top }
    ndcg += dcg / ideal
    recall += found / grades.length
  }
  return { ndcg10: ndcg / qs.length, recall10: recall / qs.length, perQuery }
}

async function compare(browser, server, name, engines, j) {
  const out = {}
  const first = j.queries.slice(0, firstQueries)
  for (const [tool, engine] of Object.entries(engines)) {
    say(`${name}: ${tool}: first results`)
    await firstResult(browser, server, engine, first[0], network) // discarded: Chromium's own first-use costs
    const firsts = []
    for (const q of first) firsts.push(await firstResult(browser, server, engine, q, network))
    say(`${name}: ${tool}: keystrokes`)
    const keys = await keystrokes(browser, server, engine, j.queries)
    say(`${name}: ${tool}: rankings`)
    const { runs, empty } = await rankings(browser, server, engine, j.queries, engine.toPath)
    const rel = relevance(runs, j.qrels)
    out[tool] = {
      firsts,
      firstMs: median(firsts.map((f) => f.ms)),
      firstWire: median(firsts.map((f) => f.wire)),
      firstWireMin: Math.min(...firsts.map((f) => f.wire)),
      firstWireMax: Math.max(...firsts.map((f) => f.wire)),
      firstRaw: median(firsts.map((f) => f.raw)),
      runtimeWire: median(firsts.map((f) => f.runtimeWire)),
      indexWire: median(firsts.map((f) => f.indexWire)),
      firstEmpty: firsts.filter((f) => !f.results).length,
      keys,
      ndcg10: rel.ndcg10,
      recall10: rel.recall10,
      emptyQueries: empty,
      perQuery: rel.perQuery,
    }
  }
  return out
}

// --- the run ---

const T = mkdtempSync(join(tmpdir(), 'wikidex-docs-sites-'))
let server, browser
const report = {
  date: new Date().toISOString().slice(0, 10),
  machine: `${cpus().length} cores, ${arch()}`,
  wikidex: relative(ROOT, WIKIDEX),
  pagefind: JSON.parse(readFileSync(join(PAGEFIND_DIR, 'package.json'), 'utf8')).version,
  firstQueries,
  network: network?.spec ?? null,
  projects: {},
}
try {
  const root = join(T, 'root')
  mkdirSync(join(root, 'bench'), { recursive: true })
  for (const f of ['wikidex.html', 'wikidex.js', 'pagefind.html', 'pagefind.js']) cpSync(join(ROOT, 'bench', 'browser', f), join(root, 'bench', f))
  const sites = []
  for (const name of chosen) {
    say(`${name}: the project (scripts/docs-project.sh)`)
    const p = project(name)
    const j = judgments(name)
    const files = markdownFiles(p.docs)
    for (const q of j.queries) for (const path of Object.keys(j.qrels[q])) if (!files.includes(path)) throw new Error(`${name}/queries.tsv: "${q}" judges ${path}, which is not in ${p.docs}`)
    say(`${name}: wikidex (${relative(ROOT, WIKIDEX)})`)
    const wx = buildWikidex(p)
    say(`${name}: pagefind`)
    const pf = buildPagefind(p)
    symlinkSync(p.site, join(root, name))
    sites.push({ p, j, files, wx, pf })
  }
  server = await serve(root)
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: STEP_MS })
  report.chromium = browser.version()
  for (const { p, j, files, wx, pf } of sites) {
    const prefix = `/${p.name}/`
    const engines = {
      wikidex: { page: `/bench/wikidex.html?bundle=${prefix}wikidex/`, prefix: `${prefix}wikidex/`, toPath: (path) => path },
      pagefind: { page: `/bench/pagefind.html?site=${prefix}`, prefix: `${prefix}pagefind/`, toPath: pagefindToPath(files, prefix) },
    }
    const r = await compare(browser, server, p.name, engines, j)
    r.wikidex.bundle = { buildMs: wx.buildMs, bytes: sizeOf(join(p.site, 'wikidex')), pages: wx.pages, chunks: wx.chunks }
    r.pagefind.bundle = { buildMs: pf.buildMs, bytes: sizeOf(join(p.site, 'pagefind')), pages: pf.pages }
    report.projects[p.name] = { markdownFiles: files.length, queries: j.queries.length, judgments: Object.values(j.qrels).reduce((n, q) => n + Object.keys(q).length, 0), ...r }
  }
} finally {
  await browser?.close().catch(() => {})
  await server?.close()
  rmSync(T, { recursive: true, force: true })
}

const json = JSON.stringify(report, null, 2)
if (jsonFile) writeFileSync(jsonFile, json + '\n')
if (jsonOnly) {
  console.log(json)
} else {
  const kb = (n) => (n / 1024).toFixed(1)
  const f = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '–')
  const ratio = (a, b) => (b && Number.isFinite(a / b) ? `${(a / b).toFixed(2)}x` : '–')
  console.log(`wikidex (${report.wikidex}, site bundle) vs Pagefind ${report.pagefind}, Chromium ${report.chromium}, ${report.date}, ${report.machine}${network ? `, first results over ${network.latency} ms / ${network.spec.split(':')[1]} kbit/s` : ''}`)
  for (const [name, r] of Object.entries(report.projects)) {
    const { wikidex: w, pagefind: p } = r
    const rows = [
      ['KB gzipped before first result (median)', kb(w.firstWire), kb(p.firstWire), ratio(w.firstWire, p.firstWire)],
      ['  of which runtime (JS + wasm)', kb(w.runtimeWire), kb(p.runtimeWire), ratio(w.runtimeWire, p.runtimeWire)],
      ['  of which index (median)', kb(w.indexWire), kb(p.indexWire), ratio(w.indexWire, p.indexWire)],
      ['  uncompressed (median)', kb(w.firstRaw), kb(p.firstRaw), ratio(w.firstRaw, p.firstRaw)],
      ['  range over the first queries', `${kb(w.firstWireMin)}–${kb(w.firstWireMax)}`, `${kb(p.firstWireMin)}–${kb(p.firstWireMax)}`, ''],
      ['ms page load to first result (median)', f(w.firstMs, 0), f(p.firstMs, 0), ratio(w.firstMs, p.firstMs)],
      ['ms per keystroke p50', f(w.keys.p50, 2), f(p.keys.p50, 2), ratio(w.keys.p50, p.keys.p50)],
      ['ms per keystroke p95', f(w.keys.p95, 2), f(p.keys.p95, 2), ratio(w.keys.p95, p.keys.p95)],
      ['nDCG@10', f(w.ndcg10, 3), f(p.ndcg10, 3), ratio(w.ndcg10, p.ndcg10)],
      ['recall@10', f(w.recall10, 3), f(p.recall10, 3), ratio(w.recall10, p.recall10)],
      ['queries with no result', `${w.emptyQueries}/${r.queries}`, `${p.emptyQueries}/${r.queries}`, ''],
      ['index on disk, KB (all files)', kb(w.bundle.bytes), kb(p.bundle.bytes), ratio(w.bundle.bytes, p.bundle.bytes)],
    ]
    console.log(`\n### ${name}\n`)
    console.log(`${r.markdownFiles} Markdown files; ${r.queries} queries (${r.judgments} judgments); first results over the first ${w.firsts.length}; ${w.keys.keystrokes} keystrokes\n`)
    console.log('| | wikidex | Pagefind | wikidex/Pagefind |')
    console.log('|---|---:|---:|---:|')
    for (const [label, a, b, x] of rows) console.log(`| ${label.replace(/^ {2}/, '&nbsp;&nbsp;')} | ${a} | ${b} | ${x} |`)
  }
}
