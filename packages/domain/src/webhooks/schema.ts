// Webhook registrations (spec 2.7, 4.9) and their delivery logs (spec 6.2, /api-webhook-logs).
// The secret signs deliveries: it is answered once, on create, and is no field of the record.
import * as Schema from "effect/Schema"
import { EVENT_TYPES } from "../events.ts"
import { isMaxChars, isMinChars, opt, optNull, Uuid } from "../fields.ts"
import { bool, oneOf, text, uuid, type ListSpec } from "../query.ts"

/**
 * An http(s) URL (spec 2.7 "valid URL"); a bad one is 422 PATTERN_MISMATCH. Valid as the URL Standard says, not
 * merely parseable: the parser drops spaces and control characters around a URL and tabs and newlines inside it, and
 * reads `user:password@` before the host, which no valid URL string has. Such a URL was stored as given.
 */
export const isHttpUrl = (s: string): boolean => {
  if (/[\s\u0000-\u001f\u007f]/.test(s) || /^[^:/?#]+:[/\\]*[^/\\?#]*@/.test(s)) return false
  try {
    const u = new URL(s)
    return (u.protocol === "http:" || u.protocol === "https:") && u.hostname !== ""
  } catch {
    return false
  }
}

const WebhookUrl = Schema.String.check(
  isMaxChars(2048),
  Schema.makeFilter<string>(isHttpUrl, {
    representation: { id: "mes/isHttpUrl", payload: {} },
    expected: "an http(s) URL",
    message: "url must be a valid http(s) URL (absolute; no spaces or control characters; no user name or password: the receiver checks X-Service-Signature)"
  } as any)
)

/** One event name of spec 6.1; anything else is 422 ENUM_CONSTRAINT. */
export const EventTypeName = Schema.Literals(EVENT_TYPES)
const EventList = Schema.Array(EventTypeName).check(Schema.isMinLength(1))
const Secret = Schema.String.check(isMinChars(16), isMaxChars(256))
const Description = Schema.String.check(isMaxChars(1000))

/** POST /api-webhooks: `events` or `event_type`, exactly one of them (spec 2.7, DECISIONS). */
export const WebhookCreate = Schema.Struct({
  url: WebhookUrl,
  events: opt(EventList),
  event_type: opt(EventTypeName),
  active: opt(Schema.Boolean),
  secret: opt(Secret),
  description: optNull(Description)
})
export type WebhookCreate = typeof WebhookCreate.Type

/** PATCH /api-webhooks?id=: these fields only; `events` or `event_type` replaces the subscription. */
export const WebhookPatch = Schema.Struct({
  active: opt(Schema.Boolean),
  url: opt(WebhookUrl),
  events: opt(EventList),
  event_type: opt(EventTypeName),
  description: optNull(Description)
})
export type WebhookPatch = typeof WebhookPatch.Type

export const webhookListSpec = {
  filters: { id: uuid, event_type: oneOf(EVENT_TYPES), active: bool },
  sort: ["created_at", "updated_at"],
  defaultSort: "created_at"
} satisfies ListSpec<any, any>

/** A registration as GET and PATCH answer it: never the secret. */
export const Webhook = Schema.Struct({
  id: Uuid,
  tenant_id: Uuid,
  url: Schema.String,
  events: Schema.Array(Schema.String),
  /** The subscribed event when there is exactly one (the single-event form of spec 2.7), else null. */
  event_type: Schema.NullOr(Schema.String),
  active: Schema.Boolean,
  description: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String
})
export type Webhook = typeof Webhook.Type

/** The create answer: the record with its signing secret (shown this once). */
export const WebhookWithSecret = Schema.Struct({ ...Webhook.fields, secret: Schema.String })
export type WebhookWithSecret = typeof WebhookWithSecret.Type

export const WebhookLogStatus = Schema.Literals(["succeeded", "failed", "retrying"])
export type WebhookLogStatus = typeof WebhookLogStatus.Type

export const webhookLogListSpec = {
  filters: { id: uuid, webhook_id: uuid, event_type: text, status: oneOf(WebhookLogStatus.literals), delivery_id: uuid },
  sort: ["created_at"],
  defaultSort: "created_at",
  defaultOrder: "desc"
} satisfies ListSpec<any, any>

/** One delivery attempt (read-only). */
export const WebhookLog = Schema.Struct({
  id: Uuid,
  tenant_id: Uuid,
  webhook_id: Uuid,
  delivery_id: Uuid,
  event_id: Uuid,
  event_type: Schema.String,
  attempt: Schema.Int,
  status: WebhookLogStatus,
  status_code: Schema.NullOr(Schema.Int),
  duration_ms: Schema.Int,
  error: Schema.NullOr(Schema.String),
  next_retry_at: Schema.NullOr(Schema.String),
  created_at: Schema.String
})
export type WebhookLog = typeof WebhookLog.Type

/** What the test and redeliver endpoints answer. */
export const DeliveryQueued = Schema.Struct({ delivery_id: Uuid })
export type DeliveryQueued = typeof DeliveryQueued.Type

/** The event type of a test delivery (POST /api-webhooks/test); not registrable. */
export const TEST_EVENT_TYPE = "webhook.test"
