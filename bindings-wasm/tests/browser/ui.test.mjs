// The search UI (bindings-wasm/ui) in headless Chromium, in the bundle `wikidex site` writes for
// examples/wiki as an MkDocs site served from a subpath (/docs/). A page with the two-line
// snippet searches as the user types, links each hit to its built page under /docs/, keeps the
// ARIA combobox's state, narrows by tag and type, opens the why panel, fits a phone's width and
// follows the active hit on Enter; `new WikidexUI` does the same with its options; a broken
// bundle shows its error's code in the component, and a page opened from a file says that
// search needs HTTP. `WIKIDEX_BIN` is the CLI (default target/debug/wikidex).
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { gzipSync } from 'node:zlib'
import { open, ROOT } from './chromium.mjs'

const BIN = process.env.WIKIDEX_BIN ?? join(ROOT, 'target', 'debug', 'wikidex')
const UI = join(ROOT, 'bindings-wasm', 'ui')
/** What `wikidex site` copies of the UI's folder: all but its docs and declarations. */
const SHIPPED = readdirSync(UI).filter((f) => !f.endsWith('.md') && !f.endsWith('.d.ts'))
const QUERY = 'nightly job crash'
/** A query the semantic lane ranks differently: its words are not the pages'. */
const SEMANTIC = 'overnight scheduled task broke'
let semanticFirst
/** The built page (MkDocs' URL rule) of the page the query should find first. */
const EXPECTED = '/docs/global/answer_why_nightly_crashed_2024_03_12/'

const snippet = (prefix) => `<!doctype html>
<html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Docs</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="${prefix}wikidex/ui.css">
<script type="module" src="${prefix}wikidex/ui.js"></script>
<body><main>
<wikidex-search placeholder="Search the docs"></wikidex-search>
</main></body></html>
`

let tmp
let chromium
let site

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'wikidex-ui-'))
  const docs = join(tmp, 'docs')
  execFileSync(BIN, ['site', join(ROOT, 'examples', 'wiki'), '--out', docs, '--layout', 'mkdocs'], { stdio: ['ignore', 'ignore', 'pipe'] })
  const bundle = join(docs, 'wikidex')
  for (const f of ['site.json', 'wikidex_wasm.js', 'wikidex_wasm_bg.wasm', 'ranged.js', ...SHIPPED]) {
    assert.ok(existsSync(join(bundle, f)), `wikidex site wrote no ${f}`)
  }
  // The binary carries the UI as it was when the binary was built: the test runs the
  // checkout's, so that an edit to ui/ is tested without building the CLI again.
  for (const f of SHIPPED) cpSync(join(UI, f), join(bundle, f))
  site = JSON.parse(readFileSync(join(bundle, 'site.json'), 'utf8'))
  assert.ok(existsSync(join(bundle, site.blob)), `no blob ${site.blob}`)

  // The site's pages (each with an icon, or Chromium asks for /favicon.ico): one in a subfolder
  // with the snippet's absolute URLs, the root page with relative ones (which a page opened
  // from a file resolves too), the hit Enter follows.
  mkdirSync(join(docs, 'guide'))
  writeFileSync(join(docs, 'guide', 'index.html'), snippet('/docs/'))
  writeFileSync(join(docs, 'index.html'), snippet(''))
  mkdirSync(join(tmp, EXPECTED), { recursive: true })
  writeFileSync(join(tmp, EXPECTED, 'index.html'), '<!doctype html><title>Answer</title><link rel="icon" href="data:,"><h1 id="why-did-the-nightly-job-crash-on-2024-03-12">Why</h1>')
  writeFileSync(
    join(docs, 'api.html'),
    `<!doctype html><meta charset="utf-8"><title>API</title><link rel="icon" href="data:,"><link rel="stylesheet" href="wikidex/ui.css">
<div id="search"></div>
<script type="module">
import { WikidexUI } from './wikidex/ui.js'
window.ui = new WikidexUI({ element: '#search', limit: 2, placeholder: 'Find' })
window.ui.search(${JSON.stringify(QUERY)})
</script>`,
  )
  // Broken bundles, each named by a component's `bundle` attribute: the blob missing, the
  // module's wasm not wasm, no bundle at all, a bundle on the file system.
  cpSync(bundle, join(tmp, 'broken', 'no-blob'), { recursive: true })
  rmSync(join(tmp, 'broken', 'no-blob', site.blob))
  cpSync(bundle, join(tmp, 'broken', 'bad-wasm'), { recursive: true })
  writeFileSync(join(tmp, 'broken', 'bad-wasm', 'wikidex_wasm_bg.wasm'), 'not wasm')
  writeFileSync(
    join(docs, 'broken.html'),
    `<!doctype html><meta charset="utf-8"><title>Broken</title><link rel="icon" href="data:,"><link rel="stylesheet" href="wikidex/ui.css">
<script type="module" src="wikidex/ui.js"></script>
<wikidex-search id="no-blob" bundle="/broken/no-blob/"></wikidex-search>
<wikidex-search id="bad-wasm" bundle="/broken/bad-wasm"></wikidex-search>
<wikidex-search id="nowhere" bundle="/nowhere/"></wikidex-search>
<wikidex-search id="file" bundle="file:///nowhere/"></wikidex-search>`,
  )
  // A bundle with a model (int8 MiniLM, as its package ships it) for the semantic toggle.
  const model = join(tmp, 'model')
  mkdirSync(model)
  symlinkSync(join(ROOT, 'models', 'all-MiniLM-L6-v2', 'model-int8.onnx'), join(model, 'model.onnx'))
  symlinkSync(join(ROOT, 'models', 'all-MiniLM-L6-v2', 'tokenizer.json'), join(model, 'tokenizer.json'))
  const sem = join(tmp, 'sem')
  execFileSync(BIN, ['site', join(ROOT, 'examples', 'wiki'), '--out', sem, '--layout', 'mkdocs', '--model', model], { stdio: ['ignore', 'ignore', 'pipe'] })
  for (const f of SHIPPED) cpSync(join(UI, f), join(sem, 'wikidex', f))
  writeFileSync(join(sem, 'index.html'), snippet('/sem/'))
  // What the native search ranks first for SEMANTIC, with the model and without it.
  const first = (...args) =>
    JSON.parse(execFileSync(BIN, ['search', join(sem, 'wikidex', 'wikidex.wdx'), SEMANTIC, '--json', ...args], { encoding: 'utf8' })).hits[0].page_id
  semanticFirst = { on: first('--model', model), off: first('--lanes', 'lexical,token') }
  chromium = await open(tmp)
})

