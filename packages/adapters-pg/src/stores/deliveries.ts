// Webhook delivery storage (spec 6): outbox fan-out, leased claims, attempt records. Every method
// is one statement (atomic on its own), and claims use FOR UPDATE SKIP LOCKED, so any number of
// dispatchers on one database share the work without delivering an attempt twice.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { type ClaimedDelivery, DeliveryStore } from "@mes/domain"
import { uuidArray } from "./common.ts"

// The body is built once, here, and stored: every attempt sends (and signs) the same bytes. Key
// order is the documented one; `timestamp` is the event's occurred_at (ISO 8601 UTC, ms).
const FAN_OUT = `
WITH ev AS (
  SELECT id, tenant_id, xid, event_id, event_type, occurred_at
  FROM outbox
  ORDER BY id
  LIMIT $1
  FOR UPDATE SKIP LOCKED
), ins AS (
  INSERT INTO webhook_deliveries (tenant_id, id, webhook_id, event_id, event_type, body, next_attempt_at)
  SELECT ev.tenant_id, mes_uuid7(), w.id, ev.event_id, ev.event_type,
    '{"event_type":' || to_json(ev.event_type)::text ||
    ',"timestamp":"' || mes_ts(ev.occurred_at) ||
    '","tenant_id":"' || ev.tenant_id::text ||
    '","data":' || l.data || '}',
    -- distinct, increasing in event order: due deliveries are claimed oldest event first
    clock_timestamp()
  FROM ev
  JOIN webhooks w ON w.tenant_id = ev.tenant_id AND w.active AND ev.event_type = ANY (w.events)
  -- the payload, kept once in the event log (migration 0023)
  JOIN event_log l ON l.tenant_id = ev.tenant_id AND l.xid = ev.xid AND l.seq = ev.id
  ORDER BY ev.id, w.id
  ON CONFLICT (event_id, webhook_id) DO NOTHING
)
-- fanned out: the event leaves the queue (its deliveries carry the body from here on)
DELETE FROM outbox o USING ev WHERE o.id = ev.id
RETURNING o.id`

const CLAIM = `
WITH due AS (
  SELECT tenant_id, id
  FROM webhook_deliveries
  WHERE status = 'pending' AND next_attempt_at <= now() AND (locked_until IS NULL OR locked_until < now())
  ORDER BY next_attempt_at
  LIMIT $1
  FOR UPDATE SKIP LOCKED
)
UPDATE webhook_deliveries d
SET locked_until = now() + $2::int * interval '1 millisecond'
FROM due, webhooks w
WHERE d.tenant_id = due.tenant_id AND d.id = due.id AND w.tenant_id = d.tenant_id AND w.id = d.webhook_id
RETURNING d.tenant_id, d.id, d.webhook_id, d.event_id, d.event_type, d.body, d.attempts, d.next_attempt_at,
  w.url, w.secret, w.active`

// Guarded by the attempt count seen at claim time: an attempt is counted and logged once even if
// a lease expired and another dispatcher recorded first. $1 holds the attempts (jsonb).
const RECORD = `
WITH a AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS a (tenant_id uuid, id uuid, attempts int, status text, retry_ms int,
    status_code int, error text, outcome text, duration_ms int, deactivate boolean)
), d AS (
  UPDATE webhook_deliveries w
  SET attempts = w.attempts + 1,
      status = a.status,
      next_attempt_at = CASE WHEN a.retry_ms IS NULL THEN w.next_attempt_at ELSE now() + a.retry_ms * interval '1 millisecond' END,
      locked_until = NULL,
      last_status_code = a.status_code,
      last_error = a.error,
      updated_at = now()
  FROM a
  WHERE w.tenant_id = a.tenant_id AND w.id = a.id AND w.attempts = a.attempts AND w.status = 'pending'
  RETURNING w.tenant_id, w.id, w.webhook_id, w.event_id, w.event_type, w.attempts, w.next_attempt_at,
    a.retry_ms, a.outcome, a.status_code, a.duration_ms, a.error, a.deactivate
), gone AS (
  UPDATE webhooks w SET active = false, updated_at = now()
  FROM d WHERE d.deactivate AND w.tenant_id = d.tenant_id AND w.id = d.webhook_id
)
INSERT INTO webhook_logs (tenant_id, id, webhook_id, delivery_id, event_id, event_type, attempt, status, status_code, duration_ms, error, next_retry_at)
SELECT d.tenant_id, mes_uuid7(), d.webhook_id, d.id, d.event_id, d.event_type, d.attempts, d.outcome, d.status_code, d.duration_ms, d.error,
  CASE WHEN d.retry_ms IS NULL THEN NULL ELSE d.next_attempt_at END
FROM d
RETURNING id`

