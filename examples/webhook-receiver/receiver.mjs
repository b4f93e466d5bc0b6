// Receives mes webhooks: verifies each delivery twice (Standard Webhooks with the `standardwebhooks` library, and
// mes's own X-Service-Signature), refuses replays and stale timestamps, answers at once and processes after.
//   MES_WEBHOOK_SECRET=<the webhook's secret> PORT=4000 node receiver.mjs
import { createHmac, timingSafeEqual } from "node:crypto"
import { createServer } from "node:http"
import { Webhook } from "standardwebhooks"

/** How old a delivery may be (and how long its id is remembered against replays). */
const TOLERANCE_SECONDS = 5 * 60

/** The Standard Webhooks verifier for a mes secret: `whsec_…` as is, any other secret as its raw UTF-8 bytes. */
const verifierFor = (secret) =>
  secret.startsWith("whsec_") ? new Webhook(secret) : new Webhook(Buffer.from(secret, "utf8"), { format: "raw" })

/** X-Service-Signature: lowercase hex HMAC-SHA256 of the raw body with the secret, compared in constant time. */
const serviceSignatureOk = (secret, body, header) => {
  const expected = createHmac("sha256", Buffer.from(secret, "utf8")).update(body).digest()
  const given = Buffer.from(String(header ?? ""), "hex")
  return given.length === expected.length && timingSafeEqual(given, expected)
}

export const createReceiver = ({ secret, process: handle, now = () => Date.now() }) => {
  const verifier = verifierFor(secret)
  /** Delivery ids seen within the tolerance window: a second arrival is a replay. */
  const seen = new Map()
  const queue = []
  let draining = false
  const drain = async () => {
    if (draining) return
    draining = true
    while (queue.length > 0) {
      const event = queue.shift()
      try {
        await handle(event)
      } catch (e) {
        console.error("processing failed", event.event_type, e)
      }
    }
    draining = false
  }
  return createServer((req, res) => {
    const chunks = []
    req.on("data", (c) => chunks.push(c))
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      const reply = (status, text) => {
        res.writeHead(status, { "content-type": "text/plain" })
        res.end(text)
      }
      if (req.method !== "POST") return reply(405, "POST only\n")
      const id = req.headers["webhook-id"]
      const timestamp = Number(req.headers["webhook-timestamp"])
      // stale or future timestamps first (the library checks them too, with its own 5 minute window)
      if (!Number.isFinite(timestamp) || Math.abs(now() / 1000 - timestamp) > TOLERANCE_SECONDS) return reply(401, "stale timestamp\n")
      let event
      try {
        event = verifier.verify(body, { "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": req.headers["webhook-signature"] })
      } catch {
        return reply(401, "bad signature\n")
      }
      if (!serviceSignatureOk(secret, body, req.headers["x-service-signature"])) return reply(401, "bad X-Service-Signature\n")
      for (const [key, at] of seen) if (at < now() - TOLERANCE_SECONDS * 1000) seen.delete(key)
      // a redelivery of the same attempt reuses its id (X-Service-Delivery): answer 200 so mes stops, do nothing
      if (seen.has(id)) return reply(200, "already received\n")
      seen.set(id, now())
      // answer fast; the work happens after the response
      reply(204, "")
      queue.push(event)
      setImmediate(drain)
    })
  })
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const secret = process.env.MES_WEBHOOK_SECRET
  if (!secret) {
    console.error("set MES_WEBHOOK_SECRET to the webhook's secret")
    process.exit(1)
  }
  const server = createReceiver({ secret, process: async (e) => console.log(`${e.event_type}`, JSON.stringify(e.data).slice(0, 200)) })
  server.listen(Number(process.env.PORT ?? 4000), "127.0.0.1", () => console.log(`receiving on http://127.0.0.1:${server.address().port}/`))
}
