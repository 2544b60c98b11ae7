// Type-checked (not run) by `make test-node` with `tsc --noEmit --strict`: the generated
// index.d.ts describes the API as the tests and examples use it.
import { Index, IndexFile, Model, parseHeaders, type SearchResults, type Hit, type WikidexError } from '../index.js'

async function main(): Promise<void> {
  const index: Index = await Index.build('examples/wiki', {
    config: { bm25: { k1: 1.2 } },
    onProgress: (stage, done, total) => console.log(stage, done / total),
  })
  const results: SearchResults = await index.search('outage', { limit: 3, lanes: ['lexical', 'token'], explain: true })
  const hit: Hit | undefined = results.hits[0]
  if (hit?.snippet) console.log(hit.snippet.text.slice(hit.snippet.highlights[0].start, hit.snippet.highlights[0].end))
  const model: Model = await Model.load('models/all-MiniLM-L6-v2', { maxLength: 128 })
  index.attachModel(model)
  const vectors: Float32Array[] = await model.embed(['a sentence'])
  index.setVectors(model.id, model.fingerprint, vectors, 'int8')
  const page = index.pageRecord('revenue', 'global')
  console.log(page.chunks.map((c) => page.body.slice(c.start, c.end)))
  const check = index.checkAnswer('text', ['a::chunk_0'], results.hits.map((h) => h.chunk))
  console.log(check.verification.citations.map((c) => c.status === 'quote'), parseHeaders('x')[0]?.score)
  try {
    index.chunk('x')
  } catch (e) {
    const err = e as WikidexError
    console.log(err.code, err.details)
  }
  const blob: Buffer = index.toBytes()
  await (await Index.fromBytes(blob)).save('/tmp/x.wdx')
  index.saveSync('/tmp/x.wdx')
  const file: IndexFile = await IndexFile.open('/tmp/x.wdx')
  file.attachModel(model)
  const found: SearchResults = await file.search('outage', { limit: 3 })
  const [read, length]: [number, number] = file.loaded
  console.log(found.hits.length, read / length, file.pageRecordSync('revenue').body, (await file.pageRecord('a')).title)
  console.log((await file.chunk('a::chunk_0')).text, file.chunkSync('a::chunk_0').key)
  const synced: Index = await Index.sync('examples/wiki', '/tmp/x.wdx', { model, file_times: false })
  const record = synced.syncRecord()
  if (record) console.log(record.written, record.added.length, record.build.pages)
}

void main()