interface ClaimRow {
  readonly tenant_id: string
  readonly id: string
  readonly webhook_id: string
  readonly event_id: string
  readonly event_type: string
  readonly body: string
  readonly attempts: number
  readonly next_attempt_at: Date
  readonly url: string
  readonly secret: string
  readonly active: boolean
}

export const DeliveryStorePg = Layer.effect(DeliveryStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  return DeliveryStore.of({
    fanOut: (limit) => sql.unsafe<{ id: string }>(FAN_OUT, [limit]).pipe(Effect.map((rows) => rows.length), Effect.orDie),
    subscribedTenants: (tenantIds) =>
      tenantIds.length === 0
        ? Effect.succeed([])
        : sql.unsafe<{ tenant_id: string }>(
          `SELECT DISTINCT tenant_id FROM webhooks WHERE tenant_id = ANY ($1::uuid[]) AND active`,
          [uuidArray(tenantIds)]
        ).pipe(Effect.map((rows) => rows.map((r) => r.tenant_id)), Effect.orDie),
    claimDue: (limit, leaseMs) =>
      limit <= 0
        ? Effect.succeed([])
        : sql.unsafe<ClaimRow>(CLAIM, [limit, Math.max(1, Math.round(leaseMs))]).pipe(
          Effect.map((rows) =>
            [...rows]
              .sort((a, b) => new Date(a.next_attempt_at).getTime() - new Date(b.next_attempt_at).getTime())
              .map((r): ClaimedDelivery => ({
                tenantId: r.tenant_id,
                id: r.id,
                webhookId: r.webhook_id,
                eventId: r.event_id,
                eventType: r.event_type,
                body: r.body,
                attempts: Number(r.attempts),
                url: r.url,
                secret: r.secret,
                active: r.active
              }))
          ),
          Effect.orDie
        ),
    record: (attempts) =>
      attempts.length === 0
        ? Effect.succeed(0)
        : sql.unsafe<{ id: string }>(RECORD, [JSON.stringify(attempts.map((a) => ({
          tenant_id: a.delivery.tenantId,
          id: a.delivery.id,
          attempts: a.delivery.attempts,
          status: a.outcome === "retrying" ? "pending" : a.outcome,
          retry_ms: a.outcome === "retrying" ? Math.max(0, Math.round(a.retryInMs ?? 0)) : null,
          status_code: a.statusCode ?? null,
          error: a.error ?? null,
          outcome: a.outcome,
          duration_ms: Math.max(0, Math.round(a.durationMs)),
          deactivate: a.deactivateWebhook === true
        })))]).pipe(Effect.map((rows) => rows.length), Effect.orDie),
    release: (ids) =>
      ids.length === 0
        ? Effect.void
        : sql.unsafe(
          `UPDATE webhook_deliveries SET locked_until = NULL WHERE id = ANY ($1::uuid[]) AND status = 'pending'`,
          [uuidArray(ids)]
        ).pipe(Effect.asVoid, Effect.orDie),
    deactivate: (tenantId, webhookId) =>
      sql`UPDATE webhooks SET active = false, updated_at = now() WHERE tenant_id = ${tenantId} AND id = ${webhookId}`.pipe(
        Effect.asVoid,
        Effect.orDie
      )
  })
}))
