'use strict'
// `npm install`: use the native addon when the package carries one (a packed tarball, or a
// checkout where `make node` built it); otherwise build it from the Rust sources beside this
// folder (a fresh clone: needs a Rust toolchain; a release build takes some minutes).
const { existsSync } = require('node:fs')
const { join } = require('node:path')
const { execSync } = require('node:child_process')

const root = join(__dirname, '..')
const binary = join(root, `wikidex.${process.platform}-${process.arch}-gnu.node`)
if (existsSync(binary) || existsSync(join(root, `wikidex.${process.platform}-${process.arch}.node`))) {
  process.exit(0)
}
if (!existsSync(join(root, 'Cargo.toml'))) {
  console.error('wikidex: no native addon for this platform in the package, and no Rust sources to build one')
  process.exit(1)
}
const local = join(root, 'node_modules', '.bin', 'napi')
const napi = existsSync(local) ? JSON.stringify(local) : 'npx --yes @napi-rs/cli@3.10.12'
console.error('wikidex: building the native addon (cargo, release profile)...')
execSync(`${napi} build --platform --release --js native.js --dts index.d.ts`, { cwd: root, stdio: 'inherit' })
