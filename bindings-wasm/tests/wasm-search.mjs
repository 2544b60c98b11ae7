// The search module (bindings-wasm/pkg-search: `RangedIndex` alone, built without the
// default features by scripts/wasm-build.sh) instantiated in Node from its bytes, as wasm.mjs does for the whole
// module. Imported by the tests; not a test itself.
import { readFileSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { initSync } from '../pkg-search/wikidex_wasm.js'

const PKG = join(dirname(fileURLToPath(import.meta.url)), '..', 'pkg-search')
initSync({ module: readFileSync(join(PKG, 'wikidex_wasm_bg.wasm')) })

export * from '../pkg-search/wikidex_wasm.js'
