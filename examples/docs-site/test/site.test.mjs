// The docs site's generator (examples/docs-site) against hostile input:
// - Markdown that took the old hand-written renderer cubic time or overflowed its stack renders
//   at once (each input in a child process, killed after a minute: a guard against a hang, not a
//   timing assertion);
// - every attribute of every page it writes is one the generator meant, for pages whose keys,
//   ids, titles, tags, types, folders and bodies are made to break out of attributes: the HTML
//   is read by a tokenizer that follows the HTML standard's tag and attribute states (as a
//   browser splits `href="q"onfocus="x"` into three attributes), then no `on*` attribute, no
//   attribute or element the generator does not write, no `javascript:` URL, and the values
//   are compared with what the records say.
// `renderPage`/`renderSearch` are called on records made here (no CLI, no wasm); one test
// builds a whole site from a hostile wiki with build.mjs, the CLI (WIKIDEX_BIN, default
// target/debug/wikidex) and the wasm modules (make wasm), and skips, saying so, without them.
//
//   node --test examples/docs-site/test/
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync, execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { renderPage, renderSearch } from '../build.mjs'
import { renderMarkdown } from '../markdown.mjs'
import { pageFile, pageHref } from '../static/links.js'

const SITE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..')
const ROOT = join(SITE_DIR, '..', '..')

// ---------------------------------------------------------------------------------------------
// An HTML tokenizer: the standard's data, tag, attribute and character-reference states, for
// what the generator writes (no foreign content, no tree building). Tokens: `{ type: 'start',
// tag, attrs: [[name, value], ...] }` (every attribute as written, duplicates kept), `{ type:
// 'end', tag }`, `{ type: 'text', text }`. Any `&` that does not start one of the references
// the generator writes is reported in `problems`: the generator escapes every `&`.

const WS = new Set(['\t', '\n', '\f', '\r', ' '])
const NAMED = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' }
const RAWTEXT = new Set(['script', 'style'])
const RCDATA = new Set(['title', 'textarea'])

function decode(s, problems, where) {
  return s.replace(/&(#[0-9]+;|#[xX][0-9a-fA-F]+;|[a-zA-Z][a-zA-Z0-9]*;?)?/g, (m, ref) => {
    if (ref?.startsWith('#x') || ref?.startsWith('#X')) return String.fromCodePoint(parseInt(ref.slice(2, -1), 16))
    if (ref?.startsWith('#')) return String.fromCodePoint(Number(ref.slice(1, -1)))
    if (ref?.endsWith(';') && Object.hasOwn(NAMED, ref.slice(0, -1))) return NAMED[ref.slice(0, -1)]
    problems.push(`an unescaped & in ${where}: ${JSON.stringify(m)}`)
    return m
  })
}

