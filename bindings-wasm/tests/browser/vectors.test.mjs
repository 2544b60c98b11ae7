// The cross-language vectors through the wasm module in headless Chromium: the page imports
// bindings-wasm/pkg/wikidex_wasm.js (`init()` fetches the .wasm over HTTP, as a site does) and
// the same runner as Node (tests/vectors/runner.mjs), runs every case of every vector file,
// and hands back each verdict; each becomes a subtest here.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { open } from './chromium.mjs'
import { readVectors } from '../../../tests/vectors/node.mjs'

let chromium
before(async () => {
  chromium = await open()
})
after(async () => {
  await chromium?.close()
})

test('every vector passes in Chromium', { timeout: 180_000 }, async (t) => {
  const { page, url, errors } = chromium
  await page.goto(`${url}/bindings-wasm/tests/browser/harness.html`)
  const vectors = readVectors()
  const run = await page.evaluate(async (vectors) => {
    const wasm = await import('/bindings-wasm/pkg/wikidex_wasm.js')
    await wasm.default()
    const { vectorCases, missingOps } = await import('/tests/vectors/runner.mjs')
    const { Index, parseHeaders } = wasm
    const cases = vectorCases(
      {
        build: (files, config) => Index.build(files, { config }),
        search: (index, query, options) => index.search(query, options),
        lint: (index) => index.lint(),
        fromBytes: (bytes) => Index.fromBytes(bytes),
        parseHeaders,
        isCoreError: (e) => typeof e?.code === 'string',
      },
      vectors,
    )
    const results = cases.map((c) => {
      try {
        return { name: c.name, ...c.run() }
      } catch (e) {
        return { name: c.name, ok: false, message: `threw: ${e?.stack ?? e}` }
      }
    })
    return { userAgent: navigator.userAgent, results, missing: missingOps(cases) }
  }, vectors)

  assert.match(run.userAgent, /Chrome\//, 'ran in Chromium')
  const expected = vectors.reduce((n, v) => n + v.vector.cases.length, 0)
  assert.equal(run.results.length, expected, 'one verdict per vector case')
  assert.ok(vectors.length >= 10)
  assert.deepEqual(run.missing, [], 'every op is run')
  for (const r of run.results) {
    await t.test(r.name, () => assert.ok(r.ok, r.message))
  }
  assert.deepEqual(errors, [], 'no uncaught error or console error in the page')
})
