// The Node API beyond the vectors: errors by code, bad arguments of every type, Promises off
// the event loop, threads, the model, the examples.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, dirname, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { execFileSync, spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { Index, Model, parseHeaders, version } from '../index.mjs'
import { scratch } from './scratch.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = join(HERE, '..', '..')
const WIKI = join(ROOT, 'examples', 'wiki')
const MODEL = join(ROOT, 'models', 'all-MiniLM-L6-v2')
const example = Index.buildSync(WIKI)

/** Asserts that `fn` throws (or rejects with) an Error with this code. */
async function rejects(fn, code) {
  let err
  try {
    await fn()
  } catch (e) {
    err = e
  }
  assert.ok(err instanceof Error, `expected an Error with code ${code}, got ${err}`)
  assert.equal(err.code, code, err.message)
  assert.equal(typeof err.details, 'object')
  return err
}

test('require and import give the same objects', () => {
  const require = createRequire(import.meta.url)
  const cjs = require('../index.js')
  assert.equal(cjs.Index, Index)
  assert.equal(cjs.Model, Model)
  assert.match(version(), /^\d+\.\d+\.\d+$/)
})

test('build from a folder and from an object of path to text agree', async () => {
  const files = { 'global/a.md': '# Alpha\nThe nightly job crashed.', 'global/b.md': 'Beta links [[a]].' }
  const sync = Index.buildSync(files)
  const promised = await Index.build(files)
  assert.deepEqual(promised.toBytes(), sync.toBytes())
  assert.equal(sync.pageCount, 2)
  assert.equal(example.pageCount, 42)
  const r = await example.search('who do I page for an outage', { limit: 3 })
  assert.deepEqual(r, example.searchSync('who do I page for an outage', { limit: 3 }))
  assert.ok(r.hits.some((h) => h.page_id === 'runbook_oncall'))
})

test('shards merged give the blob one build gives, keeping their vectors', async () => {
  const files = {}
  for (const rel of readdirSync(WIKI, { recursive: true }).filter((p) => p.endsWith('.md'))) {
    files[rel.split(sep).join('/')] = readFileSync(join(WIKI, rel), 'utf8')
  }
  const model = await Model.load(MODEL)
  const paths = Object.keys(files).sort()
  const shards = [0, 1, 2].map((s) =>
    Index.buildSync(Object.fromEntries(paths.filter((_, i) => i % 3 === s).map((p) => [p, files[p]])), { model }))
  const whole = Index.buildSync(files, { model })
  const stages = []
  const merged = await Index.merge(shards, { model, onProgress: (stage) => stages.push(stage) })
  assert.deepEqual(merged.toBytes(), whole.toBytes())
  assert.ok(stages.includes('pages'))
  assert.deepEqual(Index.mergeSync(shards, { model: false }).toBytes(), Index.buildSync(files, { model: false }).toBytes())
  await rejects(() => Index.mergeSync([example, 'not an index']), 'invalid_argument')
})

test('search settles a promise, bad options included, with searchSync\'s answer', async () => {
  // Without a model the search runs on the calling thread (shorter than a hop to the pool):
  // still a promise, and an error rejects it rather than throwing.
  const p = example.search('outage', { limit: 2 })
  assert.ok(p instanceof Promise)
  assert.deepEqual(await p, example.searchSync('outage', { limit: 2 }))
  const bad = example.search('outage', { limit: 'two' })
  assert.ok(bad instanceof Promise, 'bad options reject the promise, they do not throw')
  await rejects(() => bad, 'invalid_argument')
})

test('onProgress is called on the event loop for each stage', async () => {
  const seen = []
  await Index.build(WIKI, { onProgress: (stage, done, total) => seen.push([stage, done, total]) })
  await new Promise((r) => setImmediate(r))
  assert.deepEqual(seen.at(-1), ['pages', 42, 42])
  const sync = []
  Index.buildSync(WIKI, { onProgress: (...a) => sync.push(a) })
  assert.equal(sync.length, 42, 'a synchronous build calls onProgress before it returns')
  assert.throws(() => Index.buildSync(WIKI, { onProgress: () => { throw new RangeError('stop') } }), RangeError)
})

