// A small Markdown renderer for the docs site's pages (build.mjs): ATX headings, paragraphs,
// fenced code, `-`/`*`/`1.` lists (nested by indentation), `>` quotes, pipe tables, inline
// code, **bold**, *italic*, [text](url) and the wiki's [[key]] / [[key|label]] links. HTML in
// the source is escaped, never passed through; `<!-- -->` comments are dropped (the page view
// lists provenance itself). No dependency, and nothing here decides what a link points at:
// `wikiLink(key)` (from the core, through build.mjs) returns the href, or null for a page the
// index does not have.

const escape = (s) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c])

function inline(text, wikiLink) {
  // Code spans first, so nothing inside them is formatted.
  return text
    .split(/(`[^`]+`)/)
    .map((part) => {
      if (part.length > 1 && part.startsWith('`') && part.endsWith('`')) return `<code>${escape(part.slice(1, -1))}</code>`
      let s = escape(part)
      s = s.replace(/\[\[([^\]|]+)(?:\|([^\]]+))?\]\]/g, (_, key, label) => {
        const href = wikiLink(key.trim())
        const text = label ?? key
        return href ? `<a class="wikilink" href="${escape(href)}">${text}</a>` : `<span class="wikilink missing" title="no such page">${text}</span>`
      })
      s = s.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_, label, url) =>
        /^(https?:|mailto:|#|\.{0,2}\/)/.test(url) ? `<a href="${url}">${label}</a>` : `${label} (${url})`,
      )
      s = s.replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
      s = s.replace(/(^|[^*\w])\*([^*\s][^*]*)\*(?!\w)/g, '$1<em>$2</em>')
      s = s.replace(/(^|[^\w])_([^_\s][^_]*)_(?!\w)/g, '$1<em>$2</em>')
      return s
    })
    .join('')
}

const LIST_ITEM = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/
const isTableRow = (l) => /^\s*\|.*\|\s*$/.test(l)
const cells = (l) => l.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim())

/** The HTML of a page body. `wikiLink(key)`: the href of the page `key`, or null. */
export function renderMarkdown(markdown, wikiLink = () => null) {
  const lines = markdown.replace(/<!--[\s\S]*?-->/g, '').replace(/\r\n?/g, '\n').split('\n')
  const out = []
  let i = 0
  const para = []
  const flush = () => {
    if (para.length) out.push(`<p>${inline(para.join(' '), wikiLink)}</p>`)
    para.length = 0
  }
  while (i < lines.length) {
    const line = lines[i]
    let m
    if (/^\s*$/.test(line)) {
      flush()
      i++
    } else if ((m = line.match(/^(`{3,}|~{3,})\s*([\w-]*)/))) {
      flush()
      const fence = m[1]
      const body = []
      i++
      while (i < lines.length && !lines[i].startsWith(fence)) body.push(lines[i++])
      i++
      out.push(`<pre><code${m[2] ? ` class="language-${escape(m[2])}"` : ''}>${escape(body.join('\n'))}</code></pre>`)
    } else if ((m = line.match(/^(#{1,6})\s+(.*?)\s*#*\s*$/))) {
      flush()
      const n = m[1].length
      out.push(`<h${n}>${inline(m[2], wikiLink)}</h${n}>`)
      i++
    } else if (isTableRow(line) && i + 1 < lines.length && /^\s*\|?[\s:|-]+\|?\s*$/.test(lines[i + 1]) && lines[i + 1].includes('-')) {
      flush()
      const head = cells(line)
      i += 2
      const rows = []
      while (i < lines.length && isTableRow(lines[i])) rows.push(cells(lines[i++]))
      out.push(
        `<table><thead><tr>${head.map((c) => `<th>${inline(c, wikiLink)}</th>`).join('')}</tr></thead><tbody>` +
          rows.map((r) => `<tr>${r.map((c) => `<td>${inline(c, wikiLink)}</td>`).join('')}</tr>`).join('') +
          '</tbody></table>',
      )
    } else if (LIST_ITEM.test(line)) {
      flush()
      // Items with their indentation; a deeper item opens a nested list.
      const items = []
      while (i < lines.length && (LIST_ITEM.test(lines[i]) || (/^\s+\S/.test(lines[i]) && items.length))) {
        const li = lines[i].match(LIST_ITEM)
        if (li) items.push({ indent: li[1].length, ordered: /\d/.test(li[2]), text: li[3] })
        else items[items.length - 1].text += ' ' + lines[i].trim()
        i++
      }
      const stack = []
      let html = ''
      for (const it of items) {
        while (stack.length && it.indent < stack[stack.length - 1].indent) html += `</li></${stack.pop().tag}>`
        const top = stack[stack.length - 1]
        if (!top || it.indent > top.indent) {
          const tag = it.ordered ? 'ol' : 'ul'
          stack.push({ indent: it.indent, tag })
          html += `<${tag}><li>`
        } else {
          html += '</li><li>'
        }
        html += inline(it.text, wikiLink)
      }
      while (stack.length) html += `</li></${stack.pop().tag}>`
      out.push(html)
    } else if (line.startsWith('>')) {
      flush()
      const quote = []
      while (i < lines.length && lines[i].startsWith('>')) quote.push(lines[i++].replace(/^>\s?/, ''))
      out.push(`<blockquote>${renderMarkdown(quote.join('\n'), wikiLink)}</blockquote>`)
    } else {
      para.push(line.trim())
      i++
    }
  }
  flush()
  return out.join('\n')
}

export { escape as escapeHtml }
