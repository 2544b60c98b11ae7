// Scratch folders for a test file: each made under the system's temporary folder, and all of
// them removed once the file's tests are done (pass or fail), so a test run leaves none behind.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after } from 'node:test'

const made = []

after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

/** A fresh folder named `prefix` and six random characters, removed after the file's tests. */
export function scratch (prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  made.push(dir)
  return dir
}
