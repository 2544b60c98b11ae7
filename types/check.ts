// Type-checked, never run, by `make lint` (tsc --noEmit --strict): the records and the
// declarations each surface ships with them compile, and a record is one type on every surface.
// (scripts/records.py checks that each surface holds the records verbatim.)
import type * as Records from './records.js'
import type * as Node from '../bindings-node/index.js'
import type * as Browser from '../bindings-wasm/types.js'

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false

export const same: [
  Same<Node.SearchResults, Records.SearchResults>,
  Same<Browser.SearchResults, Records.SearchResults>,
  Same<Node.PageRecord, Browser.PageRecord>,
  Same<Node.LogEntry, Browser.LogEntry>,
  Same<Node.SyncRecord, Records.SyncRecord>,
] = [true, true, true, true, true]

// The surfaces' own build options take the shared `Config`.
export const config: Records.Config = { bm25: { k1: 1.2 } }
export const node: Node.BuildOptions = { config, strict: true, vectors: 'int8' }
export const browser: Browser.BuildOptions = { config, strict: true }
