// The search page: sends the query (on every keystroke) and the filters to the worker and
// draws what comes back. The core (in the worker's wasm module) ranks, filters, matches the
// word being typed as a prefix, cuts snippets and explains; this file only renders.
//
// `?blob=URL` loads another index blob than wiki.wdx (the tests point it at a broken one).
//
// The semantic toggle (when the site was built with a model): the first time it is turned on,
// the worker loads the model runner and the model (the toggle shows the bytes as they come);
// searches go on meanwhile with the lexical and token lanes, the status line showing the
// semantic lane as skipped, and the lane joins the next search once the model is ready.
import { pageHref } from './links.js'

const $ = (sel) => document.querySelector(sel)
const input = $('#q')
const status = $('#status')
const errorBox = $('#error')
const hitsList = $('#hits')
const alwaysBox = $('#always')
const browse = $('#browse')
const semanticBox = $('#semantic')
const semanticState = $('#semantic-state')

const blobParam = new URLSearchParams(location.search).get('blob')
const blobUrl = new URL(blobParam ?? 'wiki.wdx', location.href).href
// The site's own blob's head length, as the build wrote it: the worker's first request takes
// exactly the head. Another blob (`?blob=`) starts with ranged.js's default first request.
const headBytes = blobParam === null ? Number($('#blob-head')?.value) || null : null

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue
    if (k === 'class') e.className = v
    else if (k === 'text') e.textContent = v
    else e.setAttribute(k, v === true ? '' : v)
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) e.append(c)
  return e
}

function showError(message) {
  errorBox.hidden = false
  errorBox.replaceChildren(el('strong', { text: 'Search is unavailable. ' }), message)
  status.textContent = 'The index did not load; the page list below still works.'
  input.disabled = true
  document.body.classList.add('failed')
}

let worker
try {
  worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' })
} catch (e) {
  showError(`The search worker could not start: ${e.message}`)
}

let ready = false
let ranged = false // the blob is read in parts (range requests)
const kb = (bytes) => (bytes / 1024).toFixed(1)
let seq = 0
let shown = 0
let inFlight = false
let pending = false

function options() {
  const checked = (name) => [...document.querySelectorAll(`input[name=${name}]:checked`)].map((i) => i.value)
  return { limit: 20, explain: true, always: 'separate', facets: true, tags: checked('tag'), types: checked('type') }
}

/** Sends the current query; while one is in the worker, only the latest waits behind it. */
function search() {
  if (!ready) return
  if (inFlight) {
    pending = true
    return
  }
  const query = input.value
  if (!query.trim()) {
    seq++
    shown = seq
    render(null)
    return
  }
  inFlight = true
  worker.postMessage({ type: 'search', seq: ++seq, query, options: options(), semantic: semanticBox?.checked ?? false })
}

const mb = (n) => (n / 1e6).toFixed(1)

function semanticToggled() {
  if (semanticBox.checked && !semanticBox.dataset.state) {
    semanticBox.dataset.state = 'loading'
    semanticState.textContent = 'loading the model…'
    worker.postMessage({
      type: 'model',
      model: new URL(semanticBox.dataset.model, location.href).href,
      tokenizer: new URL(semanticBox.dataset.tokenizer, location.href).href,
      maxLength: Number(semanticBox.dataset.maxLength),
    })
  } else if (semanticBox.dataset.state === 'ready') {
    semanticState.textContent = semanticBox.checked ? 'on: all three lanes' : 'off: the lexical and token lanes'
  }
  search()
}

/** The snippet text with the core's highlights (UTF-16 offsets: JavaScript slices) marked. */
function snippet(s) {
  const p = el('p', { class: 'snippet' })
  let at = 0
  for (const h of [...s.highlights].sort((a, b) => a.start - b.start)) {
    if (h.start < at) continue
    p.append(s.text.slice(at, h.start), el('mark', { text: s.text.slice(h.start, h.end) }))
    at = h.end
  }
  p.append(s.text.slice(at))
  return p
}

const num = (x, digits = 4) => (x === null || x === undefined ? '–' : Number(x).toFixed(digits))

function why(hit) {
  const lanes = el(
    'table',
    { class: 'lanes' },
    el('thead', {}, el('tr', {}, ['lane', 'status', 'rank', 'lane score', 'RRF share'].map((h) => el('th', { text: h })))),
    el(
      'tbody',
      {},
      hit.lanes.map((l) =>
        el(
          'tr',
          { class: `lane lane-${l.lane} ${l.rank ? 'ranked' : 'unranked'}`, 'data-lane': l.lane },
          el('td', { text: l.lane }),
          el('td', { text: l.status }),
          el('td', { text: l.rank ?? '–' }),
          el('td', { text: num(l.score) }),
          el('td', { text: num(l.contribution, 5) }),
        ),
      ),
    ),
  )
  const terms = hit.explain?.lexical ?? []
  const bm25 = terms.length
    ? el(
        'table',
        { class: 'bm25' },
        el('thead', {}, el('tr', {}, ['BM25 term', 'tf', 'df', 'idf', 'score'].map((h) => el('th', { text: h })))),
        el('tbody', {}, terms.map((t) => el('tr', {}, el('td', {}, el('code', { text: t.term })), el('td', { text: t.tf }), el('td', { text: t.df }), el('td', { text: num(t.idf, 3) }), el('td', { text: num(t.score) })))),
      )
    : el('p', { class: 'none', text: 'No BM25 term matched this chunk (the other lanes found it).' })
  const other = hit.lanes.filter((l) => l.chunk).map((l) => el('li', {}, `${l.lane} ranked it by `, el('code', { text: l.chunk })))
  return el(
    'div',
    { class: 'why', hidden: true },
    el('p', {}, 'Fused score ', el('strong', { text: num(hit.score, 5) }), ` = the sum of each lane's weight / (k + rank), k = ${hit.explain?.k ?? '?'}; chunk `, el('code', { text: hit.chunk }), '.'),
    lanes,
    other.length ? el('ul', { class: 'lane-chunks' }, other) : null,
    bm25,
  )
}

