// What the browser benches measure, the same way for each engine: a page in a fresh context,
// page load to the first results (time and the bytes of the engine's folder, runtime and index
// apart), and each query typed key by key in one loaded page. Imported by
// bench/compare_browser.mjs and bench/docs-sites/compare.mjs. An engine is
// `{ page, prefix }`: its harness page's path (with its query string) and the folder whose
// responses are its bytes; the harness sets `window.first` (with `&q=`) and `window.bench`.

/** Any one browser step (launch, navigation, one query's keystrokes). */
export const STEP_MS = 30_000

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN
}
export const median = (xs) => quantile(xs, 0.5)

export function withTimeout(promise, ms, what) {
  let timer
  return Promise.race([
    promise,
    new Promise((_, fail) => {
      timer = setTimeout(() => fail(new Error(`${what}: no answer within ${ms / 1000} s`)), ms)
    }),
  ]).finally(() => clearTimeout(timer))
}

/**
 * `RTT_MS:KBPS` (e.g. `150:1600`, a slow 4G link) as the DevTools protocol's network
 * conditions: each request waits the round trip, and bodies arrive at that many kilobits per
 * second (down; up at half of it). Applies to the page and to its workers' requests.
 */
export function parseNetwork(spec) {
  const m = /^(\d+):(\d+)$/.exec(spec ?? '')
  if (!m) throw new Error(`--network ${spec}: expected RTT_MS:KBPS, like 150:1600`)
  const [rtt, kbps] = [Number(m[1]), Number(m[2])]
  return { spec, offline: false, latency: rtt, downloadThroughput: (kbps * 1000) / 8, uploadThroughput: (kbps * 1000) / 16 }
}

async function newPage(browser, network) {
  const context = await browser.newContext()
  const page = await context.newPage()
  if (network) {
    const cdp = await context.newCDPSession(page)
    await cdp.send('Network.enable')
    const { spec, ...conditions } = network
    await cdp.send('Network.emulateNetworkConditions', conditions)
  }
  page.setDefaultTimeout(STEP_MS)
  page.setDefaultNavigationTimeout(STEP_MS)
  const errors = []
  page.on('pageerror', (e) => errors.push(e.message))
  return { context, page, errors }
}

const RUNTIME = /\.(js|mjs|wasm|pagefind)$/

/** Page load to the first results of `q`, in a fresh context (over `network`'s link, when
 * given: `parseNetwork`): time and bytes. */
export async function firstResult(browser, server, engine, q, network) {
  const { context, page, errors } = await newPage(browser, network)
  try {
    server.reset()
    await page.goto(`${server.url}${engine.page}&q=${encodeURIComponent(q)}`)
    await page.waitForFunction(() => window.first !== undefined)
    const first = await page.evaluate(() => window.first)
    if (first.error || errors.length) throw new Error(`${engine.page} "${q}": ${first.error ?? errors.join('; ')}`)
    const mine = server.log.filter((r) => r.path.startsWith(engine.prefix))
    const sum = (rs, k) => rs.reduce((s, r) => s + r[k], 0)
    const runtime = mine.filter((r) => RUNTIME.test(r.path))
    const index = mine.filter((r) => !RUNTIME.test(r.path))
    return {
      query: q, ms: first.t, results: first.n, requests: mine.length,
      wire: sum(mine, 'wire'), raw: sum(mine, 'raw'), runtimeWire: sum(runtime, 'wire'), indexWire: sum(index, 'wire'),
    }
  } finally {
    await context.close()
  }
}

/** One context, the index loaded, then `fn(page)`. */
export async function loaded(browser, server, engine, fn) {
  const { context, page, errors } = await newPage(browser)
  try {
    await page.goto(`${server.url}${engine.page}`)
    await withTimeout(page.evaluate(() => window.bench.ready.then(() => true)), STEP_MS, `${engine.page}: load`)
    const out = await fn(page)
    if (errors.length) throw new Error(`${engine.page}: ${errors.join('; ')}`)
    return out
  } finally {
    await context.close()
  }
}

/** Every query typed one character at a time, a search of the text so far after each. */
export function keystrokes(browser, server, engine, queries) {
  return loaded(browser, server, engine, async (page) => {
    await page.evaluate(() => window.bench.search('warm up', 10, 'keystroke')) // first-call costs out
    const ms = []
    for (const q of queries) {
      const one = page.evaluate(async (q) => {
        const out = []
        for (let i = 1; i <= q.length; i++) {
          const prefix = q.slice(0, i)
          if (!prefix.trim()) continue
          out.push((await window.bench.search(prefix, 10, 'keystroke')).ms)
        }
        return out
      }, q)
      ms.push(...(await withTimeout(one, STEP_MS, `${engine.page}: keystrokes of "${q}"`)))
    }
    return { keystrokes: ms.length, p50: quantile(ms, 0.5), p95: quantile(ms, 0.95), mean: ms.reduce((a, b) => a + b, 0) / ms.length }
  })
}
