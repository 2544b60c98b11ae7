// The search module (bindings-wasm/pkg-search): `RangedIndex` alone, for a site that loads a
// blob the CLI built. Every vector whose op it has runs on a blob the whole module built and
// the search module opened, with the same shared runner and expectations as
// vectors.test.mjs, less the ops it lacks (search-module.mjs).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runVectors } from '../../tests/vectors/node.mjs'
import * as full from './wasm.mjs'
import * as search from './wasm-search.mjs'
import { searchApi } from './search-module.mjs'
import { openBlob } from '../pkg/ranged.js'


runVectors(searchApi(full, search))

const methods = (cls) =>
  Object.getOwnPropertyNames(cls)
    .concat(Object.getOwnPropertyNames(cls.prototype))
    .filter((n) => !['length', 'name', 'prototype', 'constructor', '__wrap', 'free', '__destroy_into_raw'].includes(n))
    .sort()

test('the search module is RangedIndex alone, without page records: no Index class, no agent functions', () => {
  assert.equal(search.Index, undefined)
  assert.ok(typeof full.Index === 'function')
  // The citation header parser is the agent side's.
  assert.deepEqual(Object.keys(search).sort(), Object.keys(full).filter((k) => !['parseHeaders', 'Index'].includes(k)).sort())
  assert.deepEqual(methods(search.RangedIndex), methods(full.RangedIndex).filter((m) => m !== 'pageRecord'))
})

test("ranged.js's pageRecord rejects with unsupported in the search module, and reads the record in the whole one", async () => {
  const built = full.Index.build({ 'a.md': '# Alpha\n\nalpha beta\n' })
  const blob = built.toBytes()
  // A server that sends the whole blob.
  const fetch = async () => new Response(blob, { status: 200 })
  const inSearch = await openBlob('wiki.wdx', search, { fetch })
  assert.equal((await inSearch.search('alpha')).hits[0].page_id, 'a')
  await assert.rejects(inSearch.pageRecord('a'), (e) => {
    assert.equal(e.code, 'unsupported')
    assert.deepEqual(e.details, { method: 'pageRecord' })
    return true
  })
  const inFull = await openBlob('wiki.wdx', full, { fetch })
  assert.deepEqual(await inFull.pageRecord('a'), built.pageRecord('a'))
})

test('the committed format 1 blob loads in both modules, and another version is an incompatible format in both', () => {
  const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'core', 'tests', 'fixtures', 'blobs')
  const blob = readFileSync(join(fixtures, 'format-1.wdx'))
  const [a, b] = [search.RangedIndex.open(blob), full.Index.fromBytes(blob)]
  assert.equal(a.pageCount, b.pageCount)
  assert.deepEqual(a.search('warehouse migration'), b.search('warehouse migration'))
  const other = Uint8Array.from(blob)
  other.set([2, 0, 0, 0], 8)
  for (const open of [(x) => search.RangedIndex.headEnd(x), (x) => search.RangedIndex.open(x), (x) => full.Index.fromBytes(x)]) {
    assert.throws(() => open(other), (e) => {
      assert.equal(e.code, 'incompatible_format')
      assert.deepEqual(e.details, { found: 2, oldest: 1, current: 1 })
      return true
    })
  }
})

test('the search module stems English only: a French blob is unsupported_language, whole or ranged', () => {
  const files = { 'a.md': '# Chats\n\nLes chats mangent.\n' }
  const french = full.Index.build(files, { config: { language: 'french' } })
  const check = (e) => {
    assert.equal(e.code, 'unsupported_language')
    assert.deepEqual(e.details, { language: 'french', available: ['english', 'none'] })
    assert.match(e.message, /no stemmer for french/)
    return true
  }
  assert.throws(() => search.RangedIndex.open(french.toBytes()), check)
  const head = french.toBytes()
  assert.throws(() => search.RangedIndex.open(head.subarray(0, search.RangedIndex.headEnd(head))), check)
  // The whole module has every stemmer; an English blob loads in both.
  assert.equal(full.Index.fromBytes(french.toBytes()).pageCount, 1)
  const english = full.Index.build(files)
  assert.equal(search.RangedIndex.open(english.toBytes()).search('chats').hits[0].page_id, 'a')
})

test('the search module normalizes non-ASCII words with String.prototype.normalize, ASCII ones without it', () => {
  const files = { 'global/coffee.md': '# Coffee\n\nThe nightly coffee run.\n', 'global/tea.md': '# Tea\n\nGreen tea only.\n' }
  const index = search.RangedIndex.open(full.Index.build(files).toBytes())
  const native = String.prototype.normalize
  const forms = []
  String.prototype.normalize = function (form) {
    forms.push(form)
    return native.call(this, form)
  }
  try {
    const ascii = index.search('Nightly COFFEE').hits.map((h) => h.page_id)
    assert.deepEqual(ascii, ['coffee'])
    assert.deepEqual(forms, [], 'ASCII text never reaches JavaScript')
    // Fullwidth letters: NFKC folds them to ASCII.
    assert.deepEqual(index.search('ｎｉｇｈｔｌｙ ｃｏｆｆｅｅ').hits.map((h) => h.page_id), ascii)
    assert.ok(forms.length > 0 && forms.every((f) => f === 'NFKC'), `the query words went through normalize('NFKC'): ${forms}`)
  } finally {
    String.prototype.normalize = native
  }
})

test('the search module lowercases non-ASCII words with toLowerCase and answers as the whole module does', () => {
  const files = {
    'global/odos.md': '---\ntags: [Ärger, ΟΔΟΣ]\ntype: Straße\n---\n# Οδός\n\nΗ ΟΔΟΣ ΕΙΝΑΙ ΜΑΚΡΙΑ. İstanbul STRAẞE Ǆemal.\n',
    'global/other.md': '---\ntags: [ärger]\n---\n# Other\n\nNothing Greek here.\n',
  }
  const whole = full.Index.build(files)
  const index = search.RangedIndex.open(whole.toBytes())
  const native = String.prototype.toLowerCase
  let calls = 0
  String.prototype.toLowerCase = function () {
    calls++
    return native.call(this)
  }
  try {
    for (const [q, options] of [
      ['ΟΔΟΣ', {}],
      ['οδοσ μακρια', {}],
      ['İSTANBUL straße', {}],
      ['ǅemal', {}],
      ['other', { tags: ['ÄRGER'], facets: true }],
      ['odos', { types: ['STRASSE'] }],
      ['ΟΔΟΣ', { tags: ['οδος'], facets: true }],
    ]) {
      assert.deepEqual(index.search(q, options), whole.search(q, options), q)
    }
    assert.ok(calls > 0, 'non-ASCII text went through toLowerCase')
    calls = 0
    index.search('nothing greek', {})
    assert.equal(calls, 0, 'ASCII text never reaches JavaScript')
  } finally {
    String.prototype.toLowerCase = native
  }
  assert.equal(index.search('ΟΔΟΣ').hits[0].page_id, 'odos')
})
