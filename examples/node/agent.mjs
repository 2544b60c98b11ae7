// An agent's turn with wikidex in Node: search the wiki, build the prompt block the model
// reads, take its answer (a canned string here, so the example runs without an LLM), verify
// the citations, and print the verdicts. Run from the repository root:
//   node examples/node/agent.mjs
import { Index } from 'wikidex'

const index = await Index.build('examples/wiki')

const question = 'why did the nightly job crash on 2024-03-12?'
const results = await index.search(question, { limit: 3 })
const block = index.promptBlock(results)
console.log(`${results.hits.length} hits; the prompt block offers ${block.offered.length} chunks:`)
for (const hit of results.hits) console.log(`  ${hit.page_id} (${hit.chunk}, score ${hit.score.toFixed(4)})`)

// What a model would answer from the block, citing chunk ids (one of them made up).
const answer =
  'The segment_enricher pod was OOM-killed three times, and nightly_build failed at 03:31 UTC ' +
  '[raw/slack_2024_03_12::chunk_0]. The fix was a memory limit on the pod [made_up::chunk_0].'
const check = index.checkAnswer(answer, [], block.offered)

console.log(`\ncitations (passed: ${check.verification.passed}):`)
for (const c of check.verification.citations) console.log(`  ${c.status.padEnd(10)} ${c.id}`)
for (const s of check.support.uncited) console.log(`uncited sentence: ${s.text}`)
