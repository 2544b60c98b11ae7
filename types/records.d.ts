// The records: the core's serde records (core/src/*.rs), field for field, as every surface
// and tests/vectors see them, and the options both JavaScript surfaces take alike. Written once
// (types/records.d.ts) and copied by scripts/records.py into the Node binding's declarations
// (bindings-node/types.d.ts, which `napi build` puts first in index.d.ts) and the browser
// module's (bindings-wasm/types.d.ts, its TypeScript section); the same script holds the
// Python stubs' TypedDicts (bindings-py/python/wikidex/_wikidex.pyi) to these fields. Offsets
// count UTF-16 code units: they index JavaScript strings directly (`text.slice(start, end)`).

/** An error of the core: `code` is stable (see the README's table), `details` is what a caller
 * acts on (for `dangling_links`, the missing targets). Bad arguments are `invalid_argument`. */
export interface WikidexError extends Error {
  code: string
  details: Record<string, unknown>
}

export type Lane = 'lexical' | 'semantic' | 'token'
export type UsageMode = 'always' | 'auto' | 'never'
export type Severity = 'error' | 'warning'
export type CitationStatus = 'quote' | 'paraphrase' | 'drifted' | 'uncited' | 'none' | 'unknown'
export type LaneStatusKind = 'ok' | 'skipped' | 'failed'

/** The core's `Config`; every field may be left out and takes its default. */
export interface Config {
  chunk?: { max_tokens?: number; overlap_tokens?: number }
  /** Analysis language (`english`, `german`, ..., `none`); left out or null: the wiki's main language when the analyzer stems it, else English (the build report's `language_reason` says which). */
  language?: string | null
  bm25?: { k1?: number; b?: number }
  fusion?: { k?: number; lexical?: number; semantic?: number; token?: number }
  max_query_chars?: number
  /** Store term positions for quoted phrases (default true; false: a smaller blob, phrases searched as their words). */
  positions?: boolean
  /** Page keys from file names (`file_name`, a wiki, the default) or from whole paths (`path`, a docs folder: `guide/intro.md` is `guide.intro`, every page global). */
  keys?: 'file_name' | 'path'
}

export interface SearchOptions {
  /** Hits to return: 1..=100, default 20. */
  limit?: number
  /** Lanes to run (default: all three). */
  lanes?: Lane[]
  tags?: string[]
  types?: string[]
  /** A user scope (`alice`) or `global`; absent: every scope. */
  scope?: string
  usage_modes?: UsageMode[]
  /** Chunk hits instead of page hits. */
  chunks?: boolean
  /** `separate` (default): `always` pages in `always`; `first`: first among the hits. Either way they take no slot of `limit`. */
  always?: 'first' | 'separate'
  /** Per-term BM25 explanations on each hit. */
  explain?: boolean
  snippets?: boolean
  /** The query's embedding, for the semantic lane without a model. */
  query_vector?: number[]
  /** Count the tags and types of every matching page (not only the hits) into `facets`. */
  facets?: boolean
  /** Only pages dated on or after this (`2024-03-12` or `2024-03-12T09:30:00Z`): frontmatter `updated`, `last_updated` or `date`, else the page file's modification time when built from a folder. */
  since?: string
  /** Only pages dated on or before this (a date alone includes the whole day). */
  until?: string
  /** Typo tolerance (default true): a word of 5+ letters the index lacks also matches the words one edit away (two from 9 letters; first letter fixed), below exact matches, in the lexical and token lanes. `false`: every word matched exactly. */
  typos?: boolean
}

