// The full wasm module (bindings-wasm/pkg-full: the whole API and the model runner, from
// scripts/wasm-build.sh) instantiated in Node from its bytes. Imported by the tests; not a
// test itself.
import { readFileSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { initSync } from '../pkg-full/wikidex_wasm.js'

const PKG = join(dirname(fileURLToPath(import.meta.url)), '..', 'pkg-full')
initSync({ module: readFileSync(join(PKG, 'wikidex_wasm_bg.wasm')) })

export * from '../pkg-full/wikidex_wasm.js'