export function tokenize(html) {
  const tokens = []
  const problems = []
  let i = 0
  let text = ''
  const flush = () => {
    if (text) tokens.push({ type: 'text', text: decode(text, problems, 'text') })
    text = ''
  }
  const lower = html.toLowerCase()
  while (i < html.length) {
    const c = html[i]
    if (c !== '<') {
      text += c
      i++
      continue
    }
    if (html.startsWith('<!--', i)) {
      flush()
      const end = html.indexOf('-->', i + 4)
      problems.push('a comment in the output')
      i = end === -1 ? html.length : end + 3
      continue
    }
    if (html[i + 1] === '!' || html[i + 1] === '?') {
      flush()
      const end = html.indexOf('>', i)
      i = end === -1 ? html.length : end + 1
      continue
    }
    const isEnd = html[i + 1] === '/'
    const nameAt = i + (isEnd ? 2 : 1)
    if (!/[a-zA-Z]/.test(html[nameAt] ?? '')) {
      text += c
      i++
      continue
    }
    flush()
    let j = nameAt
    while (j < html.length && !WS.has(html[j]) && html[j] !== '/' && html[j] !== '>') j++
    const tag = lower.slice(nameAt, j)
    // Attributes: before name, name, after name, before value, value (quoted or not), after a
    // quoted value (anything but space, `/` or `>` there starts the next attribute at once).
    const attrs = []
    for (;;) {
      while (j < html.length && (WS.has(html[j]) || html[j] === '/')) j++
      if (j >= html.length || html[j] === '>') {
        j++
        break
      }
      let k = j + 1 // a first `=` belongs to the name
      while (k < html.length && !WS.has(html[k]) && html[k] !== '/' && html[k] !== '>' && html[k] !== '=') k++
      const name = lower.slice(j, k)
      j = k
      while (j < html.length && WS.has(html[j])) j++
      if (html[j] !== '=') {
        attrs.push([name, ''])
        continue
      }
      j++
      while (j < html.length && WS.has(html[j])) j++
      let value
      if (html[j] === '"' || html[j] === "'") {
        const end = html.indexOf(html[j], j + 1)
        value = html.slice(j + 1, end === -1 ? html.length : end)
        j = end === -1 ? html.length : end + 1
      } else {
        k = j
        while (k < html.length && !WS.has(html[k]) && html[k] !== '>') k++
        value = html.slice(j, k)
        j = k
      }
      attrs.push([name, decode(value, problems, `<${tag} ${name}>`)])
    }
    i = j
    if (isEnd) {
      tokens.push({ type: 'end', tag })
      continue
    }
    tokens.push({ type: 'start', tag, attrs })
    if (RAWTEXT.has(tag) || RCDATA.has(tag)) {
      const end = lower.indexOf(`</${tag}`, i)
      const body = html.slice(i, end === -1 ? html.length : end)
      if (body) tokens.push({ type: 'text', text: RCDATA.has(tag) ? decode(body, problems, `<${tag}>`) : body })
      i = end === -1 ? html.length : end
    }
  }
  flush()
  return { tokens, problems }
}

const attr = (t, name) => t.attrs.find(([n]) => n === name)?.[1]
const hasClass = (t, c) => (attr(t, 'class') ?? '').split(/\s+/).includes(c)

/** The text inside each element `pick(token)` selects, its own end tag closing it. */
function textsOf(tokens, pick) {
  const out = []
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]
    if (t.type !== 'start' || !pick(t)) continue
    let depth = 0
    let s = ''
    for (let j = i + 1; j < tokens.length; j++) {
      const u = tokens[j]
      if (u.type === 'start' && u.tag === t.tag) depth++
      if (u.type === 'end' && u.tag === t.tag && depth-- === 0) break
      if (u.type === 'text') s += u.text
    }
    out.push(s)
  }
  return out
}

/** The start tags inside the first element `pick` selects (its own end tag closing it). */
function inside(tokens, pick) {
  const i = tokens.findIndex((t) => t.type === 'start' && pick(t))
  assert.notEqual(i, -1, 'the element is there')
  const out = []
  let depth = 0
  for (const u of tokens.slice(i + 1)) {
    if (u.type === 'start' && u.tag === tokens[i].tag) depth++
    if (u.type === 'end' && u.tag === tokens[i].tag && depth-- === 0) break
    if (u.type === 'start') out.push(u)
  }
  return out
}

// What the generator writes (build.mjs's templates, markdown-it's output): each element and
// the attributes it may carry.
const ALLOWED = {
  html: ['lang'],
  head: [],
  meta: ['charset', 'name', 'content'],
  title: [],
  link: ['rel', 'href'],
  body: ['class'],
  header: ['class'],
  main: ['class'],
  article: [],
  aside: ['class'],
  section: ['class', 'id'],
  div: ['class', 'id', 'role', 'hidden'],
  p: ['class', 'id', 'role'],
  span: ['class', 'id', 'title'],
  a: ['class', 'href', 'title'],
  code: ['class'],
  pre: ['class'],
  h1: ['class'],
  h2: [],
  h3: [],
  h4: [],
  h5: [],
  h6: [],
  ul: [],
  ol: ['id', 'class', 'start'],
  li: ['id', 'class'],
  input: ['id', 'type', 'placeholder', 'autocomplete', 'spellcheck', 'autofocus', 'aria-label', 'name', 'value', 'data-model', 'data-tokenizer', 'data-max-length'],
  label: ['class'],
  data: ['id', 'value', 'hidden'],
  details: ['open'],
  summary: [],
  script: ['type', 'src'],
  strong: [],
  em: [],
  s: [],
  blockquote: [],
  table: [],
  thead: [],
  tbody: [],
  tr: [],
  th: ['style'],
  td: ['style'],
  br: [],
  hr: [],
  img: ['src', 'alt', 'title'],
}