test('an AbortSignal stops a build with cancelled', async () => {
  const controller = new AbortController()
  let calls = 0
  // Synchronous: abort() runs the listener at once, the build stops after the next page.
  const e = await rejects(
    () => Index.buildSync(WIKI, { signal: controller.signal, onProgress: () => ++calls === 3 && controller.abort() }),
    'cancelled',
  )
  assert.equal(e.details.stage, 'pages')
  assert.equal(calls, 3)
  // On the thread pool: the first progress call reaches the event loop long before 6,000
  // pages are indexed.
  const later = new AbortController()
  await rejects(() => Index.build(bigWiki(6000), { signal: later.signal, onProgress: () => later.abort() }), 'cancelled')
  await rejects(() => Index.buildSync(WIKI, { signal: AbortSignal.abort() }), 'cancelled')
  await rejects(() => Index.build(WIKI, { signal: 'stop' }), 'invalid_argument')
  assert.equal((await Index.build(WIKI, { signal: new AbortController().signal })).pageCount, 42)
})

test('offsets index JavaScript strings (UTF-16)', () => {
  const index = Index.buildSync({ 'global/e.md': '# Émoji 👩‍💻 notes\n\nThe 👩‍💻 café serves crème brûlée to the nightly crew.' })
  const hit = index.searchSync('brûlée').hits[0]
  const s = hit.snippet
  assert.deepEqual(s.highlights.map((h) => s.text.slice(h.start, h.end)), ['brûlée'])
  const page = index.pageRecord('e')
  const c = page.chunks[0]
  assert.ok(page.body.slice(c.start, c.end).includes('café'))
})

test('every core error arrives with its code and details', async () => {
  await rejects(() => example.pageRecord('no_such_page'), 'unknown_page')
  await rejects(() => example.chunk('no_such::chunk_0'), 'unknown_chunk')
  await rejects(() => Index.fromBytesSync(Buffer.from('not a blob at all')), 'not_an_index')
  const blob = example.toBytes()
  await rejects(() => Index.fromBytes(blob.subarray(0, blob.length - 7)), 'corrupt_index')
  await rejects(() => Index.open('/nonexistent/wiki.wdx'), 'io')
  const e = await rejects(() => example.copy().upsertPage('global/x.md', 'See [[nowhere_at_all]].'), 'dangling_links')
  assert.deepEqual(e.details.missing, ['nowhere_at_all'])
  await rejects(() => example.copy().upsertPage('raw/slack_2024_03_12.md', 'changed'), 'immutable_chunk')
  await rejects(() => Index.buildSync({ 'a/x.md': 'one', 'b/X.md': 'two' }, { strict: true }), 'duplicate_key')
  await rejects(() => Index.buildSync({ 'x.md': '---\na: [\n---\n' }, { strict: true }), 'invalid_page')
  await rejects(() => example.verify('x'.repeat(2 * 1024 * 1024), []), 'too_large')
  await rejects(() => Model.load('/nonexistent/model'), 'io')
  const junk = scratch('wikidex-model-')
  writeFileSync(join(junk, 'model.onnx'), 'not onnx')
  writeFileSync(join(junk, 'tokenizer.json'), '{}')
  await rejects(() => Model.load(junk), 'model')
  const withVectors = Index.buildSync({ 'global/a.md': 'alpha' })
  withVectors.setVectors('toy', 'fp', [new Float32Array([1, 0])])
  await rejects(() => withVectors.upsertPage('global/b.md', 'new text'), 'no_embedder')
  await rejects(() => withVectors.searchSync('alpha', { query_vector: [1, 0, 0] }), 'invalid_argument')
})

