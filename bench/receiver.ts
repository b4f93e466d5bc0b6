// The webhook receiver of the webhook scenarios: node:http on 127.0.0.1 with an ephemeral port, in the
// runner's process (never in the server's). It answers every POST /hook/<i> with 200 at once, then records
// the delivery and checks it, independently of the server's code:
//   * X-Service-Signature = lowercase hex HMAC-SHA256 of the raw body, keyed with the webhook secret's UTF-8 bytes;
//   * webhook-signature = "v1," + base64 HMAC-SHA256 of `${webhook-id}.${webhook-timestamp}.${body}`, keyed with
//     the base64 part of a `whsec_…` secret (Standard Webhooks);
//   * X-Service-Event = body.event_type, X-Service-Delivery = webhook-id, body.tenant_id = the bench tenant,
//     and a parseable body.timestamp.
// The lag of a delivery is its arrival (Date.now() when the body has been read) minus the event's `timestamp`
// (the outbox row's occurred_at, ms). The server runs on the same machine, so both use the same clock.
import { createHmac, timingSafeEqual } from "node:crypto"
import { createServer, type Server as HttpServer } from "node:http"
import type { AddressInfo } from "node:net"

export interface Delivery {
  /** index of the webhook (path /hook/<i>) */
  readonly hook: number
  readonly deliveryId: string
  readonly eventType: string
  readonly jobNumber: string
  /** the event's timestamp, epoch ms */
  readonly eventMs: number
  /** when the body had been read, epoch ms */
  readonly arrivalMs: number
  readonly bytes: number
}

export interface Receiver {
  readonly port: number
  /** the secret of webhook i, set once it is registered */
  readonly secrets: Array<string | undefined>
  readonly deliveries: Array<Delivery>
  /** deliveries whose signatures (both forms) were checked and matched */
  signaturesOk: number
  /** deliveries that failed a check, with up to 5 samples */
  problems: number
  readonly problemSamples: Array<string>
  /** requests that were not a POST to /hook/<i> */
  strays: number
  /** resolves once `n` deliveries have arrived, or after `ms` (then false) */
  readonly waitFor: (n: number, ms: number) => Promise<boolean>
  readonly close: () => Promise<void>
}

const hmac = (key: Buffer, text: string, encoding: "hex" | "base64") => createHmac("sha256", key).update(text, "utf8").digest(encoding)
const same = (a: string, b: string) => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}
const standardKey = (secret: string) => {
  const m = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(secret)
  return m !== null ? Buffer.from(m[1]!, "base64") : Buffer.from(secret, "utf8")
}

export const startReceiver = async (tenantId: string): Promise<Receiver> => {
  const waiters: Array<{ n: number; resolve: (ok: boolean) => void }> = []
  const receiver: Receiver = {
    port: 0,
    secrets: [],
    deliveries: [],
    signaturesOk: 0,
    problems: 0,
    problemSamples: [],
    strays: 0,
    waitFor: (n, ms) =>
      receiver.deliveries.length >= n
        ? Promise.resolve(true)
        : new Promise<boolean>((resolve) => {
          const w = { n, resolve: (ok: boolean) => (clearTimeout(t), resolve(ok)) }
          const t = setTimeout(() => {
            waiters.splice(waiters.indexOf(w), 1)
            resolve(false)
          }, ms)
          waiters.push(w)
        }),
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    })
  }
  const problem = (text: string) => {
    receiver.problems++
    if (receiver.problemSamples.length < 5) receiver.problemSamples.push(text.slice(0, 500))
  }

  const server: HttpServer = createServer((req, res) => {
    const m = /^\/hook\/(\d+)$/.exec(req.url ?? "")
    if (req.method !== "POST" || m === null) {
      receiver.strays++
      res.writeHead(404).end()
      req.resume()
      return
    }
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const arrivalMs = Date.now()
      res.writeHead(200, { "content-type": "text/plain" }).end("ok")
      const raw = Buffer.concat(chunks)
      const body = raw.toString("utf8")
      const hook = Number(m[1])
      const h = req.headers
      const deliveryId = String(h["x-service-delivery"] ?? "")
      let parsed: any
      try {
        parsed = JSON.parse(body)
      } catch {
        problem(`hook ${hook}: body is not JSON: ${body.slice(0, 200)}`)
        return
      }
      const eventMs = Date.parse(String(parsed?.timestamp))
      receiver.deliveries.push({
        hook,
        deliveryId,
        eventType: String(parsed?.event_type),
        jobNumber: String(parsed?.data?.job_number ?? ""),
        eventMs,
        arrivalMs,
        bytes: raw.length
      })
      const secret = receiver.secrets[hook]
      const issues: Array<string> = []
      if (secret === undefined) issues.push("unknown webhook")
      else {
        if (!same(String(h["x-service-signature"] ?? ""), hmac(Buffer.from(secret, "utf8"), body, "hex"))) issues.push("X-Service-Signature mismatch")
        const id = String(h["webhook-id"] ?? "")
        const ts = String(h["webhook-timestamp"] ?? "")
        if (!same(String(h["webhook-signature"] ?? ""), "v1," + hmac(standardKey(secret), `${id}.${ts}.${body}`, "base64"))) issues.push("webhook-signature mismatch")
      }
      if (h["x-service-event"] !== parsed?.event_type) issues.push(`X-Service-Event ${String(h["x-service-event"])} ≠ body event_type ${String(parsed?.event_type)}`)
      if (deliveryId === "" || h["webhook-id"] !== deliveryId) issues.push("X-Service-Delivery missing or ≠ webhook-id")
      if (parsed?.tenant_id !== tenantId) issues.push(`tenant_id ${String(parsed?.tenant_id)}`)
      if (!Number.isFinite(eventMs)) issues.push(`timestamp ${String(parsed?.timestamp)}`)
      if (issues.length > 0) problem(`hook ${hook} delivery ${deliveryId}: ${issues.join("; ")}`)
      else receiver.signaturesOk++
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (receiver.deliveries.length >= waiters[i]!.n) waiters.splice(i, 1)[0]!.resolve(true)
      }
    })
  })
  server.keepAliveTimeout = 30_000
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  ;(receiver as { port: number }).port = (server.address() as AddressInfo).port
  return receiver
}
