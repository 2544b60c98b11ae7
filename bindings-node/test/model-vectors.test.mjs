// The model vector file (tests/vectors/model/minilm-int8.json) through the Node addon, with the
// shared runner (tests/vectors/model-runner.mjs): the int8 model the file names embeds every
// passage and query as natively, and the semantic lane ranks as natively, within the file's
// tolerance (as the wasm module does in Node and in Chromium).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, existsSync } from 'node:fs'
import { join, dirname, basename } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Index, Model } from '../index.mjs'
import { modelCases } from '../../tests/vectors/model-runner.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const vector = JSON.parse(readFileSync(join(ROOT, 'tests/vectors/model/minilm-int8.json'), 'utf8'))
const file = join(ROOT, vector.model)
assert.ok(existsSync(file), `${vector.model} is missing: run make models`)

const api = {
  loadModel: () => Model.load(dirname(file), { onnx: basename(file), maxLength: vector.max_length }),
  build: (files) => Index.buildSync(files),
}
for (const c of modelCases(api, vector)) {
  test(c.name, async () => {
    const { ok, message } = await c.run()
    assert.ok(ok, message)
  })
}
