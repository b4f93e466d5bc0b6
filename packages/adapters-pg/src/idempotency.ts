// Idempotency-Key answers (issue 8): one transaction holds the write and its kept answer. A transaction-level
// advisory lock on (tenant, key) makes a second request with the key, while the first runs, a 409 at once
// instead of a wait; expired rows are purged hourly.
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { SqlClient } from "effect/sql/SqlClient"
import { Conflict, detail, durationConfig, Idempotency, type KeptReply, validationFailed } from "@mes/domain"

/** How long a key's answer is kept (MES_IDEMPOTENCY_TTL, default 24 h). */
export const IdempotencyTtl = durationConfig("MES_IDEMPOTENCY_TTL", Duration.hours(24), { positive: true })

export const IdempotencyPg = Layer.effect(Idempotency, Effect.gen(function*() {
  const sql = yield* SqlClient
  const ttlMs = Duration.toMillis(yield* IdempotencyTtl)
  const ttl = `${Math.max(1, Math.round(ttlMs))} milliseconds`

  yield* sql`DELETE FROM idempotency_keys WHERE created_at < now() - ${ttl}::interval`.pipe(
    Effect.delay("1 minute"),
    Effect.repeat(Schedule.spaced("1 hour")),
    Effect.catchCause((cause) => Effect.logWarning("idempotency keys: purge failed", cause)),
    Effect.forkScoped
  )

  return Idempotency.of({
    once: <E, R>(tenantId: string, key: string, fingerprint: string, write: Effect.Effect<KeptReply, E, R>) =>
      sql.withTransaction(Effect.gen(function*() {
        const [lock] = yield* sql<{ ok: boolean }>`SELECT pg_try_advisory_xact_lock(hashtextextended(${tenantId} || '/' || ${key}, 0)) AS ok`
        if (lock?.ok !== true) {
          return yield* new Conflict({ message: "a request with this Idempotency-Key is still in progress; retry once it has finished" })
        }
        const [kept] = yield* sql<{ fingerprint: string; status: number; body: Uint8Array }>`
          SELECT fingerprint, status, body FROM idempotency_keys
          WHERE tenant_id = ${tenantId} AND key = ${key} AND created_at >= now() - ${ttl}::interval`
        if (kept !== undefined) {
          if (kept.fingerprint !== fingerprint) {
            return yield* validationFailed("request", [
              detail("request", {}, ["Idempotency-Key"], "UNIQUE_CONSTRAINT", "this Idempotency-Key was used with a different request (method, path or body)", key)
            ])
          }
          return { replayed: true, reply: { status: kept.status, body: kept.body } }
        }
        const reply = yield* write
        yield* sql`
          INSERT INTO idempotency_keys (tenant_id, key, fingerprint, status, body)
          VALUES (${tenantId}, ${key}, ${fingerprint}, ${reply.status}, ${reply.body})
          ON CONFLICT (tenant_id, key) DO UPDATE
            SET fingerprint = EXCLUDED.fingerprint, status = EXCLUDED.status, body = EXCLUDED.body, created_at = now()`
        return { replayed: false, reply }
      })).pipe(Effect.catchTag("SqlError", Effect.die)) as Effect.Effect<{ readonly replayed: boolean; readonly reply: KeptReply }, E | Conflict | ReturnType<typeof validationFailed>, R>
  })
}))
