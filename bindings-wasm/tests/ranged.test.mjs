// RangedIndex and ranged.js in Node: every search vector answered by an index read in parts
// from the blob of the case's wiki (the same answers as the whole index), and
// openBlob over a fetch that serves byte ranges, one that does not, and ones that fail.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, readdirSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { readVectors } from '../../tests/vectors/node.mjs'
import { vectorCases } from '../../tests/vectors/runner.mjs'
import { Index, RangedIndex } from './wasm.mjs'
import { openBlob } from '../pkg/ranged.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** Searches `index` through a RangedIndex of its blob, supplying what it asks for. */
function rangedSearch(index, query, options) {
  const bytes = index.toBytes()
  const ranged = RangedIndex.open(bytes.subarray(0, RangedIndex.headEnd(bytes.subarray(0, 56))))
  for (let round = 0; round < 4; round++) {
    try {
      return ranged.search(query, options)
    } catch (e) {
      if (e?.code !== 'not_loaded') throw e
      // A round's ranges in one call (as ranged.js hands them over).
      ranged.supplyMany(e.details.ranges.map(([start, end]) => [start, bytes.subarray(start, end)]))
    }
  }
  throw new Error(`${query}: still not loaded after 4 rounds`)
}

const api = {
  build: (files, config) => Index.build(files, { config }),
  search: rangedSearch,
  lint: (index) => index.lint(),
  fromBytes: (bytes) => Index.fromBytes(bytes),
  parseHeaders: () => [],
  isCoreError: (e) => typeof e?.code === 'string',
}
const searches = vectorCases(api, readVectors()).filter((c) => c.op === 'search')
for (const c of searches) {
  test(`ranged: ${c.name}`, { skip: c.skip ?? false }, () => {
    const { ok, message } = c.run()
    assert.ok(ok, message)
  })
}
test('ranged: the search vectors are there', () => assert.ok(searches.length >= 40, `${searches.length}`))

test('ranged: supplyMany takes [start, bytes] pairs; anything else is invalid_argument and loads nothing', () => {
  const bytes = Index.build({ 'a.md': '# Alpha\n\nalpha beta\n', 'b.md': '# Beta\n\nbeta gamma\n' }).toBytes()
  const ranged = RangedIndex.open(bytes.subarray(0, RangedIndex.headEnd(bytes.subarray(0, 56))))
  const before = ranged.loadedBytes
  for (const bad of [42, [[0]], [['x', bytes]], [[0, 'not bytes']]]) {
    assert.throws(() => ranged.supplyMany(bad), (e) => e.code === 'invalid_argument')
  }
  assert.equal(ranged.loadedBytes, before)
  ranged.supplyMany(ranged.missing().map(([start, end]) => [start, bytes.subarray(start, end)]))
  assert.equal(ranged.loadedBytes, bytes.length)
  assert.equal(ranged.search('gamma').hits[0].page_id, 'b')
})

/** The example wiki's files, path → text. */
function exampleWiki() {
  const files = {}
  const walk = (dir, rel) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name)
      if (e.isDirectory()) walk(p, `${rel}${e.name}/`)
      else if (e.name.endsWith('.md')) files[`${rel}${e.name}`] = readFileSync(p, 'utf8')
    }
  }
  walk(join(ROOT, 'examples', 'wiki'), '')
  return files
}

/** A fetch over `bytes` at any URL: byte ranges answered with 206 unless `ranges` is false. */
function fakeFetch(bytes, { ranges = true, status = 200, log = [] } = {}) {
  return async (url, init = {}) => {
    const range = init.headers?.Range
    if (status !== 200) return new Response('no', { status })
    const m = /^bytes=(\d+)-(\d+)$/.exec(range ?? '')
    if (ranges && m) {
      const start = Number(m[1])
      const end = Math.min(bytes.length, Number(m[2]) + 1)
      log.push([start, end])
      return new Response(bytes.slice(start, end), {
        status: 206,
        headers: { 'content-range': `bytes ${start}-${end - 1}/${bytes.length}` },
      })
    }
    log.push([0, bytes.length])
    return new Response(bytes.slice(), { status: 200 })
  }
}

/** A wiki of many pages (so the blob has many parts), as path → text. */
function bigWiki() {
  const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet']
  const files = {}
  for (let p = 0; p < 400; p++) {
    const body = Array.from({ length: 60 }, (_, i) => `${words[(p * 7 + i * i) % 10]}${(p * 13 + i) % 97}`).join(' ')
    files[`p${p}.md`] = `---\ntitle: Page ${p}\ntags: [t${p % 4}]\n---\n# Page ${p}\n\n${body}\n`
  }
  return files
}

test('openBlob with range requests answers as the whole index and fetches a part of a big blob', async () => {
  const index = Index.build(bigWiki())
  const bytes = index.toBytes()
  const log = []
  const blob = await openBlob('http://x/wiki.wdx', { Index, RangedIndex }, { fetch: fakeFetch(bytes, { log }), prefix: 4096 })
  assert.ok(blob.ranged && blob.inParts)
  assert.equal(blob.pageCount, 400)
  for (const q of ['alpha3 bravo', 'golf4', 'hot', 'charlie12 delta', '"echo5 foxtrot"']) {
    const got = await blob.search(q, { limit: 10, explain: true })
    assert.deepEqual(got, index.search(q, { limit: 10, explain: true }), q)
  }
  assert.ok(log.every(([s, e]) => e > s) && log.length > 2)
  assert.ok(blob.fetched < bytes.length / 2, `${blob.fetched} of ${bytes.length}`)
  // Fetched: what was loaded, and the part of the first request's bytes that cut a section.
  assert.ok(blob.fetched >= blob.ranged.loadedBytes && blob.fetched - blob.ranged.loadedBytes < 4096)
  const rec = await blob.pageRecord('p7')
  assert.deepEqual(rec, index.pageRecord('p7'))
})