export interface Highlight { start: number; end: number }
export interface Snippet {
  text: string
  highlights: Highlight[]
  /** Where the snippet starts in the page body. */
  offset: number
}
export interface LaneHit {
  lane: Lane
  status: LaneStatusKind
  rank: number | null
  score: number | null
  contribution: number | null
  chunk: string | null
}
export interface TermScore {
  term: string; weight: number; tf: number; df: number; idf: number; score: number
  /** For a typo match: the index term the query term was taken for (`tf`, `df`, `idf`, `score` are its); else null. */
  matched: string | null
  /** Edits between the query word and the matched word (0 without a typo match). */
  edits: number
}
export interface Explanation { lexical: TermScore[]; k: number }
export interface Hit {
  key: string
  page_id: string
  scope: string
  path: string
  title: string
  summary: string | null
  type: string | null
  tags: string[]
  score: number
  chunk: string
  chunk_hash: string
  /** The chunk's first line in the page's file, 1-based (frontmatter included). */
  line_start: number
  /** Its last line. */
  line_end: number
  /** The headings the chunk sits under, outermost first. */
  headings: string[]
  snippet: Snippet | null
  lanes: LaneHit[]
  always: boolean
  stale_since: string | null
  /** The page's date, the one the date filters read: the frontmatter's `updated`, `last_updated` or `date` as written, else the file's modification time (`2024-03-12T09:30:00Z`) when built from a folder. */
  date: string | null
  explain: Explanation | null
}
export interface LaneReport {
  lane: Lane
  status: LaneStatusKind
  reason?: string
  code?: string
  candidates: number
  /** The lane's fusion weight for this query: the configured weight, or 0 for the lexical and token lanes when the index reads less than two thirds of the query (`known`). */
  weight: number
  /** Lexical and token lanes that ran beside the semantic lane: the share of the query's term weight (count x idf) the index can read, 0..1. `null`: the lane kept its configured weight. */
  known: number | null
}
export interface SearchResults {
  query: string
  truncated: boolean
  terms: string[]
  lanes: LaneReport[]
  hits: Hit[]
  always: Hit[]
  /** With `facets: true`: tag and type counts over every matching page; else null. */
  facets: Facets | null
  /** When the query quotes a phrase (`"net revenue"`): how its phrases were searched; else null. */
  phrases: PhraseReport | null
}
/** Hits holding every quoted phrase rank first: `hits.slice(0, matched)` (after `always` pages placed first). `reason` is set (and `matched` 0) when the index has no term positions and the phrases were searched as their words. */
export interface PhraseReport { phrases: string[]; matched: number; reason: string | null }
export interface FacetCount { value: string; count: number }
export interface Facets { pages: number; tags: FacetCount[]; types: FacetCount[] }
export interface PromptBlock { text: string; offered: string[] }

export interface Relation { target: string; type: string; confidence: number; evidence: string | null; chunk: string | null }
export interface SourceRef { chunk: string; weight: number; hash: string | null }
export interface ChunkSpan { id: string; hash: string; start: number; end: number }
export interface PageRecord {
  id: string
  key: string
  scope: string
  path: string
  title: string
  summary: string | null
  type: string | null
  tags: string[]
  refs: string[]
  links: string[]
  sl_refs: string[]
  relations: Relation[]
  usage_mode: UsageMode
  source: string | null
  sources: SourceRef[]
  aliases: string[]
  redirect_from: string[]
  stale_since: string | null
  archived_since: string | null
  provenance: string[]
  /** Frontmatter fields the contract does not name, kept as they were. */
  extra: Record<string, unknown>
  body: string
  /** Spans index `body`. */
  chunks: ChunkSpan[]
  /** The key asked for when it named this page through a redirect or an alias; else null. */
  resolved_from: string | null
}
export interface Chunk {
  id: string
  key: string
  scope: string
  path: string
  ordinal: number
  start: number
  end: number
  hash: string
  text: string
  raw: boolean
  /** The chunk's first line in its file, 1-based (frontmatter included). */
  line_start: number
  /** Its last line. */
  line_end: number
  /** The headings the chunk sits under, outermost first. */
  headings: string[]
  /** When the chunk continues a Markdown table cut between rows: the table's header and delimiter rows (indexed with the chunk; show them before `text`); else null. */
  table_header: string | null
}

export interface LintIssue { page_id: string; code: string; target: string | null; severity: Severity; message: string }
export interface LintReport { issues: LintIssue[]; errors: number; warnings: number }

export interface TraverseOptions {
  /** 0..=2, default 2. */
  depth?: number
  min_confidence?: number
  max_nodes?: number
  scope?: string
}
export interface EvidenceOptions { seeds?: number; traverse?: TraverseOptions }
export interface Pointer { chunk: string; weight: number; hash: string }
export interface GraphNode {
  id: string
  key: string
  title: string
  summary: string | null
  path: string
  depth: number
  confidence: number
  via: string | null
  stale_since: string | null
  sources: Pointer[]
  external: string[]
}
export interface GraphEdge {
  from: string
  to: string
  target: string
  type: string
  confidence: number
  written: string
  evidence: string | null
  chunk: string | null
}
export interface Subgraph {
  seeds: string[]
  unknown_seeds: string[]
  nodes: GraphNode[]
  edges: GraphEdge[]
  chain: string[]
  truncated: boolean
}
export interface SupportingChunk { id: string; why: string; hash: string; text: string }
export interface Evidence { query: string; graph: Subgraph; chunks: SupportingChunk[] }

export interface QuoteSpan { answer_start: number; answer_end: number; chunk_start: number; chunk_end: number; words: number }
export interface Verdict { id: string; status: CitationStatus; page_id: string | null; hash: string | null; quote: QuoteSpan | null }
export interface Verification { citations: Verdict[]; passed: boolean }
export interface SentenceSupport { start: number; end: number; text: string; cites: string[]; best_chunk: string | null; score: number }
export interface Support { uncited: SentenceSupport[]; unsupported: SentenceSupport[] }
export interface AnswerCheck { verification: Verification; support: Support }
export interface CitationHeader { page_id: string; chunk: string; score: number | null; title: string }

