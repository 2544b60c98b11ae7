// The wasm module (bindings-wasm/pkg, from scripts/wasm-build.sh) instantiated in Node from its
// bytes, as a page does with `init(fetch(...))`. Imported by the tests; not a test itself.
import { readFileSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { initSync } from '../pkg/wikidex_wasm.js'

const PKG = join(dirname(fileURLToPath(import.meta.url)), '..', 'pkg')
initSync({ module: readFileSync(join(PKG, 'wikidex_wasm_bg.wasm')) })

export * from '../pkg/wikidex_wasm.js'
