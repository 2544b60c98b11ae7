// The book as `make book` builds it (WIKIDEX_SITE, default target/book): MkDocs' pages with
// the search bundle `wikidex site` wrote into wikidex/ and the snippet of
// examples/docs-site/overrides/main.html, end to end in headless Chromium. From a book page,
// the navbar's Search opens the dialog, a query typed key by key lists the expected page
// linked to its built .html, every link listed is a page of the book (and its anchor an id on
// that page), and following one lands there. The blob is read by range requests, its head
// exactly first; a server that ignores ranges sends it whole, with the same answers; the book
// served from a subpath searches and links under it. Every heading of the book's sources links,
// by the bundle's own rules (its module's SiteLinks, in Node), to an id MkDocs gave it. Saves
// target/test-output/site.png (the dialog with the results).
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { basename, dirname, join, relative } from 'node:path'
import { pathToFileURL } from 'node:url'
import { open, ROOT } from './chromium.mjs'

const SITE = process.env.WIKIDEX_SITE ?? join(ROOT, 'target', 'book')
const OUTPUT = join(ROOT, 'target', 'test-output')
/** The page the search starts from, and what is typed. */
const START = 'getting-started/python.html'
const QUERY = 'coded errors'
/** The page the query should list: docs/reference/errors.md as MkDocs built it. */
const EXPECTED = 'reference/errors.html'

const INPUT = 'wikidex-search input.wikidex-input'
const OPTIONS = 'wikidex-search [role=listbox] > [role=option]'

let chromium
let site
let blobPath
before(async () => {
  const manifest = join(SITE, 'wikidex', 'site.json')
  assert.ok(existsSync(join(SITE, START)) && existsSync(manifest), `no book with its search bundle at ${SITE}: run make book`)
  site = JSON.parse(readFileSync(manifest, 'utf8'))
  blobPath = join(SITE, 'wikidex', site.blob)
  chromium = await open(SITE)
})
after(async () => {
  await chromium?.close()
})

/** Waits until the hits drawn answer exactly the text in the box. */
const answered = (page) =>
  page.waitForFunction(() => {
    const root = document.querySelector('wikidex-search')
    const list = root.querySelector('[role=listbox]')
    return list.dataset.query !== undefined && list.dataset.query === root.querySelector('input').value
  })

const hrefs = (page) => page.$$eval(`${OPTIONS} a.wikidex-title`, (as) => as.map((a) => a.href))

/** The server's responses for the blob: `{ path, status, bytes }`. */
const blobRequests = (requests, prefix = '') => requests.filter((r) => r.path === `${prefix}/wikidex/${site.blob}`)

/** Opens the search dialog from the navbar, types `query` key by key, waits for its hits. */
async function search(page, query) {
  await page.click('.navbar a[data-bs-target="#mkdocs_search_modal"]')
  await page.locator('#mkdocs_search_modal').waitFor({ state: 'visible' })
  // The dialog puts the focus in the box (the override's shown.bs.modal handler).
  await page.waitForFunction(() => document.activeElement?.matches('wikidex-search input'))
  await page.keyboard.type(query)
  await answered(page)
  return hrefs(page)
}

test('the book searches as you type and links each hit to its built page', { timeout: 120_000 }, async (t) => {
  const { page, url, errors, requests } = chromium
  await page.goto(`${url}/${START}`)
  let links

  await t.test("the theme's own search is off and its scripts run with wikidex's in its place", async () => {
    // base.js ran to its end: it gives every table Bootstrap's classes, after the dialogs.
    await page.waitForFunction(() => document.querySelectorAll('table').length === document.querySelectorAll('table.table').length)
    assert.equal(await page.locator('#mkdocs_search_modal wikidex-search').count(), 1)
    assert.ok(!requests.some((r) => r.path.includes('search_index.json') || r.path.includes('lunr')), 'MkDocs loaded its lunr search')
    assert.deepEqual(blobRequests(requests), [], 'the index waits for the box to be used')
  })

  await t.test('typing key by key lists the expected page, linked to its .html', async () => {
    links = await search(page, QUERY)
    assert.ok(links.length > 3, links.join('\n'))
    const expected = links.find((l) => l.split('#')[0] === `${url}/${EXPECTED}`)
    assert.ok(expected, `${EXPECTED} not listed:\n${links.join('\n')}`)
    const option = page.locator(OPTIONS, { has: page.locator(`a.wikidex-title[href="${expected}"]`) })
    assert.match(await option.locator('.wikidex-title').textContent(), /Errors/)
    const marks = await option.locator('.wikidex-snippet mark').allTextContents()
    assert.ok(marks.some((m) => /^(coded|error)/i.test(m)), `highlights: ${marks}`)
    // The book's URL rule (`use_directory_urls: false`): every page is `{path}.html`.
    for (const l of links) assert.match(l, new RegExp(`^${url}/[a-z0-9/_-]+\\.html(#[a-z0-9_-]+)?$`))
    mkdirSync(OUTPUT, { recursive: true })
    await page.screenshot({ path: join(OUTPUT, 'site.png'), fullPage: false })
  })

  await t.test('the blob is read in parts: its head exactly, then the ranges each search reads', async () => {
    const blob = blobRequests(requests)
    const size = statSync(blobPath).size
    assert.ok(blob.length >= 2, JSON.stringify(blob))
    assert.ok(blob.every((r) => r.status === 206), JSON.stringify(blob))
    // site.json's head_end: the UI's first request asks for these bytes exactly.
    assert.ok(site.head_end > 56 && site.head_end < size, `head ${site.head_end} of ${size}`)
    assert.equal(blob[0].bytes, site.head_end, JSON.stringify(blob))
    const fetched = blob.reduce((n, r) => n + r.bytes, 0)
    assert.ok(fetched < size, `${fetched} of ${size} bytes`)
  })

  await t.test('every link listed is a page of the book, and its anchor an id on it', async () => {
    for (const link of links) {
      const [at, id] = link.split('#')
      const res = await page.request.get(at)
      assert.equal(res.status(), 200, link)
      if (id) assert.ok((await res.text()).includes(` id="${id}"`), `${link}: no element with id ${id}`)
    }
    assert.ok(links.some((l) => l.includes('#')), `no hit under a heading:\n${links.join('\n')}`)
  })

  await t.test('following a hit lands on its page, at its heading', async () => {
    const follow = async (href) => {
      const [res] = await Promise.all([page.waitForNavigation(), page.click(`${OPTIONS} a.wikidex-title[href="${href}"]`)])
      assert.equal(res.status(), 200, href)
      assert.equal(page.url(), href)
    }
    await follow(links.find((l) => l.split('#')[0] === `${url}/${EXPECTED}`))
    assert.match(await page.title(), /^Errors/)
    // From this page, a hit under a heading.
    const anchored = (await search(page, QUERY)).find((l) => l.includes('#') && !l.startsWith(`${url}/${EXPECTED}`))
    await follow(anchored)
    const id = decodeURIComponent(new URL(anchored).hash.slice(1))
    assert.equal(await page.locator(`[id="${id}"]`).count(), 1, `no element with id ${id} on ${anchored}`)
  })

  assert.deepEqual(errors, [], 'no uncaught error or console error')
})

