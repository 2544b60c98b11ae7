// The cross-language vectors (tests/vectors/*.json) for every JavaScript surface: the Node
// addon (bindings-node/test/vectors.test.mjs), the wasm module in Node
// (bindings-wasm/tests/vectors.test.mjs) and the same module in Chromium
// (bindings-wasm/tests/browser/vectors.test.mjs). Each passes its calls in `api`; everything
// else here is shared. Rust writes the expectations; this file only reads them. Each case is one
// call of the binding, projected as core/tests/it/vectors.rs projects it, with offsets sliced as
// JavaScript slices its strings (UTF-16 code units).
//
// No imports: a browser loads this file as it is. The vector files are passed in as parsed
// JSON; tests/vectors/node.mjs reads them from disk and registers one node:test per case.

/** The ops every run must cover (each at least once over all the files). */
export const REQUIRED_OPS = ['search', 'page_record', 'verify', 'check_answer', 'lint', 'neighbors', 'from_bytes', 'upsert_page', 'delete_page', 'rename_page', 'parse_headers', 'pointers', 'uncited_support', 'chunk', 'build_report', 'call_tool']

/**
 * The vector cases as `{ name, op, run }`; `run()` returns `{ ok, message }` (`message` shows
 * the expected and the actual projection) and throws on a bug (a thrown value without a core
 * code). `vectors`: `[{ file, vector }]`, `vector` the parsed JSON of `file`, in file name
 * order. `api`: `build(files, config)` (an index from an object of path to text),
 * `search(index, query, options)`, `lint(index)`, `fromBytes(bytes)` (an index, from a
 * `Uint8Array`), `parseHeaders(text)`, and `isCoreError(e)` (a thrown value that carries a
 * core code, as opposed to a bug in the runner). The index's other methods have the same names
 * on every JavaScript surface.
 * `api.lacks` (optional): ops this surface does not have, as `{ op: reason }`; their cases
 * carry `skip: reason` (the runner of each test framework reports them as skipped).
 * `api.differs` (optional): `(file, c) => null | { reason, expect }` for a case this surface
 * answers differently on purpose (a build without a core feature): the case is compared with
 * that `expect` instead of the file's, and its name ends with `[differs: reason]` so that every
 * run shows it. The files themselves are never changed for a surface.
 */