/** A URL as a browser reads it: leading and trailing C0 controls and spaces cut, tabs and newlines dropped. */
const urlAsRead = (u) => u.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '').replace(/[\t\n\r]/g, '')

/** The checks every generated page passes, whatever it shows; returns its tokens. */
function checkPage(html, where) {
  const { tokens, problems } = tokenize(html)
  for (const t of tokens) {
    if (t.type !== 'start') continue
    const at = `${where}: <${t.tag} ${JSON.stringify(t.attrs)}>`
    assert.ok(Object.hasOwn(ALLOWED, t.tag), `an element the generator does not write, ${at}`)
    const names = t.attrs.map(([n]) => n)
    assert.equal(new Set(names).size, names.length, `an attribute twice, ${at}`)
    for (const [name, value] of t.attrs) {
      assert.ok(!name.startsWith('on'), `an event handler, ${at}`)
      assert.ok(ALLOWED[t.tag].includes(name), `an attribute the generator does not write, ${at}`)
      if (name === 'href' || name === 'src') {
        const url = urlAsRead(value).toLowerCase()
        assert.ok(!/^(javascript|vbscript|file):/.test(url), `a script URL, ${at}`)
        assert.ok(!url.startsWith('data:') || url === 'data:,' || /^data:image\/(gif|png|jpeg|webp);/.test(url), `a data: URL, ${at}`)
      }
      if (name === 'style') assert.match(value, /^text-align:(left|right|center)$/, at)
      if (name === 'autofocus') assert.equal(attr(t, 'id'), 'q', at)
      // A class of the generator's, or a fence's language (markdown-it's `language-` prefix).
      if (name === 'class' && !(t.tag === 'code' && value.startsWith('language-'))) assert.match(value, /^[a-z][a-z0-9 -]*$/, `a class the generator does not write, ${at}`)
    }
    if (t.tag === 'script') assert.equal(attr(t, 'src'), 'search.js', at)
  }
  assert.deepEqual(problems, [], where)
  return tokens
}

// ---------------------------------------------------------------------------------------------
// Markdown that stalled or crashed the old renderer.

/** Renders the Markdown `expr` (a JavaScript expression) in a child process; the guard kills a hang. */
function renderApart(expr) {
  const code = `import { renderMarkdown } from ${JSON.stringify(pathToFileURL(join(SITE_DIR, 'markdown.mjs')).href)}
process.stdout.write(JSON.stringify(renderMarkdown(${expr}, (key) => (key === 'known' ? '../pages/known.html' : null))))`
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL', maxBuffer: 256 << 20 })
  assert.equal(r.signal, null, `${expr}: did not finish within a minute (a hang): killed`)
  assert.equal(r.status, 0, `${expr}: ${r.stderr.slice(0, 2000)}`)
  return JSON.parse(r.stdout)
}

const count = (s, sub) => s.split(sub).length - 1

