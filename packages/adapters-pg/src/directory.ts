// Directories for the embedded database (and the CLI's lock beside it).
import { mkdirSync, statSync } from "node:fs"
import { dirname, resolve } from "node:path"

/**
 * `mkdir -p`: makes `path` and the directories above it that are missing, or throws why it cannot (ENOTDIR under a
 * file, EEXIST where a file is, the mkdir's own error otherwise). Node's `mkdirSync(path, { recursive: true })`
 * never returns where mkdir answers ENOENT inside a directory that exists (`/proc/x/y`: procfs and sysfs do), and
 * a process stuck in it does not stop on SIGTERM either, since its handler is JavaScript.
 */
export const makeDirectory = (path: string): void => {
  const missing: Array<string> = []
  let at = resolve(path)
  // up to the nearest path that exists (a file above it stops the walk with stat's ENOTDIR), so that one is the
  // path itself when it is not a directory
  let stat = statSync(at, { throwIfNoEntry: false })
  while (stat === undefined) {
    missing.push(at)
    if (dirname(at) === at) break
    at = dirname(at)
    stat = statSync(at, { throwIfNoEntry: false })
  }
  if (stat?.isDirectory() === false) {
    throw Object.assign(new Error(`EEXIST: file already exists, mkdir '${path}'`), { code: "EEXIST" })
  }
  for (const dir of missing.reverse()) {
    try {
      mkdirSync(dir)
    } catch (e) {
      // made by another process meanwhile
      if ((e as NodeJS.ErrnoException).code !== "EEXIST" || !statSync(dir).isDirectory()) throw e
    }
  }
}
