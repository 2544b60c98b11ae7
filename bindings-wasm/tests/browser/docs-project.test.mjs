// `wikidex site` on a docs project nobody here wrote, as its author would add search to it:
// Python-Markdown's documentation (its PyPI sdist, pinned; scripts/docs-project.sh downloads it
// once, checks its sha256 and builds it with MkDocs). After the generator, the command writes
// the bundle into the built site; the snippet goes into one page; in headless Chromium a query
// typed into the box lists the expected page, and its link opens the page MkDocs built, at the
// heading's anchor. `WIKIDEX_BIN` is the CLI (default target/debug/wikidex).
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { open, ROOT } from './chromium.mjs'

const BIN = process.env.WIKIDEX_BIN ?? join(ROOT, 'target', 'debug', 'wikidex')
const PROJECT = 'python-markdown'

let chromium
let tmp
before(async () => {
  const out = execFileSync(join(ROOT, 'scripts', 'docs-project.sh'), [PROJECT, join(ROOT, 'target', 'docs-projects', PROJECT)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const where = Object.fromEntries(out.trim().split('\n').map((l) => l.split('=')))
  // A copy of the built site: the cached one stays as MkDocs wrote it.
  tmp = mkdtempSync(join(tmpdir(), 'wikidex-docs-project-'))
  const site = join(tmp, 'site')
  cpSync(where.site, site, { recursive: true })
  execFileSync(BIN, ['site', where.docs, '--out', site, '--layout', where.layout], { stdio: ['ignore', 'ignore', 'inherit'] })
  // The snippet, pasted into the home page after <body>.
  const home = join(site, 'index.html')
  const html = readFileSync(home, 'utf8')
  const snippet = '<link rel="stylesheet" href="/wikidex/ui.css"><script type="module" src="/wikidex/ui.js"></script><wikidex-search placeholder="Search the docs"></wikidex-search>'
  assert.match(html, /<body[^>]*>/)
  writeFileSync(home, html.replace(/<body[^>]*>/, (b) => `${b}\n${snippet}`))
  chromium = await open(site)
})

after(async () => {
  await chromium?.close()
  if (tmp) rmSync(tmp, { recursive: true, force: true })
})

/** Types `query`, waits for its results, and returns the links listed, in order. */
async function search(page, query) {
  const input = page.locator('wikidex-search input')
  await input.fill('')
  await input.pressSequentially(query)
  await page.waitForFunction((q) => {
    const list = document.querySelector('wikidex-search [role=listbox]')
    return list && list.dataset.query === q && list.querySelectorAll('[role=option]').length > 0
  }, query)
  return page.$$eval('wikidex-search [role=option] a.wikidex-title', (as) => as.map((a) => a.href))
}

for (const [query, url] of [
  ['how do I add a table of contents', '/extensions/toc/'],
  ['footnotes', '/extensions/footnotes/'],
  ['fenced code blocks', '/extensions/fenced_code_blocks/'],
]) {
  test(`"${query}" lists ${url}, and its link opens the built page at the heading`, { timeout: 120_000 }, async () => {
    const { page, url: base, errors } = chromium
    errors.splice(0)
    await page.goto(`${base}/index.html`)
    const links = await search(page, query)
    const hit = links.find((l) => new URL(l).pathname === url)
    assert.ok(hit, `${url} not among the first hits:\n${links.join('\n')}`)
    assert.ok(links.indexOf(hit) < 3, `${url} is hit ${links.indexOf(hit) + 1}:\n${links.join('\n')}`)
    // No error from the search: none shown, every bundle request answered, none thrown by
    // its scripts. (The theme's own: highlight.js from a CDN this machine cannot reach, its
    // scroll spy's selectors, are the site's, not ours.)
    assert.equal(await page.locator('wikidex-search .wikidex-error').isVisible(), false)
    const bundle = chromium.requests.filter((r) => r.path.startsWith('/wikidex/'))
    assert.ok(bundle.length >= 5 && bundle.every((r) => r.status < 400), JSON.stringify(bundle))
    assert.deepEqual(errors.splice(0).filter((e) => /wikidex|worker|wasm/i.test(e)), [])
    // Follow every listed link to its page: the page MkDocs built is there, and an anchor
    // names a heading on it (MkDocs' ids, as the core makes them).
    for (const link of links) {
      const res = await page.goto(link)
      assert.equal(res.status(), 200, link)
      const id = decodeURIComponent(new URL(link).hash.slice(1))
      if (id) assert.ok(await page.evaluate((id) => document.getElementById(id) !== null, id), `${link}: no element with id ${id}`)
    }
    errors.splice(0)
  })
}
