// The domain services over the PostgreSQL stores over a fresh test database, for one test file: `run`
// executes an effect with them, `asTenant` supplies the caller's tenant.
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll } from "vitest"
import { CurrentTenant, DomainLive, UrlGuard } from "@mes/domain"
import { StoresPg, testDatabase } from "../src/index.ts"

export type Run = <A, E>(effect: Effect.Effect<A, E, any>) => Promise<A>

/** Builds the application before the file's tests (pool options as testDatabase takes them) and closes it after. */
export const useDomainApp = (pool: Parameters<typeof testDatabase>[0] = {}): Run => {
  let scope: Scope.Closeable
  let context: any
  beforeAll(async () => {
    scope = Effect.runSync(Scope.make())
    const app = DomainLive.pipe(
      Layer.provideMerge(StoresPg),
      Layer.provideMerge(Layer.succeed(UrlGuard, UrlGuard.allowAll)),
      Layer.provideMerge(testDatabase(pool))
    )
    context = await Effect.runPromise(Layer.buildWithScope(app, scope))
  })
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))
  return (effect) => Effect.runPromise(Effect.provideContext(effect, context) as Effect.Effect<any, any>)
}

export const asTenant = <A, E, R>(tenantId: string, effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, CurrentTenant, { id: tenantId, plan: "free", via: "api_key" })

/**
 * A transaction of its own, on a connection of its own, that `first` opens and that stays open until `commit()`:
 * `written` once `first` ran; then `last` runs in it and it commits (`done`). A request started in between that needs
 * what `first` locked waits for it (see `someoneWaits`).
 */
export const held = (run: Run, first: Effect.Effect<unknown, unknown, SqlClient>, last: Effect.Effect<unknown, unknown, SqlClient> = Effect.void) => {
  let commit!: () => void
  let wrote!: () => void
  const released = new Promise<void>((resolve) => (commit = resolve))
  const written = new Promise<void>((resolve) => (wrote = resolve))
  const done = run(Effect.flatMap(Effect.service(SqlClient), (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* first
      wrote()
      yield* Effect.promise(() => released)
      yield* last
    }))))
  return { written, commit, done }
}

/** Waits (at most 3 s) until a statement on this test database waits for a lock; false when none did. */
export const someoneWaits = async (run: Run) => {
  for (let i = 0; i < 150; i++) {
    const [row] = await run(Effect.flatMap(Effect.service(SqlClient), (sql) =>
      sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE NOT l.granted AND a.datname = current_database()`))
    if (row!.n > 0) return true
    await new Promise((r) => setTimeout(r, 20))
  }
  return false
}
