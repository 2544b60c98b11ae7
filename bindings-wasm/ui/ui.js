// The search UI a static site drops into a page (`wikidex site` copies it into the bundle
// folder beside the index and the wasm search module):
//
//   <link rel="stylesheet" href="/wikidex/ui.css">
//   <script type="module" src="/wikidex/ui.js"></script>
//   <wikidex-search></wikidex-search>
//
// or `new WikidexUI({ element: '#search' })`. The bundle is the folder this file is in, unless
// `bundle` names another, so a site served from a subpath needs no setting. The worker
// (worker.js) runs the search module: ranking, filters, prefixes, snippets, explanations and
// each hit's URL come from the core; this file only draws them, with DOM nodes built from the
// text (never innerHTML: the text is the pages').
//
// Nothing loads until the search box is first focused or typed in, except site.json (small:
// the filters are drawn from it, and a broken bundle shows its error at once). A hit's term
// scores load when its why panel first opens; the model, when the semantic toggle (offered
// when the bundle has one) is first turned on.

const HERE = new URL('./', import.meta.url)
const FILE = 'Search needs the site served over HTTP: browsers do not let a page opened from a file load the index. Serve the folder, e.g. '
let made = 0

function el(tag, cls, text) {
  const e = document.createElement(tag)
  if (cls) e.className = cls
  if (text !== undefined && text !== null) e.textContent = text
  return e
}

const attrs = (e, map) => {
  for (const [k, v] of Object.entries(map)) e.setAttribute(k, v)
  return e
}

/** An Error-like record `{ code, message }` from anything thrown. */
const coded = (e, code) => ({ code: e?.code ?? code, message: String(e?.message ?? e) })

/** The search box, its filters and its results, drawn into `element`. */
export class WikidexUI {
  constructor({ element, bundle, placeholder = 'Search', limit } = {}) {
    const host = typeof element === 'string' ? document.querySelector(element) : element
    if (!host) throw new Error(`WikidexUI: no element ${element}`)
    const folder = bundle === undefined ? HERE.href : String(bundle)
    this.element = host
    this.bundle = new URL(folder.endsWith('/') ? folder : folder + '/', document.baseURI)
    this.limit = limit
    this.id = `wikidex-${++made}`
    this.worker = null
    this.ready = false
    this.failed = false
    // Latest-only, as the docs site's search.js: while a search is in the worker, only the
    // newest text waits behind it, and an answer older than the one drawn is dropped.
    this.seq = 0
    this.shown = 0
    this.inFlight = false
    this.pending = false
    this.active = -1
    this.tags = new Set()
    this.types = new Set()
    // The semantic toggle's state, and whether the model has answered once.
    this.semantic = false
    this.modelReady = false
    // The search the shown hits answer (the why panel asks it again, with explanations), and
    // the why panels waiting for theirs.
    this.asked = null
    this.drawn = null
    this.explains = new Map()

    this.input = attrs(el('input', 'wikidex-input'), {
      type: 'search',
      role: 'combobox',
      'aria-autocomplete': 'list',
      'aria-expanded': 'false',
      'aria-controls': `${this.id}-list`,
      'aria-label': placeholder,
      autocomplete: 'off',
      spellcheck: 'false',
      placeholder,
    })
    this.meaning = attrs(el('button', 'wikidex-chip wikidex-semantic', 'By meaning'), { type: 'button', 'aria-pressed': 'false' })
    this.meaning.hidden = true
    this.meaning.addEventListener('click', () => this.setSemantic(!this.semantic))
    this.filters = el('div', 'wikidex-filters')
    this.filters.hidden = true
    this.error = attrs(el('div', 'wikidex-error'), { role: 'alert' })
    this.error.hidden = true
    this.status = attrs(el('div', 'wikidex-status'), { role: 'status', 'aria-live': 'polite' })
    this.list = attrs(el('ul', 'wikidex-results'), { role: 'listbox', id: `${this.id}-list`, 'aria-label': 'Search results' })
    this.list.hidden = true
    const box = attrs(el('div', 'wikidex'), { role: 'search' })
    box.append(this.input, this.meaning, this.filters, this.error, this.status, this.list)
    host.replaceChildren(box)

    const start = () => this.start()
    this.input.addEventListener('focus', start)
    this.input.addEventListener('input', () => {
      this.start()
      this.search()
    })
    this.input.addEventListener('keydown', (e) => this.key(e))
    // A press on a button in the list keeps the focus in the box (the combobox keeps it).
    this.list.addEventListener('mousedown', (e) => {
      if (e.target.closest('button')) e.preventDefault()
    })
    this.list.addEventListener('click', (e) => {
      const t = e.target.closest('button, a, .wikidex-why')
      if (t?.matches('button')) this.why(t)
      else if (!t) e.target.closest('[role=option]')?.querySelector('a').click()
    })

    if (this.bundle.protocol === 'file:') {
      this.fail('file', FILE)
      return
    }
    this.site = fetch(new URL('site.json', this.bundle))
      .catch((e) => Promise.reject(coded(e, 'network')))
      .then((res) => {
        if (!res.ok) throw { code: 'http', message: `${res.url}: HTTP ${res.status} ${res.statusText}`.trim() }
        return res.json().catch((e) => Promise.reject(coded(e, 'site_json')))
      })
    this.site.then(
      (site) => {
        this.drawFilters(site)
        this.offerSemantic(site.semantic)
      },
      (e) => this.fail(e.code, e.message),
    )
  }

