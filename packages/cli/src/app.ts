// The application as the CLI composes it: database from the environment (DATABASE_URL, else
// embedded PGlite in MES_DATA_DIR), the PostgreSQL stores and the domain services.
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs"
import { resolve } from "node:path"
import { setFlagsFromString } from "node:v8"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { CliError } from "effect/cli"
import { UrlGuardLive } from "@mes/adapters-http"
import { Db, StoresPg, unusableDirectory } from "@mes/adapters-pg"
export { migrate } from "@mes/adapters-pg"
import { DomainLive } from "@mes/domain"
import { userError } from "./output.ts"

export const DEFAULT_DATA_DIR = "./.mes/data"

export const DatabaseConfig = Config.all({
  url: Config.String("DATABASE_URL").pipe(Config.option, Config.map(Option.filter((u) => u !== ""))),
  dataDir: Config.String("MES_DATA_DIR").pipe(Config.withDefault(DEFAULT_DATA_DIR))
})

export interface DbOptions {
  /** Run pending migrations when the database opens (default true). */
  readonly migrate?: boolean
}

/** The database alone (SqlClient), from the environment. */
export const DatabaseLive = (options: DbOptions = {}) => Db.fromEnv({ migrate: options.migrate ?? true })

/** Domain services over the PostgreSQL stores over the database; exposes all three. */
export const AppLive = (options: DbOptions = {}) =>
  DomainLive.pipe(Layer.provideMerge(UrlGuardLive), Layer.provideMerge(StoresPg), Layer.provideMerge(DatabaseLive(options)))

// PGlite is a single-process database: a second process opening the same data directory would
// corrupt it. A lock file next to the directory (<dir>.lock, holding the pid and, on Linux, when that process
// started) makes the second process fail with a clear message instead; a lock left by a dead process is taken over.

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

/** Takes the lock at `path`; what it wrote there, for `releaseLock` to know the lock is still its own. */
const acquireLock = (path: string, dataDir: string) =>
  Effect.try({
    try: () => {
      // the lock sits beside the data directory, which lockDataDir has made; its text is ready before the file is
      // made, so that the moment another process could read it empty (and take it for stale) stays as short as it was
      const text = lockText()
      for (let attempt = 0; attempt < 3; attempt++) {
        try {
          const fd = openSync(path, "wx")
          writeSync(fd, text)
          closeSync(fd)
          return text
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
        }
        let holder = NaN
        let start: string | undefined
        try {
          const [pid, started] = readFileSync(path, "utf8").trim().split(/\s+/)
          holder = Number(pid)
          start = started
        } catch {
          continue // released meanwhile
        }
        if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && holds(holder, start)) {
          throw userError(
            `The embedded database in ${dataDir} is in use by another mes process (pid ${holder}). ` +
              `Stop it first (or use DATABASE_URL for a shared PostgreSQL server).`
          )
        }
        try {
          unlinkSync(path) // stale
        } catch {
          // someone else removed it
        }
      }
      throw userError(`Could not lock the embedded database in ${dataDir} (${path})`)
    },
    catch: (e) => (e instanceof CliError.UserError ? e : userError(`Could not lock ${path}: ${e instanceof Error ? e.message : String(e)}`, e))
  })

const releaseLock = (path: string, text: string) =>
  Effect.sync(() => {
    try {
      if (readFileSync(path, "utf8").trim() === text) unlinkSync(path)
    } catch {
      // already gone
    }
  })

/** In embedded mode, holds the data directory's lock for the enclosing scope; no-op with DATABASE_URL. */
export const lockDataDir = Effect.gen(function*() {
  const { url, dataDir } = yield* DatabaseConfig
  if (Option.isSome(url)) return
  const unusable = unusableDirectory(dataDir)
  if (unusable !== undefined) return yield* Effect.fail(userError(`MES_DATA_DIR: ${dataDir} ${unusable}`))
  const path = `${resolve(dataDir)}.lock`
  yield* Effect.acquireRelease(acquireLock(path, dataDir), (text) => releaseLock(path, text))
})

/**
 * For the CLI's long-running commands (`serve`, `mcp`) on the embedded database, before it starts: V8 compiles
 * WebAssembly (PostgreSQL's, tiered up while it runs) on one background thread instead of up to one per thread of
 * its pool, so that one thread's malloc arena, not four, keeps what those compilations free. Process-wide, so set
 * by the CLI, which owns its process, and not by the library. DECISIONS: "Embedded database: WebAssembly compiled
 * on one thread".
 */
export const compileWasmOnOneThread = Effect.gen(function*() {
  const { url } = yield* DatabaseConfig
  if (Option.isNone(url)) setFlagsFromString("--wasm-num-compilation-tasks=1")
})

/** Runs `effect` with a database layer built for it (and the data-dir lock held around it). */
export const withLayer = <A, E, R, ROut, E2>(effect: Effect.Effect<A, E, R>, layer: Layer.Layer<ROut, E2>) =>
  Effect.scoped(Effect.gen(function*() {
    yield* lockDataDir
    return yield* Effect.provide(effect, layer)
  }))
