#!/usr/bin/env node
'use strict'
// `npx wikidex site SRC --out DIR`: search for a static docs site, as the CLI's `wikidex site`
// does (the same core function, through the addon's `writeSiteSync`). The bundle's files (the
// browser's search module and the search UI) ship in this package's site/ folder. The CLI's
// other commands are the CLI's: this prints where to get it.
const { readFileSync, readdirSync } = require('node:fs')
const { join } = require('node:path')
const { parseArgs } = require('node:util')
const { writeSiteSync } = require('../index.js')

const USAGE = `usage: wikidex site SRC --out DIR [--layout NAME] [--url-pattern PATTERN]
                    [--anchors NAME] [--bundle-dir DIR] [--model DIR] [--language LANG]
                    [--strict] [--json]

Indexes the Markdown sources in SRC (the folder the site's generator reads) and writes the
search bundle into DIR/wikidex/ (the built site's folder); nothing else in DIR is touched.
--layout names the site's generator (mkdocs, mdbook, docusaurus, vitepress, hugo: a wrong
name is answered with the list); --url-pattern replaces its URL rule ('/docs/{path}.html').
--model DIR embeds the pages with that model folder and adds it to the bundle, with the
browser's model runner, for the search box's semantic toggle.
Then add to a page:
  <link rel="stylesheet" href="/wikidex/ui.css">
  <script type="module" src="/wikidex/ui.js"></script>
  <wikidex-search></wikidex-search>`

function fail(code, message, json) {
  if (json) console.log(JSON.stringify({ error: { code, message } }, null, 2))
  else console.error(`error[${code}]: ${message}`)
  process.exit(code === 'usage' ? 2 : 1)
}

function main(argv) {
  const [command, ...rest] = argv
  if (command === undefined || command === '--help' || command === '-h') {
    console.log(USAGE)
    return
  }
  if (command !== 'site') {
    fail('usage', `\`${command}\` is a command of the wikidex CLI (its archive, or \`cargo install\`); this package runs \`wikidex site\` only\n\n${USAGE}`)
  }
  let parsed
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        out: { type: 'string' },
        layout: { type: 'string' },
        'url-pattern': { type: 'string' },
        anchors: { type: 'string' },
        'bundle-dir': { type: 'string' },
        model: { type: 'string' },
        language: { type: 'string' },
        strict: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    })
  } catch (e) {
    fail('usage', `${e.message}\n\n${USAGE}`)
  }
  const { values: v, positionals } = parsed
  if (v.help) {
    console.log(USAGE)
    return
  }
  if (positionals.length !== 1 || v.out === undefined) fail('usage', `give one SRC folder and --out\n\n${USAGE}`, v.json)
  const dir = join(__dirname, '..', 'site')
  const assets = {}
  // The search module and UI, and in semantic/ the model runner's module (for --model).
  for (const sub of ['', 'semantic']) {
    for (const e of readdirSync(join(dir, sub), { withFileTypes: true })) {
      if (e.isFile()) assets[sub ? `${sub}/${e.name}` : e.name] = readFileSync(join(dir, sub, e.name))
    }
  }
  const options = {
    layout: v.layout ?? null,
    url_pattern: v['url-pattern'] ?? null,
    anchors: v.anchors ?? null,
    bundle_dir: v['bundle-dir'] ?? null,
    strict: v.strict,
    ...(v.language ? { config: { language: v.language } } : {}),
  }
  let report
  try {
    report = writeSiteSync(positionals[0], v.out, options, assets, v.model ?? null)
  } catch (e) {
    fail(e.code ?? 'error', e.message, v.json)
  }
  if (v.json) {
    console.log(JSON.stringify(report, null, 2))
    return
  }
  const m = report.manifest
  console.log(`wrote ${report.bundle}: ${m.pages} pages, ${m.chunks} chunks, ${report.files.length} files`)
  const s = m.semantic
  if (s) console.log(`semantic toggle: ${s.model_id} (${s.dim} dimensions), ${(s.bytes / 1e6).toFixed(1)} MB loaded when a reader turns it on`)
  for (const s of report.build.skipped) console.log(`  skipped ${s.path}${s.line ? `:${s.line}` : ''}: [${s.code}] ${s.reason}`)
  for (const w of report.build.warnings) console.log(`  warning ${w.path}: ${w.message}`)
  console.log('add search to a page of the site:')
  for (const line of report.snippet.split('\n')) console.log(`  ${line}`)
}

main(process.argv.slice(2))
