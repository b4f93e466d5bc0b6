// Webhook registrations and delivery logs (spec 2.7, 4.9, 6.2). Only `insert` returns the secret:
// reads go through webhooks_json (migration 0010), which has no secret, and updates drop it.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { type Webhook, type WebhookLog, WebhookLogStore, type WebhookRow, WebhookStore } from "@mes/domain"
import { readOwned } from "../json.ts"
import { insertRows } from "../rows.ts"
import { Catalog } from "../catalog.ts"
import { recordWrites } from "../moves.ts"
import { listPage } from "./crud.ts"

export const WebhookStorePg = Layer.effect(WebhookStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const writes = recordWrites<Webhook>(sql, { table: "webhooks", columns: (yield* Catalog).columns("webhooks") })
  return WebhookStore.of({
    // the cap is counted by mes_webhooks_held (migration 0036), exactly under concurrent registrations
    insert: (row, cap) =>
      insertRows<WebhookRow & { secret: string }>(sql, "webhooks", [row], {}, cap === undefined ? "" : `WHERE mes_webhooks_held(r.tenant_id) < ${Math.trunc(cap)}`)
        .pipe(Effect.map((rows) => rows[0]), Effect.orDie),
    count: (tenantId) =>
      sql<{ n: number }>`SELECT count(*)::int AS n FROM webhooks WHERE tenant_id = ${tenantId}`.pipe(Effect.map(([r]) => r!.n), Effect.orDie),
    list: (tenantId, q) => {
      const f = q.filters
      const where = [sql`w.tenant_id = ${tenantId}`]
      if (f.id !== undefined) where.push(sql`w.id = ${f.id}`)
      if (f.event_type !== undefined) where.push(sql`${f.event_type} = ANY (w.events)`)
      if (f.active !== undefined) where.push(sql`w.active = ${f.active}`)
      return listPage<Webhook>(sql, { table: "webhooks", alias: "w", where, sort: { created_at: "w.created_at", updated_at: "w.updated_at" }, query: q })
    },
    read: (tenantId, id) => readOwned<Webhook>(sql, "webhooks", tenantId, id),
    // webhooks_json (migration 0010) has no secret, so neither answer can carry it
    patch: (tenantId, id, changes) => writes.patch(tenantId, id, changes, []).pipe(Effect.orDie),
    remove: (tenantId, id) => writes.remove(tenantId, id).pipe(Effect.orDie),
    enqueue: (tenantId, d) =>
      sql<{ owner: string | null }>`
        WITH ow AS (SELECT w.tenant_id FROM webhooks w WHERE w.id = ${d.webhook_id}),
        q AS (
          INSERT INTO webhook_deliveries (tenant_id, id, webhook_id, event_id, event_type, body, status, next_attempt_at)
          SELECT ${tenantId}, ${d.id}, ${d.webhook_id}, ${d.event_id}, ${d.event_type}, ${d.body}, 'pending', now() FROM ow WHERE ow.tenant_id = ${tenantId}
        )
        SELECT (SELECT tenant_id FROM ow) AS owner`.pipe(Effect.map(([r]) => r!.owner ?? undefined), Effect.orDie)
  })
}))

export const WebhookLogStorePg = Layer.effect(WebhookLogStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  return WebhookLogStore.of({
    list: (tenantId, q) => {
      const f = q.filters
      const where = [sql`l.tenant_id = ${tenantId}`]
      if (f.id !== undefined) where.push(sql`l.id = ${f.id}`)
      if (f.webhook_id !== undefined) where.push(sql`l.webhook_id = ${f.webhook_id}`)
      if (f.event_type !== undefined) where.push(sql`l.event_type = ${f.event_type}`)
      if (f.status !== undefined) where.push(sql`l.status = ${f.status}`)
      if (f.delivery_id !== undefined) where.push(sql`l.delivery_id = ${f.delivery_id}`)
      return listPage<WebhookLog>(sql, { table: "webhook_logs", alias: "l", where, sort: { created_at: "l.created_at" }, query: q })
    },
    read: (tenantId, id) => readOwned<WebhookLog>(sql, "webhook_logs", tenantId, id),
    // the lease is left alone: an attempt in flight finishes (and is recorded) before the next one
    redeliver: (tenantId, logId) =>
      sql<{ owner: string | null; id: string | null }>`
        WITH ow AS (SELECT l.tenant_id FROM webhook_logs l WHERE l.id = ${logId}),
        d AS (
          UPDATE webhook_deliveries d SET status = 'pending', next_attempt_at = now(), updated_at = now()
          FROM webhook_logs l
          WHERE l.tenant_id = ${tenantId} AND l.id = ${logId} AND d.tenant_id = l.tenant_id AND d.id = l.delivery_id
          RETURNING d.id
        )
        SELECT (SELECT tenant_id FROM ow) AS owner, (SELECT id FROM d) AS id`.pipe(
        Effect.map(([r]) => ({ owner: r!.owner ?? undefined, deliveryId: r!.id ?? undefined })),
        Effect.orDie
      )
  })
}))
