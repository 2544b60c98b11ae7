// The docs site (examples/docs-site, built by `make site` into target/site) end to end in
// headless Chromium: the search runs in the page's Web Worker on the wasm module and the blob
// the CLI built. Types a query key by key, checks the expected page comes first, opens its
// why panel, narrows with a tag filter, opens a page view, turns semantic search on (the full
// module and the int8 model load in the worker; the semantic lane joins), and loads the site
// with a broken blob URL. Saves target/test-output/site.png (results with the why panel open)
// and site-semantic.png (the same with the semantic lane). The worker reads the blob by range
// requests (checked in the server's log), and whole from a server that ignores them, with the
// same answers.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { open, ROOT } from './chromium.mjs'

const SITE = process.env.WIKIDEX_SITE ?? join(ROOT, 'target', 'site')
const OUTPUT = join(ROOT, 'target', 'test-output')
const QUERY = 'why did the nightly job crash'
const EXPECTED = 'answer_why_nightly_crashed_2024_03_12'

let chromium
before(async () => {
  assert.ok(existsSync(join(SITE, 'index.html')), `no site at ${SITE}: run make site`)
  chromium = await open(SITE)
})
after(async () => {
  await chromium?.close()
})

const hitIds = (page) => page.$$eval('#hits > li.hit', (lis) => lis.map((li) => li.dataset.page))

/** The server's responses for the blob: `{ path, status, bytes }`. */
const blobRequests = (requests) => requests.filter((r) => r.path.split('?')[0] === '/wiki.wdx')

/** Waits until the hits drawn are the worker's answer to exactly the text in the box. */
const answered = (page) =>
  page.waitForFunction(() => {
    const q = document.querySelector('#q').value
    return document.querySelector('#hits').dataset.query === q
  })

