// `npx wikidex site` (bin/wikidex.js): the same bundle as the CLI's `wikidex site`, from the
// files this package ships in site/, and coded errors for what it cannot do.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { spawnSync } from 'node:child_process'
import { scratch } from './scratch.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = join(HERE, '..', '..')
const BIN = join(HERE, '..', 'bin', 'wikidex.js')
const DOCS = join(ROOT, 'docs')

const run = (args) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' })

test('npx wikidex site writes the bundle the CLI writes, touching nothing else', () => {
  const out = scratch('wikidex-site-node-')
  writeFileSync(join(out, 'index.html'), '<!doctype html><title>mine</title>')
  const r = run(['site', DOCS, '--out', out, '--layout', 'mkdocs', '--json'])
  assert.equal(r.status, 0, r.stderr + r.stdout)
  const report = JSON.parse(r.stdout)
  const bundle = join(out, 'wikidex')
  const site = JSON.parse(readFileSync(join(bundle, 'site.json'), 'utf8'))
  assert.deepEqual(report.manifest, site)
  assert.ok(site.pages > 10, `${site.pages} pages`)
  assert.deepEqual(readdirSync(out).sort(), ['index.html', 'wikidex'])
  assert.equal(readFileSync(join(out, 'index.html'), 'utf8'), '<!doctype html><title>mine</title>')
  for (const f of ['wikidex.wdx', 'site.json', 'wikidex_wasm.js', 'wikidex_wasm_bg.wasm', 'ranged.js', 'ui.js', 'worker.js', 'ui.css']) {
    assert.ok(report.files.includes(f), `${f} not written`)
  }
  // The CLI writes the same bundle from the same sources.
  const cli = process.env.WIKIDEX_BIN
  if (cli) {
    const cliOut = scratch('wikidex-site-cli-')
    const c = spawnSync(cli, ['site', DOCS, '--out', cliOut, '--layout', 'mkdocs', '--json'], { encoding: 'utf8' })
    assert.equal(c.status, 0, c.stderr)
    assert.deepEqual(JSON.parse(readFileSync(join(cliOut, 'wikidex', 'site.json'), 'utf8')), site)
    assert.deepEqual(readFileSync(join(cliOut, 'wikidex', 'wikidex.wdx')), readFileSync(join(bundle, 'wikidex.wdx')))
  }
})

test('npx wikidex site --model: the model and its runner for the semantic toggle, as the CLI writes them', { timeout: 180_000 }, (t) => {
  const minilm = join(ROOT, 'models', 'all-MiniLM-L6-v2')
  if (!existsSync(join(minilm, 'model-int8.onnx'))) return t.skip(`no model at ${minilm}`)
  const model = scratch('wikidex-site-model-')
  symlinkSync(join(minilm, 'model-int8.onnx'), join(model, 'model.onnx'))
  symlinkSync(join(minilm, 'tokenizer.json'), join(model, 'tokenizer.json'))
  const wiki = join(ROOT, 'examples', 'wiki')
  const out = scratch('wikidex-site-node-')
  const r = run(['site', wiki, '--out', out, '--layout', 'mkdocs', '--model', model, '--json'])
  assert.equal(r.status, 0, r.stderr + r.stdout)
  const site = JSON.parse(r.stdout).manifest
  assert.equal(site.semantic.dim, 384)
  const files = ['model.onnx', 'tokenizer.json', 'wikidex_wasm.js', 'wikidex_wasm_bg.wasm']
  assert.deepEqual(readdirSync(join(out, 'wikidex', 'semantic')).sort(), files)
  assert.equal(site.semantic.bytes, files.reduce((n, f) => n + statSync(join(out, 'wikidex', 'semantic', f)).size, 0))
  const cli = process.env.WIKIDEX_BIN
  if (cli) {
    const cliOut = scratch('wikidex-site-cli-')
    const c = spawnSync(cli, ['site', wiki, '--out', cliOut, '--layout', 'mkdocs', '--model', model, '--json'], { encoding: 'utf8' })
    assert.equal(c.status, 0, c.stderr)
    assert.deepEqual(JSON.parse(readFileSync(join(cliOut, 'wikidex', 'site.json'), 'utf8')), site)
    for (const f of files) {
      assert.deepEqual(readFileSync(join(cliOut, 'wikidex', 'semantic', f)), readFileSync(join(out, 'wikidex', 'semantic', f)), f)
    }
  }
})

test('npx wikidex site: coded errors for bad arguments', () => {
  const out = scratch('wikidex-site-node-')
  const code = (args) => {
    const r = run([...args, '--json'])
    assert.notEqual(r.status, 0)
    return JSON.parse(r.stdout).error.code
  }
  assert.equal(code(['site', DOCS, '--out', out]), 'invalid_argument')
  assert.equal(code(['site', DOCS, '--out', out, '--layout', 'jekyll']), 'invalid_argument')
  assert.equal(code(['site', join(out, 'missing'), '--out', out, '--layout', 'mkdocs']), 'io')
  assert.equal(code(['site', DOCS]), 'usage')
  const other = run(['search', 'x'])
  assert.equal(other.status, 2)
  assert.match(other.stderr, /command of the wikidex CLI/)
})