  /** Starts the worker, once (on the first focus or keystroke). */
  start() {
    if (this.worker || this.failed) return
    let worker
    try {
      worker = this.worker = new Worker(new URL('worker.js', this.bundle), { type: 'module' })
    } catch (e) {
      return this.fail(e.name ?? 'worker', e.message)
    }
    worker.onmessage = ({ data }) => this.receive(data)
    worker.onerror = (e) => {
      e.preventDefault()
      this.fail('worker', `the search worker (${new URL('worker.js', this.bundle)}) did not start${e.message ? ': ' + e.message : ''}`)
    }
    this.site.then((site) => worker.postMessage({ type: 'open', site }), () => {})
  }

  /** Searches for `query` as if it were typed. */
  search(query) {
    if (query !== undefined) {
      this.input.value = query
      this.start()
    }
    if (!this.ready) {
      if (this.input.value.trim() && !this.failed) this.say('Loading the index…')
      return
    }
    if (this.inFlight) {
      this.pending = true
      return
    }
    const text = this.input.value
    if (!text.trim()) {
      this.shown = ++this.seq
      return this.render(null)
    }
    this.inFlight = true
    const options = { tags: [...this.tags], types: [...this.types] }
    if (this.limit) options.limit = this.limit
    this.asked = { query: text, options, semantic: this.semantic }
    if (this.semantic && !this.modelReady) this.say(`Loading the model (${mb(this.semanticBytes)})…`)
    this.worker.postMessage({ type: 'search', id: ++this.seq, ...this.asked })
  }

  /** Turns searching by meaning (the semantic lane, with the bundle's model) on or off. */
  setSemantic(on) {
    if (this.meaning.hidden || on === this.semantic) return
    this.semantic = on
    this.meaning.setAttribute('aria-pressed', String(on))
    this.start()
    this.search()
  }

  /** Shows the semantic toggle when the bundle has a model. */
  offerSemantic(semantic) {
    if (!semantic) return
    this.semanticBytes = semantic.bytes
    this.meaning.title = `Also rank by meaning, with the model ${semantic.model_id} (${mb(semantic.bytes)}, loaded the first time)`
    this.meaning.hidden = false
  }

  /** Stops the worker and empties the element. */
  destroy() {
    this.worker?.terminate()
    this.worker = null
    this.failed = true
    this.element.replaceChildren()
  }

  receive(data) {
    if (data.type === 'explained') return this.explained(data)
    if (data.type === 'ready') {
      this.ready = true
      this.say('')
      this.search()
    } else if (data.type === 'error') {
      this.fail(data.code, data.message)
    } else {
      this.inFlight = false
      if (data.id > this.shown) {
        this.shown = data.id
        if (data.type === 'results') {
          if (data.semantic) this.modelReady = true
          this.drawn = this.asked
          this.render(data)
        } else this.say(`Search failed: ${data.message} (${data.code})`)
      }
      if (this.pending) {
        this.pending = false
        this.search()
      }
    }
  }

  fail(code, message) {
    this.failed = true
    this.worker?.terminate()
    this.input.disabled = true
    this.say('')
    this.error.hidden = false
    if (code === 'file') this.error.replaceChildren(message, el('code', null, 'python3 -m http.server'), '.')
    else this.error.replaceChildren(el('strong', null, 'Search is unavailable. '), `${message} `, el('code', 'wikidex-code', code))
  }

