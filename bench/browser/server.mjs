// The static server of bench/compare_browser.mjs: 127.0.0.1 only, GET only, files under one
// root, and a log of every response with the bytes its body put on the wire.
//
// Compression is what a static host does: text, JavaScript, wasm and the wikidex blob are sent
// gzipped (level 9, compressed once per file and kept) when the browser accepts gzip, as
// `content-encoding: gzip`. Pagefind's index files (.pf_meta, .pf_index, .pf_fragment, the
// .pagefind wasm) are gzip streams already (its runtime inflates them), so they are sent as
// they are. A single byte-range request (the bundle's blob) is answered with 206
// and the range as it is in the file, not gzipped, as static hosts answer ranges (the blob's
// sections are deflated already); `ranges: false` sends the whole file instead, as hosts
// that ignore ranges do. Responses may be cached by the browser (`max-age`), as on a real host; every
// measurement starts in a fresh browser context, so with an empty cache.
import { createServer } from 'node:http'
import { readFileSync, statSync } from 'node:fs'
import { resolve, join, extname, sep } from 'node:path'
import { gzipSync } from 'node:zlib'

import { byteRange } from '../../scripts/serve.mjs'

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.wdx': 'application/octet-stream',
}
const COMPRESS = new Set(['.html', '.js', '.mjs', '.css', '.json', '.wasm', '.wdx'])

/**
 * Serves `root`; resolves to `{ url, log, reset(), close() }`. `log` holds one entry per
 * response, `{ path, status, wire, raw }` (body bytes sent, and the file's size, or the
 * range's for a 206); `reset()` empties it.
 */
export function serve(root, { ranges = true } = {}) {
  const base = resolve(root)
  const gz = new Map()
  const log = []
  const server = createServer((req, res) => {
    const end = (status, body = '', headers = {}) => {
      log.push({ path: req.url, status, wire: body.length, raw: body.length })
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers })
      res.end(body)
    }
    if (req.method !== 'GET') return end(405)
    let path
    try {
      path = decodeURIComponent(new URL(req.url, 'http://x').pathname)
    } catch {
      return end(400)
    }
    const file = join(base, path)
    if (!file.startsWith(base + sep)) return end(403)
    let bytes
    try {
      if (!statSync(file).isFile()) return end(404)
      bytes = readFileSync(file)
    } catch {
      return end(404)
    }
    const ext = extname(file)
    const headers = { 'content-type': TYPES[ext] ?? 'application/octet-stream', 'cache-control': 'max-age=600' }
    const range = ranges ? byteRange(req.headers.range, bytes.length) : null
    if (range === 'unsatisfiable') return end(416, '', { 'content-range': `bytes */${bytes.length}` })
    if (range) {
      const body = bytes.subarray(range.start, range.end)
      headers['content-range'] = `bytes ${range.start}-${range.end - 1}/${bytes.length}`
      headers['content-length'] = body.length
      log.push({ path: new URL(req.url, 'http://x').pathname, status: 206, wire: body.length, raw: body.length })
      res.writeHead(206, headers)
      return res.end(body)
    }
    let body = bytes
    if (COMPRESS.has(ext) && /\bgzip\b/.test(req.headers['accept-encoding'] ?? '')) {
      if (!gz.has(file)) gz.set(file, gzipSync(bytes, { level: 9 }))
      body = gz.get(file)
      headers['content-encoding'] = 'gzip'
    }
    headers['content-length'] = body.length
    log.push({ path: new URL(req.url, 'http://x').pathname, status: 200, wire: body.length, raw: bytes.length })
    res.writeHead(200, headers)
    res.end(body)
  })
  return new Promise((ok, fail) => {
    server.once('error', fail)
    server.listen(0, '127.0.0.1', () => {
      server.unref()
      ok({
        url: `http://127.0.0.1:${server.address().port}`,
        log,
        reset: () => log.splice(0),
        close: () =>
          new Promise((closed) => {
            server.close(() => closed())
            server.closeAllConnections()
          }),
      })
    })
  })
}
