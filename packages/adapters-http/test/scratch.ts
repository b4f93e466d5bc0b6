// Scratch directories for a test file (storage, data directories, files to read), removed once its tests are
// done: a full test run made ≈ 200 of them under the system's temporary directory and left them there.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"

const made: Array<string> = []

// Registered when a test file first imports this module, before that file's own hooks: vitest runs a file's
// afterAll hooks last-registered first, so servers and child processes using a directory stop before it goes.
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A new empty directory under the system's temporary directory, named `prefix` + random characters. */
export const scratchDir = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  made.push(dir)
  return dir
}