  say(text) {
    if (this.status.textContent !== text) this.status.textContent = text
  }

  drawFilters({ tags = [], types = [] }) {
    const summary = el('summary', null, 'Filters')
    const count = () => {
      const n = this.tags.size + this.types.size
      summary.textContent = n ? `Filters (${n})` : 'Filters'
    }
    const group = (label, values, chosen) => {
      const g = attrs(el('div', 'wikidex-group'), { role: 'group', 'aria-label': label })
      g.append(el('span', 'wikidex-group-label', label))
      for (const value of values) {
        const chip = attrs(el('button', 'wikidex-chip', value), { type: 'button', 'aria-pressed': 'false' })
        chip.addEventListener('click', () => {
          if (!chosen.delete(value)) chosen.add(value)
          chip.setAttribute('aria-pressed', String(chosen.has(value)))
          count()
          this.start()
          this.search()
        })
        g.append(chip)
      }
      return g
    }
    const details = el('details')
    details.append(summary)
    if (types.length) details.append(group('Type', types, this.types))
    if (tags.length) details.append(group('Tags', tags, this.tags))
    if (details.childElementCount === 1) return
    this.filters.replaceChildren(details)
    this.filters.hidden = false
  }

  render(msg) {
    this.move(-1)
    const hits = msg?.results.hits ?? []
    this.list.replaceChildren(...hits.map((h, i) => this.option(h, msg.urls[i], msg.trails[i], i)))
    this.list.dataset.query = msg?.results.query ?? ''
    this.list.dataset.semantic = String(!!msg?.semantic)
    this.open(hits.length > 0)
    this.say(!msg ? '' : hits.length ? `${hits.length} result${hits.length === 1 ? '' : 's'}` : 'No results')
  }

  open(shown) {
    this.list.hidden = !shown
    this.input.setAttribute('aria-expanded', String(shown))
  }

  option(hit, url, trail, i) {
    const li = attrs(el('li', 'wikidex-hit'), { role: 'option', id: `${this.id}-${i}`, 'aria-selected': 'false', 'data-page': hit.page_id })
    const a = el('a', 'wikidex-title', hit.title)
    a.href = url
    // Reached by the arrow keys from the box, not by Tab through every hit.
    a.tabIndex = -1
    const toggle = attrs(el('button', 'wikidex-why-toggle', 'Why?'), { type: 'button', 'aria-expanded': 'false', 'aria-controls': `${li.id}-why` })
    toggle.hit = hit
    const head = el('div', 'wikidex-head')
    head.append(a, toggle)
    li.append(head)
    // The core's trail: the headings as the site renders them, the title left out.
    if (trail.length) li.append(el('div', 'wikidex-headings', trail.join(' › ')))
    if (hit.snippet) li.append(snippet(hit.snippet))
    const meta = el('div', 'wikidex-meta')
    if (hit.type) meta.append(el('span', 'wikidex-type', hit.type))
    for (const t of hit.tags) meta.append(el('span', 'wikidex-tag', t))
    if (meta.childElementCount) li.append(meta)
    return li
  }

  /** Opens or closes a hit's why panel, drawn the first time it opens; its term scores are
   * asked for then (the search again, with explanations). */
  why(toggle) {
    const li = toggle.closest('li')
    let panel = li.querySelector('.wikidex-why')
    if (!panel) {
      panel = whyPanel(toggle.hit)
      panel.id = `${li.id}-why`
      li.append(panel)
      if (this.drawn && this.worker) {
        const id = ++this.seq
        this.explains.set(id, panel)
        panel.append(el('p', 'wikidex-pending', 'Loading the term scores…'))
        const { query, options, semantic } = this.drawn
        this.worker.postMessage({ type: 'explain', id, query, options: { ...options, explain: true }, semantic, chunk: toggle.hit.chunk })
      }
    } else panel.hidden = !panel.hidden
    toggle.setAttribute('aria-expanded', String(!panel.hidden))
    toggle.textContent = panel.hidden ? 'Why?' : 'Hide why'
  }

  /** Draws the term scores into the why panel that asked for them. */
  explained(data) {
    const panel = this.explains.get(data.id)
    this.explains.delete(data.id)
    if (!panel) return
    panel.querySelector('.wikidex-pending')?.remove()
    if (data.code) panel.append(el('p', null, `The term scores did not load: ${data.message} (${data.code})`))
    else panel.append(...termTable(data.hit))
  }

