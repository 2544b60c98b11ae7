// The cross-language vectors through the wasm module (the lexical build in bindings-wasm/pkg,
// loaded in Node; everything is synchronous here), with the shared runner of
// tests/vectors/runner.mjs.
import { runVectors } from '../../tests/vectors/node.mjs'
import { Index, parseHeaders } from './wasm.mjs'

runVectors({
  build: (files, config) => Index.build(files, { config }),
  search: (index, query, options) => index.search(query, options),
  lint: (index) => index.lint(),
  fromBytes: (bytes) => Index.fromBytes(bytes),
  parseHeaders,
  isCoreError: (e) => typeof e?.code === 'string',
})
