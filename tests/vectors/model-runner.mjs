// The model vector file (tests/vectors/model/minilm-int8.json, its `description` says what it
// holds) for every JavaScript surface that runs a model: the Node addon
// (bindings-node/test/model-vectors.test.mjs) and the wasm module's full build
// (bindings-wasm/pkg-full) in Node (bindings-wasm/tests/model.test.mjs) and in headless
// Chromium (bindings-wasm/tests/browser/model.test.mjs). Rust writes the expectations
// (core/tests/it/model_vectors.rs, which checks the same things natively); this only reads
// them.
//
// No imports: a browser loads this file as it is.

/** Cosine of two vectors. */
function cosine(a, b) {
  let ab = 0
  let aa = 0
  let bb = 0
  for (let i = 0; i < a.length; i++) {
    ab += a[i] * b[i]
    aa += a[i] * a[i]
    bb += b[i] * b[i]
  }
  return ab / Math.sqrt(aa * bb)
}

/**
 * `got` (`[{chunk, score}]`) against the file's `want`: the same chunks, each cosine within
 * `score` of the file's, in the same order except that two chunks may swap when their cosines
 * in the file are within `score`. Returns null, or what differs.
 */
export function rankingDiffers(want, got, score) {
  if (want.length !== got.length) return `${got.length} hits, expected ${want.length}`
  const wantScore = new Map(want.map((h) => [h.chunk, h.score]))
  for (let i = 0; i < got.length; i++) {
    const { chunk, score: s } = got[i]
    if (!wantScore.has(chunk)) return `unexpected chunk ${chunk}`
    const w = wantScore.get(chunk)
    if (Math.abs(w - s) > score) return `${chunk}: cosine ${s}, expected ${w}`
    if (want[i].chunk !== chunk && Math.abs(want[i].score - w) > score) {
      return `rank ${i + 1}: ${chunk} (${w}), expected ${want[i].chunk} (${want[i].score})`
    }
  }
  return null
}

/**
 * The file's checks as `[{ name, run }]`, `run()` resolving to `{ ok, message }`. `api`:
 * `loadModel()`, the model the vector names (`model`, `tokenizer`, `max_length`), maybe as a
 * promise; `build(files)`, an index. The surface's `model.embed(texts, kind)` and
 * `index.search(query, options)` may return promises too (the Node addon's do). The model is loaded once, before the first check runs; the index is built from
 * `files` with the file's passage vectors stored and the model attached, as a site's index
 * built by the CLI with that model is.
 */
export function modelCases(api, vector) {
  const tol = vector.tolerance
  let state
  const setup = async () => {
    if (state) return state
    const model = await api.loadModel()
    const index = api.build(vector.files)
    const v = vector.vectors
    index.setVectors(v.model_id, v.fingerprint, v.values.map((x) => new Float32Array(x)), v.encoding)
    index.attachModel(model)
    state = { model, index }
    return state
  }
  const cases = [
    {
      name: 'the model is the one the vectors were made with',
      async run() {
        const { model } = await setup()
        const ok = model.fingerprint === vector.vectors.fingerprint && model.dim === vector.vectors.values[0].length
        return { ok, message: `fingerprint ${model.fingerprint}, dim ${model.dim}` }
      },
    },
    {
      name: 'every passage embeds as natively',
      async run() {
        const { model, index } = await setup()
        const passages = index.passages()
        if (JSON.stringify(passages) !== JSON.stringify(vector.passages.map((p) => p.text))) {
          return { ok: false, message: `passages differ: ${JSON.stringify(passages)}` }
        }
        const got = await model.embed(passages, 'passage')
        const low = vector.passages
          .map((p, i) => ({ i, c: cosine(p.vector, got[i]) }))
          .filter(({ c }) => !(c >= tol.cosine))
        return { ok: low.length === 0, message: `passages below cosine ${tol.cosine}: ${JSON.stringify(low)}` }
      },
    },
  ]
  for (const c of vector.cases) {
    cases.push({
      name: `query: ${c.name}`,
      async run() {
        const { model, index } = await setup()
        const qv = (await model.embed([c.query], 'query'))[0]
        const cq = cosine(c.expect.query_vector, qv)
        if (!(cq >= tol.cosine)) return { ok: false, message: `query vector cosine ${cq}` }
        const r = await index.search(c.query, { lanes: ['semantic'], chunks: true, limit: 100, snippets: false })
        if (r.lanes.find((l) => l.lane === 'semantic')?.status !== 'ok') {
          return { ok: false, message: `semantic lane: ${JSON.stringify(r.lanes)}` }
        }
        const got = r.hits.map((h) => ({ chunk: h.chunk, score: h.lanes.find((l) => l.lane === 'semantic').score }))
        const diff = rankingDiffers(c.expect.hits, got, tol.score)
        return { ok: diff === null, message: `${diff}\n  got ${JSON.stringify(got)}` }
      },
    })
  }
  return cases
}
