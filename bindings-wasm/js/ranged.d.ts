// Types of ranged.js (beside each module): searching a blob over HTTP, in parts when it is
// sectioned and the server answers range requests, else whole.
import type { RangedIndex, SearchOptions, SearchResults, PageRecord } from './wikidex_wasm.js'

/** What ranged.js calls on an `Index` (the search module has no `Index` class). */
export interface WholeIndex {
  readonly pageCount: number
  readonly chunkCount: number
  pageIds(): string[]
  search(query: string, options?: SearchOptions): SearchResults
  pageRecord(key: string, scope?: string | null): PageRecord
}

/** How many bytes the first request asks for (16 KiB). */
export const PREFIX_BYTES: number

/** A blob being searched: a sectioned one (`ranged`, in parts or whole) or one in one piece (`index`). */
export class BlobSearch {
  /** The blob's URL. */
  readonly url: string | URL
  /** The `Index` of a blob in one piece, else null. */
  readonly index: WholeIndex | null
  /** The `RangedIndex` of a sectioned blob (all of it loaded when it came whole), else null. */
  readonly ranged: RangedIndex | null
  /** Whether the blob is read in parts (range requests), not whole. */
  readonly inParts: boolean
  /** Bytes fetched so far. */
  readonly fetched: number
  /** Number of pages. */
  readonly pageCount: number
  /** Number of page chunks. */
  readonly chunkCount: number
  /** Every page's id. */
  pageIds(): string[]
  /** `Index.search`, fetching what it reads first. */
  search(query: string, options?: SearchOptions): Promise<SearchResults>
  /**
   * `Index.pageRecord`, fetching the page's part first. The search module has no page records:
   * there it rejects with an `Error` whose `code` is `unsupported`.
   */
  pageRecord(key: string, scope?: string | null): Promise<PageRecord>
}

/**
 * Opens the blob at `url`: with range requests when the server answers them and the blob is
 * sectioned (formats v8 to v12), else the whole blob (one in one piece needs `wasm.Index`, which
 * the search module does not have: it is `incompatible_format` there). Rejects with the core's
 * coded errors, or an `Error` with `code: 'http'` and `details: {url, status}` for a failed
 * request.
 */
export function openBlob(
  url: string | URL,
  wasm: { Index?: { fromBytes(data: Uint8Array | ArrayBuffer): WholeIndex }; RangedIndex: typeof RangedIndex },
  options?: { prefix?: number; fetch?: typeof fetch; ready?: Promise<unknown> },
): Promise<BlobSearch>
