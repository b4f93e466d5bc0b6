// Webhook delivery port (spec 6, issue: webhooks): what the dispatcher needs from storage. Events
// in the outbox are fanned out into one delivery per subscribed webhook; deliveries are claimed
// under a lease (several dispatchers, even in several processes, share the work), attempted, and
// every attempt is recorded with its log row. Implemented by adapters-pg (`DeliveryStorePg`).
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

/** A delivery claimed for one attempt, with what is needed to send it. */
export interface ClaimedDelivery {
  readonly tenantId: string
  /** The delivery id: `X-Service-Delivery` and `webhook-id`, stable across retries. */
  readonly id: string
  readonly webhookId: string
  readonly eventId: string
  readonly eventType: string
  /** The exact bytes to send (JSON text), the same on every attempt. */
  readonly body: string
  /** Attempts made before this one. */
  readonly attempts: number
  readonly url: string
  readonly secret: string
  /** False when the webhook was deactivated after the event was fanned out. */
  readonly active: boolean
}

/** How a claim shares places between tenants: what the dispatcher holds of each, and the room of those it limits. */
export interface DeliveryShare {
  /** Attempts held (claimed, not yet answered) by tenant id; absent: none. */
  readonly held: ReadonlyMap<string, number>
  /** The most each of these tenants may be given in this claim; null: no limit. */
  readonly room: ReadonlyMap<string, number | null>
  /** The most any other tenant may be given; absent: no limit. */
  readonly otherRoom?: number
}

/** The outcome of one attempt. */
export interface AttemptRecord {
  readonly delivery: ClaimedDelivery
  /** `retrying` keeps the delivery pending until `retryInMs` from now (database clock). */
  readonly outcome: "succeeded" | "retrying" | "failed"
  readonly retryInMs?: number
  readonly statusCode?: number
  readonly error?: string
  readonly durationMs: number
  /** Deactivate the webhook in the same statement (the receiver answered 410 Gone). */
  readonly deactivateWebhook?: boolean
}

export class DeliveryStore extends Context.Service<DeliveryStore, {
  /**
   * Claims up to `limit` undispatched outbox events (skipping rows another dispatcher holds),
   * creates one pending delivery per active webhook of the event's tenant subscribed to its
   * type, and removes the events from the outbox, atomically. Returns the number of events taken.
   */
  readonly fanOut: (limit: number) => Effect.Effect<number>
  /** Those of `tenantIds` with an active webhook (their writes queue events). */
  readonly subscribedTenants: (tenantIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>>
  /**
   * Leases up to `limit` due pending deliveries for `leaseMs` (skipping leased ones), shared between tenants: each
   * place goes to the tenant holding the fewest attempts (`share.held`: what the claiming dispatcher holds, by
   * tenant id, plus the places this claim gave it), oldest delivery first within a tenant, and each tenant is
   * given at most its room (`share.room`, else `share.otherRoom`). Answered in that order.
   */
  readonly claimDue: (limit: number, leaseMs: number, share: DeliveryShare) => Effect.Effect<ReadonlyArray<ClaimedDelivery>>
  /**
   * Records attempts, in one statement: each is counted, its status and next attempt time set, its
   * lease dropped and its webhook_logs row written. An attempt whose delivery moved on meanwhile
   * (another dispatcher recorded it after the lease expired, or it was deleted) writes nothing.
   * Returns how many were recorded.
   */
  readonly record: (attempts: ReadonlyArray<AttemptRecord>) => Effect.Effect<number>
  /** Drops the leases of deliveries still pending (shutdown), so another dispatcher takes them at once. */
  readonly release: (deliveryIds: ReadonlyArray<string>) => Effect.Effect<void>
  /** Sets the webhook inactive. */
  readonly deactivate: (tenantId: string, webhookId: string) => Effect.Effect<void>
}>()("mes/domain/DeliveryStore") {}