export interface WriteOptions { allow_dangling?: boolean }
export interface UpsertReport { page_id: string; replaced: boolean; chunks: number; warnings: string[]; dangling: string[] }
export interface DeleteReport { page: Record<string, unknown>; broken: string[] }
export interface RenameReport { from: string; to: string; path: string; text: string }

export interface Skipped { path: string; line: number | null; code: string; reason: string }
export interface BuildReport {
  pages: number
  chunks: number
  raw_documents: number
  raw_chunks: number
  skipped: Skipped[]
  warnings: { path: string; message: string }[]
  /** When the build looked for the default model and found none: that the semantic lane is
   * off and how to turn it on; else null. */
  semantic_off: string | null
  /** The languages of the pages, detected from their prose. */
  languages: LanguageMix
  /** Which analysis language the build chose and why, when none was named; else null. */
  language_reason: string | null
  /** Which model embedded the chunks and why; null without a model. */
  model_reason: string | null
  /** When the wiki is largely not in English and the multilingual model is not installed: which package to install; else null. */
  model_notice: string | null
}

/** Pages per language (ISO 639-3 codes: `eng`, `deu`, `rus`, `cmn`, `jpn`...), most pages first, and the pages too short or unsure to tell. */
export interface LanguageMix {
  languages: { language: string; pages: number }[]
  undetected: number
}

export type SiteLayout = 'mkdocs' | 'mdbook' | 'docusaurus' | 'vitepress' | 'hugo'
export type SiteAnchors = 'github' | 'mkdocs' | 'mdbook' | 'vitepress'
/** How a docs site's pages are linked (`site.json`'s `links`; the browser module's `SiteLinks` reads it). */
export interface SiteLinkRules {
  layout?: SiteLayout
  /** A URL pattern instead of the layout's rule: `{path}` is the source path without its extension. */
  pattern?: string
  anchors: SiteAnchors
  /** Per source path, the URL its frontmatter sets (`permalink`, or `slug` for Docusaurus and Hugo). */
  pages?: Record<string, string>
}
/** How `wikidex site` indexes a docs folder (Node: `writeSiteSync`). */
export interface SiteOptions {
  /** The site's generator: its URL and anchor rules. One of `layout` and `url_pattern` is needed. */
  layout?: SiteLayout | null
  url_pattern?: string | null
  anchors?: SiteAnchors | null
  /** The bundle's folder inside the output folder (default `wikidex`). */
  bundle_dir?: string | null
  config?: Config
  strict?: boolean
}
/** A site bundle's `site.json`. */
export interface SiteManifest {
  wikidex: string
  blob: string
  /** The blob's head length: the UI's first request asks for these bytes. */
  head_end: number
  /** The site's root, relative to the bundle folder (`../`). */
  root: string
  links: SiteLinkRules
  pages: number
  chunks: number
  tags: string[]
  types: string[]
  /** The semantic lane, when the bundle was written with a model: what the UI's toggle loads. */
  semantic?: SiteSemantic
}
/** A site bundle's model (`wikidex site --model`): the module with the model runner, the ONNX file and its tokenizer, each relative to the bundle folder. */
export interface SiteSemantic {
  model_id: string
  dim: number
  /** What the model puts before a query and a passage. */
  prompts: { query: string; passage: string }
  module: string
  onnx: string
  tokenizer: string
  /** What turning the toggle on downloads, in bytes as stored. */
  bytes: number
}
export interface SiteReport {
  /** The bundle folder. */
  bundle: string
  /** The files written into it. */
  files: string[]
  manifest: SiteManifest
  build: BuildReport
  /** What to paste into a page of the site: the UI's stylesheet and script, and the search element. */
  snippet: string
}

/** What `Index.sync` changed since the index file (Node and Python: the browser module has no
 * sync). */
export interface SyncRecord {
  /** Why every file was indexed (no index file yet), else null. */
  full: string | null
  /** Whether the index file was written (not when the folder is as it has it). */
  written: boolean
  added: string[]
  changed: string[]
  removed: string[]
  unchanged: number
  embedded: number
  build: BuildReport
}

export interface ToolDef { name: string; description: string; input_schema: Record<string, unknown> }
export interface ToolResult { text: string; data: unknown }
export interface ToolLimits { max_results?: number; max_drilldowns?: number; max_chars?: number }
export interface LogEntry {
  time_ms?: number
  origin: string
  kind: string
  query?: string
  filters: unknown
  results: number
  top: string[]
  lanes: Record<string, string>
  ms?: number
  verdicts?: unknown[]
}
