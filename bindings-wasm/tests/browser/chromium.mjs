// Headless Chromium for the browser tests: Debian's /usr/bin/chromium (scripts/chromium.sh
// installs it), driven by playwright-core from the Node binding's npm packages (make
// node-deps). Imported by the tests; not a test itself.
import { createRequire } from 'node:module'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { serve } from '../../../scripts/serve.mjs'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
const { chromium } = createRequire(join(ROOT, 'bindings-node', 'package.json'))('playwright-core')

export const CHROMIUM = '/usr/bin/chromium'
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']
/** Every wait in a page (navigation, selectors, evaluate) gives up after this long. */
export const STEP_TIMEOUT_MS = 30_000

/**
 * Serves `root` on 127.0.0.1 (a free port) and opens one Chromium page. Resolves to
 * `{ url, requests, browser, page, errors, close() }` (`requests`: the server's log of
 * `{ path, status, bytes }`; `ranges: false`: the server ignores range
 * requests and sends whole files, as some hosts do): `errors` collects the page's uncaught errors and
 * console errors (a test asserts on them), `close()` closes Chromium and the server.
 */
export async function open(root = ROOT, { ranges = true } = {}) {
  const server = await serve(root, { ranges })
  let browser
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS, timeout: STEP_TIMEOUT_MS })
  } catch (e) {
    await server.close()
    throw e
  }
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  const page = await context.newPage()
  page.setDefaultTimeout(STEP_TIMEOUT_MS)
  page.setDefaultNavigationTimeout(STEP_TIMEOUT_MS)
  const errors = []
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`))
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`)
  })
  return {
    url: server.url,
    requests: server.requests,
    browser,
    page,
    errors,
    async close() {
      await browser.close().catch(() => {})
      await server.close()
    },
  }
}
