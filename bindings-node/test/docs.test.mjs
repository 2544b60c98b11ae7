// Every ```js / ```javascript block of README.md, the book (docs/) and the package READMEs runs
// here: each file's blocks in order, as one ES module (their imports gathered at the top, once
// each), with the repository root as the working folder; `wikidex` resolves through the
// node_modules/wikidex link at the root that `make test-node` makes. A block that cannot run
// here (browser-only code) carries `<!-- not run: reason -->` on the line above it.
// bindings-py/tests/test_docs.py runs the Python and shell blocks and checks that every other
// block is run somewhere or marked.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const JS = new Set(['js', 'javascript', 'mjs'])
const FENCE = /^(\s*)(```+|~~~+)\s*([^\s`]*)/
const MARKER = /^\s*<!--\s*not run:\s*(\S.*?)\s*-->\s*$/

function markdownUnder(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => (e.isDirectory() ? markdownUnder(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : []))
}

function docFiles() {
  const files = [join(ROOT, 'README.md'), ...markdownUnder(join(ROOT, 'docs'))]
  for (const pkg of ['bindings-py', 'bindings-node', 'bindings-wasm', 'cli']) files.push(join(ROOT, pkg, 'README.md'))
  return files.filter((f) => existsSync(f))
}

/** The fenced blocks of a Markdown file: { line, lang, code, notRun }. */
export function blocks(path) {
  const lines = readFileSync(path, 'utf8').split('\n')
  const out = []
  for (let i = 0; i < lines.length; i++) {
    const m = FENCE.exec(lines[i])
    if (!m) continue
    const [, indent, fence, lang] = m
    const start = i
    const body = []
    for (i++; i < lines.length && !lines[i].trim().startsWith(fence); i++) {
      body.push(lines[i].startsWith(indent) ? lines[i].slice(indent.length) : lines[i].trimStart())
    }
    let prev = start - 1
    while (prev >= 0 && !lines[prev].trim()) prev--
    const marker = prev >= 0 ? MARKER.exec(lines[prev]) : null
    out.push({ line: start + 1, lang: lang.toLowerCase(), code: body.join('\n') + '\n', notRun: marker ? marker[1] : null })
  }
  return out
}

/** One module from a file's blocks: import lines first (each once), then the rest in order. */
function moduleOf(path, todo) {
  const imports = []
  const rest = []
  for (const b of todo) {
    rest.push(`// ${relative(ROOT, path)}:${b.line}`)
    for (const line of b.code.split('\n')) {
      if (/^import\s/.test(line)) {
        if (!imports.includes(line)) imports.push(line)
      } else rest.push(line)
    }
  }
  return [...imports, ...rest].join('\n')
}

const out = join(ROOT, 'target', 'docs-js')
const files = docFiles()

test('the docs runner finds the READMEs and the book', () => {
  assert.ok(files.some((f) => f.endsWith(join('docs', 'index.md'))))
  assert.ok(blocks(join(ROOT, 'README.md')).some((b) => JS.has(b.lang) && b.notRun === null))
})

for (const path of files) {
  const todo = blocks(path).filter((b) => JS.has(b.lang) && b.notRun === null)
  if (todo.length === 0) continue
  const name = relative(ROOT, path)
  test(`the JavaScript blocks of ${name} run`, () => {
    assert.ok(existsSync(join(ROOT, 'node_modules', 'wikidex')),
      'node_modules/wikidex at the repository root is missing: mkdir -p node_modules && ln -sfn ../bindings-node node_modules/wikidex')
    mkdirSync(out, { recursive: true })
    const script = join(out, name.replaceAll('/', '__').replace(/\.md$/, '.mjs'))
    writeFileSync(script, moduleOf(path, todo))
    const r = spawnSync(process.execPath, [script], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 })
    assert.equal(r.status, 0,
      `the JavaScript blocks of ${name} (lines ${todo.map((b) => b.line).join(', ')}) failed; script ${script}\n` +
      `--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`)
  })
}