function hitItem(hit, rank) {
  const panel = why(hit)
  const toggle = el('button', { class: 'why-toggle', type: 'button', 'aria-expanded': 'false', text: 'why?' })
  toggle.addEventListener('click', () => {
    panel.hidden = !panel.hidden
    toggle.setAttribute('aria-expanded', String(!panel.hidden))
    toggle.textContent = panel.hidden ? 'why?' : 'hide why'
  })
  return el(
    'li',
    { class: 'hit', 'data-page': hit.page_id },
    el(
      'div',
      { class: 'hit-head' },
      rank ? el('span', { class: 'rank', text: rank }) : null,
      el('a', { class: 'hit-title', href: `${pageHref(hit.page_id)}#${encodeURIComponent(hit.chunk)}`, text: hit.title }),
      hit.type ? el('span', { class: 'type', text: hit.type }) : null,
      hit.scope !== 'global' ? el('span', { class: 'scope', text: hit.scope }) : null,
      hit.stale_since ? el('span', { class: 'stale', text: `stale since ${hit.stale_since}` }) : null,
      toggle,
    ),
    hit.summary ? el('p', { class: 'hit-summary', text: hit.summary }) : null,
    hit.snippet ? snippet(hit.snippet) : null,
    el('div', { class: 'tags' }, hit.tags.map((t) => el('span', { class: 'tag', text: t }))),
    panel,
  )
}

/** Each filter's count: the core's facet count over every page the query matches (within
 * the filters), or with no query the site's total. */
function counts(facets) {
  for (const label of document.querySelectorAll('.filters label.filter')) {
    const box = label.querySelector('input')
    const shown = label.querySelector('.count')
    shown.dataset.total ??= shown.textContent
    if (!facets) {
      shown.textContent = shown.dataset.total
      label.classList.remove('empty')
      continue
    }
    const list = box.name === 'tag' ? facets.tags : facets.types
    const n = list.find((c) => c.value === box.value)?.count ?? 0
    shown.textContent = String(n)
    label.classList.toggle('empty', n === 0)
  }
}

function render(msg) {
  counts(msg?.results?.facets ?? null)
  if (!msg) {
    hitsList.replaceChildren()
    delete hitsList.dataset.query
    alwaysBox.hidden = true
    browse.hidden = false
    status.textContent = 'Type to search; every keystroke searches, the word being typed counts as a prefix.'
    return
  }
  const r = msg.results
  browse.hidden = true
  hitsList.replaceChildren(...r.hits.map((h, i) => hitItem(h, i + 1)))
  hitsList.dataset.query = r.query
  alwaysBox.hidden = r.always.length === 0
  alwaysBox.replaceChildren(el('h2', { text: 'Always shown' }), el('ol', { class: 'hits' }, r.always.map((h) => hitItem(h, null))))
  const lanes = r.lanes.map((l) => `${l.lane} ${l.status}${l.reason ? ` (${l.reason})` : ''}`).join(' · ')
  const none = r.terms.length ? 'No page matches.' : 'Only stopwords: nothing to search for.'
  const fetched = ranged ? ` · ${kb(msg.fetched)} KB of the index fetched` : ''
  status.textContent = `${r.hits.length ? `${r.hits.length} result${r.hits.length === 1 ? '' : 's'}` : none} · terms: ${r.terms.join(' ') || '–'} · ${lanes} · ${msg.ms.toFixed(1)} ms${fetched}`
}

if (worker) {
  worker.onmessage = ({ data }) => {
    if (data.type === 'ready') {
      ready = true
      document.body.classList.add('ready')
      ranged = data.ranged
      const parts = ranged ? ` (read in parts as searches need them: ${kb(data.fetched)} KB so far)` : ''
      status.textContent = `Index loaded: ${data.pages} pages, ${data.chunks} chunks${parts}. Type to search.`
      if (input.value) search()
    } else if (data.type === 'model-progress') {
      semanticState.textContent = `loading the model: ${mb(data.loaded)}${data.total ? ` of ${mb(data.total)}` : ''} MB`
    } else if (data.type === 'model-ready') {
      semanticBox.dataset.state = 'ready'
      semanticState.textContent = semanticBox.checked ? `on: all three lanes (model loaded in ${(data.ms / 1000).toFixed(1)} s)` : 'off: the lexical and token lanes'
      search()
    } else if (data.type === 'model-error') {
      delete semanticBox.dataset.state
      semanticBox.checked = false
      semanticState.textContent = `the model did not load: ${data.message}${data.code ? ` (${data.code})` : ''}`
      semanticState.classList.add('failed')
    } else if (data.type === 'error') {
      showError(`The index could not be loaded from ${data.url}: ${data.message}${data.code ? ` (${data.code})` : ''}.`)
    } else if (data.type === 'results' || data.type === 'search-error') {
      inFlight = false
      if (data.seq > shown) {
        shown = data.seq
        if (data.type === 'results') render(data)
        else status.textContent = `Search failed: ${data.message}${data.code ? ` (${data.code})` : ''}`
      }
      if (pending) {
        pending = false
        search()
      }
    }
  }
  worker.onerror = (e) => {
    e.preventDefault()
    showError(`The search worker failed: ${e.message || 'its module did not load'}.`)
  }
  worker.postMessage({ type: 'load', url: blobUrl, headBytes })
}
input.addEventListener('input', search)
for (const box of document.querySelectorAll('.filters input')) box.addEventListener('change', search)
semanticBox?.addEventListener('change', semanticToggled)