test('bad arguments of every type are invalid_argument, never a crash', async () => {
  const bad = [
    () => example.searchSync(42),
    () => example.searchSync(undefined),
    () => example.searchSync('x', 'limit=3'),
    () => example.searchSync('x', { limit: NaN }),
    () => example.searchSync('x', { limit: 1e12 }),
    () => example.searchSync('x', { limit: -1 }),
    () => example.searchSync('x', { lanes: ['nope'] }),
    () => example.searchSync('x', { no_such_option: true, limit: 'ten' }),
    () => example.search('x', { limit: Infinity }),
    () => example.pageRecord(null),
    () => example.neighbors('incident_2024_03_memory_leak'),
    () => example.neighbors(['incident_2024_03_memory_leak'], { depth: 99 }),
    () => example.verify('answer', 'not a list'),
    () => example.setVectors('m', 'f', [[1, 2]]),
    () => example.setVectors('m', 'f', [new Float32Array(2)], 'float16'),
    () => example.callTool('search', { query: 5 }),
    () => example.callTool('no_such_tool', {}),
    () => example.setToolLimits({ max_results: 0 }),
    () => Index.build(42),
    () => Index.buildSync({ 'a.md': 7 }),
    () => Index.fromBytesSync('a string'),
    () => Index.buildSync(WIKI, { config: { bm25: { k1: -1 } } }),
    () => Index.buildSync(WIKI, { vectors: 'f64' }),
    () => parseHeaders(),
  ]
  for (const [i, fn] of bad.entries()) {
    const e = await rejects(fn, 'invalid_argument').catch((err) => {
      throw new Error(`case ${i} (${fn}): ${err.message}`)
    })
    assert.ok(e.message.length > 0)
  }
  const buf = new ArrayBuffer(16)
  const view = new Uint8Array(buf)
  structuredClone(buf, { transfer: [buf] })
  // A view of a detached buffer reads as no bytes: a coded error, not a crash.
  const e = await rejects(() => Index.fromBytesSync(view), 'corrupt_index')
  assert.match(e.message, /0 of \d+ bytes/)
})

test('eight concurrent async searches equal one sequential run; a write meanwhile is atomic', async () => {
  const index = example.copy()
  const queries = ['nightly job crash', 'who do I page', 'PII in exports', 'revenue definition']
  const texts = ['Scratch notes about lunch menus.', 'Scratch notes: the nightly job crash, again.']
  const answers = []
  for (const t of texts) {
    index.upsertPage('user/bob/scratch.md', t)
    answers.push(Object.fromEntries(queries.map((q) => [q, index.searchSync(q, { limit: 5 })])))
  }
  assert.notDeepEqual(answers[0], answers[1])
  let writes = 0
  const pending = []
  for (let round = 0; round < 8; round++) {
    for (const q of queries) pending.push(index.search(q, { limit: 5 }).then((r) => [q, r]))
    index.upsertPage('user/bob/scratch.md', texts[writes++ % 2])
  }
  for (const [q, r] of await Promise.all(pending)) {
    assert.ok(same(r, answers[0][q]) || same(r, answers[1][q]), q)
  }
  const fresh = example.copy()
  const sequential = []
  for (const q of queries) sequential.push(fresh.searchSync(q))
  const concurrent = await Promise.all(queries.map((q) => fresh.search(q)))
  assert.deepEqual(concurrent, sequential)
})

function same(a, b) {
  try {
    assert.deepEqual(a, b)
    return true
  } catch {
    return false
  }
}

test('four worker threads loading the same blob answer as the main thread', async () => {
  const blob = example.toBytes()
  const queries = ['nightly job crash', 'who do I page', 'PII in exports', 'revenue definition']
  const want = queries.map((q) => example.searchSync(q))
  const code = `
    const { parentPort, workerData } = require('node:worker_threads')
    const { Index } = require(workerData.pkg)
    const index = Index.fromBytesSync(Buffer.from(workerData.blob))
    parentPort.postMessage(workerData.queries.map((q) => index.searchSync(q)))
  `
  const pkg = join(HERE, '..', 'index.js')
  const source = example.copy()
  const running = Promise.all(
    [0, 1, 2, 3].map(
      () =>
        new Promise((resolve, reject) => {
          const w = new Worker(code, { eval: true, workerData: { pkg, blob, queries } })
          w.once('message', resolve)
          w.once('error', reject)
        }),
    ),
  )
  // Writes on the index the blob came from, while the workers search their copies.
  for (let i = 0; i < 20; i++) source.upsertPage('user/bob/scratch.md', `Nightly job crash notes, take ${i}.`)
  const results = await running
  for (const r of results) assert.deepEqual(r, want)
  assert.notDeepEqual(source.searchSync(queries[0]), want[0])
})

