// `IndexFile`: an index file searched in parts answers as the whole index does, reads only
// part of the file for it, and refuses what `Index.open` refuses.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Index, IndexFile, Model } from '../index.mjs'
import { scratch } from './scratch.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = join(HERE, '..', '..')
const WIKI = join(ROOT, 'examples', 'wiki')
const MODEL = join(ROOT, 'models', 'all-MiniLM-L6-v2')
const DIR = scratch('wikidex-file-')
const PATH = join(DIR, 'wiki.wdx')
Index.buildSync(WIKI).saveSync(PATH)
const whole = Index.openSync(PATH)

const QUERIES = ['who do I page for an outage', 'nightly job crash', 'PII in exports', 'revenu', 'zzzz', '']
const OPTIONS = [
  {},
  { limit: 3, explain: true, facets: true },
  { chunks: true, snippets: false },
  { lanes: ['token'], typos: false },
  { tags: ['ops'], always: 'first' },
  { scope: 'global' },
]

test('a search of the file answers as the whole index, on the pool and on the calling thread', async () => {
  const file = await IndexFile.open(PATH)
  const sync = IndexFile.openSync(PATH)
  for (const options of OPTIONS) {
    for (const q of QUERIES) {
      const expected = whole.searchSync(q, options)
      assert.deepEqual(await file.search(q, options), expected, `${q} ${JSON.stringify(options)}`)
      assert.deepEqual(sync.searchSync(q, options), expected, `${q} ${JSON.stringify(options)}`)
    }
  }
})

test('a first search reads part of the file, and pages come as the whole index gives them', async () => {
  const file = IndexFile.openSync(PATH)
  const [head, length] = file.loaded
  assert.equal(length, statSync(PATH).size)
  assert.ok(head > 0 && head < length)
  const { hits } = await file.search('outage', { limit: 1 })
  const [read] = file.loaded
  assert.ok(read > head && read < length, 'the query parts and its hit page, not the whole file')
  const key = hits[0].key
  assert.deepEqual(await file.pageRecord(key), whole.pageRecord(key))
  assert.deepEqual(IndexFile.openSync(PATH).pageRecordSync(key), whole.pageRecord(key))
  for (const id of ['raw/slack_2024_03_12::chunk_0', hits[0].chunk]) {
    assert.deepEqual(await IndexFile.openSync(PATH).chunk(id), whole.chunk(id))
    assert.deepEqual(IndexFile.openSync(PATH).chunkSync(id), whole.chunk(id))
  }
})

test('what open refuses the file refuses, by code', async () => {
  const code = async (fn) => {
    try {
      await fn()
    } catch (e) {
      return e.code
    }
    return 'no error'
  }
  assert.equal(await code(() => IndexFile.open(join(DIR, 'missing.wdx'))), 'io')
  assert.equal(await code(() => IndexFile.openSync(join(DIR, 'missing.wdx'))), 'io')
  const note = join(DIR, 'note.md')
  writeFileSync(note, '# not an index\n')
  assert.equal(await code(() => IndexFile.open(note)), 'not_an_index')
  const cut = join(DIR, 'cut.wdx')
  const bytes = readFileSync(PATH)
  writeFileSync(cut, bytes.subarray(0, bytes.length - 1))
  assert.equal(await code(() => IndexFile.open(cut)), 'corrupt_index')
  const file = IndexFile.openSync(PATH)
  assert.equal(await code(() => file.pageRecord('no-such-page')), 'unknown_page')
  assert.equal(await code(() => file.chunk('no-such-page::chunk_0')), 'unknown_chunk')
  assert.equal(await code(() => file.search('q', { limit: 'ten' })), 'invalid_argument')
  assert.equal(await code(() => file.searchSync(3)), 'invalid_argument')
})

test('with the model attached, the semantic lane answers as the whole index', { skip: !existsSync(join(MODEL, 'model.onnx')) && 'no model: make models' }, async () => {
  const model = await Model.load(MODEL)
  const path = join(DIR, 'wiki-minilm.wdx')
  ;(await Index.build(WIKI, { model })).saveSync(path)
  const loaded = Index.openSync(path)
  loaded.attachModel(model)
  const file = IndexFile.openSync(path)
  const query = 'who should I call when production is down'
  const lanes = (r) => Object.fromEntries(r.lanes.map((l) => [l.lane, l.status]))
  assert.equal(lanes(await file.search(query)).semantic, 'skipped')
  file.attachModel(model)
  for (const options of [{}, { lanes: ['semantic'] }]) {
    assert.deepEqual(await file.search(query, options), await loaded.search(query, options))
  }
  const other = await Model.load(MODEL, { onnx: 'model-int8.onnx' })
  let err
  try {
    IndexFile.openSync(path).attachModel(other)
  } catch (e) {
    err = e
  }
  assert.equal(err?.code, 'model_mismatch')
})