  key(e) {
    const options = this.list.children
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      if (!options.length) return
      e.preventDefault()
      this.open(true)
      const n = options.length
      this.move(e.key === 'ArrowDown' ? (this.active + 1) % n : (this.active <= 0 ? n : this.active) - 1)
    } else if (e.key === 'Enter') {
      const li = this.list.hidden ? null : options[this.active]
      if (li) {
        e.preventDefault()
        li.querySelector('a').click()
      }
    } else if (e.key === 'Escape') {
      // First the list closes; a second Escape clears the box.
      e.preventDefault()
      if (!this.list.hidden) {
        this.move(-1)
        this.open(false)
      } else if (this.input.value) {
        this.input.value = ''
        this.search()
      }
    }
  }

  move(i) {
    const options = this.list.children
    options[this.active]?.setAttribute('aria-selected', 'false')
    this.active = i
    const li = options[i]
    if (li) {
      li.setAttribute('aria-selected', 'true')
      this.input.setAttribute('aria-activedescendant', li.id)
      li.scrollIntoView({ block: 'nearest' })
    } else this.input.removeAttribute('aria-activedescendant')
  }
}

/** The snippet's text with the core's highlights (UTF-16 offsets: JavaScript slices) marked. */
function snippet(s) {
  const p = el('p', 'wikidex-snippet')
  let at = 0
  for (const h of [...s.highlights].sort((a, b) => a.start - b.start)) {
    if (h.start < at) continue
    p.append(s.text.slice(at, h.start), el('mark', null, s.text.slice(h.start, h.end)))
    at = h.end
  }
  p.append(s.text.slice(at))
  return p
}

const num = (x, digits) => (x === null || x === undefined ? '–' : Number(x).toFixed(digits))

function table(cls, head, rows) {
  const t = el('table', cls)
  const tr = (cells, tag) => {
    const r = el('tr')
    for (const c of cells) r.append(el(tag, null, c))
    return r
  }
  t.createTHead().append(tr(head, 'th'))
  t.createTBody().append(...rows.map((r) => tr(r, 'td')))
  return t
}

const mb = (bytes) => `${(bytes / 1e6).toFixed(0)} MB`

/** Why a hit ranked where it did: each lane's rank and share of the fused score (the lexical
 * lane's term scores come with the hit's explanation: `termTable`). */
function whyPanel(hit) {
  const panel = el('div', 'wikidex-why')
  panel.append(
    el('p', null, `Score ${num(hit.score, 4)}: the sum of each lane's share (weight / (k + rank)).`),
    table(
      'wikidex-lanes',
      ['Lane', 'Status', 'Rank', 'Share'],
      hit.lanes.map((l) => [l.lane, l.status, l.rank ?? '–', num(l.contribution, 4)]),
    ),
  )
  return panel
}

/** The lexical lane's term scores for `hit` (with its explanation), if it has any. */
function termTable(hit) {
  const terms = hit?.explain?.lexical ?? []
  if (!terms.length) return []
  return [
    table(
      'wikidex-terms',
      ['Term', 'tf', 'df', 'idf', 'Score'],
      terms.map((t) => [t.matched ? `${t.term} → ${t.matched}` : t.term, t.tf, t.df, num(t.idf, 2), num(t.score, 3)]),
    ),
  ]
}

/** `<wikidex-search placeholder="…" bundle="…" limit="…">`: a `WikidexUI` in the element. */
export class WikidexSearchElement extends HTMLElement {
  static observedAttributes = ['placeholder']

  connectedCallback() {
    const attr = (name) => this.getAttribute(name) || undefined
    this.ui ??= new WikidexUI({ element: this, bundle: attr('bundle'), placeholder: attr('placeholder'), limit: Number(attr('limit')) || undefined })
  }

  disconnectedCallback() {
    // A move within the page disconnects and connects again in one task: only an element
    // still out of the page stops its worker.
    queueMicrotask(() => {
      if (!this.isConnected && this.ui) {
        this.ui.destroy()
        this.ui = null
      }
    })
  }

  attributeChangedCallback(name, old, value) {
    if (this.ui) {
      this.ui.input.placeholder = value ?? 'Search'
      this.ui.input.setAttribute('aria-label', value ?? 'Search')
    }
  }
}

// Imported twice under two URLs (a page and a subpath's copy), the second define would throw.
if (!customElements.get('wikidex-search')) customElements.define('wikidex-search', WikidexSearchElement)
