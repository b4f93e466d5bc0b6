// Which failures of the database are answered 503 SERVICE_UNAVAILABLE with Retry-After instead of 500: it could
// not be reached, or it gave up on the request's statement. Either way nothing of the statement was kept.
import type * as Cause from "effect/Cause"
import { isSqlError, type SqlError } from "effect/sql/SqlError"

/** The SQL errors among a cause's failures and defects. */
const sqlErrors = (cause: Cause.Cause<unknown>): ReadonlyArray<SqlError> =>
  cause.reasons.flatMap((r) => {
    const e = r._tag === "Fail" ? r.error : r._tag === "Die" ? r.defect : undefined
    return isSqlError(e) ? [e] : []
  })

/** SQLSTATEs of a connection the server ended. */
const ENDED = /^(57P|25P03$)/

/**
 * True when the cause is the database being unreachable: connection refused, lost or timed out, login refused, or
 * ended by the server. PostgreSQL says FATAL 57P01 (admin_shutdown; 57P02 crash_shutdown, 57P03 cannot_connect_now,
 * ...; 25P03 for a transaction left idle past idle_in_transaction_session_timeout) before it closes a connection it
 * ends (a restart, a failover, pg_terminate_backend); `@effect/sql-pg` keeps that message as the end of a connection
 * that had nothing in flight (idle in a transaction between two statements, say) and fails the next statement on it
 * with an unknown error carrying the code.
 */
export const databaseUnreachable = (cause: Cause.Cause<unknown>): boolean =>
  sqlErrors(cause).some((e) => {
    const code = (e.reason.cause as { readonly code?: unknown } | undefined)?.code
    return e.reason._tag === "ConnectionError" || e.reason._tag === "AuthenticationError" || (typeof code === "string" && ENDED.test(code))
  })

/**
 * True when the database gave up on the statement: cancelled (57014: a `statement_timeout` an operator set on the
 * role or database, or `pg_cancel_backend`) or a lock not had within `lock_timeout` (55P03). mes sets neither.
 */
export const databaseGaveUp = (cause: Cause.Cause<unknown>): boolean =>
  sqlErrors(cause).some((e) => e.reason._tag === "StatementTimeoutError" || e.reason._tag === "LockTimeoutError")