test('hostile Markdown renders at once, without error', async (t) => {
  await t.test('a heading with 4,000 (and 40,000) spaces inside', () => {
    for (const n of [4_000, 40_000]) {
      const html = renderApart(`'# a' + ' '.repeat(${n}) + 'x'`)
      assert.ok(/^<h1>a +x<\/h1>$/.test(html.trim()), html.slice(0, 100))
    }
  })
  await t.test('20,000 `>` (nested quotes)', () => {
    for (const tail of ["''", "' deep'", "'\\n\\ntext'"]) {
      const html = renderApart(`'>'.repeat(20_000) + ${tail}`)
      const open = count(html, '<blockquote>')
      assert.ok(open >= 1 && open <= 200, `${open} quotes`)
      assert.equal(count(html, '</blockquote>'), open)
    }
  })
  await t.test('20,000 nested list markers', () => {
    const html = renderApart(`'- '.repeat(20_000) + 'x'`)
    assert.equal(count(html, '<ul>'), count(html, '</ul>'))
  })
  await t.test('long runs of link and comment openers that never close', () => {
    const renders = (expr, expected) => {
      const html = renderApart(expr).trim()
      assert.ok(html === expected, `${expr}: ${html.slice(0, 200)}…`)
    }
    renders(`'[['.repeat(50_000)`, `<p>${'[['.repeat(50_000)}</p>`)
    // The first `[[` opens a link whose label runs to the first `]]` (labels hold no `]`).
    renders(`'[[a|'.repeat(20_000) + ']] [[known]]'`, `<p><span class="wikilink missing" title="no such page">${'[[a|'.repeat(19_999)}</span> <a class="wikilink" href="../pages/known.html">known</a></p>`)
    renders(`'<!--'.repeat(50_000)`, `<p>${'&lt;!--'.repeat(50_000)}</p>`)
    renders(`'a <!--'.repeat(20_000) + ' -->b'`, '<p>a b</p>')
    renders(`'<!--\\n'.repeat(20_000) + '-->\\nafter'`, '<p>after</p>')
    // The quote ends before the `-->`: the comment runs to its end, the `-->` is text after it.
    renders(`'> <!--\\n'.repeat(20_000) + '-->'`, '<blockquote></blockquote>\n<p>--&gt;</p>')
    assert.ok(renderApart(`'\`'.repeat(20_000) + 'x'`).length > 0)
  })
})

test('Markdown: what the wiki adds to CommonMark, raw HTML and script URLs escaped', () => {
  const seen = []
  const pages = { 'a"b&c<d\'': '../pages/a%22b%26c%3Cd\'.html', known: '../pages/known.html', x: '../pages/x.html' }
  const wikiLink = (key) => {
    seen.push(key)
    return pages[key] ?? null
  }
  const src = [
    '# The title',
    '',
    '<!-- from: raw/x.md -->',
    'See [[a"b&c<d\'|the "label" <b>]], [[known]], [[ known | Known ]] and [[missing]]; `[[in code]]` <!-- inline --> stays.',
    '',
    '[md](x.md) [md missing](nope.md#h) [ext](https://example.com/a?b=1&c=2) [js](javascript:alert(1)) [vb](VBScript:x) [data](data:text/html,<b>) <img src=x onerror=alert(1)>',
    '',
    '![img](javascript:alert(1)) <script>alert(1)</script> <a href="javascript:alert(1)">raw</a>',
    '',
    '| a | b |',
    '|:-|-:|',
    '| [[known]] | **x** |',
    '',
    '```js',
    '<!-- kept in code --> [[not a link]]',
    '```',
    '',
    '```"><script>alert(1)</script>',
    'x',
    '```',
  ].join('\n')
  const html = renderMarkdown(src, wikiLink, { title: 'The title' })
  const tokens = checkPage(`<body>${html}</body>`, 'markdown')
  // The keys reach the core as written (trimmed), never escaped: the wikilinks', then the
  // Markdown links' to `.md` files.
  assert.deepEqual(seen, ['a"b&c<d\'', 'known', 'known', 'missing', 'known', 'x', 'nope'])
  const links = tokens.filter((t) => t.type === 'start' && t.tag === 'a')
  assert.deepEqual(
    links.map((t) => [attr(t, 'class') ?? null, attr(t, 'href')]),
    [
      ['wikilink', pages['a"b&c<d\'']],
      ['wikilink', pages.known],
      ['wikilink', pages.known],
      ['wikilink', pages.x],
      [null, 'https://example.com/a?b=1&c=2'],
      ['wikilink', pages.known],
    ],
  )
  assert.deepEqual(textsOf(tokens, (t) => t.tag === 'a' && hasClass(t, 'wikilink')), ['the "label" <b>', 'known', ' Known ', 'md', 'known'])
  assert.deepEqual(textsOf(tokens, (t) => hasClass(t, 'missing')), ['missing', 'md missing'])
  assert.ok(!tokens.some((t) => t.type === 'start' && t.tag === 'h1'), 'the title heading is drawn once, above')
  assert.ok(!tokens.some((t) => t.type === 'start' && t.tag === 'img'), 'no image with a script URL')
  const text = tokens.filter((t) => t.type === 'text').map((t) => t.text).join('')
  assert.ok(!text.includes('from: raw/x.md') && !text.includes('inline'), 'comments dropped')
  for (const shown of ['<img src=x onerror=alert(1)>', '<script>alert(1)</script>', '[js](javascript:alert(1))', '<!-- kept in code --> [[not a link]]']) {
    assert.ok(text.includes(shown), `shown as text: ${shown}`)
  }
  assert.deepEqual(textsOf(tokens, (t) => t.tag === 'strong'), ['x'])
  assert.deepEqual(textsOf(tokens, (t) => t.tag === 'code' && attr(t, 'class') === 'language-js'), ['<!-- kept in code --> [[not a link]]\n'])
  assert.deepEqual(textsOf(tokens, (t) => t.tag === 'code' && attr(t, 'class') === 'language-"><script>alert(1)</script>'), ['x\n'])
})