after(async () => {
  await chromium?.close()
  if (tmp) rmSync(tmp, { recursive: true, force: true })
})

const INPUT = 'wikidex-search input.wikidex-input'
const OPTIONS = 'wikidex-search [role=listbox] > [role=option]'

/** Waits until the hits drawn answer exactly the text in the box. */
const answered = (page, scope = 'wikidex-search') =>
  page.waitForFunction((scope) => {
    const root = document.querySelector(scope)
    const list = root.querySelector('[role=listbox]')
    return list.dataset.query !== undefined && list.dataset.query === root.querySelector('input').value
  }, scope)

const hrefs = (page) => page.$$eval(`${OPTIONS} a.wikidex-title`, (as) => as.map((a) => a.href))
const aria = (page) =>
  page.evaluate(() => {
    const input = document.querySelector('wikidex-search input')
    const options = [...document.querySelectorAll('wikidex-search [role=option]')]
    return {
      expanded: input.getAttribute('aria-expanded'),
      active: input.getAttribute('aria-activedescendant'),
      selected: options.filter((o) => o.getAttribute('aria-selected') === 'true').map((o) => o.id),
      ids: options.map((o) => o.id),
      focused: document.activeElement === input,
      listHidden: document.querySelector('wikidex-search [role=listbox]').hidden,
    }
  })