export function vectorCases(api, vectors) {
  const TOLERANCE = 1e-5

  function build(vector) {
    const index = api.build(vector.files, vector.config ?? undefined)
    const v = vector.vectors
    if (v) {
      index.setVectors(v.model_id, v.fingerprint, v.values.map((x) => new Float32Array(x)), v.encoding ?? 'f32')
    }
    return index
  }

  const error = (e) => {
    if (!api.isCoreError(e)) throw e
    return { error: e.code, details: e.details }
  }

  function projectSearch(index, r) {
    const hit = (h) => {
      const v = { page_id: h.page_id, chunk: h.chunk, score: h.score }
      for (const lane of h.lanes) if (lane.rank !== null) v[`${lane.lane}_rank`] = lane.rank
      const s = h.snippet
      if (s) {
        v.snippet = s.text
        v.highlighted = s.highlights.map((m) => s.text.slice(m.start, m.end))
        const body = index.pageRecord(h.page_id).body
        const first = s.text.split(' ')[0]
        v.at_offset = body.slice(s.offset, Math.min(s.offset + first.length, body.length))
      }
      if (h.explain) v.explain = h.explain.lexical.map((t) => ({ term: t.term, tf: t.tf, df: t.df, score: t.score }))
      return v
    }
    const out = {
      terms: r.terms,
      truncated: r.truncated,
      lanes: Object.fromEntries(r.lanes.map((l) => [l.lane, l.status])),
      hits: r.hits.map(hit),
      always: r.always.map(hit),
    }
    if (r.facets) out.facets = r.facets
    if (r.phrases) out.phrases = r.phrases
    return out
  }

  function projectVerification(index, answer, v) {
    return {
      passed: v.passed,
      citations: v.citations.map((c) => ({
        id: c.id,
        status: c.status,
        quoted: c.quote ? answer.slice(c.quote.answer_start, c.quote.answer_end) : null,
        quoted_in_chunk: c.quote ? index.chunk(c.id).text.slice(c.quote.chunk_start, c.quote.chunk_end) : null,
      })),
    }
  }

  function projectSupport(answer, s) {
    const rows = (v) => v.map((r) => ({ text: r.text, at_span: answer.slice(r.start, r.end), best_chunk: r.best_chunk }))
    return { uncited: rows(s.uncited), unsupported: rows(s.unsupported) }
  }

  const sameBytes = (a, b) => a.length === b.length && a.every((x, i) => x === b[i])
  const cited = (c) => c.cited.map((x) => x.id + (x.hash ? '@' + x.hash : ''))
  const pageId = (p) => (p.scope === 'global' ? p.key : `${p.scope}/${p.key}`)

  function runCase(index, c) {
    try {
      switch (c.op) {
        case 'build_report': {
          const r = index.buildReport()
          return { pages: r.pages, chunks: r.chunks, skipped: r.skipped.map((s) => ({ path: s.path, code: s.code, line: s.line })) }
        }
        case 'search':
          return projectSearch(index, api.search(index, c.query, c.options ?? {}))
        case 'page_record': {
          const p = index.pageRecord(c.key, c.scope ?? null)
          return {
            id: p.id, title: p.title, summary: p.summary, scope: p.scope, tags: p.tags, type: p.type,
            refs: p.refs, links: p.links, usage_mode: p.usage_mode, extra: p.extra, body: p.body,
            chunks: p.chunks.map((k) => ({ id: k.id, hash: k.hash, text: p.body.slice(k.start, k.end) })),
            resolved_from: p.resolved_from,
          }
        }
        case 'call_tool': {
          const r = index.callTool(c.tool, c.args)
          return { text: r.text, data: r.data }
        }
        case 'chunk': {
          const k = index.chunk(c.id)
          return { id: k.id, hash: k.hash, text: k.text, raw: k.raw, lines: [k.line_start, k.line_end], headings: k.headings, table_header: k.table_header }
        }
        case 'from_bytes': {
          let data = Uint8Array.from(index.toBytes())
          const m = c.mutate
          if ('truncate' in m) data = data.subarray(0, m.truncate)
          if ('flip' in m) data[m.flip] ^= 0xff
          if ('version' in m) new DataView(data.buffer, data.byteOffset, data.byteLength).setUint32(8, m.version, true)
          if ('append' in m) {
            const longer = new Uint8Array(data.length + m.append)
            longer.set(data)
            data = longer
          }
          if ('replace_utf8' in m) data = new TextEncoder().encode(m.replace_utf8)
          return { pages: api.fromBytes(data).pageCount }
        }
        case 'lint': {
          const r = api.lint(index)
          return { errors: r.errors, warnings: r.warnings, issues: r.issues.map((i) => ({ page_id: i.page_id, code: i.code, target: i.target, severity: i.severity })) }
        }
        case 'neighbors': {
          const g = index.neighbors(c.seeds, c.options ?? {})
          return {
            seeds: g.seeds, unknown_seeds: g.unknown_seeds,
            nodes: g.nodes.map((n) => ({ id: n.id, depth: n.depth, confidence: n.confidence, via: n.via, sources: n.sources.map((p) => p.chunk) })),
            edges: g.edges.map((e) => ({ from: e.from, to: e.to, type: e.type, confidence: e.confidence, evidence: e.evidence, chunk: e.chunk })),
            chain: g.chain, truncated: g.truncated,
          }
        }
        case 'verify':
          return projectVerification(index, c.answer, index.verify(c.answer, cited(c), c.offered ?? []))
        case 'check_answer': {
          const r = index.checkAnswer(c.answer, cited(c), c.offered ?? [])
          return { verification: projectVerification(index, c.answer, r.verification), support: projectSupport(c.answer, r.support) }
        }
        case 'uncited_support':
          return projectSupport(c.answer, index.uncitedSupport(c.answer))
        case 'parse_headers':
          return api.parseHeaders(c.text)
        case 'pointers':
          return index.pointers(c.key, c.scope ?? null).map((p) => ({ chunk: p.chunk, weight: p.weight }))
        case 'upsert_page':
        case 'delete_page':
        case 'rename_page': {
          const copy = index.copy()
          const before = copy.toBytes()
          let v
          try {
            if (c.op === 'upsert_page') {
              const r = copy.upsertPage(c.path, c.text, c.options ?? {})
              v = { page_id: r.page_id, replaced: r.replaced, chunks: r.chunks, dangling: r.dangling }
            } else if (c.op === 'delete_page') {
              const r = copy.deletePage(c.key, c.scope ?? null)
              v = { page: pageId(r.page), broken: r.broken }
            } else {
              const r = copy.renamePage(c.key, c.new_key, c.scope ?? null)
              v = { from: r.from, to: r.to, path: r.path, text: r.text }
            }
          } catch (e) {
            v = error(e)
          }
          v.unchanged = sameBytes(copy.toBytes(), before)
          return v
        }
        default:
          throw new Error(`unknown vector op ${c.op}`)
      }
    } catch (e) {
      return error(e)
    }
  }

  function same(a, b) {
    if (typeof a === 'number' && typeof b === 'number') {
      return Math.abs(a - b) <= TOLERANCE * Math.max(Math.abs(a), Math.abs(b), 1e-12)
    }
    if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]))
    if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
      const ka = Object.keys(a).sort()
      const kb = Object.keys(b).sort()
      return same(ka, kb) && ka.every((k) => same(a[k], b[k]))
    }
    return a === b
  }

  const cases = []
  for (const { file, vector } of vectors) {
    let index
    vector.cases.forEach((c, i) => {
      const differs = api.differs?.(file, c) ?? null
      const expect = differs ? differs.expect : c.expect
      cases.push({
        name: `${file.replace('.json', '')}-${i} ${c.name}${differs ? ` [differs: ${differs.reason}]` : ''}`,
        op: c.op,
        skip: api.lacks?.[c.op] ?? null,
        differs: differs?.reason ?? null,
        run() {
          index ??= build(vector)
          const actual = JSON.parse(JSON.stringify(runCase(index, c)))
          return { ok: same(expect, actual), message: `${c.name}\nexpected ${JSON.stringify(expect)}\nactual   ${JSON.stringify(actual)}` }
        },
      })
    })
  }
  return cases
}

/** The required ops no case of `cases` runs (empty when every one is covered). */
export function missingOps(cases) {
  const ops = new Set(cases.map((c) => c.op))
  return REQUIRED_OPS.filter((op) => !ops.has(op))
}
