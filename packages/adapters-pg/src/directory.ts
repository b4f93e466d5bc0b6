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
  for (let stat = statSync(at, { throwIfNoEntry: false }); stat === undefined; stat = statSync(at, { throwIfNoEntry: false })) {
    missing.push(at)
    if (dirname(at) === at) break
    at = dirname(at)
  }
  if (missing.length === 0 && !statSync(at).isDirectory()) {
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
