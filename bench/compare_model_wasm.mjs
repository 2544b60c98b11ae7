// What the semantic lane costs in the browser, for each model in models/ (the int8 ONNX file a
// site ships): the bytes a visitor downloads for it (gzip -9 of the full wasm module, the
// model and its tokenizer.json), the time to load the model from bytes, and the time to embed
// one query, in the full wasm module (bindings-wasm/pkg-full) in Node and in headless
// Chromium, side by side with the native Node addon on the same file in the same run (one
// thread each: the browser module has one). Ratios are wasm / native.
//
//   node bench/compare_model_wasm.mjs [--data ../shared/data/cacm] [--queries 40] [--json]
//   (in make bench; needs make wasm, the Node addon and make models)
import { readFileSync, existsSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { createRequire } from 'node:module'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const { values: args } = parseArgs({
  options: {
    data: { type: 'string', default: join(ROOT, '..', 'shared', 'data', 'cacm') },
    queries: { type: 'string', default: '40' },
    json: { type: 'boolean', default: false },
  },
})
const N = Number(args.queries)
const MODELS = ['all-MiniLM-L6-v2', 'multilingual-e5-small'].filter((m) => existsSync(join(ROOT, 'models', m, 'model-int8.onnx')))
const QUERIES = readFileSync(join(args.data, 'queries.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .slice(0, N)
  .map((l) => JSON.parse(l).text.replace(/\s+/g, ' ').trim())

const gz = (path) => gzipSync(readFileSync(path), { level: 9 }).length
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const PKG = join(ROOT, 'bindings-wasm', 'pkg-full')

/** Load time and per-query embedding times of `embed(text)` after `load()`. */
async function measure(load, embed) {
  const t0 = performance.now()
  const model = await load()
  const loadMs = performance.now() - t0
  await embed(model, QUERIES[0]) // warm-up
  const times = []
  for (const q of QUERIES) {
    const t = performance.now()
    await embed(model, q)
    times.push(performance.now() - t)
  }
  return { loadMs, queryMs: median(times) }
}

const { initSync, Model: WasmModel } = await import(join(PKG, 'wikidex_wasm.js'))
initSync({ module: readFileSync(join(PKG, 'wikidex_wasm_bg.wasm')) })
const { Model: NativeModel } = createRequire(join(ROOT, 'bindings-node', 'package.json'))(join(ROOT, 'bindings-node'))

const { open } = await import(join(ROOT, 'bindings-wasm', 'tests', 'browser', 'chromium.mjs'))
const chromium = await open(ROOT)
await chromium.page.goto(`${chromium.url}/bindings-wasm/tests/browser/harness.html`)

const rows = []
for (const name of MODELS) {
  const dir = join(ROOT, 'models', name)
  const modelBytes = readFileSync(join(dir, 'model-int8.onnx'))
  const tokenizerBytes = readFileSync(join(dir, 'tokenizer.json'))
  const wasmNode = await measure(
    () => WasmModel.fromBytes(modelBytes, tokenizerBytes),
    (m, q) => m.embed([q], 'query'),
  )
  const native = await measure(
    () => NativeModel.load(dir, { onnx: 'model-int8.onnx', threads: 1 }),
    (m, q) => m.embed([q], 'query'),
  )
  const browser = await chromium.page.evaluate(
    async ({ name, queries }) => {
      const wasm = await import('/bindings-wasm/pkg-full/wikidex_wasm.js')
      await wasm.default()
      const get = async (p) => new Uint8Array(await (await fetch(p)).arrayBuffer())
      const [m, t] = [await get(`/models/${name}/model-int8.onnx`), await get(`/models/${name}/tokenizer.json`)]
      const t0 = performance.now()
      const model = wasm.Model.fromBytes(m, t)
      const loadMs = performance.now() - t0
      model.embed([queries[0]], 'query')
      const times = queries.map((q) => {
        const s = performance.now()
        model.embed([q], 'query')
        return performance.now() - s
      })
      times.sort((a, b) => a - b)
      return { loadMs, queryMs: times[Math.floor(times.length / 2)] }
    },
    { name, queries: QUERIES },
  )
  rows.push({
    model: name,
    download_kb: { module: (gz(join(PKG, 'wikidex_wasm_bg.wasm')) + gz(join(PKG, 'wikidex_wasm.js'))) / 1e3, model: gz(join(dir, 'model-int8.onnx')) / 1e3, tokenizer: gz(join(dir, 'tokenizer.json')) / 1e3 },
    native,
    wasm_node: wasmNode,
    wasm_chromium: browser,
  })
}
await chromium.close()

if (args.json) {
  console.log(JSON.stringify({ queries: QUERIES.length, rows }, null, 2))
} else {
  const f = (x) => x.toFixed(1)
  console.log(`${QUERIES.length} CACM queries, one at a time, median ms; load: model bytes to a ready model (ms)`)
  for (const r of rows) {
    const d = r.download_kb
    console.log(`\n${r.model} (int8): download gzip -9 KB: module ${f(d.module)}, model ${f(d.model)}, tokenizer.json ${f(d.tokenizer)}, total ${f(d.module + d.model + d.tokenizer)}`)
    console.log(`  native addon (1 thread): load ${f(r.native.loadMs)}, query ${f(r.native.queryMs)}`)
    console.log(`  wasm in Node:            load ${f(r.wasm_node.loadMs)}, query ${f(r.wasm_node.queryMs)}  (${f(r.wasm_node.queryMs / r.native.queryMs)}x native)`)
    console.log(`  wasm in Chromium:        load ${f(r.wasm_chromium.loadMs)}, query ${f(r.wasm_chromium.queryMs)}  (${f(r.wasm_chromium.queryMs / r.native.queryMs)}x native)`)
  }
}
