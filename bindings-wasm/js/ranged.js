// Searching a blob over HTTP without downloading all of it first: the fetching side of the
// wasm module's `RangedIndex` (copied next to each module by scripts/wasm-build.sh).
//
// A blob (`wikidex build`) is read with HTTP range requests: its first bytes (the head: page stubs, chunk table, where the dictionary's shards
// start), then, for each search, the byte ranges the core says it reads (the error
// `not_loaded` names them: the dictionary shards of the query's words, the postings of its
// terms, then the pages its hits show). Parts stay loaded, so later searches fetch
// less. Where the server answers a range request with the whole file (status 200), or the
// blob is small enough to come whole in the first request, `RangedIndex.open` is given all
// of it and loads every part at once. The answers are the same either way. Which ranges to
// fetch is the core's decision; this file only fetches.
//
//   import init, * as wasm from './wikidex_wasm.js'
//   import { openBlob } from './ranged.js'
//   await init()
//   const blob = await openBlob('wiki.wdx', wasm)
//   const results = await blob.search('nightly crash', { limit: 10 })

/**
 * How many bytes the first request asks for: the head, or its start, and whatever sections
 * follow it. A small blob comes whole in it; a big one's head takes a second request (CACM's,
 * 3,204 pages: 8 KB).
 */
export const PREFIX_BYTES = 16 * 1024

/** The most fetch-then-search rounds one call makes (a search needs three: dictionary shards, postings, pages). */
const MAX_ROUNDS = 8

function httpError(url, res, what) {
  const err = new Error(`${what} of ${url}: HTTP ${res.status}${res.statusText ? ' ' + res.statusText : ''}`)
  err.code = 'http'
  err.details = { url: String(url), status: res.status }
  return err
}

/** The total length a `Content-Range: bytes a-b/total` header gives, or null. */
function totalLength(res) {
  const m = /\/(\d+)\s*$/.exec(res.headers.get('content-range') ?? '')
  return m ? Number(m[1]) : null
}

/**
 * Opens the blob at `url` for searching.
 * @param {string | URL} url
 * @param {{ RangedIndex: any }} wasm the module's classes (after `init()`)
 * @param {{ prefix?: number, fetch?: typeof fetch, ready?: Promise<unknown> }} [options]
 *   `prefix`: bytes of the first request (default 16 KiB; a page that knows its blob's head
 *   length, `RangedIndex.headEnd` at build time, passes it: one request, nothing past the
 *   head); `fetch`: the function that fetches
 *   (default `globalThis.fetch`); `ready`: the module's `init()` when it is still under way, so
 *   that the first request goes out meanwhile (the classes are used once it resolves)
 * @returns {Promise<BlobSearch>}
 */
export async function openBlob(url, wasm, options = {}) {
  const fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis)
  const prefix = options.prefix ?? PREFIX_BYTES
  const [res] = await Promise.all([fetchFn(url, { headers: { Range: `bytes=0-${prefix - 1}` } }), options.ready])
  if (res.status !== 206 && !res.ok) throw httpError(url, res, 'the first bytes')
  let bytes = new Uint8Array(await res.arrayBuffer())
  let fetched = bytes.length
  const whole = res.status !== 206 || totalLength(res) === bytes.length
  const end = wasm.RangedIndex.headEnd(bytes)
  if (whole) {
    // Every part is in hand: open loads them all, and no search fetches again.
    return new BlobSearch(url, wasm.RangedIndex.open(bytes), fetchFn, fetched, false)
  }
  if (end > bytes.length) {
    const rest = await fetchRange(fetchFn, url, bytes.length, end)
    fetched += rest.length
    const head = new Uint8Array(end)
    head.set(bytes)
    head.set(rest, bytes.length)
    bytes = head
  }
  return new BlobSearch(url, wasm.RangedIndex.open(bytes), fetchFn, fetched, true)
}

async function fetchRange(fetchFn, url, start, end) {
  // `no-store`: Chromium's HTTP cache lets one request per URL at a time write to it, so a
  // round's ranges of the one blob would wait for each other (a round trip each on a slow
  // link; measured: 5 round trips for a search's 2 rounds). Past the head, a part is fetched
  // once per page and kept in the index.
  const res = await fetchFn(url, { headers: { Range: `bytes=${start}-${end - 1}` }, cache: 'no-store' })
  if (res.status !== 206) throw httpError(url, res, `bytes ${start}-${end - 1}`)
  const bytes = new Uint8Array(await res.arrayBuffer())
  if (bytes.length !== end - start) {
    const err = new Error(`bytes ${start}-${end - 1} of ${url}: got ${bytes.length} bytes`)
    err.code = 'http'
    err.details = { url: String(url), status: res.status }
    throw err
  }
  return bytes
}

/** A blob being searched, in parts or whole. */
export class BlobSearch {
  #fetch
  #inflight = new Map()

  constructor(url, ranged, fetchFn, fetched, inParts = false) {
    /** The blob's URL. */
    this.url = url
    /** The blob's `RangedIndex` (all of it loaded when it came whole). */
    this.ranged = ranged
    /** Whether the blob is read in parts (range requests), not whole. */
    this.inParts = inParts
    /** Bytes fetched so far. */
    this.fetched = fetched
    this.#fetch = fetchFn
  }

  /** Number of pages. */
  get pageCount() {
    return this.ranged.pageCount
  }

  /** Number of page chunks. */
  get chunkCount() {
    return this.ranged.chunkCount
  }

  /** Every page's id. */
  pageIds() {
    return this.ranged.pageIds()
  }

  /** `Index.search`, fetching what it reads first. */
  search(query, options) {
    return this.#run((i) => i.search(query, options))
  }

  /**
   * `Index.pageRecord`, fetching the page's part first. The search module has no page records
   * (a site's pages are HTML): there it rejects with the code `unsupported`.
   */
  pageRecord(key, scope) {
    if (typeof this.ranged.pageRecord !== 'function') {
      const err = new Error('pageRecord: this module has no page records (the search module leaves them out); load the whole module (pkg/)')
      err.code = 'unsupported'
      err.details = { method: 'pageRecord' }
      return Promise.reject(err)
    }
    return this.#run((i) => i.pageRecord(key, scope))
  }

  async #run(call) {
    for (let round = 0; ; round++) {
      try {
        return call(this.ranged)
      } catch (e) {
        if (e?.code !== 'not_loaded' || round >= MAX_ROUNDS) throw e
        // All of a round's ranges at once, then one supply: the core remakes the dictionary
        // once a call.
        const ranges = e.details.ranges
        const parts = await Promise.all(ranges.map(([start, end]) => this.#load(start, end)))
        this.ranged.supplyMany(ranges.map(([start], i) => [start, parts[i]]))
      }
    }
  }

  /** The bytes `[start, end)`, fetched once (concurrent searches share the request). */
  #load(start, end) {
    const key = `${start}-${end}`
    let p = this.#inflight.get(key)
    if (!p) {
      p = fetchRange(this.#fetch, this.url, start, end)
        .then((bytes) => {
          this.fetched += bytes.length
          return bytes
        })
        .finally(() => this.#inflight.delete(key))
      this.#inflight.set(key, p)
    }
    return p
  }
}