test('the docs site searches as you type, explains, filters and shows pages', { timeout: 120_000 }, async (t) => {
  const { page, url, errors } = chromium
  await page.goto(`${url}/index.html`)
  await page.waitForFunction(() => document.body.classList.contains('ready'))
  assert.match(await page.textContent('#status'), /Index loaded: 42 pages/)

  await t.test('typing key by key finds the expected page first', async () => {
    const firsts = []
    for (const ch of QUERY) {
      await page.type('#q', ch)
      // Every keystroke searches: the list drawn answers the text typed so far.
      await answered(page)
      firsts.push((await hitIds(page))[0] ?? null)
    }
    const ids = await hitIds(page)
    assert.equal(ids[0], EXPECTED, `ranking: ${ids.join(', ')}`)
    assert.ok(ids.length > 3)
    assert.equal(firsts.length, QUERY.length)
    // The word being typed counts as a prefix: `nig` already finds pages about `nightly`.
    const typedNig = QUERY.indexOf('nightly') + 3
    assert.notEqual(firsts[typedNig - 1], null, `nothing for "${QUERY.slice(0, typedNig)}"`)
    const snippetMarks = await page.$$eval('#hits > li.hit .snippet mark', (ms) => ms.map((m) => m.textContent.toLowerCase()))
    assert.ok(snippetMarks.some((m) => m.startsWith('nightly') || m.startsWith('crash')), `highlights: ${snippetMarks}`)
    const title = await page.textContent('#hits > li.hit:first-child .hit-title')
    assert.match(title, /nightly/i)
    const href = await page.getAttribute('#hits > li.hit:first-child .hit-title', 'href')
    assert.ok(href.startsWith(`pages/${EXPECTED}.html#${encodeURIComponent(EXPECTED + '::chunk_')}`), href)
  })

  await t.test('the blob is read in parts: its head, then the ranges each search reads', async () => {
    const blob = blobRequests(chromium.requests)
    const size = statSync(join(SITE, 'wiki.wdx')).size
    assert.ok(blob.length >= 2, JSON.stringify(blob))
    assert.ok(blob.every((r) => r.status === 206), JSON.stringify(blob))
    // The first request is the head, exactly: the page hands the worker its length.
    const head = Number(await page.getAttribute('#blob-head', 'value'))
    assert.ok(head > 56 && head < size, `head ${head}`)
    assert.equal(blob[0].bytes, head, JSON.stringify(blob))
    const fetched = blob.reduce((n, r) => n + r.bytes, 0)
    assert.ok(fetched < size, `${fetched} of ${size} bytes`)
    assert.match(await page.textContent('#status'), /KB of the index fetched/)
  })

  await t.test('prefix: a half-typed word already finds its page', async () => {
    await page.fill('#q', 'segment_enr')
    await answered(page)
    const ids = await hitIds(page)
    assert.ok(ids.includes('mart_account_segments') || ids.includes('incident_2024_03_memory_leak'), ids.join(', '))
    await page.fill('#q', QUERY)
    await answered(page)
    assert.equal((await hitIds(page))[0], EXPECTED)
  })

  await t.test('the why panel shows every lane, the fused score and the BM25 terms', async () => {
    const first = page.locator('#hits > li.hit').first()
    await first.locator('.why-toggle').click()
    const why = first.locator('.why')
    await why.waitFor({ state: 'visible' })
    const lanes = await why.locator('tr.lane').evaluateAll((rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)))
    assert.deepEqual(lanes.map((r) => r[0]), ['lexical', 'semantic', 'token'])
    assert.equal(lanes[0][1], 'ok')
    assert.match(lanes[0][2], /^\d+$/, 'the lexical lane ranked it')
    assert.equal(lanes[1][1], 'skipped', 'no model in the lexical build')
    const terms = await why.locator('table.bm25 tbody tr td:first-child').allTextContents()
    assert.ok(terms.length >= 2, `BM25 terms: ${terms}`)
    assert.ok(terms.includes('crash'), terms.join(' '))
    assert.match(await why.textContent(), /Fused score/)
    mkdirSync(OUTPUT, { recursive: true })
    await page.screenshot({ path: join(OUTPUT, 'site.png'), fullPage: false })
  })

  await t.test('the filter counts are the facet counts of the query, not the site totals', async () => {
    const counts = () =>
      page.$$eval('.filters label.filter', (ls) => Object.fromEntries(ls.map((l) => [`${l.querySelector('input').name}:${l.querySelector('input').value}`, Number(l.querySelector('.count').textContent)])))
    const withQuery = await counts()
    const totals = await page.$$eval('.filters label.filter .count', (cs) => cs.map((c) => Number(c.dataset.total)))
    const values = Object.values(withQuery)
    assert.equal(values.length, totals.length)
    values.forEach((n, i) => assert.ok(n <= totals[i], `a facet count above its total: ${n} > ${totals[i]}`))
    assert.ok(values.some((n, i) => n < totals[i]), 'the query narrows some count')
    // Every hit's tags are counted.
    const hitTags = await page.$$eval('#hits > li.hit', (lis) => lis.flatMap((li) => [...li.querySelectorAll('.tags .tag')].map((t) => t.textContent)))
    for (const tag of hitTags) assert.ok(withQuery[`tag:${tag}`] >= 1, `tag ${tag} of a hit counted 0`)
  })

  await t.test('a tag filter narrows the results to pages with that tag', async () => {
    const before = await hitIds(page)
    await page.check('input[name=tag][value=runbook]')
    await page.waitForFunction((n) => {
      const hits = document.querySelectorAll('#hits > li.hit')
      return hits.length > 0 && hits.length < n
    }, before.length)
    const tags = await page.$$eval('#hits > li.hit', (lis) => lis.map((li) => [...li.querySelectorAll('.tags .tag')].map((t) => t.textContent)))
    assert.ok(tags.length < before.length, `${tags.length} of ${before.length}`)
    for (const t of tags) assert.ok(t.includes('runbook'), `a hit without the tag: ${t}`)
    await page.uncheck('input[name=tag][value=runbook]')
    await page.waitForFunction((n) => document.querySelectorAll('#hits > li.hit').length === n, before.length)
  })

  await t.test('a result opens its page view with chunks, links and backlinks', async () => {
    await page.click('#hits > li.hit:first-child .hit-title')
    await page.waitForSelector('.page-view')
    assert.match(await page.textContent('h1.page-title'), /nightly/i)
    assert.ok((await page.locator('.chunks li').count()) >= 1)
    assert.ok((await page.locator('.links li a').count()) >= 1, 'outgoing links listed')
    await page.goto(`${url}/pages/nightly_pipeline.html`)
    const back = await page.locator('.backlinks li a').allTextContents()
    assert.ok(back.length >= 3, `backlinks: ${back}`)
  })

  assert.deepEqual(errors, [], 'no uncaught error or console error')
})

