// Webhook delivery storage (spec 6): outbox fan-out, leased claims, attempt records. Every method
// is one statement (atomic on its own), and claims use FOR UPDATE SKIP LOCKED, so any number of
// dispatchers on one database share the work without delivering an attempt twice.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { type ClaimedDelivery, type DeliveryShare, DeliveryStore } from "@mes/domain"
import { arrayParam } from "../sql-text.ts"
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

// Due deliveries shared between tenants (DECISIONS: Webhook delivery): each place goes to the tenant that holds
// the fewest attempts in the claiming dispatcher ($3/$4, with the places this claim gave it), its oldest due
// delivery first, and each tenant gets no more than its room ($5 for the tenants named, $6 for the others; null:
// no limit); so one tenant's backlog is never sent before another's first delivery. The tenants with pending
// deliveries are found by a loose scan of the pending index (one probe per tenant, migration 0037), each one's due
// deliveries by a range of it.
const CLAIM = `
WITH RECURSIVE tenants AS (
  (SELECT tenant_id FROM webhook_deliveries WHERE status = 'pending' ORDER BY tenant_id LIMIT 1)
  UNION ALL
  SELECT (SELECT d.tenant_id FROM webhook_deliveries d WHERE d.status = 'pending' AND d.tenant_id > t.tenant_id ORDER BY d.tenant_id LIMIT 1)
  FROM tenants t
  WHERE t.tenant_id IS NOT NULL
), held AS (
  SELECT * FROM unnest($3::uuid[], $4::int[], $5::int[]) AS h (tenant_id, n, room)
), ranked AS (
  SELECT c.tenant_id, c.id, c.next_attempt_at, coalesce(h.n, 0) AS n,
    CASE WHEN h.tenant_id IS NULL THEN $6::int ELSE h.room END AS room,
    row_number() OVER (PARTITION BY c.tenant_id ORDER BY c.next_attempt_at) AS nth
  FROM tenants t
  LEFT JOIN held h ON h.tenant_id = t.tenant_id
  CROSS JOIN LATERAL (
    -- (a plain LIMIT: one computed per tenant leaves the planner guessing millions of rows)
    SELECT d.tenant_id, d.id, d.next_attempt_at
    FROM webhook_deliveries d
    WHERE d.tenant_id = t.tenant_id AND d.status = 'pending' AND d.next_attempt_at <= now()
      AND (d.locked_until IS NULL OR d.locked_until < now())
    ORDER BY d.next_attempt_at
    LIMIT $1
  ) c
), pick AS (
  SELECT tenant_id, id, n + nth AS place FROM ranked WHERE room IS NULL OR nth <= room ORDER BY place, next_attempt_at LIMIT $1
), due AS (
  -- the picked rows by id (an index probe each), locked unless another dispatcher holds them or recorded them
  -- meanwhile (not pending: written as NOT IN so that the planner does not read the whole pending index too)
  SELECT d.tenant_id, d.id
  FROM webhook_deliveries d
  WHERE d.id = ANY (ARRAY(SELECT id FROM pick))
    AND d.status NOT IN ('succeeded', 'failed') AND (d.locked_until IS NULL OR d.locked_until < now())
  FOR UPDATE SKIP LOCKED
)
UPDATE webhook_deliveries d
SET locked_until = now() + $2::int * interval '1 millisecond'
FROM due, pick, webhooks w
WHERE d.tenant_id = due.tenant_id AND d.id = due.id AND pick.id = due.id AND w.tenant_id = d.tenant_id AND w.id = d.webhook_id
RETURNING d.tenant_id, d.id, d.webhook_id, d.event_id, d.event_type, d.body, d.attempts, d.next_attempt_at,
  w.url, w.secret, w.active, pick.place`

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
  readonly place: string | number
}

/** $3, $4, $5 of CLAIM: every tenant named in `held` or `room`, what it holds and its room (NULL: no limit). */
const shareParams = (share: DeliveryShare) => {
  const tenants = [...new Set([...share.held.keys(), ...share.room.keys()])]
  const roomOf = (t: string) => (share.room.has(t) ? share.room.get(t)! : share.otherRoom ?? null)
  return [
    uuidArray(tenants),
    arrayParam(tenants.map((t) => String(share.held.get(t) ?? 0))),
    arrayParam(tenants.map((t) => {
      const room = roomOf(t)
      return room === null ? "NULL" : String(Math.max(0, room))
    }))
  ]
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
    claimDue: (limit, leaseMs, share) =>
      limit <= 0
        ? Effect.succeed([])
        : sql.unsafe<ClaimRow>(CLAIM, [
          limit,
          Math.max(1, Math.round(leaseMs)),
          ...shareParams(share),
          share.otherRoom ?? null
        ]).pipe(
          Effect.map((rows) =>
            [...rows]
              // the order of the claim: fewest held first, then oldest
              .sort((a, b) =>
                Number(a.place) - Number(b.place) || new Date(a.next_attempt_at).getTime() - new Date(b.next_attempt_at).getTime()
              )
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