// ---------------------------------------------------------------------------------------------
// The pages, from hostile records.

const HOSTILE = 'q"onfocus="alert(document.domain)"autofocus="x'
const QUOTES = `a'b<c>&d"`
const USER = `x" onmouseover="alert(1)`
const PERCENT = 'p%22#?&amp;'

function record(id, fields = {}) {
  const [scope, key] = id.startsWith('user/') ? [id.slice(0, id.lastIndexOf('/')), id.slice(id.lastIndexOf('/') + 1)] : ['global', id]
  const body = fields.body ?? `# ${fields.title ?? key}\n\nText.\n`
  return {
    id,
    key,
    scope,
    path: `${scope === 'global' ? 'global' : scope}/${key}.md`,
    title: key,
    summary: null,
    type: null,
    tags: [],
    sources: [],
    stale_since: null,
    chunks: [{ id: `${id}::chunk_0`, start: 0, end: body.length, hash: `"><b>${key}` }],
    ...fields,
    body,
  }
}

const RECORDS = [
  record(HOSTILE, {
    title: '"><img src=x onerror=alert(1)>',
    summary: `'><script>alert(1)</script>`,
    type: `" onmouseover="alert(1)`,
    tags: [`"><svg onload=alert(1)>`, `x' onclick='alert(1)`, '&amp;'],
    stale_since: '"><b>',
    sources: [{ chunk: '"><i onclick=x>', weight: 1 }],
    body: `# "><img src=x onerror=alert(1)>\n\nSee [[${QUOTES}|quotes]], [[${USER}]] and [[nothing" onclick="x]].\n\n<a href="javascript:alert(1)">x</a> [y](javascript:alert(1))\n`,
  }),
  record(`user/${USER}/${QUOTES}`, { title: `</title><script>alert(1)</script>`, tags: [`"><svg onload=alert(1)>`], type: 'a&b' }),
  record(PERCENT, { body: `Back to [[${HOSTILE}]].\n` }),
]

const GRAPHS = {
  [HOSTILE]: {
    nodes: RECORDS.map((p) => ({ id: p.id, title: p.title })),
    edges: [
      { from: HOSTILE, to: RECORDS[1].id, type: 'causes" onclick="x', confidence: 0.5, evidence: '"><img src=x onerror=alert(1)>' },
      { from: PERCENT, to: HOSTILE, type: 'link', confidence: 1, evidence: null },
    ],
  },
}

/** A record's href from a page view, and the page file it must reach. */
const hrefFromPage = (id) => '../' + pageHref(id)