test('a server that ignores range requests sends the whole blob, and the answers are the same', { timeout: 60_000 }, async () => {
  const plain = await open(SITE, { ranges: false })
  try {
    const lists = []
    for (const { page, url } of [chromium, plain]) {
      await page.goto(`${url}/${START}`)
      lists.push((await search(page, QUERY)).map((l) => l.slice(url.length)))
    }
    assert.deepEqual(lists[1], lists[0])
    assert.deepEqual(blobRequests(plain.requests).map((r) => [r.status, r.bytes]), [[200, statSync(blobPath).size]])
    assert.deepEqual(plain.errors, [])
  } finally {
    await plain.close()
  }
})

test('the book served from a subpath finds its bundle and links under the subpath', { timeout: 60_000 }, async () => {
  // The book's snippet is relative (MkDocs' base_url), and ui.js finds the rest beside itself.
  const prefix = `/${basename(SITE)}`
  const sub = await open(dirname(SITE))
  try {
    await sub.page.goto(`${sub.url}${prefix}/${START}`)
    const links = await search(sub.page, QUERY)
    assert.ok(links.includes(`${sub.url}${prefix}/${EXPECTED}`), links.join('\n'))
    for (const l of links) assert.ok(l.startsWith(`${sub.url}${prefix}/`), l)
    assert.equal(blobRequests(sub.requests, prefix)[0]?.bytes, site.head_end)
    assert.deepEqual(sub.errors, [])
  } finally {
    await sub.close()
  }
})

test("the 404 page has the search too, and the theme's shortcut opens it", { timeout: 60_000 }, async () => {
  const { page, url } = chromium
  const errors = chromium.errors.length
  await page.goto(`${url}/404.html`)
  await page.waitForFunction(() => document.readyState === 'complete')
  await page.keyboard.press('s')
  await page.locator('#mkdocs_search_modal').waitFor({ state: 'visible' })
  await page.waitForFunction(() => document.activeElement?.matches('wikidex-search input'))
  assert.deepEqual(chromium.errors.slice(errors), [])
})

test("every heading of the book links to an id MkDocs gave it, by the bundle's rules", async () => {
  // The bundle's own module, as its worker loads it.
  const bundle = join(SITE, 'wikidex')
  const wasm = await import(pathToFileURL(join(bundle, 'wikidex_wasm.js')).href)
  wasm.initSync({ module: readFileSync(join(bundle, 'wikidex_wasm_bg.wasm')) })
  const links = new wasm.SiteLinks(site.links)
  const docs = join(ROOT, 'docs')
  const walk = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]))
  const missing = []
  let headings = 0
  for (const file of walk(docs).filter((f) => f.endsWith('.md'))) {
    const path = relative(docs, file).split('\\').join('/')
    // The ATX headings outside fenced code (the book has no other kind).
    let fence = null
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const f = /^\s*(`{3,}|~{3,})/.exec(line)
      if (f && (!fence || line.trim().startsWith(fence))) fence = fence ? null : f[1]
      const h = fence || f ? null : /^#{1,6}\s+(.*?)(\s+#+)?\s*$/.exec(line)
      if (!h) continue
      headings++
      // A title no heading equals: the link always names the heading's anchor.
      const [url, id] = links.href(path, '', [h[1]]).split('#')
      const html = readFileSync(join(SITE, url), 'utf8')
      if (!id || !html.includes(` id="${id}"`)) missing.push(`${path}: "${h[1]}" -> ${url}#${id}`)
    }
  }
  assert.ok(headings > 50, `${headings} headings`)
  assert.deepEqual(missing, [])
})
