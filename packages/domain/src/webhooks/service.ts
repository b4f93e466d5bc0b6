// Webhooks (spec 2.7, 4.9, 6; DECISIONS: Webhooks): registrations with their signing secret, the
// read-only delivery logs, and two extras: a test delivery and a redelivery. Deliveries are queued
// rows; the dispatcher (adapters-http) sends them, so no request here waits on a receiver.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { DeploymentConfig } from "../billing/rate-limits.ts"
import { type BadRequest, Forbidden, NotFound, QuotaExceeded, ValidationFailed } from "../errors.ts"
import { readOwned, settlePatch, settleRemove } from "../crud.ts"
import type { JsonText } from "../json.ts"
import { CurrentTenant, newId, References } from "../ports.ts"
import { isUuid, listWith, type Page } from "../query.ts"
import { checkOwner, ensureOwned } from "../references.ts"
import { decodeInput, decodePatchInput, detail, type ValidationDetail, validationFailed } from "../validation.ts"
import {
  type DeliveryQueued,
  isHttpUrl,
  TEST_EVENT_TYPE,
  Webhook,
  WebhookCreate,
  webhookListSpec,
  type WebhookLog,
  webhookLogListSpec,
  WebhookPatch,
  type WebhookWithSecret
} from "./schema.ts"
import { WebhookLogStore, type WebhookRow, WebhookStore } from "./store.ts"
import { UrlGuard } from "./url-guard.ts"

type Services = CurrentTenant

/**
 * The webhooks a tenant may hold in a cloud deployment (DECISIONS: Webhooks API): each event fans out to every one
 * of them, so this bounds what one request can make the dispatcher send.
 */
export const WEBHOOKS_PER_TENANT = 100

const quotaExceeded = (cap: number) =>
  new QuotaExceeded({ message: `A tenant holds at most ${cap} webhooks: delete one to register another` })

/** `whsec_` + base64 of 32 random bytes (the Standard Webhooks secret form). */
export const generateWebhookSecret = (): string => {
  const bytes = new Uint8Array(32)
  globalThis.crypto.getRandomValues(bytes)
  return `whsec_${btoa(String.fromCharCode(...bytes))}`
}

/** The record as answered: no secret; `event_type` names the event of a single-event subscription. */
const present = (row: WebhookRow): Webhook => ({
  id: row.id,
  tenant_id: row.tenant_id,
  url: row.url,
  events: [...row.events],
  event_type: row.events.length === 1 ? row.events[0]! : null,
  active: row.active,
  description: row.description,
  created_at: row.created_at,
  updated_at: row.updated_at
})

const fieldsOf = (raw: unknown): Record<string, unknown> =>
  raw !== null && typeof raw === "object" && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {}

/** spec 2.7: the `events` form or the `event_type` form, never both; on create one is required. */
const formDetails = (raw: unknown, required: boolean): Array<ValidationDetail> => {
  const r = fieldsOf(raw)
  const hasEvents = r.events !== undefined
  const hasType = r.event_type !== undefined
  if (hasEvents && hasType) {
    return [detail("webhook", raw, ["event_type"], "ENUM_CONSTRAINT", "give either events or event_type, not both")]
  }
  if (required && !hasEvents && !hasType && raw !== null && typeof raw === "object" && !Array.isArray(raw)) {
    return [detail("webhook", raw, ["events"], "NOT_NULL", "events (an array of event types) or event_type is required")]
  }
  return []
}

