// The cross-language vectors through the Node addon (the shared runner: tests/vectors/runner.mjs,
// under node:test by tests/vectors/node.mjs).
import { runVectors } from '../../tests/vectors/node.mjs'
import { Index, parseHeaders } from '../index.mjs'

runVectors({
  build: (files, config) => Index.buildSync(files, { config }),
  search: (index, query, options) => index.searchSync(query, options),
  lint: (index) => index.lintSync(),
  fromBytes: (bytes) => Index.fromBytesSync(bytes),
  parseHeaders,
  isCoreError: (e) => typeof e?.code === 'string' && e.code !== 'GenericFailure',
})
