// The embedded database's lock file. PGlite is a single-process database: a second process opening the same data
// directory would corrupt it. A lock file next to the directory (<dir>.lock, holding the pid and, on Linux, when that
// process started) makes the second process fail with a clear message instead; a lock left by a dead process is
// taken over. Plain synchronous fs calls, no Effect: app.ts wraps them, and the lock tests run them in processes of
// their own.
import { closeSync, linkSync, openSync, readFileSync, unlinkSync, writeFileSync } from "node:fs"

/**
 * When process `pid` started (clock ticks since boot, /proc/<pid>/stat), "exited" for a zombie (killed, and not
 * yet reaped by a parent that never will: an orphan under a container's pid 1 that reaps nothing), or undefined
 * where /proc does not tell (not Linux, or no such process).
 */
const startOf = (pid: number): string | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // after "pid (comm) ": state is the 3rd field, starttime the 22nd; comm may hold spaces and parentheses
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return fields[0] === "Z" || fields[0] === "X" ? "exited" : fields[19]
  } catch {
    return undefined
  }
}

/** What the lock file says of this process. */
const lockText = () => `${process.pid} ${startOf(process.pid) ?? ""}`.trim()

/**
 * Whether the process a lock file names (`pid [start]`) still runs: a zombie does not, and neither does another
 * program that was given the same pid later (a restarted container's, or after a reboot), which started at
 * another time. A lock written without a start (not Linux, or an older mes) is judged by its pid alone.
 */
const holds = (pid: number, start: string | undefined) => {
  try {
    process.kill(pid, 0)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false
  }
  const now = startOf(pid)
  return now !== "exited" && (start === undefined || now === undefined || now === start)
}

const code = (e: unknown) => (e as NodeJS.ErrnoException).code

/** Runs `f`, treating a file that is not there (any more) as `orElse`. */
const unlessGone = <A>(f: () => A, orElse: A): A => {
  try {
    return f()
  } catch (e) {
    if (code(e) === "ENOENT") return orElse
    throw e
  }
}

/**
 * Puts this process's lock file (`mine`, already written) at `path` by a hard link, which fails if a file is there:
 * false then. Where the file system has no hard links, creates it exclusively and writes it (the old way).
 */
const place = (mine: string, path: string, text: string): boolean => {
  try {
    linkSync(mine, path)
    return true
  } catch (e) {
    if (code(e) === "EEXIST") return false
    if (code(e) !== "EPERM" && code(e) !== "ENOTSUP" && code(e) !== "ENOSYS") throw e
  }
  try {
    const fd = openSync(path, "wx")
    try {
      writeFileSync(fd, text)
    } finally {
      closeSync(fd)
    }
    return true
  } catch (e) {
    if (code(e) === "EEXIST") return false
    throw e
  }
}

/** The running process, other than this one, that a lock file's text (`pid [start]`) names; undefined if none. */
const heldBy = (text: string): number | undefined => {
  const [pid, started] = text.trim().split(/\s+/)
  const holder = Number(pid)
  return Number.isInteger(holder) && holder > 0 && holder !== process.pid && holds(holder, started) ? holder : undefined
}

const read = (path: string) => unlessGone(() => readFileSync(path, "utf8"), undefined)

const nap = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

/** Thrown when a running process holds the lock. */
export class LockHeld extends Error {
  readonly pid: number
  constructor(pid: number) {
    super(`held by pid ${pid}`)
    this.pid = pid
  }
}

/**
 * Takes the lock at `path`, or throws `LockHeld` naming the running process that holds it; returns what it wrote
 * there, for `releaseLock` to know the lock is still its own.
 *
 * Processes that start together get one winner (DECISIONS, CLI: "The embedded database is single-process"):
 * - A lock appears with its text: it is written to a file of this process's own and hard-linked into place, which
 *   fails if a lock is there. (Opening it exclusively and then writing it left a moment in which another process
 *   read it empty, took it for stale, and removed it.)
 * - A stale lock is removed by one process at a time, the one holding `<path>.takeover` (placed the same way), which
 *   reads the lock again before removing it; no other process removes a lock that is not its own, so none removes
 *   another's new lock. (Removing it by name let a second process remove the first one's new lock, and both went
 *   on.) A takeover file whose process is gone (killed in the moment it held it) is removed.
 */
export const acquireLock = (path: string): string => {
  const text = lockText()
  const mine = `${path}.${process.pid}`
  const takeover = `${path}.takeover`
  writeFileSync(mine, text)
  try {
    for (const deadline = Date.now() + 5_000; Date.now() < deadline;) {
      if (place(mine, path, text)) return text
      const found = read(path)
      if (found === undefined) continue // released meanwhile
      const holder = heldBy(found)
      if (holder !== undefined) throw new LockHeld(holder)
      if (place(mine, takeover, text)) {
        try {
          // read again: another process may have taken a stale lock over since
          const now = read(path)
          if (now !== undefined && heldBy(now) === undefined) unlessGone(() => unlinkSync(path), undefined)
        } finally {
          unlinkSync(takeover)
        }
      } else {
        const taking = read(takeover)
        if (taking !== undefined && heldBy(taking) === undefined) unlessGone(() => unlinkSync(takeover), undefined)
        else nap(1) // another process is taking it over: wait for its lock, or for the stale one to go
      }
    }
    throw new Error("the lock kept changing hands")
  } finally {
    unlessGone(() => unlinkSync(mine), undefined)
  }
}

/** Removes the lock at `path` if it is still the one `acquireLock` wrote (`text`). */
export const releaseLock = (path: string, text: string) =>
  unlessGone(() => {
    if (readFileSync(path, "utf8").trim() === text) unlinkSync(path)
  }, undefined)
