// The Markdown of the docs site's pages (build.mjs), rendered by markdown-it (npm, in
// bindings-node's devDependencies: make node-deps): CommonMark with GFM tables and
// strikethrough, in time linear in the page, its nesting capped (markdown-it's `maxNesting`).
// `html: false`: HTML in the source is escaped, never passed through; markdown-it's own link
// check refuses `javascript:`, `vbscript:`, `file:` and `data:` URLs (but `data:` images).
// What the wiki adds, as markdown-it rules:
// - `[[key]]` and `[[key|label]]` links, and Markdown links to `.md` files (the core reads both
//   as links to pages): `wikiLink(key)` (the core, through build.mjs) gives the href, or null
//   for a page the index does not have (drawn as a missing link). The key is looked up as it
//   is written; only the output is escaped.
// - `<!-- -->` comments are dropped (the page view lists provenance itself).
// Nothing here decides what a link points at. Only build.mjs imports this (at build time): the
// site's own JavaScript never renders Markdown.
import { createRequire } from 'node:module'

let MarkdownIt
try {
  MarkdownIt = createRequire(new URL('../../bindings-node/package.json', import.meta.url))('markdown-it')
} catch (e) {
  throw new Error(`docs-site: markdown-it not found (make node-deps): ${e.message}`)
}

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
/** `s` safe as HTML text and as a quoted attribute value. */
export const escapeHtml = (s) => String(s).replace(/[&<>"']/g, (c) => ESCAPES[c])

/** Where in `src`, at `from` or after, `needle` next occurs (-1: nowhere), remembered per
 * state so that scanning from every opener of a long run of them stays linear. */
function nextIndex(state, name, src, needle, from) {
  const memo = (state[name] ??= { from: Infinity, at: -1 })
  if (!(from >= memo.from && (memo.at === -1 || from <= memo.at))) {
    memo.from = from
    memo.at = src.indexOf(needle, from)
  }
  return memo.at
}

// `[[key]]`, `[[key|label]]`: key without `]` or `|`, label without `]`, neither empty.
function wikilinkRule(state, silent) {
  const { src, pos, posMax } = state
  if (src.charCodeAt(pos) !== 0x5b || src.charCodeAt(pos + 1) !== 0x5b) return false
  const close = nextIndex(state, '__wikidexBracket', src, ']', pos + 2)
  if (close === -1 || close + 2 > posMax || src.charCodeAt(close + 1) !== 0x5d) return false
  const inner = src.slice(pos + 2, close)
  const bar = inner.indexOf('|')
  const key = bar === -1 ? inner : inner.slice(0, bar)
  const label = bar === -1 ? null : inner.slice(bar + 1)
  if (!key.trim() || label === '') return false
  if (!silent) {
    const token = state.push('wikilink', '', 0)
    // Inside a link's text, a link would nest: the label alone.
    const href = state.linkLevel > 0 ? undefined : (state.env.wikiLink?.(key.trim()) ?? null)
    token.meta = { href, text: label ?? key }
  }
  state.pos = close + 2
  return true
}

function renderWikilink(tokens, idx) {
  const { href, text } = tokens[idx].meta
  if (href === undefined) return escapeHtml(text)
  return href === null
    ? `<span class="wikilink missing" title="no such page">${escapeHtml(text)}</span>`
    : `<a class="wikilink" href="${escapeHtml(href)}">${escapeHtml(text)}</a>`
}

// `<!-- ... -->` inside a paragraph: dropped. An unclosed one stays as text.
function commentInlineRule(state, silent) {
  const { src, pos, posMax } = state
  if (!src.startsWith('<!--', pos)) return false
  const end = nextIndex(state, '__wikidexComment', src, '-->', pos + 2)
  if (end === -1 || end + 3 > posMax) return false
  state.pos = end + 3
  return true
}

// A comment that starts a block (as CommonMark's HTML block 2): its lines are dropped up to the
// one holding `-->` (or the end of the container); text after `-->` on that line is kept as a
// paragraph. Without any `-->` after it, it is not a comment: text.
function commentBlockRule(state, startLine, endLine, silent) {
  const start = state.bMarks[startLine] + state.tShift[startLine]
  if (state.sCount[startLine] - state.blkIndent >= 4) return false
  if (!state.src.startsWith('<!--', start)) return false
  state.env.__wikidexLastClose ??= state.src.lastIndexOf('-->')
  if (state.env.__wikidexLastClose < start + 2) return false
  if (silent) return true
  let line = startLine
  let rest = null
  for (; line < endLine; line++) {
    if (line > startLine && state.sCount[line] < state.blkIndent && !state.isEmpty(line)) break
    const from = line === startLine ? start + 2 : state.bMarks[line] + state.tShift[line]
    const text = state.src.slice(from, state.eMarks[line])
    const at = text.indexOf('-->')
    if (at !== -1) {
      rest = text.slice(at + 3).trim()
      line++
      break
    }
  }
  state.line = line
  if (rest) {
    const map = [line - 1, line]
    state.push('paragraph_open', 'p', 1).map = map
    const inline = state.push('inline', '', 0)
    inline.content = rest
    inline.map = map
    inline.children = []
    state.push('paragraph_close', 'p', -1)
  }
  return true
}

/** The file a relative Markdown link points at when it is a page (`x.md`, `../a/x.markdown#h`):
 * its name without the extension, which the core resolves as a key; else null. */
function markdownPageKey(href) {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('#') || href.startsWith('//')) return null
  let path = href.split(/[#?]/)[0]
  try {
    path = decodeURIComponent(path)
  } catch {
    return null
  }
  const m = /(?:^|\/)([^/]+)\.(?:md|markdown)$/i.exec(path)
  return m ? m[1] : null
}

// Markdown links to `.md` files go where the core says (the page's HTML), or show as missing.
function pageLinksRule(state) {
  const wikiLink = state.env.wikiLink
  for (const block of state.tokens) {
    if (block.type !== 'inline' || !block.children) continue
    const stack = []
    for (const t of block.children) {
      if (t.type === 'link_open') {
        const key = markdownPageKey(t.attrGet('href') ?? '')
        stack.push(t)
        if (key === null) continue
        const href = wikiLink?.(key) ?? null
        if (href !== null) {
          t.attrSet('href', href)
          t.attrJoin('class', 'wikilink')
        } else {
          t.tag = 'span'
          t.attrs = [
            ['class', 'wikilink missing'],
            ['title', 'no such page'],
          ]
          t.meta = { missing: true }
        }
      } else if (t.type === 'link_close') {
        if (stack.pop()?.meta?.missing) t.tag = 'span'
      }
    }
  }
}

const md = new MarkdownIt('default', { html: false })
md.inline.ruler.before('link', 'wikilink', wikilinkRule)
md.inline.ruler.before('autolink', 'html_comment', commentInlineRule)
md.block.ruler.before('html_block', 'html_comment', commentBlockRule, { alt: ['paragraph', 'reference', 'blockquote'] })
md.core.ruler.push('page_links', pageLinksRule)
md.renderer.rules.wikilink = renderWikilink

/** The text of an inline token as the core reads a heading's (its text and code). */
const plainText = (inline) =>
  (inline?.children ?? [])
    .filter((t) => t.type === 'text' || t.type === 'code_inline')
    .map((t) => t.content)
    .join('')

/**
 * The HTML of a page body. `wikiLink(key)`: the href of the page `key` (the key as written,
 * trimmed), or null. `title`: when the body opens with a `# heading` of that text (the page's
 * title, drawn above it by build.mjs), the heading is left out.
 */
export function renderMarkdown(markdown, wikiLink = () => null, { title = null } = {}) {
  const env = { wikiLink }
  const tokens = md.parse(String(markdown), env)
  if (title !== null && tokens[0]?.type === 'heading_open' && tokens[0].tag === 'h1' && plainText(tokens[1]).trim() === title.trim()) {
    tokens.splice(0, 3)
  }
  return md.renderer.render(tokens, md.options, env)
}
