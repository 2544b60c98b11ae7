// The cross-language vectors through the wasm modules in headless Chromium: the page imports
// bindings-wasm/pkg/wikidex_wasm.js (`init()` fetches the .wasm over HTTP, as a site does) and
// the same runner as Node (tests/vectors/runner.mjs), runs every case of every vector file,
// and hands back each verdict; each becomes a subtest here. Then the same with the search
// module (bindings-wasm/pkg-search), whose normalizer is the browser's own
// `String.prototype.normalize`.
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

/**
 * Runs every vector case in the page with `module` (`full`: bindings-wasm/pkg; `search`: the
 * search module, bindings-wasm/pkg-search, on blobs the whole module builds, with the ops it
 * lacks skipped and its one difference from bindings-wasm/tests/search-module.mjs, as in Node)
 * and registers one subtest per case.
 */
async function runInChromium(t, module) {
  const { page, url, errors } = chromium
  await page.goto(`${url}/bindings-wasm/tests/browser/harness.html`)
  const vectors = readVectors()
  const run = await page.evaluate(
    async ({ vectors, module }) => {
      const full = await import('/bindings-wasm/pkg/wikidex_wasm.js')
      await full.default()
      const { vectorCases, missingOps } = await import('/tests/vectors/runner.mjs')
      const common = { isCoreError: (e) => typeof e?.code === 'string' }
      let api
      if (module === 'search') {
        const search = await import('/bindings-wasm/pkg-search/wikidex_wasm.js')
        await search.default()
        const { searchApi } = await import('/bindings-wasm/tests/search-module.mjs')
        api = searchApi(full, search)
      } else {
        api = {
          ...common,
          build: (files, config) => full.Index.build(files, { config }),
          search: (index, query, options) => index.search(query, options),
          lint: (index) => index.lint(),
          fromBytes: (bytes) => full.Index.fromBytes(bytes),
          parseHeaders: full.parseHeaders,
        }
      }
      const cases = vectorCases(api, vectors)
      const results = cases.map((c) => {
        if (c.skip) return { name: c.name, skip: c.skip }
        try {
          return { name: c.name, ...c.run() }
        } catch (e) {
          return { name: c.name, ok: false, message: `threw: ${e?.stack ?? e}` }
        }
      })
      return { userAgent: navigator.userAgent, results, missing: missingOps(cases) }
    },
    { vectors, module },
  )

  assert.match(run.userAgent, /Chrome\//, 'ran in Chromium')
  const expected = vectors.reduce((n, v) => n + v.vector.cases.length, 0)
  assert.equal(run.results.length, expected, 'one verdict per vector case')
  assert.ok(vectors.length >= 10)
  assert.deepEqual(run.missing, [], 'every op is run')
  for (const r of run.results) {
    await t.test(r.name, { skip: r.skip ?? false }, () => assert.ok(r.ok, r.message))
  }
  assert.deepEqual(errors, [], 'no uncaught error or console error in the page')
}

test('every vector passes in Chromium', { timeout: 180_000 }, (t) => runInChromium(t, 'full'))

test('every vector the search module can run passes in Chromium', { timeout: 180_000 }, (t) => runInChromium(t, 'search'))
