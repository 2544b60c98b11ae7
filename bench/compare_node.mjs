#!/usr/bin/env node
// wikidex's Node binding against Orama (@orama/orama, its default BM25 with the English
// stemmer and stop words of @orama/stemmers and @orama/stopwords, title and text as two
// fields: the best of its configurations on CACM, 0.280 nDCG@10 against 0.131 with one field
// and 0.069 without stop words), in one Node process, on BEIR collections (CACM, Cranfield).
//
// For each collection and tool: index build time, serialized index size (wikidex: the blob;
// Orama: JSON of `save()`), memory after loading the serialized index into a fresh instance
// (RSS and JS heap growth, after a GC), single-thread queries per second (top 100 each, all
// evaluated queries), and nDCG@10 / MAP / recall@100 (trec_eval's definitions, as
// bench/compare_bm25s.py). wikidex indexes each document as one page with one chunk, the
// lexical lane only (BM25 k1 1.5, b 0.6: its defaults) and is timed as `rankSync` (page ids
// and scores, what Orama's hits carry besides the document), `searchSync` (full hit records
// without snippets) and `await search` (full records with snippets, what a user reads) for
// 10 hits (against Orama's `search` with limit 10) and for 100. Timing: one warm-up, then the
// best of --repeats passes, tools alternating.
//
// Usage (from the repo root; `make bench` runs it after `make node`):
//   node --expose-gc bench/compare_node.mjs ../shared/data/cacm ../shared/data/cranfield [--repeats 3] [--json]
import { createRequire } from 'node:module'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execFileSync } from 'node:child_process'
import { performance } from 'node:perf_hooks'

const require = createRequire(join(process.cwd(), 'bindings-node', 'package.json'))
const { Index } = require('./index.js')
const { create, insertMultiple, search, save, load } = require('@orama/orama')
const { stemmer, language } = require('@orama/stemmers/english')
const { stopwords } = require('@orama/stopwords/english')
if (typeof stemmer !== 'function' || !Array.isArray(stopwords)) throw new Error("Orama's stemmer or stop words did not load")

const DEPTH = 100
const args = process.argv.slice(2)
const repeats = Number(args[args.indexOf('--repeats') + 1] || 3) || 3
const asJson = args.includes('--json')
const collections = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--repeats')

function readJsonl(path) {
  return readFileSync(path, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l))
}

function loadCollection(path) {
  const corpus = readJsonl(join(path, 'corpus.jsonl'))
  const docIds = corpus.map((d) => String(d._id))
  const docTexts = corpus.map((d) => `${d.title ?? ''} ${d.text ?? ''}`)
  const docFields = corpus.map((d) => ({ title: d.title ?? '', text: d.text ?? '' }))
  const qrels = {}
  readFileSync(join(path, 'qrels', 'test.tsv'), 'utf8').split('\n').forEach((line, i) => {
    const p = line.split('\t')
    if ((i === 0 && p[0] === 'query-id') || p.length < 3) return
    ;(qrels[p[0]] ??= {})[p[1]] = Number(p[2])
  })
  const queries = readJsonl(join(path, 'queries.jsonl')).filter((q) =>
    Object.values(qrels[String(q._id)] ?? {}).some((g) => g > 0),
  )
  return { docIds, docTexts, docFields, qIds: queries.map((q) => String(q._id)), qTexts: queries.map((q) => q.text), qrels }
}

