// `mkdir -p` that always returns, over the file system an adapter hands it (Node's `node:fs` and `node:path`, which
// the domain does not import): the embedded database's directory, the CLI's lock beside it, and the uploads'
// storage directory. Node's `mkdirSync(path, { recursive: true })` (and `fs.promises.mkdir`) never returns where
// mkdir answers ENOENT inside a directory that exists (`/proc/x/y`: procfs and sysfs do), and a process stuck in
// it does not stop on SIGTERM either, since its handler is JavaScript.

/** What `directories` needs of a file system: Node's `node:fs` has it. */
export interface DirectoryFileSystem {
  readonly statSync: (path: string, options: { readonly throwIfNoEntry: false }) => { isDirectory(): boolean } | undefined
  readonly mkdirSync: (path: string, options: { readonly mode: number }) => unknown
}

/** What `directories` needs of paths: Node's `node:path` has it. */
export interface DirectoryPaths {
  readonly resolve: (path: string) => string
  readonly dirname: (path: string) => string
}

export const directories = (fs: DirectoryFileSystem, paths: DirectoryPaths) => {
  /**
   * Makes `path` and the directories above it that are missing (each with `mode`), or throws why it cannot
   * (ENOTDIR under a file, EEXIST where a file is, the mkdir's own error otherwise).
   */
  const make = (path: string, mode = 0o777): void => {
    const missing: Array<string> = []
    let at = paths.resolve(path)
    // up to the nearest path that exists (a file above it stops the walk with stat's ENOTDIR), so that one is the
    // path itself when it is not a directory
    let stat = fs.statSync(at, { throwIfNoEntry: false })
    while (stat === undefined) {
      missing.push(at)
      if (paths.dirname(at) === at) break
      at = paths.dirname(at)
      stat = fs.statSync(at, { throwIfNoEntry: false })
    }
    if (stat?.isDirectory() === false) {
      throw Object.assign(new Error(`EEXIST: file already exists, mkdir '${path}'`), { code: "EEXIST" })
    }
    for (const dir of missing.reverse()) {
      try {
        fs.mkdirSync(dir, { mode })
      } catch (e) {
        if ((e as { readonly code?: string }).code !== "EEXIST") throw e
        const there = fs.statSync(dir, { throwIfNoEntry: false })
        // a symbolic link whose target does not exist: there is a name, but nothing to make anything in
        if (there === undefined) throw Object.assign(new Error(`ENOENT: a symbolic link to nothing, mkdir '${dir}'`), { code: "ENOENT" })
        // else made by another process meanwhile, or a file made meanwhile
        if (!there.isDirectory()) throw e
      }
    }
  }
  /**
   * Makes `dir` as `make` does: undefined when it is a directory now, else why it cannot be one, to follow the
   * setting's name and value in a message ("is a file, not a directory", "cannot be a directory (ENOENT: …)").
   */
  const unusable = (dir: string, mode?: number): string | undefined => {
    try {
      make(dir, mode)
      return undefined
    } catch (e) {
      return (e as { readonly code?: string }).code === "EEXIST" ? "is a file, not a directory" : `cannot be a directory (${(e as Error).message})`
    }
  }
  return { make, unusable }
}
