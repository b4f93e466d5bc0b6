// The database of each run: postgres gets a fresh database on the loopback server (created before the run and
// dropped after it, over an admin connection); PGlite lives inside the server process, in memory or in a
// throwaway dataDir (--pglite-dir).
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Db } from "@mes/adapters-pg"
import { adminUrl, type DbKind, pgliteDir, pgPool } from "./options.ts"

const admin = <A>(f: (sql: SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(
    Effect.gen(function*() {
      return yield* f(yield* SqlClient)
    }).pipe(Effect.provide(Db.postgres(adminUrl, { maxConnections: 1 })), Effect.scoped) as Effect.Effect<A, unknown>
  )

export interface Database {
  readonly name: string
  readonly url: string
}
export const createDatabase = async (): Promise<Database> => {
  const name = `mes_bench_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  await admin((sql) => sql.unsafe(`CREATE DATABASE ${name}`).raw)
  const u = new URL(adminUrl)
  u.pathname = `/${name}`
  return { name, url: u.toString() }
}
export const dropDatabase = (name: string) => admin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).raw)
export const postgresVersion = () =>
  admin((sql) => sql.unsafe<{ version: string }>("SELECT version() AS version")).then((r) => r[0]!.version, (e) => `unavailable: ${String(e)}`)

/** The database arguments of bench/server.ts: the fresh database and the pool size, or where PGlite keeps its data. */
export const serverDbArgs = (db: DbKind, database: Database | undefined): Array<string> =>
  db === "postgres" ? ["--url", database!.url, "--max-connections", String(pgPool)] : ["--data-dir", pgliteDir]
