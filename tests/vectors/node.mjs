// The shared vector runner (runner.mjs) under node:test: reads every tests/vectors/*.json and
// registers one test per case, plus one that every file and op was run. Used by the Node
// addon's and the wasm module's vector tests.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, readdirSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { vectorCases, missingOps } from './runner.mjs'

const VECTORS = dirname(fileURLToPath(import.meta.url))

/** Every vector file as `{ file, vector }`, in file name order (what `vectorCases` takes). */
export function readVectors() {
  return readdirSync(VECTORS)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => ({ file, vector: JSON.parse(readFileSync(join(VECTORS, file), 'utf8')) }))
}

/** Registers one test per vector case; `api` as runner.mjs's `vectorCases` takes it. */
export function runVectors(api) {
  const vectors = readVectors()
  const cases = vectorCases(api, vectors)
  for (const c of cases) {
    test(c.name, { skip: c.skip ?? false }, () => {
      const { ok, message } = c.run()
      assert.ok(ok, message)
    })
  }
  test('every vector file and op is run', () => {
    assert.ok(vectors.length >= 10)
    assert.deepEqual(missingOps(cases), [])
  })
}