function metrics(runs, qrels) {
  let ndcg = 0, map = 0, recall = 0
  const ids = Object.keys(runs)
  for (const q of ids) {
    const ranked = runs[q]
    const judged = qrels[q]
    const relevant = Object.values(judged).filter((g) => g > 0)
    let hits = 0, ap = 0, dcg = 0
    ranked.forEach((d, i) => {
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
    recall += ranked.slice(0, DEPTH).filter((d) => (judged[d] ?? 0) > 0).length / relevant.length
  }
  return { 'ndcg@10': ndcg / ids.length, map: map / ids.length, 'recall@100': recall / ids.length }
}

const TMP = mkdtempSync(join(tmpdir(), 'wikidex-bench-'))

/** Memory a fresh Node process grows by when it loads the serialized index (`load` is the
 * body of a function of `data`, the file's bytes), after a GC: RSS (native memory included)
 * and the JS heap (with external and array buffers). */
function loadedMemory(bytes, load) {
  const file = join(TMP, 'index.bin')
  writeFileSync(file, bytes)
  const script = `
    const { Index } = require(${JSON.stringify(require.resolve('./index.js'))})
    const orama = require(${JSON.stringify(require.resolve('@orama/orama'))})
    const { stemmer, language } = require(${JSON.stringify(require.resolve('@orama/stemmers/english'))})
    const { stopwords } = require(${JSON.stringify(require.resolve('@orama/stopwords/english'))})
    const mem = () => { gc(); gc(); const m = process.memoryUsage(); return [m.rss, m.heapUsed + m.external + m.arrayBuffers] }
    const data = require('node:fs').readFileSync(${JSON.stringify(file)})
    const [r0, h0] = mem()
    const kept = ((data) => { ${load} })(data)
    const [r1, h1] = mem()
    console.log(JSON.stringify({ rss: r1 - r0, heap: h1 - h0, kept: !!kept }))
  `
  return JSON.parse(execFileSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' }))
}

const mb = (n) => n / 1024 / 1024

function best(fn) {
  fn() // warm-up
  let t = Infinity
  for (let i = 0; i < repeats; i++) {
    const t0 = performance.now()
    fn()
    t = Math.min(t, performance.now() - t0)
  }
  return t / 1000
}

async function bestAsync(fn) {
  await fn()
  let t = Infinity
  for (let i = 0; i < repeats; i++) {
    const t0 = performance.now()
    await fn()
    t = Math.min(t, performance.now() - t0)
  }
  return t / 1000
}

async function wikidexSide(c) {
  const files = {}
  c.docTexts.forEach((text, n) => {
    files[`d${n}.md`] = text
  })
  const config = { chunk: { max_tokens: 4096, overlap_tokens: 0 }, bm25: { k1: 1.5, b: 0.6 } }
  const t0 = performance.now()
  const built = await Index.build(files, { config })
  const build = (performance.now() - t0) / 1000
  const blob = built.toBytes()
  const index = Index.fromBytesSync(blob)
  const mem = loadedMemory(blob, 'return Index.fromBytesSync(data)')
  const opts = { limit: DEPTH, lanes: ['lexical'] }
  const docOf = (pageId) => c.docIds[Number(pageId.slice(1))]
  const runs = {}
  c.qTexts.forEach((q, i) => {
    runs[c.qIds[i]] = index.rankSync(q, opts).map(([id]) => docOf(id))
  })
  const rank = best(() => c.qTexts.forEach((q) => index.rankSync(q, opts)))
  const records = best(() => c.qTexts.forEach((q) => index.searchSync(q, { ...opts, snippets: false, always: 'separate' })))
  // What a user awaits: full records with snippets, 10 and 100 hits.
  const awaited = (limit) => bestAsync(async () => {
    for (const q of c.qTexts) await index.search(q, { limit, lanes: ['lexical'] })
  })
  const search10 = await awaited(10)
  const search100 = await awaited(DEPTH)
  return {
    build, size: blob.length, rss: mem.rss, heap: mem.heap,
    qps: c.qTexts.length / rank, qpsRecords: c.qTexts.length / records,
    qpsSearch10: c.qTexts.length / search10, qpsSearch100: c.qTexts.length / search100,
    ...metrics(runs, c.qrels),
  }
}

function oramaDb() {
  return create({
    schema: { title: 'string', text: 'string' },
    components: { tokenizer: { language, stemming: true, stemmer, stopWords: stopwords } },
  })
}

async function oramaSide(c) {
  const docs = c.docFields.map((f, n) => ({ id: c.docIds[n], ...f }))
  const t0 = performance.now()
  const built = oramaDb()
  await insertMultiple(built, docs, 1000)
  const build = (performance.now() - t0) / 1000
  const json = JSON.stringify(save(built))
  const db = oramaDb()
  load(db, JSON.parse(json))
  const mem = loadedMemory(
    json,
    `const db = orama.create({ schema: { title: 'string', text: 'string' }, components: { tokenizer: { language, stemming: true, stemmer, stopWords: stopwords } } })
     orama.load(db, JSON.parse(data.toString('utf8'))); return db`,
  )
  const query = (q) => search(db, { term: q, limit: DEPTH })
  const runs = {}
  for (let i = 0; i < c.qTexts.length; i++) {
    runs[c.qIds[i]] = (await query(c.qTexts[i])).hits.map((h) => h.id)
  }
  const t = await bestAsync(async () => {
    for (const q of c.qTexts) await query(q)
  })
  const t10 = await bestAsync(async () => {
    for (const q of c.qTexts) await search(db, { term: q, limit: 10 })
  })
  return {
    build, size: Buffer.byteLength(json), rss: mem.rss, heap: mem.heap,
    qps: c.qTexts.length / t, qps10: c.qTexts.length / t10, ...metrics(runs, c.qrels),
  }
}

const report = []
for (const path of collections) {
  const c = loadCollection(path)
  const name = path.replace(/\/$/, '').split('/').at(-1)
  const w = await wikidexSide(c)
  const o = await oramaSide(c)
  report.push({ collection: name, docs: c.docIds.length, queries: c.qIds.length, wikidex: w, orama: o })
}

if (asJson) {
  console.log(JSON.stringify(report, null, 2))
} else {
  const f = (x, d = 3) => x.toFixed(d)
  for (const r of report) {
    const { wikidex: w, orama: o } = r
    console.log(`\n${r.collection}: ${r.docs} documents, ${r.queries} queries (node ${process.version}, Orama 3.1.18)`)
    console.log('tool      build s   index MB   RSS MB  heap MB      q/s  nDCG@10     MAP  R@100')
    for (const [name, x] of [['wikidex', w], ['orama', o]]) {
      console.log(`${name.padEnd(8)}${f(x.build).padStart(8)}${f(mb(x.size), 2).padStart(11)}${f(mb(x.rss), 1).padStart(9)}${f(mb(x.heap), 1).padStart(9)}${f(x.qps, 0).padStart(9)}${f(x['ndcg@10']).padStart(9)}${f(x.map).padStart(8)}${f(x['recall@100']).padStart(7)}`)
    }
    console.log(`wikidex searchSync (full records): ${f(w.qpsRecords, 0)} q/s`)
    console.log(`wikidex await search, 10 hits with snippets: ${f(w.qpsSearch10, 0)} q/s, ${f(w.qpsSearch10 / o.qps10, 1)}x Orama's 10 hits (${f(o.qps10, 0)} q/s)`)
    console.log(`wikidex await search, 100 hits with snippets: ${f(w.qpsSearch100, 0)} q/s, rankSync ${f(w.qps / w.qpsSearch100, 1)}x faster`)
    console.log(`ratios wikidex/orama: q/s ${f(w.qps / o.qps, 1)}x (records ${f(w.qpsRecords / o.qps, 1)}x), index size ${f(w.size / o.size, 2)}x, build time ${f(w.build / o.build, 2)}x, nDCG@10 ${f(w['ndcg@10'] / o['ndcg@10'], 2)}x`)
  }
}
