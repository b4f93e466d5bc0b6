// Database layers: real PostgreSQL (DATABASE_URL) or embedded PGlite (MES_DATA_DIR), both driven
// by the production driver @effect/sql-pg, so queries, types and errors are the same on both.
import { closeSync, fstatSync, mkdtempSync, openSync, readSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import type { PGliteOptions } from "@electric-sql/pglite"
import { PgClient } from "@effect/sql-pg"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { durationConfig, integerConfig, parsedConfig } from "@mes/domain"
import { makeDirectory } from "./directory.ts"
import { migrate } from "./migrator.ts"
import { pageTypes } from "./page-bytes.ts"

export type Database = PgClient.PgClient | SqlClient

/**
 * The largest message the driver accepts from the server. A list page of 1,000 jobs with their parts is one
 * row of JSON; past the driver's default (16 MiB) the connection would be dropped, and every statement
 * pipelined on it with it.
 */
const MAX_MESSAGE_BYTES = 256 * 1024 * 1024

/**
 * A pool on a real PostgreSQL server. Statements of concurrent requests share its connections,
 * several at a time (`pipeline`, MES_DB_PIPELINE): they travel in one write and wait for one
 * wake-up of the server process instead of each paying both (measured: list +40 %, create +20 %
 * on 2 cores; past a few per connection, large results queue behind each other and memory grows).
 * Transactions still have a connection of their own.
 */
export const postgres = (
  url: string,
  options: { readonly maxConnections?: number; readonly pipeline?: number; readonly connectTimeout?: Duration.Duration } = {}
): Layer.Layer<Database, SqlError> =>
  PgClient.layer({
    url: Redacted.make(url),
    // a server that does not answer fails the request (503) after this instead of holding it
    connectTimeout: options.connectTimeout ?? Duration.seconds(5),
    maxMessageSize: MAX_MESSAGE_BYTES,
    types: pageTypes(),
    maxConnections: options.maxConnections ?? 10,
    multiplex: (options.pipeline ?? 4) > 1,
    multiplexConcurrency: options.pipeline ?? 4,
    // no JIT: mes's statements are short OLTP work whose planned cost (one statement per write, a bulk of
    // 1,000 records in one) crosses jit_above_cost, and compiling then took longer than running
    // (measured: bulk-sync of 100 jobs 2.9 s with JIT, 0.33 s without)
    startupParameters: { jit: "off" }
  })

// PGlite's own defaults (its defaultStartParams), which passing startParams replaces
const PGLITE_START = ["--single", "-F", "-O", "-j", "-c", "search_path=public", "-c", "exit_on_error=false", "-c", "log_checkpoints=false",
  "-c", "max_worker_processes=0", "-c", "max_parallel_workers=0", "-c", "max_parallel_workers_per_gather=0", "-c", "io_method=sync",
  "-c", "max_parallel_maintenance_workers=0"]

const MEMORY_UNITS: Record<string, number> = { B: 1, kB: 1024, MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4 }

/** What the embedded database's shared buffers may be (beyond it PGlite fails to start, and says only "PGlite failed to initialize properly"). */
const SHARED_BUFFERS = { min: 128 * 1024, max: 1024 ** 3, wanted: "a size from 128kB to 1GB (like 8MB, 64MB, 1GB)" } as const

/**
 * A size for PGlite's `shared_buffers` as PostgreSQL writes sizes (`8MB`, `512kB`, `0.5GB`; a bare number counts 8 kB
 * pages), as whole kB, or undefined when it is no such size or lies outside SHARED_BUFFERS: PostgreSQL's least, and
 * what the embedded database's WebAssembly memory can hold (2GB fails to start).
 */
export const sharedBuffersOf = (text: string): string | undefined => {
  const m = /^(\d+(?:\.\d+)?)\s*(B|kB|MB|GB|TB)?$/.exec(text.trim())
  if (m === null) return undefined
  const bytes = Number(m[1]) * (m[2] === undefined ? 8192 : MEMORY_UNITS[m[2]]!)
  return bytes >= SHARED_BUFFERS.min && bytes <= SHARED_BUFFERS.max ? `${Math.round(bytes / 1024)}kB` : undefined
}

/** How long the embedded database's socket server may take to stop (see `pglite`). */
const SOCKET_SERVER_STOP = Duration.seconds(1)

/**
 * Embedded PostgreSQL: PGlite in this process, served on a private unix socket.
 * `dataDir` undefined means in memory. PGlite is one session, so the pool holds one connection:
 * transactions then serialize instead of interleaving on the shared session.
 * PGlite is loaded only here, so a PostgreSQL deployment never loads it.
 */
export const pglite = (dataDir?: string, options: { readonly sharedBuffers?: string } = {}): Layer.Layer<Database, SqlError> =>
  Layer.unwrap(Effect.gen(function*() {
    // shared buffers live in the process's memory here (touched at start: each MB is a MB of RSS); pages
    // beyond them come from PGlite's file system, i.e. the OS page cache (MES_PGLITE_SHARED_BUFFERS, docs/DECISIONS.md)
    const sharedBuffers = sharedBuffersOf(options.sharedBuffers ?? "8MB")
    if (sharedBuffers === undefined) {
      return yield* Effect.die(new Error(`sharedBuffers: '${options.sharedBuffers}' is not ${SHARED_BUFFERS.wanted}`))
    }
    const settings = ["-c", `shared_buffers=${sharedBuffers}`]
    if (dataDir !== undefined) makeDirectory(dataDir)
    const [{ PGlite }, { PGLiteSocketServer }, pgliteWasmModule] = yield* Effect.all([
      Effect.promise(() => import("@electric-sql/pglite")),
      Effect.promise(() => import("@electric-sql/pglite-socket")),
      Effect.promise(compilePostgres)
    ], { concurrency: "unbounded" })
    const create: PGliteOptions = {
      ...(dataDir !== undefined ? { dataDir } : {}),
      ...(pgliteWasmModule !== undefined ? { pgliteWasmModule: pgliteWasmModule as NonNullable<PGliteOptions["pgliteWasmModule"]> } : {}),
      startParams: [...PGLITE_START, ...settings]
    }
    const db = yield* Effect.acquireRelease(
      Effect.promise(() => PGlite.create(create)),
      (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
    )
    const socketDir = mkdtempSync(join(tmpdir(), "mes-pglite-"))
    const path = join(socketDir, ".s.PGSQL.5432")
    yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const server = new PGLiteSocketServer({ db, path, maxConnections: 4 })
        await server.start()
        return server
      }),
      (server) =>
        Effect.promise(() => server.stop()).pipe(
          // stop() waits for every connection to close, and ends (half-closes) one that arrives while it stops. The
          // pool, interrupted in the middle of a query (a signal during start-up's migrations), opens a replacement
          // that arrives then and is never closed from its side, so the wait was endless and the process hung
          // (DECISIONS, "The embedded database is single-process"): bounded, PGlite is closed after it either way
          Effect.timeoutOption(SOCKET_SERVER_STOP),
          Effect.ignore,
          Effect.ensuring(Effect.sync(() => rmSync(socketDir, { recursive: true, force: true })))
        )
    )
    return PgClient.layer({ path, username: "postgres", database: "postgres", maxConnections: 1, maxMessageSize: MAX_MESSAGE_BYTES, types: pageTypes() })
  }))

