// Webhook signatures (spec 6.2, DECISIONS "Webhooks"; docs/events.md explains them to receivers).
//
// * `X-Service-Signature`: lowercase hex HMAC-SHA256 of the raw body; key = the secret's UTF-8
//   bytes, no prefix. Compare in constant time.
// * Standard Webhooks (https://www.standardwebhooks.com): `webhook-id` (the delivery id),
//   `webhook-timestamp` (unix seconds of the attempt) and `webhook-signature` = `v1,` + base64
//   HMAC-SHA256 over `${id}.${timestamp}.${body}`. The key is the base64-decoded part after
//   `whsec_` when the secret has that form (what off-the-shelf verifiers expect), else the
//   secret's UTF-8 bytes (verifiers take that as a "raw" secret, e.g. the `standardwebhooks`
//   package's `new Webhook(Buffer.from(secret, "utf8"), { format: "raw" })`: its raw *string* form
//   keeps only the low byte of each character, which differs for non-ASCII secrets).
import { createHmac } from "node:crypto"
import { boundedMemo } from "./bounded-memo.ts"

const WHSEC = /^whsec_([A-Za-z0-9+/]+={0,2})$/

/** The key of the Standard Webhooks signature for a webhook secret. */
export const standardWebhooksKey = (secret: string): Buffer => {
  const m = WHSEC.exec(secret)
  return m !== null ? Buffer.from(m[1]!, "base64") : Buffer.from(secret, "utf8")
}

// the dispatcher signs every attempt: the keys of the secrets it saw last are kept
const cachedStandardKey = boundedMemo(standardWebhooksKey)

/** `X-Service-Signature`: lowercase hex HMAC-SHA256 of the body with the UTF-8 secret (a string key is its UTF-8 bytes). */
export const serviceSignature = (secret: string, body: string): string =>
  createHmac("sha256", secret).update(body, "utf8").digest("hex")

/** `webhook-signature`: `v1,` + base64 HMAC-SHA256 of `${id}.${timestamp}.${body}`. */
export const standardWebhooksSignature = (secret: string, id: string, timestamp: number, body: string): string =>
  "v1," + createHmac("sha256", cachedStandardKey(secret)).update(`${id}.${timestamp}.${body}`, "utf8").digest("base64")

/** Every header of one delivery attempt. */
export const deliveryHeaders = (input: {
  readonly secret: string
  readonly deliveryId: string
  readonly eventType: string
  readonly body: string
  /** Unix seconds of this attempt. */
  readonly timestamp: number
}): Record<string, string> => ({
  "content-type": "application/json",
  "user-agent": "mes-webhooks/1",
  "x-service-signature": serviceSignature(input.secret, input.body),
  "x-service-event": input.eventType,
  "x-service-delivery": input.deliveryId,
  "webhook-id": input.deliveryId,
  "webhook-timestamp": String(input.timestamp),
  "webhook-signature": standardWebhooksSignature(input.secret, input.deliveryId, input.timestamp, input.body)
})
