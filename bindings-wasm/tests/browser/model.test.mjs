// The semantic lane in headless Chromium: the page imports the full wasm module
// (bindings-wasm/pkg-full/wikidex_wasm.js, `init()` fetching the .wasm over HTTP), fetches the
// int8 model and its tokenizer.json from the URLs the model vector file names, and runs the
// file's checks (tests/vectors/model-runner.mjs): every passage and query embeds as natively
// and the semantic lane ranks as natively, within the file's tolerance.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { open, ROOT } from './chromium.mjs'

let chromium
before(async () => {
  chromium = await open()
})
after(async () => {
  await chromium?.close()
})

test('the semantic lane in Chromium ranks as native', { timeout: 180_000 }, async (t) => {
  const { page, url, errors } = chromium
  await page.goto(`${url}/bindings-wasm/tests/browser/harness.html`)
  const vector = JSON.parse(readFileSync(join(ROOT, 'tests/vectors/model/minilm-int8.json'), 'utf8'))
  const run = await page.evaluate(async (vector) => {
    const wasm = await import('/bindings-wasm/pkg-full/wikidex_wasm.js')
    await wasm.default()
    const { modelCases } = await import('/tests/vectors/model-runner.mjs')
    const get = async (path) => {
      const r = await fetch(`/${path}`)
      if (!r.ok) throw new Error(`${path}: HTTP ${r.status}`)
      return new Uint8Array(await r.arrayBuffer())
    }
    const [model, tokenizer] = await Promise.all([get(vector.model), get(vector.tokenizer)])
    const api = {
      loadModel: () => wasm.Model.fromBytes(model, tokenizer, { maxLength: vector.max_length }),
      build: (files) => wasm.Index.build(files),
    }
    const results = []
    for (const c of modelCases(api, vector)) {
      try {
        results.push({ name: c.name, ...(await c.run()) })
      } catch (e) {
        results.push({ name: c.name, ok: false, message: `threw: ${e?.stack ?? e}` })
      }
    }
    return { userAgent: navigator.userAgent, results }
  }, vector)
  assert.match(run.userAgent, /Chrome\//, 'ran in Chromium')
  assert.equal(run.results.length, vector.cases.length + 2, 'one verdict per check')
  for (const r of run.results) {
    await t.test(r.name, () => assert.ok(r.ok, r.message))
  }
  assert.deepEqual(errors, [], 'no uncaught error or console error in the page')
})