test('the semantic toggle loads the model and the semantic lane joins the search', { timeout: 120_000 }, async () => {
  const { page, url, errors } = chromium
  await page.goto(`${url}/index.html`)
  await page.waitForFunction(() => document.body.classList.contains('ready'))
  // No word of this query is in the pages that are about revenue: only the semantic lane finds them.
  const query = 'money coming in'
  await page.fill('#q', query)
  await answered(page)
  const lexical = await hitIds(page)
  assert.ok(!lexical.includes('revenue'), lexical.join(', '))
  assert.match(await page.textContent('#status'), /semantic skipped/)

  await page.check('#semantic')
  // While the model loads, the searches go on with the lexical and token lanes.
  assert.match(await page.textContent('#semantic-state'), /loading/)
  await page.waitForFunction(() => document.querySelector('#semantic').dataset.state === 'ready', null, { timeout: 90_000 })
  await page.waitForFunction(() => /semantic ok/.test(document.querySelector('#status').textContent))
  assert.match(await page.textContent('#semantic-state'), /on: all three lanes/)
  const semantic = await hitIds(page)
  assert.ok(semantic.includes('revenue') && semantic.includes('decision_revenue_recognition_timing'), semantic.join(', '))
  const first = page.locator('#hits > li.hit', { has: page.locator('a[href^="pages/revenue.html"]') })
  await first.locator('.why-toggle').click()
  const lanes = await first.locator('.why tr.lane').evaluateAll((rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)))
  assert.equal(lanes[1][0], 'semantic')
  assert.equal(lanes[1][1], 'ok')
  assert.match(lanes[1][2], /^\d+$/, 'the semantic lane ranked it')
  mkdirSync(OUTPUT, { recursive: true })
  await page.screenshot({ path: join(OUTPUT, 'site-semantic.png'), fullPage: false })

  // Off again: the lexical and token lanes alone, without reloading anything.
  await page.uncheck('#semantic')
  await page.waitForFunction(() => /semantic skipped/.test(document.querySelector('#status').textContent))
  assert.deepEqual(await hitIds(page), lexical)
  assert.deepEqual(errors, [], 'no uncaught error or console error')
})

test('a server that ignores range requests sends the whole blob, and the answers are the same', { timeout: 60_000 }, async () => {
  const plain = await open(SITE, { ranges: false })
  try {
    const ids = []
    for (const { page, url } of [chromium, plain]) {
      await page.goto(`${url}/index.html`)
      await page.waitForFunction(() => document.body.classList.contains('ready'))
      await page.fill('#q', QUERY)
      await answered(page)
      ids.push(await hitIds(page))
    }
    assert.equal(ids[1][0], EXPECTED)
    assert.deepEqual(ids[1], ids[0])
    const blob = blobRequests(plain.requests)
    assert.deepEqual(blob.map((r) => [r.status, r.bytes]), [[200, statSync(join(SITE, 'wiki.wdx')).size]])
    assert.doesNotMatch(await plain.page.textContent('#status'), /fetched/)
    assert.deepEqual(plain.errors, [])
  } finally {
    await plain.close()
  }
})

test('a blob that fails to load shows an error message, not a blank page', { timeout: 60_000 }, async () => {
  const { page, url } = chromium
  for (const blob of ['no-such-index.wdx', 'site.css']) {
    await page.goto(`${url}/index.html?blob=${blob}`)
    const error = page.locator('#error')
    await error.waitFor({ state: 'visible' })
    const text = await error.textContent()
    assert.match(text, /Search is unavailable/)
    assert.ok(text.includes(blob), text)
    assert.match(text, blob.endsWith('.wdx') ? /HTTP 404/ : /not_an_index/)
    assert.ok(await page.isDisabled('#q'))
    assert.ok((await page.locator('#browse li').count()) >= 40, 'the page list is still there')
  }
})
