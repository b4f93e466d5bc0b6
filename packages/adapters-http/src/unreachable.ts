// Which failures mean the database cannot be reached (answered 503 SERVICE_UNAVAILABLE with Retry-After).
import type * as Cause from "effect/Cause"
import { isSqlError } from "effect/sql/SqlError"

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
  cause.reasons.some((r) => {
    const e = r._tag === "Fail" ? r.error : r._tag === "Die" ? r.defect : undefined
    if (!isSqlError(e)) return false
    const code = (e.reason.cause as { readonly code?: unknown } | undefined)?.code
    return e.reason._tag === "ConnectionError" || e.reason._tag === "AuthenticationError" || (typeof code === "string" && ENDED.test(code))
  })