/** How many times the event loop turned while `work` ran. */
async function turnsDuring(work) {
  let turns = 0
  let running = true
  const spin = () => {
    if (!running) return
    turns++
    setImmediate(spin)
  }
  setImmediate(spin)
  await work()
  running = false
  return turns
}

function bigWiki(n) {
  const files = {}
  for (let i = 0; i < n; i++) {
    files[`global/p${i}.md`] = `# Page ${i}\n\n` + `word${i % 97} nightly pipeline crash revenue outage pager. `.repeat(40)
  }
  return files
}

test('the event loop keeps turning during a build', async () => {
  const files = bigWiki(3000)
  const during = await turnsDuring(() => Index.build(files))
  assert.ok(during > 10, `the loop turned ${during} times during an async build`)
  const blocked = await turnsDuring(async () => Index.buildSync(files))
  assert.ok(blocked <= 1, `buildSync is synchronous (turned ${blocked} times)`)
})

const haveModel = existsSync(join(MODEL, 'model.onnx'))

test('a model embeds at build and search; the loop turns during a semantic search', { skip: !haveModel && 'models/ missing: run make models' }, async () => {
  const model = await Model.load(MODEL)
  assert.equal(model.dim, 384)
  const [v] = await model.embed(['who do I page for an outage'])
  assert.ok(v instanceof Float32Array && v.length === 384)
  assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-4)
  const index = await Index.build(WIKI, { model })
  const r = await index.search('who do I call when production is down', { limit: 3 })
  const semantic = r.lanes.find((l) => l.lane === 'semantic')
  assert.equal(semantic.status, 'ok')
  const turns = await turnsDuring(() => index.search('which team owns the revenue dashboard and its alerts'))
  assert.ok(turns > 3, `the loop turned ${turns} times during a semantic search`)
  const loaded = Index.fromBytesSync(index.toBytes())
  assert.equal(loaded.searchSync('outage', { lanes: ['semantic'] }).lanes.find((l) => l.lane === 'semantic').status, 'skipped')
  loaded.attachModel(model)
  assert.deepEqual(await loaded.search('who do I call when production is down', { limit: 3 }), r)
})

const E5 = join(dirname(MODEL), 'multilingual-e5-small')

test('a model with prompts (multilingual-e5-small) puts them before queries and passages', { skip: !existsSync(join(E5, 'model-int8.onnx')) && 'models/ missing: run make models' }, async () => {
  const mini = await Model.load(MODEL)
  assert.deepEqual(mini.prompts, { query: '', passage: '' })
  const model = await Model.load(E5, { onnx: 'model-int8.onnx' })
  assert.deepEqual(model.prompts, { query: 'query: ', passage: 'passage: ' })
  const [asQuery] = await model.embed(['Wer hat Rufbereitschaft?'], 'query')
  const [prefixed] = await model.embed(['query: Wer hat Rufbereitschaft?'])
  assert.deepEqual(asQuery, prefixed)
  await assert.rejects(async () => model.embed(['x'], 'question'), (e) => e.code === 'invalid_argument')
  const index = await Index.build(WIKI, { model })
  const r = await index.search('Wer hat Rufbereitschaft?', { limit: 1, lanes: ['semantic'] })
  assert.equal(r.hits[0].page_id, 'runbook_oncall')
})

test('save and open round trip', async () => {
  const dir = scratch('wikidex-')
  const path = join(dir, 'wiki.wdx')
  await example.save(path)
  const again = await Index.open(path)
  assert.deepEqual(again.toBytes(), example.toBytes())
  example.saveSync(path)
  assert.deepEqual(Index.openSync(path).searchSync('outage'), example.searchSync('outage'))
})

