// The wasm module's own contract beyond the vectors: errors are `Error`s with the core's
// `code` and `details`, a wrong argument type is `invalid_argument` (never a panic, which
// would abort the module), blobs round-trip, offsets count UTF-16 units.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join, sep } from 'node:path'
import { Index, parseHeaders, version } from './wasm.mjs'

const FILES = {
  'alpha.md': '---\ntitle: Alpha\ntags: [ops]\n---\nThe nightly job crashed: see [[beta]].\n',
  'beta.md': '---\ntitle: Beta\n---\nBeta pages the on-call engineer 🚨 when the job fails.\n',
}

const index = Index.build(FILES)

function throwsCode(fn, code) {
  let thrown
  try {
    fn()
  } catch (e) {
    thrown = e
  }
  assert.ok(thrown instanceof Error, `expected an Error with code ${code}, got ${thrown}`)
  assert.equal(thrown.code, code, thrown.message)
  assert.equal(typeof thrown.details, 'object')
  return thrown
}

test('an unknown page is unknown_page', () => {
  const e = throwsCode(() => index.pageRecord('no_such_page'), 'unknown_page')
  assert.match(e.message, /no_such_page/)
})

test('bytes that are not an index are not_an_index', () => {
  throwsCode(() => Index.fromBytes(new TextEncoder().encode('hello, not a blob at all')), 'not_an_index')
})

test('a number where a string is expected is invalid_argument', () => {
  throwsCode(() => index.search(42), 'invalid_argument')
  throwsCode(() => index.pageRecord(7), 'invalid_argument')
  throwsCode(() => index.chunk({}), 'invalid_argument')
  throwsCode(() => index.verify('an answer', [1, 2]), 'invalid_argument')
  throwsCode(() => parseHeaders(3), 'invalid_argument')
})

test('other wrong arguments are invalid_argument', () => {
  throwsCode(() => Index.fromBytes('not bytes'), 'invalid_argument')
  throwsCode(() => Index.build(['alpha.md']), 'invalid_argument')
  throwsCode(() => Index.build({ 'a.md': 5 }), 'invalid_argument')
  throwsCode(() => index.search('job', 'limit 3'), 'invalid_argument')
  throwsCode(() => index.search('job', { limit: 'three' }), 'invalid_argument')
  throwsCode(() => index.setVectors('m', 'f', [[0.1, 0.2]]), 'invalid_argument')
})

test('the blob round-trips and the build report stays with the built index', () => {
  const bytes = index.toBytes()
  assert.ok(bytes instanceof Uint8Array)
  const loaded = Index.fromBytes(bytes)
  assert.equal(loaded.pageCount, 2)
  assert.equal(loaded.buildReport(), null)
  assert.equal(index.buildReport().pages, 2)
  assert.deepEqual(Index.fromBytes(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)).pageCount, 2)
})

