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
// corrupt it. A lock file next to the directory (<dir>.lock, holding the pid) makes the second
// process fail with a clear message instead; a lock left by a dead process is taken over.
const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

const acquireLock = (path: string, dataDir: string) =>
  Effect.try({
    try: () => {
      // the lock sits beside the data directory, which lockDataDir has made
      for (let attempt = 0; attempt < 3; attempt++) {
        try {
          const fd = openSync(path, "wx")
          writeSync(fd, String(process.pid))
          closeSync(fd)
          return
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
        }
        let holder = NaN
        try {
          holder = Number(readFileSync(path, "utf8").trim())
        } catch {
          continue // released meanwhile
        }
        if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && alive(holder)) {
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

const releaseLock = (path: string) =>
  Effect.sync(() => {
    try {
      if (readFileSync(path, "utf8").trim() === String(process.pid)) unlinkSync(path)
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
  yield* Effect.acquireRelease(acquireLock(path, dataDir), () => releaseLock(path))
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
