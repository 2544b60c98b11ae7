// The semantic lane in the full wasm module (bindings-wasm/pkg-full) in Node: the model vector
// file (tests/vectors/model/minilm-int8.json, through tests/vectors/model-runner.mjs), and the
// model's API (errors, a model that does not match the index, the lane joining a search once
// the model is attached).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, existsSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as wasm from './wasm-full.mjs'
import { modelCases } from '../../tests/vectors/model-runner.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const vector = JSON.parse(readFileSync(join(ROOT, 'tests/vectors/model/minilm-int8.json'), 'utf8'))
const read = (rel) => {
  const path = join(ROOT, rel)
  assert.ok(existsSync(path), `${rel} is missing: run make models`)
  return readFileSync(path)
}
const modelBytes = read(vector.model)
const tokenizerBytes = read(vector.tokenizer)

const api = {
  loadModel: () => wasm.Model.fromBytes(modelBytes, tokenizerBytes, { maxLength: vector.max_length }),
  build: (files) => wasm.Index.build(files),
}
for (const c of modelCases(api, vector)) {
  test(c.name, async () => {
    const { ok, message } = await c.run()
    assert.ok(ok, message)
  })
}

test('the semantic lane joins a search once the model is attached', () => {
  const index = wasm.Index.build(vector.files)
  const v = vector.vectors
  index.setVectors(v.model_id, v.fingerprint, v.values.map((x) => new Float32Array(x)), v.encoding)
  const query = 'vegetables growing on the roof'
  const before = index.search(query)
  const lane = (r) => r.lanes.find((l) => l.lane === 'semantic')
  assert.equal(lane(before).status, 'skipped')
  assert.match(lane(before).reason, /query vector|model/)
  index.attachModel(wasm.Model.fromBytes(modelBytes, tokenizerBytes, { maxLength: vector.max_length }))
  const after = index.search(query)
  assert.equal(lane(after).status, 'ok')
  assert.equal(after.hits[0].page_id, 'garden')
})

test('a model the index was not built with is refused, the index unchanged', () => {
  const index = wasm.Index.build(vector.files)
  index.setVectors('other', 'blake3:0000', vector.vectors.values.map((x) => new Float32Array(x)), 'f32')
  const model = wasm.Model.fromBytes(modelBytes, tokenizerBytes)
  assert.throws(() => index.attachModel(model), (e) => e.code === 'model_mismatch' && typeof e.details === 'object')
  assert.equal(index.search('roof garden', { lanes: ['semantic'] }).lanes.find((l) => l.lane === 'semantic').status, 'skipped')
})

test('bad model bytes are a coded error, not a crash', () => {
  assert.throws(() => wasm.Model.fromBytes(new Uint8Array([1, 2, 3]), tokenizerBytes), (e) => typeof e.code === 'string')
  assert.throws(() => wasm.Model.fromBytes(modelBytes, new Uint8Array([123])), (e) => typeof e.code === 'string')
  assert.throws(() => wasm.Model.fromBytes('model.onnx', tokenizerBytes), (e) => e.code === 'invalid_argument')
  assert.throws(() => wasm.Model.fromBytes(modelBytes, tokenizerBytes, { max_len: 3 }), (e) => e.code === 'invalid_argument')
  // The module still works after the errors.
  const model = wasm.Model.fromBytes(modelBytes, tokenizerBytes)
  assert.equal(model.embed(['hello'])[0].length, 384)
  assert.deepEqual(model.prompts, { query: '', passage: '' })
})