// the part of the WebAssembly global used here (the project's TypeScript libraries do not declare it)
const { WebAssembly: wasm } = globalThis as unknown as {
  readonly WebAssembly: {
    readonly Memory: new(descriptor: { readonly initial: number }) => { readonly buffer: ArrayBuffer }
    readonly compile: (bytes: Uint8Array) => Promise<PostgresModule>
  }
}
/** A compiled WebAssembly.Module (PGlite's option `pgliteWasmModule`). */
type PostgresModule = object

/**
 * PGlite's PostgreSQL compiled from its file, read into memory that malloc never sees (undefined where the file is
 * not beside PGlite's entry point, e.g. PGlite bundled into an embedder's code: PGlite then reads it itself).
 * PGlite reads the 9 MB file into an ArrayBuffer that V8 frees with free() once it is compiled; freeing a block that
 * large raises glibc's dynamic mmap threshold to its size and the trim threshold to twice that, so from then on each
 * thread's malloc arena keeps up to 18 MB of freed memory instead of returning it (DECISIONS, "Embedded database:
 * PostgreSQL's WebAssembly read outside malloc"; V8's compile zones, freed the same way, still raise it to ≈ 4 MB).
 * A WebAssembly.Memory's buffer comes from V8's page allocator and goes back with munmap; V8 keeps its own copy of
 * the bytes for as long as the module lives. Measured, idle embedded `mes serve` without flags at 30 s, six pairs
 * alternating: 187–216 MB (median 205) before, 155–188 MB (median 168) with this.
 */
const compilePostgres = (): Promise<PostgresModule | undefined> => {
  let file: string
  let fd: number
  try {
    file = join(dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite")), "pglite.wasm")
    fd = openSync(file, "r")
  } catch {
    return Promise.resolve(undefined)
  }
  try {
    const size = fstatSync(fd).size
    const bytes = new Uint8Array(new wasm.Memory({ initial: Math.ceil(size / 65_536) }).buffer, 0, size)
    for (let at = 0; at < size;) {
      const read = readSync(fd, bytes, at, size - at, at)
      if (read === 0) throw new Error(`${file} ended after ${at} of ${size} bytes`)
      at += read
    }
    return wasm.compile(bytes)
  } finally {
    closeSync(fd)
  }
}

/** DATABASE_URL when set, else PGlite in MES_DATA_DIR (default ./.mes/data); migrated on start. */
export const fromEnv = (options: { readonly migrate?: boolean } = {}): Layer.Layer<Database, unknown> =>
  Layer.unwrap(Effect.gen(function*() {
    const url = yield* Config.String("DATABASE_URL").pipe(Config.option)
    const dataDir = yield* Config.String("MES_DATA_DIR").pipe(Config.withDefault("./.mes/data"))
    const pool = yield* Config.all({
      maxConnections: integerConfig("MES_DB_POOL_SIZE", 10, { min: 1 }),
      pipeline: integerConfig("MES_DB_PIPELINE", 4, { min: 1 }),
      connectTimeout: durationConfig("MES_DB_CONNECT_TIMEOUT", Duration.seconds(5), { positive: true })
    })
    const base = Option.isSome(url) && url.value !== ""
      ? postgres(url.value, pool)
      : pglite(dataDir, { sharedBuffers: yield* parsedConfig("MES_PGLITE_SHARED_BUFFERS", "8MB", sharedBuffersOf, SHARED_BUFFERS.wanted) })
    return options.migrate === false ? base : withMigrations(base)
  }))

/** Runs pending migrations when the layer is built. */
export const withMigrations = <E>(db: Layer.Layer<Database, E>) =>
  Layer.effectDiscard(migrate).pipe(Layer.provideMerge(db))