function wikiLinkFor(calls) {
  const byKey = new Map(RECORDS.map((p) => [p.key, p.id]))
  return (key) => {
    calls.push(key)
    return byKey.has(key) ? hrefFromPage(byKey.get(key)) : null
  }
}

const SITE = { siteTitle: `"><script>alert(1)</script>`, version: '0.0.0"' }

test('page views: every attribute is the one meant, every text is text', () => {
  for (const p of RECORDS) {
    const calls = []
    const graph = GRAPHS[p.id] ?? { nodes: [{ id: p.id, title: p.title }], edges: [] }
    const html = renderPage(p, { graph, wikiLink: wikiLinkFor(calls), ...SITE })
    const tokens = checkPage(html, p.id)
    assert.deepEqual(textsOf(tokens, (t) => t.tag === 'title'), [`${p.title} · ${SITE.siteTitle}`])
    assert.deepEqual(textsOf(tokens, (t) => hasClass(t, 'page-title')), [p.title])
    assert.deepEqual(textsOf(tokens, (t) => hasClass(t, 'crumbs')).map((s) => s.includes(p.id) && s.includes(p.path)), [true])
    assert.deepEqual(textsOf(tokens, (t) => hasClass(t, 'tag')), p.tags)
    assert.deepEqual(textsOf(tokens, (t) => hasClass(t, 'type')), p.type ? [p.type] : [])
    assert.deepEqual(textsOf(tokens, (t) => hasClass(t, 'scope')), p.scope === 'global' ? [] : [p.scope])
    assert.deepEqual(
      tokens.filter((t) => t.type === 'start' && t.tag === 'li' && attr(t, 'id') !== undefined).map((t) => attr(t, 'id')),
      p.chunks.map((c) => c.id),
    )
    assert.deepEqual(textsOf(tokens, (t) => t.tag === 'pre' && hasClass(t, 'chunk-text')), p.chunks.map((c) => p.body.slice(c.start, c.end)))
    for (const [section, end] of [
      ['links', 'to'],
      ['backlinks', 'from'],
    ]) {
      const edges = graph.edges.filter((e) => (end === 'to' ? e.from === p.id && e.to !== p.id : e.to === p.id && e.from !== p.id))
      const as = inside(tokens, (t) => t.tag === 'section' && hasClass(t, section)).filter((t) => t.tag === 'a')
      assert.deepEqual(
        as.map((t) => attr(t, 'href')),
        edges.map((e) => hrefFromPage(e[end])),
        `${p.id} ${section}`,
      )
    }
    if (p.id === HOSTILE) {
      // The wikilinks' keys reach the core as written; the page with quotes in its key is found.
      assert.deepEqual(calls, [QUOTES, USER, 'nothing" onclick="x'])
      const wiki = tokens.filter((t) => t.type === 'start' && t.tag === 'a' && hasClass(t, 'wikilink'))
      assert.deepEqual(
        wiki.map((t) => attr(t, 'href')),
        [hrefFromPage(RECORDS[1].id)],
      )
      assert.deepEqual(textsOf(tokens, (t) => hasClass(t, 'missing')), [USER, 'nothing" onclick="x'])
      assert.deepEqual(textsOf(tokens, (t) => hasClass(t, 'evidence')), ['"><img src=x onerror=alert(1)>'])
      assert.deepEqual(textsOf(tokens, (t) => hasClass(t, 'stale')), ['stale since "><b>'])
      assert.ok(!tokens.some((t) => t.type === 'start' && t.tag === 'h1' && !hasClass(t, 'page-title')), 'the title heading is drawn once')
    }
    if (p.id === PERCENT) {
      assert.deepEqual(calls, [HOSTILE])
      const wiki = tokens.filter((t) => t.type === 'start' && t.tag === 'a' && hasClass(t, 'wikilink'))
      assert.deepEqual(wiki.map((t) => attr(t, 'href')), [hrefFromPage(HOSTILE)])
    }
  }
})

