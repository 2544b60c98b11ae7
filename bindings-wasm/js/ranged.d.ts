// Types of ranged.js (beside each module): searching a blob over HTTP, in parts when it is
// sectioned and the server answers range requests, else whole.
import type { Index, RangedIndex, SearchOptions, SearchResults, PageRecord } from './wikidex_wasm.js'

/** How many bytes the first request asks for (16 KiB). */
export const PREFIX_BYTES: number

/** A blob being searched: whole (`index`) or in parts (`ranged`). */
export class BlobSearch {
  /** The blob's URL. */
  readonly url: string | URL
  /** The `Index` when the blob was loaded whole, else null. */
  readonly index: Index | null
  /** The `RangedIndex` when it is read in parts, else null. */
  readonly ranged: RangedIndex | null
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
  /** `Index.pageRecord`, fetching the page's part first. */
  pageRecord(key: string, scope?: string | null): Promise<PageRecord>
}

/**
 * Opens the blob at `url`: with range requests when the server answers them and the blob is
 * sectioned (format v8 or v9), else the whole blob. Rejects with the core's coded errors, or an
 * `Error` with `code: 'http'` and `details: {url, status}` for a failed request.
 */
export function openBlob(
  url: string | URL,
  wasm: { Index: typeof Index; RangedIndex: typeof RangedIndex },
  options?: { prefix?: number; fetch?: typeof fetch; ready?: Promise<unknown> },
): Promise<BlobSearch>