test('openBlob without range requests loads the blob whole into RangedIndex', async () => {
  const index = Index.build(exampleWiki())
  const bytes = index.toBytes()
  const log = []
  const blob = await openBlob('http://x/w.wdx', { Index, RangedIndex }, { fetch: fakeFetch(bytes, { ranges: false, log }), prefix: 1024 })
  assert.equal(blob.inParts, false)
  assert.equal(blob.ranged.loadedBytes, bytes.length)
  const q = 'why did the nightly job crash'
  assert.deepEqual(await blob.search(q), index.search(q))
  const key = index.search(q).hits[0].page_id
  assert.deepEqual(await blob.pageRecord(key), index.pageRecord(key))
  assert.equal(blob.fetched, bytes.length)
  assert.equal(log.length, 1, 'no request after the whole blob')
})

test('openBlob with the search module (no Index): the blob whole or in parts; another format version is incompatible_format', async () => {
  const search = await import('./wasm-search.mjs')
  assert.equal(search.Index, undefined)
  const index = Index.build(exampleWiki())
  const q = 'why did the nightly job crash'
  for (const ranges of [true, false]) {
    const blob = await openBlob('http://x/w.wdx', search, { fetch: fakeFetch(index.toBytes(), { ranges }), prefix: 1024 })
    assert.deepEqual(await blob.search(q), index.search(q))
  }
  const other = Uint8Array.from(index.toBytes())
  other.set([2, 0, 0, 0], 8)
  await assert.rejects(
    openBlob('http://x/w.wdx', search, { fetch: fakeFetch(other), prefix: 1024 }),
    (e) => e.code === 'incompatible_format',
  )
})

test('openBlob: a failed request and bytes that are no blob are coded errors', async () => {
  await assert.rejects(
    openBlob('http://x/missing.wdx', { Index, RangedIndex }, { fetch: fakeFetch(new Uint8Array(), { status: 404 }) }),
    (e) => e.code === 'http' && e.details.status === 404,
  )
  const html = new TextEncoder().encode('<!doctype html><title>not found</title>'.repeat(4))
  await assert.rejects(openBlob('http://x/w.wdx', { Index, RangedIndex }, { fetch: fakeFetch(html) }), (e) => e.code === 'not_an_index')
  // A part changed after the head was read (the last ones: the graph, the last pages): the
  // core refuses it and loads nothing of it.
  const bytes = Index.build(bigWiki()).toBytes()
  const changed = bytes.slice()
  changed.fill(7, bytes.length - 2000)
  const blob = await openBlob('http://x/w.wdx', { Index, RangedIndex }, { fetch: fakeFetch(changed), prefix: 4096 })
  await assert.rejects(blob.pageRecord('p399'), (e) => e.code === 'corrupt_index')
  // The bad part was not kept: asked again, it is fetched again and refused again.
  await assert.rejects(blob.pageRecord('p399'), (e) => e.code === 'corrupt_index')
  assert.ok(blob.ranged.loadedBytes < bytes.length)
})

test('RangedIndex: wrong arguments are invalid_argument', () => {
  const bytes = Index.build(exampleWiki()).toBytes()
  const ranged = RangedIndex.open(bytes)
  assert.equal(ranged.loadedBytes, bytes.length, 'a whole blob given to open is all loaded')
  assert.deepEqual(ranged.missing(), [])
  for (const bad of [-1, 1.5, 'x', undefined, Number.NaN, 2 ** 60]) {
    assert.throws(() => ranged.supply(bad, new Uint8Array(4)), (e) => e.code === 'invalid_argument', String(bad))
  }
  assert.throws(() => ranged.supply(0, 'bytes'), (e) => e.code === 'invalid_argument')
  const other = Uint8Array.from(bytes)
  other.set([2, 0, 0, 0], 8)
  assert.throws(() => RangedIndex.headEnd(other), (e) => e.code === 'incompatible_format')
  assert.throws(() => RangedIndex.open(bytes.subarray(0, 100)), (e) => e.code === 'corrupt_index')
})

test('openBlob sends its first request while the module is still loading', async () => {
  const bytes = Index.build(exampleWiki()).toBytes()
  const order = []
  let moduleLoaded
  const ready = new Promise((ok) => (moduleLoaded = ok)).then(() => order.push('ready'))
  const serve = fakeFetch(bytes)
  const fetch = (url, init) => {
    order.push('fetch')
    return serve(url, init)
  }
  const opening = openBlob('http://x/w.wdx', { Index, RangedIndex }, { fetch, ready })
  await new Promise((ok) => setTimeout(ok, 10))
  moduleLoaded()
  const blob = await opening
  assert.deepEqual(order.slice(0, 2), ['fetch', 'ready'])
  assert.equal(blob.pageCount, Index.build(exampleWiki()).pageCount)
})
