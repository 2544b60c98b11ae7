// ES module entry: the same objects as `require('wikidex')`.
import wikidex from './index.js'

export const { Index, IndexFile, Model, parseHeaders, version, modelPackages, writeSiteSync } = wikidex
export default wikidex