export class Webhooks extends Context.Service<Webhooks, {
  /** Registers a receiver; answers the record with its secret (the only time it is shown). */
  readonly create: (input: unknown) => Effect.Effect<WebhookWithSecret, QuotaExceeded | ValidationFailed, Services>
  readonly list: (query: Readonly<Record<string, string>>) => Effect.Effect<Page<Webhook>, BadRequest | ValidationFailed, Services>
  readonly get: (id: string) => Effect.Effect<JsonText<Webhook>, NotFound | Forbidden, Services>
  /** `active`, `url`, `events` / `event_type`, `description`. */
  readonly update: (id: string, input: unknown) => Effect.Effect<JsonText<Webhook>, NotFound | Forbidden | ValidationFailed, Services>
  /** Hard delete, with its deliveries and logs. */
  readonly remove: (id: string) => Effect.Effect<void, NotFound | Forbidden, Services>
  /** Queues a `webhook.test` delivery to this one webhook. */
  readonly sendTest: (id: string) => Effect.Effect<DeliveryQueued, NotFound | Forbidden, Services>
}>()("mes/domain/Webhooks") {
  static readonly layer = Layer.effect(Webhooks, Effect.gen(function*() {
    const store = yield* WebhookStore
    const guard = yield* UrlGuard
    const references = yield* References
    const withRefs = Effect.provideService(References, references)
    const decodeCreate = decodeInput(WebhookCreate, "webhook", { record: Webhook })
    const decodePatch = decodePatchInput(WebhookPatch, "webhook")
    const cap = (yield* DeploymentConfig) === "cloud" ? WEBHOOKS_PER_TENANT : undefined

    /** The SSRF guard (cloud: no loopback, private, link-local or metadata targets); 422 PATTERN_MISMATCH. */
    const urlRefusal = (raw: unknown) =>
      Effect.gen(function*() {
        const url = fieldsOf(raw).url
        if (typeof url !== "string" || url.length > 2048 || !isHttpUrl(url)) return undefined
        return yield* guard.check(url)
      })

    /** Every problem at once: schema details, the events/event_type form, the guard's refusal. */
    const validate = <A>(decode: (raw: unknown) => Effect.Effect<A, ValidationFailed>, raw: unknown, formRequired: boolean) =>
      Effect.gen(function*() {
        const refusal = yield* urlRefusal(raw)
        const extra = [
          ...formDetails(raw, formRequired),
          ...(refusal === undefined ? [] : [detail("webhook", raw, ["url"], "PATTERN_MISMATCH", `url is not allowed: ${refusal}`)])
        ]
        const fail = (details: ReadonlyArray<ValidationDetail>) => {
          const e = validationFailed("webhook", details)
          return Effect.fail(refusal === undefined ? e : new ValidationFailed({ message: `${e.message}; url is not allowed: ${refusal}`, details }))
        }
        const decoded = yield* decode(raw).pipe(Effect.catchTag("ValidationFailed", (e) => fail([...e.details, ...extra])))
        if (extra.length > 0) return yield* fail(extra)
        return decoded
      })

    const eventsOf = (input: { readonly events?: ReadonlyArray<string>; readonly event_type?: string }) =>
      input.events !== undefined ? [...new Set(input.events)] : input.event_type !== undefined ? [input.event_type] : undefined

    return Webhooks.of({
      create: (raw) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          // spec 7.4: 402 before 422
          const input = yield* validate(decodeCreate, raw, true).pipe(Effect.tapError(() =>
            cap === undefined ? Effect.void : Effect.flatMap(store.count(tenant.id), (n) => n >= cap ? Effect.fail(quotaExceeded(cap)) : Effect.void)
          ))
          const row = yield* store.insert({
            id: newId(),
            tenant_id: tenant.id,
            url: input.url,
            events: eventsOf(input)!,
            secret: input.secret ?? generateWebhookSecret(),
            active: input.active ?? true,
            description: input.description ?? null
          }, cap)
          if (row === undefined) return yield* quotaExceeded(cap!)
          return { ...present(row), secret: row.secret }
        }),
      list: listWith(webhookListSpec, store.list),
      get: (id) => readOwned("webhooks", id, (tenantId) => store.read(tenantId, id)),
      update: (id, raw) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          // spec 7.4: 403 / 404 before 422
          const patch = yield* validate(decodePatch, raw, false).pipe(Effect.tapError(() => ensureOwned("webhooks", id).pipe(withRefs)))
          const { event_type: _t, events: _e, ...fields } = patch
          const events = eventsOf(patch)
          const outcome = yield* store.patch(tenant.id, id, events === undefined ? fields : { ...fields, events })
          return yield* settlePatch({ table: "webhooks", id, root: "webhook", input: raw, refs: [] }, outcome)
        }),
      remove: (id) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          yield* settleRemove("webhooks", id, yield* store.remove(tenant.id, id))
        }),
      sendTest: (id) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const deliveryId = newId()
          // the body is stored as sent: every attempt carries the same bytes and signature
          const body = JSON.stringify({
            event_type: TEST_EVENT_TYPE,
            timestamp: new Date().toISOString(),
            tenant_id: tenant.id,
            data: { webhook_id: id }
          })
          // queued only for a webhook of the tenant, in the same statement that finds its owner
          yield* checkOwner("webhooks", id, yield* store.enqueue(tenant.id, { id: deliveryId, webhook_id: id, event_id: newId(), event_type: TEST_EVENT_TYPE, body }))
          return { delivery_id: deliveryId }
        })
    })
  }))
}

/** Delivery attempts, read-only (spec 6.2), and a redelivery of one attempt's delivery. */
export class WebhookLogs extends Context.Service<WebhookLogs, {
  /** Newest first; a `webhook_id` filter naming another tenant's webhook is 403. */
  readonly list: (query: Readonly<Record<string, string>>) => Effect.Effect<Page<WebhookLog>, BadRequest | ValidationFailed | Forbidden, Services>
  readonly get: (id: string) => Effect.Effect<JsonText<WebhookLog>, NotFound | Forbidden, Services>
  /** Puts the log's delivery back to pending, due now: one more attempt with the same delivery id. */
  readonly redeliver: (id: string) => Effect.Effect<DeliveryQueued, NotFound | Forbidden, Services>
}>()("mes/domain/WebhookLogs") {
  static readonly layer = Layer.effect(WebhookLogs, Effect.gen(function*() {
    const store = yield* WebhookLogStore
    const references = yield* References
    const withRefs = Effect.provideService(References, references)
    const list = listWith(webhookLogListSpec, store.list)
    return WebhookLogs.of({
      list: (query) =>
        withRefs(Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const webhookId = query.webhook_id?.toLowerCase()
          // spec 5.6, 7.4: another tenant's webhook is 403 (an unknown one just matches nothing)
          if (webhookId !== undefined && isUuid(webhookId)) {
            const owner = yield* references.ownerOf("webhooks", webhookId)
            if (owner !== undefined && owner !== tenant.id) {
              return yield* new Forbidden({ message: `webhook ${webhookId} belongs to another tenant` })
            }
          }
          return yield* list(query)
        })),
      get: (id) => readOwned("webhook_logs", id, (tenantId) => store.read(tenantId, id)),
      redeliver: (id) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const { owner, deliveryId } = yield* store.redeliver(tenant.id, id)
          yield* checkOwner("webhook_logs", id, owner)
          if (deliveryId === undefined) return yield* new NotFound({ entity: "webhook delivery of log", id })
          return { delivery_id: deliveryId }
        })
    })
  }))
}
