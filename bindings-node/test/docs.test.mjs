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
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

import { blocks, JS, moduleOf } from '../../scripts/docblocks.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

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
