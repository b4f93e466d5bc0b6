// Test databases: in-memory PGlite by default; with DATABASE_URL, a fresh database on that
// server per test file (created here, dropped afterwards), so files never share state.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "effect/sql/SqlClient"
import * as Redacted from "effect/Redacted"
import { type Database, pglite, postgres, withMigrations } from "./client.ts"

interface TestPool {
  readonly pipeline?: number
  /** Connect through this local port (a TCP proxy the test can cut) instead of the server's own. */
  readonly viaPort?: number
}

const freshPostgres = (url: string, pool: TestPool): Layer.Layer<Database, unknown> =>
  Layer.unwrap(Effect.gen(function*() {
    const name = `mes_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
    const admin = PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })
    const run = (statement: string) =>
      Effect.gen(function*() {
        const sql = yield* SqlClient
        yield* sql.unsafe(statement).raw
      }).pipe(Effect.provide(admin), Effect.orDie)
    yield* Effect.acquireRelease(run(`CREATE DATABASE ${name}`), () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).pipe(Effect.ignore))
    const u = new URL(url)
    u.pathname = `/${name}`
    if (pool.viaPort !== undefined) {
      u.hostname = "127.0.0.1"
      u.port = String(pool.viaPort)
    }
    return postgres(u.toString(), pool)
  }))

/**
 * A migrated database for one test file. On PostgreSQL every concurrent statement gets a connection
 * of its own unless `pipeline` says otherwise: statements pipelined on one connection run one after
 * another, which would hide the races the tests provoke.
 */
export const testDatabase = (pool: TestPool = {}): Layer.Layer<Database, unknown> => {
  const url = process.env.DATABASE_URL
  return withMigrations(url !== undefined && url !== "" ? freshPostgres(url, { ...pool, pipeline: pool.pipeline ?? 1 }) : pglite())
}

export const testDatabaseKind = (): "postgres" | "pglite" =>
  process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== "" ? "postgres" : "pglite"
