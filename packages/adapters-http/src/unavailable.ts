// Which failures of the database are answered 503 SERVICE_UNAVAILABLE with Retry-After instead of 500: it cannot
// be reached, it gave up on the request's statement, it takes no writes now, or it is out of resources. In each
// case nothing of the statement (or of its transaction) was kept, and the same request may succeed later.
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { isSqlError, type SqlError } from "effect/sql/SqlError"

/** The SQL errors among a cause's failures and defects. */
const sqlErrors = (cause: Cause.Cause<unknown>): ReadonlyArray<SqlError> =>
  cause.reasons.flatMap((r) => {
    const e = r._tag === "Fail" ? r.error : r._tag === "Die" ? r.defect : undefined
    return isSqlError(e) ? [e] : []
  })

const sqlState = (e: SqlError): string | undefined => {
  const code = (e.reason.cause as { readonly code?: unknown } | undefined)?.code
  return typeof code === "string" ? code : undefined
}

/** SQLSTATEs of a connection the server ended. */
const ENDED = /^(57P|25P03$)/

/** Why the database cannot serve the request now, as the log says it and as the 503's message says it. */
export interface Unavailable {
  readonly log: string
  readonly message: string
}

const kinds: ReadonlyArray<Unavailable & { readonly is: (e: SqlError) => boolean }> = [
  {
    // connection refused, lost or timed out, login refused, or ended by the server. PostgreSQL says FATAL 57P01
    // (admin_shutdown; 57P02 crash_shutdown, 57P03 cannot_connect_now, ...; 25P03 for a transaction left idle past
    // idle_in_transaction_session_timeout) before it closes a connection it ends (a restart, a failover,
    // pg_terminate_backend); `@effect/sql-pg` keeps that message as the end of a connection that had nothing in
    // flight (idle in a transaction between two statements, say) and fails the next statement on it with an
    // unknown error carrying the code
    is: (e) => e.reason._tag === "ConnectionError" || e.reason._tag === "AuthenticationError" || ENDED.test(sqlState(e) ?? ""),
    log: "database unreachable",
    message: "The database is unreachable; retry later"
  },
  {
    // cancelled (57014: a statement_timeout an operator set on the role or database, or pg_cancel_backend) or a lock
    // not had within lock_timeout (55P03); mes sets neither
    is: (e) => e.reason._tag === "StatementTimeoutError" || e.reason._tag === "LockTimeoutError",
    log: "database gave up on the statement",
    message: "The database did not finish the request in time; retry later"
  },
  {
    // 25006 read_only_sql_transaction: a standby, a primary demoted by a failover, or default_transaction_read_only;
    // a write (reads go on: the key lookup falls back to not noting the key's use, stores/tenants.ts)
    is: (e) => sqlState(e) === "25006",
    log: "database read-only",
    message: "The database takes no writes now (read-only); retry later"
  },
  {
    // class 53, insufficient resources: too many connections (53300, at connect: max_connections or a role's or a
    // database's connection limit), disk full (53100), out of memory (53200)
    is: (e) => sqlState(e)?.startsWith("53") === true,
    log: "database out of resources",
    message: "The database is out of resources (connections, memory or disk); retry later"
  }
]

/** Why the database could not serve the request that failed with `cause`, when that is why; else undefined (a 500). */
export const databaseUnavailable = (cause: Cause.Cause<unknown>): Unavailable | undefined => {
  const errors = sqlErrors(cause)
  return kinds.find((k) => errors.some(k.is))
}

/**
 * A request bounded by `requestTimeout` (past it, interrupted: its transaction rolls back) and answered by
 * `unavailable(why)` when it timed out or failed because the database cannot serve it now, each logged as a warning
 * with `labels`; any other failure goes to `otherwise`, and an interruption stays one. The REST server answers a 503
 * response with it, the RPC server a ServiceUnavailable.
 */
export const answerUnavailable = <A, E, R, B, E2, E3, R3>(
  request: Effect.Effect<A, E, R>,
  options: {
    readonly requestTimeout: Duration.Duration
    readonly labels: ReadonlyArray<unknown>
    readonly unavailable: (why: Unavailable) => Effect.Effect<B, E2>
    readonly otherwise: (cause: Cause.Cause<E | E2>) => Effect.Effect<B, E3, R3>
  }
): Effect.Effect<A | B, E2 | E3, R | R3> => {
  const answer = (why: Unavailable) => Effect.andThen(Effect.logWarning(why.log, ...options.labels), options.unavailable(why))
  return request.pipe(
    Effect.timeoutOrElse({
      duration: options.requestTimeout,
      orElse: () =>
        answer({ log: "request timed out", message: `The request did not finish within ${Duration.format(options.requestTimeout)}; retry later` })
    }),
    Effect.catchCause((cause): Effect.Effect<B, E2 | E3, R3> => {
      // an interruption carries no failure of E or E2
      if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
      const why = databaseUnavailable(cause)
      return why !== undefined ? answer(why) : options.otherwise(cause)
    })
  )
}