test('the blob is format 1 and loads back with the same answers', async () => {
  const blob = example.toBytes()
  assert.ok(Buffer.isBuffer(blob))
  assert.equal(blob.subarray(0, 8).toString('latin1'), 'WIKIDEX\0')
  assert.equal(blob.readUInt32LE(8), 1)
  const again = await Index.fromBytes(blob)
  for (const q of ['who do I page for an outage', 'nightly job crash', 'PII in exports', 'revenue']) {
    assert.deepEqual(again.searchSync(q, { limit: 5 }), example.searchSync(q, { limit: 5 }), q)
  }
  assert.deepEqual(again.toBytes(), blob)
})

test('save and saveSync refuse a missing folder and arguments that are not paths', async () => {
  const dir = scratch('wikidex-')
  const path = join(dir, 'wiki.wdx')
  await rejects(() => example.save(join(dir, 'no_such_dir', 'wiki.wdx')), 'io')
  await rejects(() => example.saveSync(join(dir, 'no_such_dir', 'wiki.wdx')), 'io')
  for (const bad of [42, undefined, null, { path }]) {
    await rejects(() => example.save(bad), 'invalid_argument')
    await rejects(() => example.saveSync(bad), 'invalid_argument')
  }
})

test('agent tools, prompt block, verification and the query log', async () => {
  const index = example.copy()
  assert.deepEqual(index.tools().map((t) => t.name), ['search', 'read_pages', 'read_chunks', 'neighbors', 'verify'])
  const r = index.callTool('read_chunks', { ids: ['made_up::chunk_0'] })
  assert.match(r.text, /unknown/)
  const results = index.searchSync('why did the nightly job crash', { limit: 3 })
  const block = index.promptBlock(results)
  assert.ok(block.offered.length > 0)
  const headers = parseHeaders(block.text).map((h) => h.chunk)
  for (const h of results.hits) assert.ok(headers.includes(h.chunk), h.chunk)
  for (const id of headers) assert.ok(block.offered.includes(id), id)
  const entries = []
  index.setQueryLog((e) => entries.push(e), 'test')
  index.searchSync('xqzvbnm plorkish')
  const check = index.checkAnswer(
    'The segment_enricher pod was OOM-killed three times, and nightly_build failed at 03:31 UTC.',
    ['raw/slack_2024_03_12::chunk_0', 'made_up::chunk_0'],
  )
  assert.deepEqual(check.verification.citations.map((c) => c.status), ['quote', 'unknown'])
  // The entries come back on the event loop (a threadsafe function): wait for both, up to 10 s
  // (a fixed 50 ms wait failed once on a loaded machine).
  for (let waited = 0; entries.length < 2 && waited < 10_000; waited += 10) {
    await new Promise((r) => setTimeout(r, 10))
  }
  assert.deepEqual(entries.map((e) => [e.origin, e.kind]), [['test', 'search'], ['test', 'verify']])
  const dir = scratch('wikidex-log-')
  index.setQueryLog(join(dir, 'log.jsonl'))
  index.searchSync('outage')
  index.setQueryLog(null)
  assert.equal(JSON.parse(readFileSync(join(dir, 'log.jsonl'), 'utf8').trim()).origin, 'node')
})

test('the agent example runs (the docs\' examples run in docs.test.mjs)', () => {
  const agent = execFileSync(process.execPath, [join(ROOT, 'examples', 'node', 'agent.mjs')], { cwd: ROOT, encoding: 'utf8' })
  assert.match(agent, /quote/)
  assert.match(agent, /unknown/)
})

// ---- issue 26: hardening, round two ----

/** Runs `code` (an ES module importing the binding as `wikidex`) in a child Node process and
 * returns its exit status, stdout and stderr: a callback that killed the process fails the
 * test instead of the test runner. */
function runChild(code) {
  const url = new URL('../index.mjs', import.meta.url).href
  const script = `import * as wikidex from ${JSON.stringify(url)}\n${code}`
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 60_000,
  })
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' }
}

test('a throwing onProgress rejects the build promise, and the process lives on', () => {
  const r = runChild(`
    try {
      await wikidex.Index.build(${JSON.stringify(WIKI)}, { onProgress: () => { throw new RangeError('stop here') } })
      console.log('resolved')
    } catch (e) {
      console.log('caught', e.name, e.message)
    }
    const index = await wikidex.Index.build(${JSON.stringify(WIKI)})
    console.log('after', index.searchSync('outage').hits.length > 0)
  `)
  assert.equal(r.status, 0, r.stderr)
  assert.match(r.stdout, /^caught RangeError stop here$/m)
  assert.match(r.stdout, /^after true$/m)
})