test('the search page: every attribute is the one meant', () => {
  const html = renderSearch(RECORDS, { ...SITE, semantic: true, maxLength: '256" onclick="x', headBytes: 123 })
  const tokens = checkPage(html, 'index.html')
  const browse = inside(tokens, (t) => t.tag === 'section' && attr(t, 'id') === 'browse').filter((t) => t.tag === 'a')
  assert.deepEqual(
    browse.map((t) => attr(t, 'href')),
    RECORDS.map((p) => pageHref(p.id)),
  )
  assert.deepEqual(textsOf(tokens, (t) => t.tag === 'a' && browse.includes(t)), RECORDS.map((p) => p.title))
  const boxes = tokens.filter((t) => t.type === 'start' && t.tag === 'input' && attr(t, 'type') === 'checkbox' && attr(t, 'name'))
  const values = (name) =>
    boxes
      .filter((t) => attr(t, 'name') === name)
      .map((t) => attr(t, 'value'))
      .sort()
  assert.deepEqual(values('type'), RECORDS.flatMap((p) => (p.type ? [p.type] : [])).sort())
  assert.deepEqual(values('tag'), [...new Set(RECORDS.flatMap((p) => p.tags))].sort())
  const toggle = tokens.find((t) => t.type === 'start' && attr(t, 'id') === 'semantic')
  assert.equal(attr(toggle, 'data-max-length'), '256" onclick="x')
  assert.equal(attr(tokens.find((t) => t.type === 'start' && t.tag === 'data'), 'value'), '123')
})

