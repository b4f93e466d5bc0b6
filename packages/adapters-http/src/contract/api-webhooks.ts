// /api-webhooks (spec 2.7, 4.9; DECISIONS: Webhooks) and /api-webhook-logs (read-only), plus our
// POST /api-webhooks/test?id= and POST /api-webhook-logs/redeliver?id= (docs/DECISIONS.md).
import * as Schema from "effect/Schema"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import {
  DeliveryQueued,
  Webhook,
  WebhookCreate,
  webhookListSpec,
  WebhookLog,
  webhookLogListSpec,
  WebhookPatch,
  WebhookWithSecret
} from "@mes/domain"
import {
  apiErrors,
  crud,
  idQuery,
  listQuery,
  many,
  okEnvelope,
  one,
  quotaErrors
} from "./envelope.ts"

export { webhookListSpec, webhookLogListSpec }


const Queued = okEnvelope(DeliveryQueued)

/** Create answers the secret twice: in `data.webhook` and as `data.secret` (DECISIONS). */
const WebhookCreated = okEnvelope(Schema.Struct({ webhook: WebhookWithSecret, secret: Schema.String }))

export class WebhooksGroup extends crud("webhooks", "/api-webhooks", {
  singular: "webhook",
  plural: "webhooks",
  record: Webhook,
  list: webhookListSpec,
  create: WebhookCreate,
  createdSuccess: WebhookCreated,
  patch: WebhookPatch,
  // a cloud tenant's registrations are capped (DECISIONS: Webhooks API)
  createErrors: quotaErrors
}).add(
  HttpApiEndpoint.post("test", "/api-webhooks/test", { query: idQuery, success: Queued, error: apiErrors })
) {}

export class WebhookLogsGroup extends HttpApiGroup.make("webhookLogs").add(
  HttpApiEndpoint.get("list", "/api-webhook-logs", {
    query: listQuery(webhookLogListSpec),
    success: [many("webhook_logs", WebhookLog), one("webhook_log", WebhookLog)],
    error: apiErrors
  }),
  HttpApiEndpoint.post("redeliver", "/api-webhook-logs/redeliver", { query: idQuery, success: Queued, error: apiErrors })
) {}
