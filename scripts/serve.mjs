// A tiny static HTTP server on 127.0.0.1 for the docs site (`make serve-site`) and the browser
// tests (bindings-wasm/tests/browser/), which import `serve`. Files only: no directory
// listings, nothing outside the root, GET and HEAD only. Single byte-range requests are
// answered with 206 as static hosts answer them (the docs site reads its blob so);
// `ranges: false` ignores them and sends the whole file, as some hosts do.
//
//   node scripts/serve.mjs ROOT [PORT]     # PORT 0 (the default) picks a free one
import { createServer } from 'node:http'
import { createReadStream, statSync } from 'node:fs'
import { resolve, join, extname, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.wdx': 'application/octet-stream',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ts': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
}

/**
 * The byte range a `Range` header asks of a file of `size` bytes: `{ start, end }` (end
 * exclusive), `'unsatisfiable'`, or null to send the whole file (no header, several ranges,
 * or a unit other than bytes; RFC 9110 lets a server ignore those).
 */
export function byteRange(header, size) {
  const m = /^bytes=(\d*)-(\d*)$/.exec((header ?? '').trim())
  if (!m || (m[1] === '' && m[2] === '')) return null
  let start, end
  if (m[1] === '') {
    // The last N bytes.
    start = Math.max(0, size - Number(m[2]))
    end = size
  } else {
    start = Number(m[1])
    end = m[2] === '' ? size : Math.min(size, Number(m[2]) + 1)
  }
  if (start >= size || end <= start) return 'unsatisfiable'
  return { start, end }
}

/**
 * Serves the files under `root` on 127.0.0.1:`port` (0: a free port). Resolves to
 * `{ url, requests, close() }` once listening (`requests`: `{ path, status, bytes }` of every
 * response, its body's length); `close()` ends open connections too, so a test's
 * `after(() => server.close())` never hangs. The server does not keep the process alive.
 */
export function serve(root, { port = 0, log = false, ranges = true } = {}) {
  const base = resolve(root)
  const requests = []
  const server = createServer((req, res) => {
    const done = (status, headers = {}) => {
      if (log) console.log(`${status} ${req.method} ${req.url}`)
      requests.push({ path: req.url, status, bytes: req.method === 'HEAD' ? 0 : Number(headers['content-length'] ?? 0) })
      res.writeHead(status, { 'cache-control': 'no-store', ...headers })
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      done(405, { allow: 'GET, HEAD' })
      return res.end()
    }
    let path
    try {
      path = decodeURIComponent(new URL(req.url, 'http://x').pathname)
    } catch {
      done(400)
      return res.end()
    }
    let file = join(base, path)
    if (file !== base && !file.startsWith(base + sep)) {
      done(403)
      return res.end()
    }
    let stat
    try {
      stat = statSync(file)
      if (stat.isDirectory()) {
        file = join(file, 'index.html')
        stat = statSync(file)
      }
    } catch {
      done(404, { 'content-type': 'text/plain; charset=utf-8' })
      return res.end(`not found: ${path}\n`)
    }
    const type = TYPES[extname(file)] ?? 'application/octet-stream'
    const range = ranges ? byteRange(req.headers.range, stat.size) : null
    if (range === 'unsatisfiable') {
      done(416, { 'content-range': `bytes */${stat.size}` })
      return res.end()
    }
    if (range) {
      done(206, {
        'content-type': type,
        'content-length': range.end - range.start,
        'content-range': `bytes ${range.start}-${range.end - 1}/${stat.size}`,
        'accept-ranges': 'bytes',
      })
      if (req.method === 'HEAD') return res.end()
      return createReadStream(file, { start: range.start, end: range.end - 1 }).pipe(res)
    }
    done(200, { 'content-type': type, 'content-length': stat.size, ...(ranges ? { 'accept-ranges': 'bytes' } : {}) })
    if (req.method === 'HEAD') return res.end()
    createReadStream(file).pipe(res)
  })
  return new Promise((ok, fail) => {
    server.once('error', fail)
    server.listen(port, '127.0.0.1', () => {
      server.unref()
      const { port: bound } = server.address()
      ok({
        url: `http://127.0.0.1:${bound}`,
        requests,
        close: () =>
          new Promise((closed) => {
            server.close(() => closed())
            server.closeAllConnections()
          }),
      })
    })
  })
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [root, port] = process.argv.slice(2)
  if (!root) {
    console.error('usage: node scripts/serve.mjs ROOT [PORT]')
    process.exit(2)
  }
  const { url } = await serve(root, { port: Number(port ?? 0), log: true })
  // unref'd for the tests; a command line server stays up until Ctrl-C.
  setInterval(() => {}, 1 << 30)
  console.log(`serving ${resolve(root)} at ${url}/ (Ctrl-C stops)`)
}