test('a page href reaches its page file, whatever the key', () => {
  for (const id of [HOSTILE, PERCENT, `user/${USER}/${QUOTES}`, 'plain', 'é ü/..']) {
    const href = pageHref(id)
    assert.equal(decodeURIComponent(new URL(href, 'http://x/').pathname), `/${pageFile(id)}`)
    assert.match(href, /^pages\/[^"<>&#?%\s]*(%[0-9A-F]{2}[^"<>&#?%\s]*)*\.html$/)
  }
})

// ---------------------------------------------------------------------------------------------
// A whole site from a hostile wiki: the CLI, the wasm modules, build.mjs as `make site` runs it.

const BIN = process.env.WIKIDEX_BIN ?? join(ROOT, 'target', 'debug', 'wikidex')
const PKGS = ['pkg', 'pkg-search'].map((p) => join(ROOT, 'bindings-wasm', p, 'wikidex_wasm_bg.wasm'))
const missing = [BIN, ...PKGS].filter((f) => !existsSync(f))

/** A frontmatter block; JSON strings are YAML's double-quoted strings. */
const front = (fields) => `---\n${Object.entries(fields).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join('\n')}\n---\n`

test(
  'a site built from a wiki of hostile names, keys, titles, tags and folders',
  { skip: missing.length ? `needs ${missing.join(', ')} (make wasm; cargo build -p wikidex-cli)` : false, timeout: 300_000 },
  () => {
    const tmp = mkdtempSync(join(tmpdir(), 'wikidex-site-'))
    try {
      const wiki = join(tmp, 'wiki')
      const files = {
        [`global/${HOSTILE}.md`]:
          front({ title: '"><img src=x onerror=alert(1)>', summary: `'><script>alert(1)</script>`, type: `" onmouseover="alert(1)`, tags: [`"><svg onload=alert(1)>`, `x' onclick='alert(1)`], relations: [{ target: QUOTES, type: 'causes" onclick="x', confidence: 0.5, evidence: '"><img src=x onerror=alert(1)>' }] }) +
          `# "><img src=x onerror=alert(1)>\n\nSee [[${QUOTES}|the quotes page]] and [[plain]] and [[nothing" onclick="x]].\n\n<a href="javascript:alert(1)">x</a> [y](javascript:alert(1))\n`,
        [`global/${QUOTES}.md`]: front({ title: `</title><script>alert(1)</script>`, tags: ['a&b'] }) + `Back to [[${HOSTILE}]].\n`,
        [`user/${USER}/notes.md`]: front({ title: `" autofocus onfocus="alert(1)` }) + `Links [[${HOSTILE}]] and [[${QUOTES}]].\n`,
        [`global/${PERCENT}.md`]: `# Percent\n\nTo [[${QUOTES}]].\n`,
        'global/plain.md': '# Plain\n\nNothing hostile. [[q"onfocus="alert(document.domain)"autofocus="x]]\n',
      }
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(wiki, path)), { recursive: true })
        writeFileSync(join(wiki, path), text)
      }
      const out = join(tmp, 'site')
      execFileSync(process.execPath, [join(SITE_DIR, 'build.mjs'), '--wiki', wiki, '--out', out, '--wikidex', BIN, '--no-semantic', '--no-minify'], { stdio: ['ignore', 'pipe', 'inherit'] })

      const ids = [HOSTILE, QUOTES, `user/${USER}/notes`, PERCENT, 'plain']
      const pages = readdirSync(join(out, 'pages')).sort()
      assert.deepEqual(pages, ids.map((id) => pageFile(id).slice('pages/'.length)).sort())
      const wikilinks = {}
      for (const file of ['index.html', ...pages.map((f) => join('pages', f))]) {
        const tokens = checkPage(readFileSync(join(out, file), 'utf8'), file)
        // Every relative href and src reaches a file of the site.
        for (const t of tokens) {
          if (t.type !== 'start') continue
          for (const [name, value] of t.attrs) {
            if ((name !== 'href' && name !== 'src') || /^[a-z]+:/i.test(value)) continue
            const url = new URL(value, `http://site/${file}`)
            assert.equal(url.origin, 'http://site', `${file}: ${value}`)
            const target = join(out, decodeURIComponent(url.pathname))
            assert.ok(existsSync(target), `${file}: ${name}="${value}" reaches no file (${target})`)
          }
        }
        wikilinks[file] = tokens.filter((t) => t.type === 'start' && t.tag === 'a' && hasClass(t, 'wikilink')).map((t) => decodeURIComponent(attr(t, 'href')))
      }
      // The wikilinks to keys with quotes, `<`, `&` resolve (the key looked up as written).
      const page = (id) => join('pages', pageFile(id).slice('pages/'.length))
      assert.deepEqual(wikilinks[page(HOSTILE)], [`../${pageFile(QUOTES)}`, `../${pageFile('plain')}`])
      assert.deepEqual(wikilinks[page(QUOTES)], [`../${pageFile(HOSTILE)}`])
      assert.deepEqual(wikilinks[page(`user/${USER}/notes`)], [`../${pageFile(HOSTILE)}`, `../${pageFile(QUOTES)}`])
      assert.deepEqual(wikilinks[page(PERCENT)], [`../${pageFile(QUOTES)}`])
      assert.deepEqual(wikilinks[page('plain')], [`../${pageFile(HOSTILE)}`])
      const index = tokenize(readFileSync(join(out, 'index.html'), 'utf8')).tokens
      const browse = inside(index, (t) => t.tag === 'section' && attr(t, 'id') === 'browse').filter((t) => t.tag === 'a')
      assert.deepEqual(browse.map((t) => decodeURIComponent(attr(t, 'href'))).sort(), ids.map(pageFile).sort())
      const hostile = tokenize(readFileSync(join(out, page(HOSTILE)), 'utf8')).tokens
      assert.deepEqual(textsOf(hostile, (t) => hasClass(t, 'page-title')), ['"><img src=x onerror=alert(1)>'])
      assert.deepEqual(textsOf(hostile, (t) => hasClass(t, 'tag')), [`"><svg onload=alert(1)>`, `x' onclick='alert(1)`])
      const links = inside(hostile, (t) => t.tag === 'section' && hasClass(t, 'links')).filter((t) => t.tag === 'a')
      assert.ok(links.map((t) => decodeURIComponent(attr(t, 'href'))).includes(`../${pageFile(QUOTES)}`), JSON.stringify(links))
    } finally {
      rmSync(tmp, { recursive: true, force: true })
    }
  },
)