test('a throwing query-log callback is reported as a warning and the search answers', () => {
  const r = runChild(`
    const index = wikidex.Index.buildSync(${JSON.stringify(WIKI)})
    index.setQueryLog(() => { throw new Error('log sink down') })
    const hits = index.searchSync('outage').hits.length
    await new Promise((r) => setTimeout(r, 200))
    console.log('hits', hits > 0, (await index.search('outage')).hits.length > 0)
  `)
  assert.equal(r.status, 0, r.stderr)
  assert.match(r.stdout, /^hits true true$/m)
  assert.match(r.stderr, /the query-log callback threw: log sink down/)
})

test('unknown option keys are invalid_argument naming the nearest known key', async () => {
  await rejects(() => example.searchSync('outage', { bogus: 1 }), 'invalid_argument')
  await rejects(() => example.search('outage', { limt: 3 }), 'invalid_argument')
  assert.throws(() => example.searchSync('outage', { limt: 3 }), /unknown key `limt`; did you mean `limit`\?/)
  assert.throws(() => Index.buildSync({ 'global/a.md': 'alpha' }, { config: { langauge: 'german' } }), /did you mean `language`\?/)
  assert.throws(() => Index.buildSync({ 'global/a.md': 'alpha' }, { onprogress: () => {} }), /did you mean `onProgress`\?/)
  await rejects(() => Index.build({ 'global/a.md': 'alpha' }, { stric: true }), 'invalid_argument')
})

test('a limit of 0 is refused, as on every surface', async () => {
  await rejects(() => example.searchSync('outage', { limit: 0 }), 'invalid_argument')
  await rejects(() => example.search('outage', { limit: 0 }), 'invalid_argument')
  assert.equal(example.searchSync('outage', { limit: 1 }).hits.length, 1)
})

test('a FIFO or a device is refused as a blob, without blocking', async () => {
  const dir = scratch('wikidex-fifo-')
  const fifo = join(dir, 'blob.fifo')
  execFileSync('mkfifo', [fifo])
  for (const path of [fifo, '/dev/zero']) {
    await rejects(() => Index.openSync(path), 'invalid_argument')
    await rejects(() => Index.open(path), 'invalid_argument')
  }
})

test('sync builds an index file, then reads only what changed, and never replaces a page', async () => {
  const dir = scratch('wikidex-sync-')
  const wiki = join(dir, 'wiki')
  const pages = join(wiki, 'global')
  execFileSync('mkdir', ['-p', pages])
  writeFileSync(join(pages, 'a.md'), 'Alpha pages the on-call engineer.')
  writeFileSync(join(pages, 'b.md'), 'Beta is about revenue.')
  const blob = join(dir, 'wiki.wdx')
  const first = await Index.sync(wiki, blob)
  const r1 = first.syncRecord()
  assert.ok(r1.full && r1.written)
  assert.deepEqual(r1.added, ['global/a.md', 'global/b.md'])
  assert.equal(first.searchSync('revenue').hits[0].key, 'b')
  assert.equal((await Index.sync(wiki, blob)).syncRecord().written, false)
  writeFileSync(join(pages, 'b.md'), 'Beta is about churn now.')
  const r3 = (await Index.sync(wiki, blob)).syncRecord()
  assert.deepEqual([r3.changed, r3.added, r3.unchanged], [['global/b.md'], [], 1])
  assert.equal(Index.openSync(blob).searchSync('churn').hits[0].key, 'b')
  assert.equal(example.syncRecord(), null)
  const note = join(dir, 'note.md')
  writeFileSync(note, 'not an index')
  await rejects(() => Index.sync(wiki, note), 'invalid_argument')
  assert.equal(readFileSync(note, 'utf8'), 'not an index')
  await rejects(() => Index.sync(wiki, blob, { dropVector: true }), 'invalid_argument')
})
