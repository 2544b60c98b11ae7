// The record interfaces (written once, in types/records.d.ts, from the core's structs, and
// copied into types.d.ts) name exactly the fields the records have: each interface's keys are
// compared with real records.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Index, parseHeaders } from '../index.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const WIKI = join(HERE, '..', '..', 'examples', 'wiki')

/** `{ interface name: [field, ...] }` from the `export interface` blocks of types.d.ts. */
function interfaces(file = join(HERE, '..', 'types.d.ts')) {
  const text = readFileSync(file, 'utf8').replace(/\/\*\*[\s\S]*?\*\//g, '')
  const out = {}
  for (const m of text.matchAll(/export interface (\w+)(?: extends \w+)? \{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}/g)) {
    const body = m[2].replace(/\{[^{}]*\}/g, '{}')
    out[m[1]] = [...body.matchAll(/(?:^|[;\n])\s*(\w+)\??:/g)].map((f) => f[1]).sort()
  }
  return out
}

function keysOf(record) {
  return Object.keys(record).sort()
}

test('record interfaces name the fields of real records', () => {
  const types = interfaces()
  const index = Index.buildSync(WIKI)
  const results = index.searchSync('why did the nightly job crash', { explain: true, limit: 3, always: 'separate' })
  const hit = results.hits[0]
  const page = index.pageRecord('incident_2024_03_memory_leak')
  const graph = index.neighbors(['incident_2024_03_memory_leak'], { depth: 1 })
  const check = index.checkAnswer('The segment_enricher pod was OOM-killed three times. Nothing else.', ['raw/slack_2024_03_12::chunk_0'])
  const lint = Index.buildSync({ 'global/a.md': 'See [[missing]].' }).lintSync()
  const evidenceCopy = index.copy()
  const records = {
    SearchResults: results,
    Hit: hit,
    LaneHit: hit.lanes[0],
    Snippet: hit.snippet,
    Highlight: hit.snippet.highlights[0],
    Explanation: hit.explain,
    TermScore: hit.explain.lexical[0],
    PromptBlock: index.promptBlock(results),
    PageRecord: page,
    ChunkSpan: page.chunks[0],
    Relation: page.relations[0],
    SourceRef: page.sources[0],
    Chunk: index.chunk(page.chunks[0].id),
    Subgraph: graph,
    GraphNode: graph.nodes[0],
    GraphEdge: graph.edges[0],
    Pointer: graph.nodes.find((n) => n.sources.length).sources[0],
    AnswerCheck: check,
    Verification: check.verification,
    Verdict: check.verification.citations[0],
    QuoteSpan: check.verification.citations[0].quote,
    Support: check.support,
    SentenceSupport: index.uncitedSupport('The segment_enricher pod was OOM-killed three times. The moon is cheese.').uncited[0],
    LintReport: lint,
    LintIssue: lint.issues[0],
    BuildReport: index.buildReport(),
    CitationHeader: parseHeaders('[page a · chunk a::chunk_0 · score 0.5] A')[0],
    UpsertReport: evidenceCopy.upsertPage('global/new_page.md', 'text'),
    RenameReport: evidenceCopy.renamePage('new_page', 'newer_page'),
    DeleteReport: evidenceCopy.deletePage('newer_page'),
    ToolDef: index.tools()[0],
    ToolResult: index.callTool('search', { query: 'outage' }),
  }
  for (const [name, record] of Object.entries(records)) {
    assert.ok(record, `no ${name} record to compare`)
    assert.ok(types[name], `types.d.ts has no interface ${name}`)
    assert.deepEqual(types[name], keysOf(record), name)
  }
  // Lane reports flatten the lane status: `reason` and `code` only when not ok.
  const lane = results.lanes[0]
  assert.deepEqual(types.LaneReport.filter((k) => k in lane), keysOf(lane))
})

test('the browser module declares the same records as Node', () => {
  // Node's records: types.d.ts and what napi generates into index.d.ts (`ModelPrompts`).
  const node = { ...interfaces(join(HERE, '..', 'index.d.ts')), ...interfaces() }
  const wasm = interfaces(join(HERE, '..', '..', 'bindings-wasm', 'types.d.ts'))
  // The browser's own: its build options (no files, no model folder) and `Model.fromBytes`'.
  const own = ['BuildOptions', 'ModelBytesOptions']
  const shared = Object.keys(wasm).filter((name) => !own.includes(name))
  assert.ok(shared.length > 30, `only ${shared.length} interfaces in bindings-wasm/types.d.ts`)
  for (const name of shared) assert.deepEqual(wasm[name], node[name], name)
})
