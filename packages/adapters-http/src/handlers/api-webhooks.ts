// /api-webhooks (spec 4.9; create answers the secret, DECISIONS: Webhooks), POST /api-webhooks/test,
// and the read-only /api-webhook-logs with POST /api-webhook-logs/redeliver.
import * as Effect from "effect/Effect"
import { requireId, WebhookLogs, Webhooks } from "@mes/domain"
import { type Handlers, ok } from "../server.ts"
import { listReply, resourceHandlers } from "./shared.ts"

export const webhookHandlers = Effect.gen(function*() {
  const webhooks = yield* Webhooks
  const logs = yield* WebhookLogs
  return {
    ...resourceHandlers("webhooks", { singular: "webhook", plural: "webhooks" }, webhooks),
    "webhooks.create": ({ body }) => webhooks.create(body).pipe(Effect.map((webhook) => ok({ webhook, secret: webhook.secret }, 201))),
    "webhooks.test": ({ query }) => requireId(query).pipe(Effect.flatMap(webhooks.sendTest), Effect.map((r) => ok(r))),
    "webhookLogs.list": ({ query }) =>
      query.id !== undefined
        ? requireId(query).pipe(Effect.flatMap(logs.get), Effect.map((webhook_log) => ok({ webhook_log })))
        : logs.list(query).pipe(Effect.map(listReply("webhook_logs"))),
    "webhookLogs.redeliver": ({ query }) => requireId(query).pipe(Effect.flatMap(logs.redeliver), Effect.map((r) => ok(r)))
  } satisfies Handlers<never>
})
