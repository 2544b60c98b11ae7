// Types of ranged.js (beside each module): searching a blob over HTTP, in parts when the
// server answers range requests, else whole.
import type { RangedIndex, SearchOptions, SearchResults, PageRecord } from './wikidex_wasm.js'

/** How many bytes the first request asks for (16 KiB). */
export const PREFIX_BYTES: number

/** A blob being searched, in parts or whole. */
export class BlobSearch {
  /** The blob's URL. */
  readonly url: string | URL
  /** The blob's `RangedIndex` (all of it loaded when it came whole). */
  readonly ranged: RangedIndex
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
 * Opens the blob at `url`: with range requests when the server answers them, else the whole
 * blob. Rejects with the core's coded errors, or an `Error` with `code: 'http'` and `details: {url, status}` for a failed
 * request.
 */
export function openBlob(
  url: string | URL,
  wasm: { RangedIndex: typeof RangedIndex },
  options?: { prefix?: number; fetch?: typeof fetch; ready?: Promise<unknown> },
): Promise<BlobSearch>
