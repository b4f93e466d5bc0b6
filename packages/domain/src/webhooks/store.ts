// Storage ports of webhook registrations and delivery logs (implemented in adapters-pg).
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Owned, PatchOutcome, RemoveOutcome } from "../crud.ts"
import type { ListQuery, Slice } from "../query.ts"
import type { Webhook, webhookListSpec, webhookLogListSpec, WebhookLog } from "./schema.ts"

/** A stored registration without its secret (events as subscribed). */
export interface WebhookRow {
  readonly id: string
  readonly tenant_id: string
  readonly url: string
  readonly events: ReadonlyArray<string>
  readonly active: boolean
  readonly description: string | null
  readonly created_at: string
  readonly updated_at: string
}

export interface NewWebhook {
  readonly id: string
  readonly tenant_id: string
  readonly url: string
  readonly events: ReadonlyArray<string>
  readonly secret: string
  readonly active: boolean
  readonly description: string | null
}

export type WebhookListQuery = ListQuery<typeof webhookListSpec["filters"], typeof webhookListSpec["sort"][number]>
export type WebhookLogListQuery = ListQuery<typeof webhookLogListSpec["filters"], typeof webhookLogListSpec["sort"][number]>

/** Every read but `insert` leaves the secret out, so it cannot leak into a listing or a log line. */
export class WebhookStore extends Context.Service<WebhookStore, {
  /**
   * Returns the new row with its secret; with `cap`, inserts only while the tenant holds fewer webhooks than that,
   * counted exactly under concurrent registrations, and answers undefined when it holds as many.
   */
  readonly insert: (row: NewWebhook, cap?: number) => Effect.Effect<(WebhookRow & { readonly secret: string }) | undefined>
  /** How many webhooks the tenant holds (active or not). */
  readonly count: (tenantId: string) => Effect.Effect<number>
  readonly list: (tenantId: string, query: WebhookListQuery) => Effect.Effect<Slice<Webhook>>
  /** A registration as the API shows it, with its owner. */
  readonly read: (tenantId: string, id: string) => Effect.Effect<Owned<Webhook>>
  /** Undefined when no row matched. */
  /** PATCH as one statement, with the owner of the id (the answer never carries the secret). */
  readonly patch: (tenantId: string, id: string, changes: Readonly<Record<string, unknown>>) => Effect.Effect<PatchOutcome<Webhook>>
  /** False when no row matched; its deliveries and logs go with it. */
  /** Delete as one statement, with the owner of the id. */
  readonly remove: (tenantId: string, id: string) => Effect.Effect<RemoveOutcome>
  /**
   * Queues one pending delivery of `body` (stored as sent) to the webhook, due now, when it is the tenant's (one
   * statement): the webhook's owner (undefined when no tenant has it).
   */
  readonly enqueue: (
    tenantId: string,
    delivery: { readonly id: string; readonly webhook_id: string; readonly event_id: string; readonly event_type: string; readonly body: string }
  ) => Effect.Effect<string | undefined>
}>()("mes/domain/WebhookStore") {}

export class WebhookLogStore extends Context.Service<WebhookLogStore, {
  readonly list: (tenantId: string, query: WebhookLogListQuery) => Effect.Effect<Slice<WebhookLog>>
  readonly read: (tenantId: string, id: string) => Effect.Effect<Owned<WebhookLog>>
  /**
   * Puts the delivery of log `logId` back to pending, due now, when the log is the tenant's (one statement; attempts
   * and the delivery id are kept): the log's owner (undefined when no tenant has it), and the delivery id (undefined
   * when the log or its delivery is gone).
   */
  readonly redeliver: (tenantId: string, logId: string) => Effect.Effect<{ readonly owner: string | undefined; readonly deliveryId: string | undefined }>
}>()("mes/domain/WebhookLogStore") {}
