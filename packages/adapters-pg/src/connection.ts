// Running an effect's statements on one connection of its own (see onOwnConnection).
import * as Effect from "effect/Effect"
import type { SqlClient } from "effect/sql/SqlClient"

/**
 * `effect` with its statements on a connection reserved for it, as a transaction's are but without BEGIN and
 * COMMIT: nothing of other requests is pipelined before or behind them (a slow statement holds up only its own
 * caller) and two such effects run in two server processes at once. A connection that cannot be had is a defect,
 * as a connection that breaks mid-statement is (the server answers 503).
 */
export const onOwnConnection = (sql: SqlClient) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.scoped(Effect.flatMap(Effect.orDie(sql.reserve), (conn) => Effect.provideService(effect, sql.transactionService, [conn, 0] as const)))
