// The default model on the Node surface: the wikidex-model-minilm npm tarball (dist/, from
// `make dist-models`), installed into an empty folder, is what `Index.build(folder)` embeds
// with when no model is named and the caller runs from that folder; without it (and without
// WIKIDEX_MODEL) the build report says that the semantic lane is off and how to turn it on.
// Each case runs in a child Node process with the folder as its working directory, so what is
// installed is the test's choice, not the environment's.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execFileSync, spawnSync } from 'node:child_process'
import { scratch } from './scratch.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = join(HERE, '..', '..')
const WIKI = join(ROOT, 'examples', 'wiki')
const TARBALL = join(ROOT, 'dist', 'wikidex-model-minilm-0.1.0.tgz')
const BINDING = join(HERE, '..', 'index.js')
const missing = existsSync(TARBALL) ? false : `${TARBALL} is missing (make dist-models)`

// What the child reports: the semantic lane's status, the build report's note, the model id.
const PROBE = `
const { Index } = require(${JSON.stringify(BINDING)})
const options = JSON.parse(process.argv[1])
;(async () => {
  const index = await Index.build(process.argv[2], options === null ? undefined : options)
  const r = index.searchSync('who do I page for an outage')
  console.log(JSON.stringify({
    semantic: r.lanes.find((l) => l.lane === 'semantic').status,
    semantic_off: index.buildReport().semantic_off,
  }))
})().catch((e) => { console.error(e.code, e.message); process.exit(1) })
`

function folder(name) {
  const dir = scratch(`wikidex-${name}-`)
  writeFileSync(join(dir, 'package.json'), '{"private": true}\n')
  return dir
}

let installed
function withPackage() {
  if (!installed) {
    installed = folder('model-package')
    execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', TARBALL], {
      cwd: installed, stdio: 'pipe',
    })
  }
  return installed
}

function probe(cwd, options = null, env = {}) {
  const childEnv = { ...process.env, ...env }
  if (!('WIKIDEX_MODEL' in env)) delete childEnv.WIKIDEX_MODEL
  const done = spawnSync(process.execPath, ['-e', PROBE, JSON.stringify(options), WIKI], {
    cwd, env: childEnv, encoding: 'utf8',
  })
  return done
}

function report(done) {
  assert.equal(done.status, 0, done.stderr)
  return JSON.parse(done.stdout)
}

test('the installed model package gives the semantic lane with no model named', { skip: missing }, () => {
  assert.deepEqual(report(probe(withPackage())), { semantic: 'ok', semantic_off: null })
})

test('without a model package the build says how to turn the lane on', () => {
  const got = report(probe(folder('no-model')))
  assert.equal(got.semantic, 'skipped')
  assert.match(got.semantic_off, /semantic lane is off/)
  assert.match(got.semantic_off, /npm install wikidex-model-minilm/)
  assert.match(got.semantic_off, /WIKIDEX_MODEL/)
})

test('model: false builds without the package and without the note', { skip: missing }, () => {
  assert.deepEqual(report(probe(withPackage(), { model: false })), { semantic: 'skipped', semantic_off: null })
  assert.deepEqual(report(probe(withPackage(), { model: null })), { semantic: 'skipped', semantic_off: null })
})

test('WIKIDEX_MODEL wins over the package and must load', { skip: missing }, () => {
  const done = probe(withPackage(), null, { WIKIDEX_MODEL: join(tmpdir(), 'no-such-wikidex-model') })
  assert.notEqual(done.status, 0)
  assert.match(done.stderr, /no-such-wikidex-model/)
})

test('the package exports its model folder, with the manifest the core checks', { skip: missing }, () => {
  const out = execFileSync(process.execPath, ['-p', `
    const dir = require('wikidex-model-minilm')
    const m = require(require('path').join(dir, 'wikidex-model.json'))
    JSON.stringify({ base: require('path').basename(dir), package: m.package, onnx: m.onnx })`], {
    cwd: withPackage(), encoding: 'utf8',
  })
  assert.deepEqual(JSON.parse(out), { base: 'all-MiniLM-L6-v2', package: 'wikidex-model-minilm', onnx: 'model-int8.onnx' })
})