test('search results are plain objects with short decimal scores and UTF-16 offsets', () => {
  const r = index.search('engineer', { limit: 3 })
  assert.equal(r.hits[0].page_id, 'beta')
  assert.equal(String(r.hits[0].score).length < 12, true)
  const body = index.pageRecord('beta').body
  const s = r.hits[0].snippet
  for (const h of s.highlights) assert.equal(s.text.slice(h.start, h.end).toLowerCase(), 'engineer')
  assert.equal(body.slice(s.offset, s.offset + 4), s.text.slice(0, 4))
  const block = index.promptBlock(r)
  assert.match(block.text, /\[page beta/)
})

test('writes make a new snapshot; a failed write changes nothing', () => {
  const copy = index.copy()
  const r = copy.upsertPage('gamma.md', '---\ntitle: Gamma\n---\nGamma links [[alpha]].\n')
  assert.equal(r.page_id, 'gamma')
  assert.equal(copy.pageCount, 3)
  assert.equal(index.pageCount, 2)
  const before = copy.toBytes()
  throwsCode(() => copy.deletePage('missing'), 'unknown_page')
  assert.deepEqual(copy.toBytes(), before)
  assert.equal(copy.renamePage('gamma', 'delta').to, 'delta')
  assert.equal(copy.passages().length, copy.chunkCount)
})

test('lint, neighbors, pointers and the citation checks answer', () => {
  assert.equal(typeof index.lint().errors, 'number')
  assert.ok(index.neighbors(['alpha'], { depth: 1 }).nodes.length >= 1)
  assert.deepEqual(index.pointers('alpha'), [])
  const chunk = index.pageRecord('alpha').chunks[0].id
  assert.equal(index.verify('The nightly job crashed.', [chunk]).passed, true)
  assert.ok('support' in index.checkAnswer('The nightly job crashed.', [chunk]))
  assert.ok(Array.isArray(index.uncitedSupport('Something nobody said.').uncited))
  assert.deepEqual(parseHeaders('nothing here'), [])
  assert.equal(typeof version(), 'string')
})

test('shards merged give the blob one build gives, and stay usable', () => {
  const wiki = new URL('../../examples/wiki/', import.meta.url).pathname
  const files = {}
  for (const rel of readdirSync(wiki, { recursive: true }).filter((p) => p.endsWith('.md'))) {
    files[rel.split(sep).join('/')] = readFileSync(join(wiki, rel), 'utf8')
  }
  const paths = Object.keys(files).sort()
  assert.ok(paths.some((p) => p.startsWith('raw/')) && paths.some((p) => p.startsWith('user/')))
  const shards = [0, 1, 2].map((s) =>
    Index.build(Object.fromEntries(paths.filter((_, i) => i % 3 === s).map((p) => [p, files[p]]))))
  const merged = Index.merge(shards)
  assert.deepEqual(merged.toBytes(), Index.build(files).toBytes())
  // The shards were not handed over: each still answers.
  assert.equal(shards.reduce((n, s) => n + s.pageIds().length, 0), merged.pageIds().length)
  assert.deepEqual(Index.merge([]).pageIds(), [])
  throwsCode(() => Index.merge(shards[0]), 'invalid_argument')
  throwsCode(() => Index.merge([shards[0], 'not an index']), 'invalid_argument')
  throwsCode(() => Index.merge([{ copy: () => 'not an index' }]), 'invalid_argument')
  throwsCode(() => Index.merge(shards, { config: { langauge: 'german' } }), 'invalid_argument')
})

test('pageIds lists every page by id, and pageRecord reads each', () => {
  const built = Index.build({ ...FILES, 'user/alice/alpha.md': 'Alice drafts alpha.\n' })
  const ids = built.pageIds()
  assert.deepEqual(ids, ['alpha', 'beta', 'user/alice/alpha'])
  assert.deepEqual(ids.map((id) => built.pageRecord(id).id), ids)
})

test('the agent tools answer as in core, and a spent limit is a coded error', () => {
  const copy = index.copy()
  assert.deepEqual(copy.tools().map((t) => t.name), ['search', 'read_pages', 'read_chunks', 'neighbors', 'verify'])
  const r = copy.callTool('search', { query: 'nightly job', limit: 2 })
  assert.match(r.text, /^\[page alpha · chunk alpha::chunk_0 · score [0-9.]+\] Alpha$/m)
  assert.equal(r.data.hits[0].page_id, 'alpha')
  const unknown = copy.callTool('read_chunks', { ids: ['made_up::chunk_7'] })
  assert.deepEqual(unknown.data.unknown, ['made_up::chunk_7'])
  throwsCode(() => copy.callTool('search', { query: 'x', limits: 3 }), 'invalid_argument')
  throwsCode(() => copy.callTool(7), 'invalid_argument')
  copy.setToolLimits({ max_drilldowns: 1 })
  copy.callTool('read_pages', { keys: ['beta'] })
  throwsCode(() => copy.callTool('read_pages', { keys: ['beta'] }), 'too_large')
  copy.resetTurn()
  copy.callTool('read_pages', { keys: ['beta'] })
  throwsCode(() => copy.setToolLimits({ max_results: 0 }), 'invalid_argument')
})

test('the query log hands each search to the callback after the search returns', async () => {
  const copy = index.copy()
  const entries = []
  copy.setQueryLog((e) => entries.push(e))
  copy.search('nightly', { limit: 3 })
  assert.equal(entries.length, 0, 'not during the search')
  await new Promise((resolve) => setTimeout(resolve, 0))
  assert.equal(entries.length, 1)
  assert.equal(entries[0].origin, 'browser')
  assert.equal(entries[0].kind, 'search')
  assert.equal(entries[0].query, 'nightly')
  assert.deepEqual(entries[0].top.slice(0, 1), ['alpha::chunk_0'])
  copy.setQueryLog(null)
  copy.search('nightly')
  await new Promise((resolve) => setTimeout(resolve, 0))
  assert.equal(entries.length, 1)
  throwsCode(() => copy.setQueryLog('file.jsonl'), 'invalid_argument')
})

test('issue 26: unknown option keys are invalid_argument naming the nearest known key', () => {
  const e = throwsCode(() => index.search('nightly', { limt: 3 }), 'invalid_argument')
  assert.match(e.message, /unknown key `limt`; did you mean `limit`\?/)
  throwsCode(() => Index.build(FILES, { config: { langauge: 'german' } }), 'invalid_argument')
  throwsCode(() => Index.build(FILES, { stric: true }), 'invalid_argument')
  throwsCode(() => index.search('nightly', { limit: 0 }), 'invalid_argument')
})
