// Builds the docs site of a wiki: one HTML page per wiki page, a search page whose search runs
// in a Web Worker on the wasm module, the index blob, and the module itself.
//
//   node examples/docs-site/build.mjs [--wiki examples/wiki] [--out target/site]
//        [--wikidex target/debug/wikidex] [--pkg bindings-wasm/pkg-search]
//        [--full-pkg bindings-wasm/pkg-full] [--build-pkg bindings-wasm/pkg]
//        [--model models/all-MiniLM-L6-v2]
//        [--onnx model-int8.onnx] [--no-semantic] [--no-minify]        (or: make site)
//
// 1. `wikidex build WIKI -o OUT/wiki.wdx --model MODEL --onnx model-int8.onnx
//    --vectors int8`: the CLI writes the blob (the site build's one index; the browser loads
//    exactly this file) in the sectioned layout, so that the search page fetches only the
//    parts a query reads by HTTP range requests, with the int8 model's vectors stored as int8
//    (fetched only when the semantic toggle is turned on). With --no-semantic, `--no-embed`.
// 2. bindings-wasm/pkg-search (make wasm: the search module, `RangedIndex` alone, without the
//    page writes and the agent tools a static site never calls: 139 KB gzipped against the
//    whole module's 491) copied to OUT/pkg with
//    ranged.js (its range requests); for the
//    semantic toggle, bindings-wasm/pkg-full (the model runner) to OUT/pkg-full and the int8
//    model with its tokenizer.json to OUT/model/. The page searches with the search module at
//    once; turning the toggle on loads the full module and the model in the worker, and the
//    semantic lane joins the searches when they are ready.
// 3. The blob loaded in Node with the whole wasm module (bindings-wasm/pkg: the same core
//    as the search module, with the graph walk the search module leaves out): every page
//    (`pageIds`, `pageRecord`)
//    rendered to OUT/pages/<id>.html with its chunks, its links and its backlinks
//    (`neighbors` at depth 1), its body's Markdown by markdown.mjs (markdown-it, npm, in
//    bindings-node's devDependencies like esbuild) with [[links]] resolved by the core
//    (`pageRecord`); the tag and type filters of the search page listed from the page records.
//    `renderPage` and `renderSearch` write the HTML (examples/docs-site/test/ calls them).
// 4. The search page (index.html) and static/ copied in. The page carries the blob's head
//    length (`RangedIndex.headEnd`, the core reading the blob's header), so that the worker's
//    first request fetches the head exactly: one request, no bytes past it.
// 5. The JavaScript a visitor downloads (the modules' glue, ranged.js, the worker and the page's
//    scripts) minified with esbuild (npm, in bindings-node's devDependencies: make node-deps),
//    as a production build ships it: 4.5 KB less gzipped before the first result.
//    --no-minify keeps them as they are.
// Nothing here ranks, parses frontmatter or resolves keys: the core does, through the module.
import { execFileSync } from 'node:child_process'
import { cpSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, dirname, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { renderMarkdown, escapeHtml as esc } from './markdown.mjs'
import { pageFile, pageHref } from './static/links.js'

const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = join(HERE, '..', '..')

// Every value that reaches the HTML goes through `esc`, in text and in attributes alike (a page
// file may be named `q"onfocus="alert(1)"autofocus="x.md`); hrefs to pages are URL-encoded by
// `pageHref` first.

const layout = ({ title, body, depth, bodyClass = '', siteTitle, version }) => {
  const up = depth ? '../'.repeat(depth) : ''
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${esc(up)}site.css">
</head>
<body class="${esc(bodyClass)}">
<header class="top"><a class="brand" href="${esc(up)}index.html">${esc(siteTitle)}</a><span class="by">search by wikidex ${esc(version)} (wasm, in your browser)</span></header>
${body}
</body>
</html>
`
}

const tagList = (tags) => tags.map((t) => `<span class="tag">${esc(t)}</span>`).join(' ')

/**
 * The HTML of one page view (written to OUT/`pageFile(p.id)`). `p`: the page's record
 * (`pageRecord`); `graph`: its `neighbors` at depth 1; `wikiLink(key)`: the href of the page a
 * link in its body names (the key as written), or null; `siteTitle`, `version`: the header's.
 */
export function renderPage(p, { graph, wikiLink, siteTitle, version }) {
  const out = graph.edges.filter((e) => e.from === p.id && e.to !== p.id)
  const back = graph.edges.filter((e) => e.to === p.id && e.from !== p.id)
  const titleOf = new Map(graph.nodes.map((n) => [n.id, n.title]))
  const edgeItem = (id, e) =>
    `<li><a href="${esc('../' + pageHref(id))}">${esc(titleOf.get(id) ?? id)}</a> <span class="edge">${esc(e.type)}${e.confidence < 1 ? ` · ${esc(e.confidence)}` : ''}</span>${e.evidence && e.type !== 'ref' && e.type !== 'link' ? `<div class="evidence">${esc(e.evidence)}</div>` : ''}</li>`
  const chunks = p.chunks
    .map(
      (c) => `<li id="${esc(c.id)}"><div class="chunk-id"><code>${esc(c.id)}</code> <span class="hash">${esc(c.hash)}</span> <span class="span">${esc(c.start)}–${esc(c.end)}</span></div><pre class="chunk-text">${esc(p.body.slice(c.start, c.end))}</pre></li>`,
    )
    .join('\n')
  const meta = [
    p.type ? `<span class="type">${esc(p.type)}</span>` : '',
    p.scope !== 'global' ? `<span class="scope">${esc(p.scope)}</span>` : '',
    tagList(p.tags),
    p.stale_since ? `<span class="stale">stale since ${esc(p.stale_since)}</span>` : '',
  ].join(' ')
  // The page's own `# Title` heading is the title above: drawn once.
  const bodyHtml = renderMarkdown(p.body, wikiLink, { title: p.title })
  const body = `<main class="page-view">
<article>
<p class="crumbs"><a href="../index.html">search</a> / <code>${esc(p.id)}</code> <span class="path">${esc(p.path)}</span></p>
<h1 class="page-title">${esc(p.title)}</h1>
${p.summary ? `<p class="summary">${esc(p.summary)}</p>` : ''}
<p class="meta">${meta}</p>
<div class="body">${bodyHtml}</div>
</article>
<aside>
<section class="links"><h2>Links <span class="count">${out.length}</span></h2><ul>${out.map((e) => edgeItem(e.to, e)).join('\n') || '<li class="none">none</li>'}</ul></section>
<section class="backlinks"><h2>Backlinks <span class="count">${back.length}</span></h2><ul>${back.map((e) => edgeItem(e.from, e)).join('\n') || '<li class="none">none</li>'}</ul></section>
${p.sources.length ? `<section class="sources"><h2>Sources</h2><ul>${p.sources.map((s) => `<li><code>${esc(s.chunk)}</code> <span class="edge">weight ${esc(s.weight)}</span></li>`).join('')}</ul></section>` : ''}
</aside>
<section class="chunks"><h2>Chunks <span class="count">${p.chunks.length}</span></h2><ol>${chunks}</ol></section>
</main>`
  return layout({ title: `${p.title} · ${siteTitle}`, body, depth: 1, bodyClass: 'page', siteTitle, version })
}

/**
 * The HTML of the search page (OUT/index.html): the filters from the page records, the list of
 * every page for browsing. `semantic`: the toggle is drawn, with the model's `maxLength`;
 * `headBytes`: the blob's head length, for the worker's first request.
 */
export function renderSearch(records, { siteTitle, version, semantic, maxLength, headBytes }) {
  const count = (values) => {
    const m = new Map()
    for (const v of values) m.set(v, (m.get(v) ?? 0) + 1)
    return [...m].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
  }
  const checkboxes = (name, entries) =>
    entries
      .map(([v, n]) => `<label class="filter"><input type="checkbox" name="${esc(name)}" value="${esc(v)}"> ${esc(v)} <span class="count">${n}</span></label>`)
      .join('\n')
  const browse = records
    .map((p) => `<li><a href="${esc(pageHref(p.id))}">${esc(p.title)}</a> ${p.type ? `<span class="type">${esc(p.type)}</span>` : ''}${p.summary ? `<div class="summary">${esc(p.summary)}</div>` : ''}</li>`)
    .join('\n')
  const body = `<main class="search-view">
<div class="searchbar">
<input id="q" type="search" placeholder="Search the wiki…" autocomplete="off" spellcheck="false" autofocus aria-label="search">
${semantic ? `<label class="semantic-toggle"><input type="checkbox" id="semantic" data-model="model/model.onnx" data-tokenizer="model/tokenizer.json" data-max-length="${esc(maxLength)}"> semantic search <span id="semantic-state" class="semantic-state">off: the lexical and token lanes</span></label>` : ''}
<p id="status" class="status" role="status">Loading the index…</p>
<data id="blob-head" value="${esc(headBytes)}" hidden></data>
<div id="error" class="error" role="alert" hidden></div>
</div>
<div class="columns">
<aside class="filters">
<details open><summary>Type</summary>${checkboxes('type', count(records.flatMap((p) => (p.type ? [p.type] : []))))}</details>
<details open><summary>Tag</summary>${checkboxes('tag', count(records.flatMap((p) => p.tags)))}</details>
</aside>
<section class="results">
<div id="always" class="always" hidden></div>
<ol id="hits" class="hits"></ol>
<section id="browse" class="browse"><h2>All pages <span class="count">${records.length}</span></h2><ul>${browse}</ul></section>
</section>
</div>
</main>
<script type="module" src="search.js"></script>`
  return layout({ title: siteTitle, body, depth: 0, bodyClass: 'search', siteTitle, version })
}

async function main() {
  const { values: args } = parseArgs({
    options: {
      wiki: { type: 'string', default: join(ROOT, 'examples', 'wiki') },
      out: { type: 'string', default: join(ROOT, 'target', 'site') },
      wikidex: { type: 'string', default: join(ROOT, 'target', 'debug', 'wikidex') },
      pkg: { type: 'string', default: join(ROOT, 'bindings-wasm', 'pkg-search') },
      'full-pkg': { type: 'string', default: join(ROOT, 'bindings-wasm', 'pkg-full') },
      'build-pkg': { type: 'string', default: join(ROOT, 'bindings-wasm', 'pkg') },
      model: { type: 'string', default: join(ROOT, 'models', 'all-MiniLM-L6-v2') },
      onnx: { type: 'string', default: 'model-int8.onnx' },
      'no-semantic': { type: 'boolean', default: false },
      'no-minify': { type: 'boolean', default: false },
      title: { type: 'string', default: 'wikidex example wiki' },
    },
  })
  const OUT = resolve(args.out)
  const fail = (msg) => {
    console.error(`docs-site: ${msg}`)
    process.exit(1)
  }
  const semantic = !args['no-semantic']
  const needed = [
    ['wikidex', args.wikidex],
    ['the wasm module (make wasm)', join(args.pkg, 'wikidex_wasm_bg.wasm')],
    ['the whole wasm module (make wasm)', join(args['build-pkg'], 'wikidex_wasm_bg.wasm')],
  ]
  if (semantic) {
    needed.push(
      ['the full wasm module (make wasm)', join(args['full-pkg'], 'wikidex_wasm_bg.wasm')],
      ['the model (make models; or --no-semantic)', join(args.model, args.onnx)],
      ["the model's tokenizer.json (make models)", join(args.model, 'tokenizer.json')],
    )
  }
  for (const [what, path] of needed) {
    try {
      statSync(path)
    } catch {
      fail(`${what} not found at ${path}`)
    }
  }
  let esbuild = null
  if (!args['no-minify']) {
    try {
      esbuild = createRequire(join(ROOT, 'bindings-node', 'package.json'))('esbuild')
    } catch (e) {
      fail(`esbuild not found (make node-deps; or --no-minify): ${e.message}`)
    }
  }

  rmSync(OUT, { recursive: true, force: true })
  mkdirSync(join(OUT, 'pages'), { recursive: true })

  // 1. The blob, by the CLI.
  const blobPath = join(OUT, 'wiki.wdx')
  const embed = semantic ? ['--model', args.model, '--onnx', args.onnx, '--vectors', 'int8'] : ['--no-embed']
  execFileSync(args.wikidex, ['build', args.wiki, '-o', blobPath, ...embed], { stdio: ['ignore', 'inherit', 'inherit'] })

  // 2. The modules, and the model.
  const MODULE_FILES = ['wikidex_wasm.js', 'wikidex_wasm_bg.wasm', 'wikidex_wasm.d.ts', 'ranged.js', 'ranged.d.ts']
  mkdirSync(join(OUT, 'pkg'))
  for (const f of MODULE_FILES) cpSync(join(args.pkg, f), join(OUT, 'pkg', f))
  // The model's own longest input (sentence-transformers' max_seq_length), as the CLI used it.
  let maxLength = 256
  if (semantic) {
    try {
      maxLength = JSON.parse(readFileSync(join(args.model, 'sentence_bert_config.json'), 'utf8')).max_seq_length ?? maxLength
    } catch (e) {
      if (e.code !== 'ENOENT') throw e
    }
    mkdirSync(join(OUT, 'pkg-full'))
    for (const f of MODULE_FILES) cpSync(join(args['full-pkg'], f), join(OUT, 'pkg-full', f))
    mkdirSync(join(OUT, 'model'))
    cpSync(join(args.model, args.onnx), join(OUT, 'model', 'model.onnx'))
    cpSync(join(args.model, 'tokenizer.json'), join(OUT, 'model', 'tokenizer.json'))
  }

  // 3. The pages, read through the whole module (the search module has no `neighbors`).
  const { initSync, Index, RangedIndex, version } = await import(pathToFileURL(join(args['build-pkg'], 'wikidex_wasm.js')).href)
  initSync({ module: readFileSync(join(args['build-pkg'], 'wikidex_wasm_bg.wasm')) })
  const blobBytes = readFileSync(blobPath)
  const index = Index.fromBytes(blobBytes)
  const headBytes = RangedIndex.headEnd(blobBytes)
  const records = index.pageIds().map((id) => index.pageRecord(id))

  /** The href of `key` (as written in a link) as the core resolves it from `scope`'s point of view, or null. */
  function linkTo(key, scope) {
    try {
      return '../' + pageHref(index.pageRecord(key, scope).id)
    } catch (e) {
      if (e.code === 'unknown_page') return null
      throw e
    }
  }

  const site = { siteTitle: args.title, version: version() }
  for (const p of records) {
    const scope = p.scope === 'global' ? 'global' : p.scope
    const graph = index.neighbors([p.id], { depth: 1 })
    writeFileSync(join(OUT, pageFile(p.id)), renderPage(p, { graph, wikiLink: (key) => linkTo(key, scope), ...site }))
  }

  // 4. The search page, and static/ copied in.
  writeFileSync(join(OUT, 'index.html'), renderSearch(records, { ...site, semantic, maxLength, headBytes }))
  cpSync(join(HERE, 'static'), OUT, { recursive: true })

  // 5. The JavaScript minified (ES modules stay ES modules: imports, exports, import.meta.url).
  if (esbuild) {
    const scripts = (dir) => readdirSync(join(OUT, dir)).filter((f) => f.endsWith('.js')).map((f) => join(OUT, dir, f))
    for (const file of [...scripts('.'), ...scripts('pkg'), ...(semantic ? scripts('pkg-full') : [])]) {
      const { code } = esbuild.transformSync(readFileSync(file, 'utf8'), { minify: true, format: 'esm', sourcefile: file })
      writeFileSync(file, code)
    }
  }
  console.log(`docs-site: ${records.length} pages, the blob (${statSync(blobPath).size} bytes) and the module in ${OUT}`)
}

// Run as a script (node build.mjs); the tests import renderPage and renderSearch.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main()
