// The application as the CLI composes it: database from the environment (DATABASE_URL, else
// embedded PGlite in MES_DATA_DIR), the PostgreSQL stores and the domain services.
import { resolve } from "node:path"
import { setFlagsFromString } from "node:v8"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { UrlGuardLive } from "@mes/adapters-http"
import { Db, StoresPg, unusableDirectory } from "@mes/adapters-pg"
export { migrate } from "@mes/adapters-pg"
import { DomainLive } from "@mes/domain"
import { acquireLock, LockHeld, releaseLock } from "./lock.ts"
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

/** Takes the data directory's lock (lock.ts), in the CLI's terms. */
const acquire = (path: string, dataDir: string) =>
  Effect.try({
    try: () => acquireLock(path),
    catch: (e) =>
      e instanceof LockHeld
        ? userError(
          `The embedded database in ${dataDir} is in use by another mes process (pid ${e.pid}). ` +
            `Stop it first (or use DATABASE_URL for a shared PostgreSQL server).`
        )
        : userError(`Could not lock the embedded database in ${dataDir} (${path}): ${e instanceof Error ? e.message : String(e)}`, e)
  })

/** In embedded mode, holds the data directory's lock for the enclosing scope; no-op with DATABASE_URL. */
export const lockDataDir = Effect.gen(function*() {
  const { url, dataDir } = yield* DatabaseConfig
  if (Option.isSome(url)) return
  const unusable = unusableDirectory(dataDir)
  if (unusable !== undefined) return yield* Effect.fail(userError(`MES_DATA_DIR: ${dataDir} ${unusable}`))
  const path = `${resolve(dataDir)}.lock`
  yield* Effect.acquireRelease(acquire(path, dataDir), (text) => Effect.sync(() => releaseLock(path, text)))
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