test('the search box of a site served from a subpath', { timeout: 120_000 }, async (t) => {
  const { page, url, errors, requests } = chromium
  await page.goto(`${url}/docs/guide/`)
  // site.json alone loads with the page: its tags and types are the filters.
  await page.locator('wikidex-search .wikidex-filters').waitFor()
  assert.deepEqual(
    requests.filter((r) => /\.(wdx|wasm)$|worker\.js$/.test(r.path)),
    [],
    'the index, the module and the worker wait for the box to be used',
  )

  await t.test('typing key by key lists the expected page first, linked under /docs/', async () => {
    await page.locator(INPUT).pressSequentially(QUERY)
    await answered(page)
    const links = await hrefs(page)
    assert.ok(links.length > 3, links.join('\n'))
    assert.ok(links[0].startsWith(`${url}${EXPECTED}`), links[0])
    // Every hit links into the site's root, /docs/ (site.json's root, `../` from the bundle),
    // not the folder of the page searching; a hit under a section has its heading's anchor.
    for (const l of links) assert.ok(l.startsWith(`${url}/docs/`) && !l.startsWith(`${url}/docs/guide/`), l)
    assert.ok(links.some((l) => /\/#[a-z0-9-]+$/.test(l)), links.join('\n'))
    const first = page.locator(OPTIONS).first()
    assert.match(await first.locator('.wikidex-title').textContent(), /nightly job crash/i)
    assert.match(await first.locator('.wikidex-headings').textContent(), /Why did the nightly job crash/)
    const marks = await page.$$eval(`${OPTIONS} .wikidex-snippet mark`, (ms) => ms.map((m) => m.textContent.toLowerCase()))
    assert.ok(marks.some((m) => m.startsWith('nightly') || m.startsWith('crash')), `highlights: ${marks}`)
    assert.deepEqual(await first.locator('.wikidex-tag').allTextContents(), ['answer', 'nightly', 'incident'])
    assert.equal(await first.locator('.wikidex-type').textContent(), 'topic')
  })

  await t.test('the blob is read by range requests, its head exactly first', async () => {
    const blob = requests.filter((r) => r.path === `/docs/wikidex/${site.blob}`)
    assert.ok(blob.length >= 2, JSON.stringify(blob))
    assert.ok(blob.every((r) => r.status === 206), JSON.stringify(blob))
    assert.equal(blob[0].bytes, site.head_end)
  })

  await t.test('the combobox: ARIA state, arrow keys, Escape; the focus stays in the box', async () => {
    const input = page.locator(INPUT)
    assert.equal(await input.getAttribute('role'), 'combobox')
    const listId = await input.getAttribute('aria-controls')
    assert.equal(await page.getAttribute(`#${listId}`, 'role'), 'listbox')
    assert.equal(await page.locator(`#${listId}`).evaluate((l) => l.closest('wikidex-search') !== null), true)
    const status = page.locator('wikidex-search [role=status]')
    assert.equal(await status.getAttribute('aria-live'), 'polite')
    const n = await page.locator(OPTIONS).count()
    assert.equal(await status.textContent(), `${n} results`)

    let s = await aria(page)
    assert.deepEqual([s.expanded, s.active, s.selected], ['true', null, []])
    await input.press('ArrowDown')
    s = await aria(page)
    assert.deepEqual([s.active, s.selected, s.focused], [s.ids[0], [s.ids[0]], true])
    await input.press('ArrowDown')
    await input.press('ArrowDown')
    await input.press('ArrowUp')
    s = await aria(page)
    assert.deepEqual([s.active, s.selected, s.focused], [s.ids[1], [s.ids[1]], true])
    // Up from the first wraps to the last.
    await input.press('ArrowUp')
    await input.press('ArrowUp')
    assert.deepEqual((await aria(page)).selected, [s.ids.at(-1)])

    await input.press('Escape')
    s = await aria(page)
    assert.deepEqual([s.expanded, s.active, s.selected, s.listHidden], ['false', null, [], true])
    assert.equal(await input.inputValue(), QUERY)
    await input.press('ArrowDown')
    s = await aria(page)
    assert.deepEqual([s.expanded, s.active, s.listHidden], ['true', s.ids[0], false])
    await input.press('Escape')
    await input.press('Escape')
    assert.equal(await input.inputValue(), '')
    s = await aria(page)
    assert.deepEqual([s.expanded, s.ids], ['false', []])
    assert.equal(await status.textContent(), '')
    await input.pressSequentially(QUERY)
    await answered(page)
  })

  await t.test('tag and type filters narrow the results', async () => {
    const all = await hrefs(page)
    await page.click('wikidex-search .wikidex-filters summary')
    const chip = (group, value) => page.locator(`wikidex-search [role=group][aria-label=${group}] button`, { hasText: new RegExp(`^${value}$`) })
    const only = async (cls, value) => {
      await page.waitForFunction(
        ([sel, cls, value]) => {
          const hits = [...document.querySelectorAll(sel)]
          return hits.length > 0 && hits.every((h) => [...h.querySelectorAll(cls)].some((t) => t.textContent === value))
        },
        [OPTIONS, cls, value],
      )
      return hrefs(page)
    }
    await chip('Tags', 'runbook').click()
    assert.equal(await chip('Tags', 'runbook').getAttribute('aria-pressed'), 'true')
    assert.match(await page.textContent('wikidex-search .wikidex-filters summary'), /Filters \(1\)/)
    const runbooks = await only('.wikidex-tag', 'runbook')
    assert.ok(runbooks.length < all.length, `${runbooks.length} of ${all.length}`)
    await chip('Tags', 'runbook').click()
    await page.waitForFunction(([sel, n]) => document.querySelectorAll(sel).length === n, [OPTIONS, all.length])
    await chip('Type', 'incident').click()
    const incidents = await only('.wikidex-type', 'incident')
    assert.ok(incidents.length < all.length, `${incidents.length} of ${all.length}`)
    await chip('Type', 'incident').click()
    await page.waitForFunction(([sel, n]) => document.querySelectorAll(sel).length === n, [OPTIONS, all.length])
    assert.deepEqual(await hrefs(page), all)
  })

  await t.test('the why panel shows the lanes and the lexical term scores', async () => {
    await page.focus(INPUT)
    const first = page.locator(OPTIONS).first()
    const toggle = first.locator('.wikidex-why-toggle')
    assert.equal(await toggle.getAttribute('aria-expanded'), 'false')
    await toggle.click()
    assert.equal(await toggle.getAttribute('aria-expanded'), 'true')
    const why = page.locator(`#${await toggle.getAttribute('aria-controls')}`)
    await why.waitFor({ state: 'visible' })
    const lanes = await why.locator('table.wikidex-lanes tbody tr').evaluateAll((rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)))
    assert.deepEqual(lanes.map((r) => r[0]), ['lexical', 'semantic', 'token'])
    assert.equal(lanes[0][1], 'ok')
    assert.match(lanes[0][2], /^\d+$/, 'the lexical lane ranked it')
    // The term scores are asked for when the panel first opens.
    await why.locator('table.wikidex-terms').waitFor()
    const terms = await why.locator('table.wikidex-terms tbody td:first-child').allTextContents()
    assert.ok(terms.includes('crash'), terms.join(' '))
    // A press on the toggle kept the focus in the box; a second one closes the panel.
    assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('wikidex-input')), true)
    await toggle.click()
    assert.ok(await why.isHidden())
  })

  await t.test('on a phone: the full width, tap targets of 40 px or more', async () => {
    await page.setViewportSize({ width: 375, height: 740 })
    try {
      const sizes = await page.evaluate(() => {
        const box = (e) => e.getBoundingClientRect()
        const root = document.querySelector('wikidex-search')
        const targets = [...root.querySelectorAll('input, button, summary, .wikidex-title')].filter((e) => box(e).width > 0)
        return {
          page: document.documentElement.scrollWidth,
          root: box(root).width,
          list: box(root.querySelector('[role=listbox]')).width,
          small: targets.filter((e) => box(e).height < 40).map((e) => `${e.className || e.tagName}: ${box(e).height}`),
          targets: targets.length,
        }
      })
      assert.ok(sizes.page <= 375, `the page scrolls sideways: ${sizes.page}`)
      assert.equal(sizes.list, sizes.root)
      assert.ok(sizes.targets > 10)
      assert.deepEqual(sizes.small, [])
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 })
    }
  })

  await t.test('ArrowDown then Enter follows the first hit', async () => {
    const [href] = await hrefs(page)
    const input = page.locator(INPUT)
    await input.press('ArrowDown')
    await Promise.all([page.waitForURL(href), input.press('Enter')])
    assert.ok(page.url().startsWith(`${url}${EXPECTED}`), page.url())
  })

  assert.deepEqual(errors, [], 'no uncaught error or console error')
})

