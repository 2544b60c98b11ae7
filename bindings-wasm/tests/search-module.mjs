// How the search module (bindings-wasm/pkg-search) runs the shared vectors, for its Node run
// (search.test.mjs) and its Chromium run (browser/vectors.test.mjs): the ops it lacks, and the
// one deliberate difference. No imports: a browser loads this file as it is.

const NO_WRITES = 'the search module has no page writes'
const ONE_PIECE = "the vectors' blobs are in one piece (v7), which the search module does not read (sectioned blobs only; changed and cut sectioned blobs: core's tests and ranged.test.mjs)"
const AGENT_SIDE = 'the search module leaves out the agent side (feature agent): tools, citation checks, lint, graph walks'

/** The ops the search module does not have, as the runner's `api.lacks` takes them. */
export const LACKS = {
  build_report: 'a loaded index has no build report',
  lint: AGENT_SIDE,
  neighbors: AGENT_SIDE,
  verify: AGENT_SIDE,
  check_answer: AGENT_SIDE,
  uncited_support: AGENT_SIDE,
  pointers: AGENT_SIDE,
  parse_headers: AGENT_SIDE,
  upsert_page: NO_WRITES,
  delete_page: NO_WRITES,
  rename_page: NO_WRITES,
  from_bytes: ONE_PIECE,
  call_tool: AGENT_SIDE,
}

/**
 * The oldest blob format the search module reads. It is built without the core's `one-piece`
 * feature (the decoder of blobs in one piece, 11 KB gzipped), so it reads the sectioned
 * formats, 8 and later; the vectors were written by a build that reads 1 and later.
 */
export const OLDEST_FORMAT = 8

/**
 * The runner's `api.differs`: an `incompatible_format` error names the oldest format the build
 * reads, which is `OLDEST_FORMAT` here and 1 in the files. Only that field changes.
 */
export function differs(_file, c) {
  const details = c.expect?.details
  if (c.expect?.error !== 'incompatible_format' || details?.oldest !== 1) return null
  return {
    reason: `the search module reads formats ${OLDEST_FORMAT} and later (no core feature one-piece)`,
    expect: { ...c.expect, details: { ...details, oldest: OLDEST_FORMAT } },
  }
}
