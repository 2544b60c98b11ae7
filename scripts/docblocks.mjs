// The fenced code blocks of a Markdown file, with the `<!-- not run: reason -->` marker above
// each, and the ES module a file's JavaScript blocks make: what bindings-node/test/docs.test.mjs
// runs, and what scripts/dist-check.sh takes from the README.
//
//   node scripts/docblocks.mjs FILE   # the module of FILE's runnable js blocks, on stdout
import { readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
export const JS = new Set(['js', 'javascript', 'mjs'])
const FENCE = /^(\s*)(```+|~~~+)\s*([^\s`]*)/
const MARKER = /^\s*<!--\s*not run:\s*(\S.*?)\s*-->\s*$/

/** The fenced blocks of a Markdown file: { line, lang, code, notRun }. */
export function blocks(path) {
  const lines = readFileSync(path, 'utf8').split('\n')
  const out = []
  for (let i = 0; i < lines.length; i++) {
    const m = FENCE.exec(lines[i])
    if (!m) continue
    const [, indent, fence, lang] = m
    const start = i
    const body = []
    for (i++; i < lines.length && !lines[i].trim().startsWith(fence); i++) {
      body.push(lines[i].startsWith(indent) ? lines[i].slice(indent.length) : lines[i].trimStart())
    }
    let prev = start - 1
    while (prev >= 0 && !lines[prev].trim()) prev--
    const marker = prev >= 0 ? MARKER.exec(lines[prev]) : null
    out.push({ line: start + 1, lang: lang.toLowerCase(), code: body.join('\n') + '\n', notRun: marker ? marker[1] : null })
  }
  return out
}

/** One module from a file's blocks: import lines first (each once), then the rest in order. */
export function moduleOf(path, todo) {
  const imports = []
  const rest = []
  for (const b of todo) {
    rest.push(`// ${relative(ROOT, path)}:${b.line}`)
    for (const line of b.code.split('\n')) {
      if (/^import\s/.test(line)) {
        if (!imports.includes(line)) imports.push(line)
      } else rest.push(line)
    }
  }
  return [...imports, ...rest].join('\n')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const path = process.argv[2]
  const todo = blocks(path).filter((b) => JS.has(b.lang) && b.notRun === null)
  if (todo.length === 0) throw new Error(`docblocks: no runnable js block in ${path}`)
  console.log(moduleOf(path, todo))
}