test('the semantic toggle loads the bundle\'s model when turned on and ranks as native', { timeout: 240_000 }, async (t) => {
  const { page, url, errors, requests } = chromium
  const list = 'wikidex-search [role=listbox]'
  const first = () => page.$eval(`${OPTIONS}:first-child`, (li) => li.dataset.page)

  await t.test('a bundle without a model offers no toggle', async () => {
    await page.goto(`${url}/docs/guide/`)
    await page.locator('wikidex-search .wikidex-filters').waitFor()
    assert.ok(await page.locator('wikidex-search .wikidex-semantic').isHidden())
  })

  await page.goto(`${url}/sem/`)
  const toggle = page.locator('wikidex-search .wikidex-semantic')
  await toggle.waitFor()
  assert.equal(await toggle.getAttribute('aria-pressed'), 'false')
  await page.locator(INPUT).fill(SEMANTIC)
  await answered(page)

  await t.test('off: the lexical lanes rank, and nothing of the model loads', async () => {
    assert.equal(await page.$eval(list, (l) => l.dataset.semantic), 'false')
    assert.equal(await first(), semanticFirst.off)
    assert.deepEqual(requests.filter((r) => r.path.startsWith('/sem/wikidex/semantic/')), [])
  })

  await t.test('on: the model loads once, the query is embedded, the first hit is native\'s', async () => {
    assert.notEqual(semanticFirst.on, semanticFirst.off, 'the query tells the two apart')
    await toggle.click()
    assert.equal(await toggle.getAttribute('aria-pressed'), 'true')
    await page.waitForFunction((sel) => document.querySelector(sel).dataset.semantic === 'true', list, { timeout: 180_000 })
    assert.equal(await first(), semanticFirst.on)
    const loaded = requests.filter((r) => r.path.startsWith('/sem/wikidex/semantic/')).map((r) => r.path).sort()
    assert.deepEqual(loaded, ['/sem/wikidex/semantic/model.onnx', '/sem/wikidex/semantic/tokenizer.json', '/sem/wikidex/semantic/wikidex_wasm.js', '/sem/wikidex/semantic/wikidex_wasm_bg.wasm'])
    const why = page.locator(`${OPTIONS}:first-child .wikidex-why-toggle`)
    await why.click()
    const panel = page.locator(`#${await why.getAttribute('aria-controls')}`)
    await panel.locator('table.wikidex-terms').waitFor()
    const lanes = await panel.locator('table.wikidex-lanes tbody tr').evaluateAll((rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)))
    const semantic = lanes.find((r) => r[0] === 'semantic')
    assert.equal(semantic?.[1], 'ok', JSON.stringify(lanes))
    assert.match(semantic[2], /^\d+$/)
  })

  await t.test('off again: the lexical ranking comes back, the model stays loaded', async () => {
    await toggle.click()
    await page.waitForFunction((sel) => document.querySelector(sel).dataset.semantic === 'false', list)
    assert.equal(await first(), semanticFirst.off)
    assert.equal(requests.filter((r) => r.path === '/sem/wikidex/semantic/model.onnx').length, 1)
  })
  assert.deepEqual(errors, [], 'no uncaught error or console error in the page')
})

test('new WikidexUI({ element, limit }) from a module script', { timeout: 60_000 }, async () => {
  const { page, url, errors } = chromium
  await page.goto(`${url}/docs/api.html`)
  await answered(page, '#search')
  const links = await page.$$eval('#search [role=option] a', (as) => as.map((a) => a.href))
  assert.equal(links.length, 2)
  assert.ok(links[0].startsWith(`${url}${EXPECTED}`), links[0])
  assert.equal(await page.getAttribute('#search input', 'placeholder'), 'Find')
  assert.equal(await page.textContent('#search [role=status]'), '2 results')
  assert.deepEqual(errors, [])
})

test('a broken bundle shows its error and code in the component', { timeout: 60_000 }, async () => {
  const { page, url } = chromium
  await page.goto(`${url}/docs/broken.html`)
  const error = async (id, focus = true) => {
    if (focus) await page.focus(`#${id} input`)
    const box = page.locator(`#${id} [role=alert]`)
    await box.waitFor({ state: 'visible' })
    return box.textContent()
  }
  // site.json is read with the page: a bundle that is not there says so before any use.
  const nowhere = await error('nowhere', false)
  assert.match(nowhere, /Search is unavailable/)
  assert.match(nowhere, /\/nowhere\/site\.json: HTTP 404/)
  assert.match(nowhere, /http$/)
  assert.ok(await page.isDisabled('#nowhere input'))
  const noBlob = await error('no-blob')
  assert.match(noBlob, new RegExp(`/broken/no-blob/${site.blob}: HTTP 404`))
  assert.match(noBlob, /http$/)
  assert.match(await error('bad-wasm'), /wasm$/)
  assert.match(await error('file', false), /Search needs the site served over HTTP: .* python3 -m http\.server/)
  assert.equal(await page.locator('#file code').textContent(), 'python3 -m http.server')
})

test('a page opened from a file says that search needs HTTP', { timeout: 60_000 }, async () => {
  const { page } = chromium
  // Browsers refuse module scripts to a page opened from a file: ui.js never runs, and ui.css
  // says why in the element it could not define.
  await page.goto(pathToFileURL(join(tmp, 'docs', 'index.html')).href)
  await page.waitForFunction(() => {
    const style = getComputedStyle(document.querySelector('wikidex-search'), '::before')
    return style.content.includes('serve the folder over HTTP') && parseFloat(style.fontSize) > 0
  })
  const content = await page.evaluate(() => getComputedStyle(document.querySelector('wikidex-search'), '::before').content)
  assert.match(content, /Search did not start\. Opened from a file\? .*serve the folder over HTTP, e\.g\. python3 -m http\.server/)
})

test('the shipped UI stays under 10 KB gzipped', () => {
  const sizes = Object.fromEntries(SHIPPED.map((f) => [f, gzipSync(readFileSync(join(UI, f)), { level: 9 }).length]))
  assert.deepEqual(Object.keys(sizes).sort(), ['ui.css', 'ui.js', 'worker.js'])
  const total = Object.values(sizes).reduce((a, b) => a + b, 0)
  assert.ok(total < 10 * 1024, JSON.stringify(sizes))
})
