// The receiver against deliveries mes signs: a real webhook delivery from a mes server, then every refusal.
import { randomUUID } from "node:crypto"
import type { AddressInfo } from "node:net"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { afterAll, beforeAll, expect, it } from "vitest"
import { deliveryHeaders, WebhookDispatcher } from "@mes/adapters-http"
import { UrlGuard } from "@mes/domain"
import { type Harness, startServer } from "../../../packages/adapters-http/test/harness.ts"
// @ts-expect-error: the example is plain JavaScript
import { createReceiver } from "../receiver.mjs"

const received: Array<any> = []
let receiverUrl = ""
let server: ReturnType<typeof createReceiver>
let h: Harness
const scope = Effect.runSync(Scope.make())

beforeAll(async () => {
  h = await startServer({ env: { MES_WEBHOOK_POLL_INTERVAL: "20ms" } })
})
afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  server?.close()
  await h?.close()
})

const listen = (secret: string) =>
  new Promise<void>((resolve) => {
    server = createReceiver({ secret, process: async (e: any) => void received.push(e) })
    server.listen(0, "127.0.0.1", () => {
      receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
      resolve()
    })
  })

it("accepts what mes delivers, once, and processes it after answering", async () => {
  const { api } = await h.as("Receiver")
  const hook = (await api.post("/api-webhooks", { url: "http://127.0.0.1:9/placeholder", events: ["job.created"] })).body.data.webhook
  await listen(hook.secret)
  await api.patch(`/api-webhooks?id=${hook.id}`, { url: receiverUrl })
  await h.run(Layer.buildWithScope(
    WebhookDispatcher.layer({ pollInterval: "20 millis", schedule: ["0 millis"], timeout: "2 seconds" }).pipe(Layer.provide(Layer.succeed(UrlGuard, UrlGuard.allowAll))),
    scope
  ))
  await api.post("/api-jobs", { job_number: "HOOK-1", parts: [{ part_number: "P", quantity: 1, operations: [{ operation_name: "Cut", sequence: 1 }] }] })
  const deadline = Date.now() + 15_000
  while (!received.some((e) => e.data?.job_number === "HOOK-1")) {
    if (Date.now() > deadline) throw new Error("no delivery reached the receiver")
    await new Promise((r) => setTimeout(r, 20))
  }
  expect(received.find((e) => e.data?.job_number === "HOOK-1")).toMatchObject({ event_type: "job.created", data: { job_number: "HOOK-1" } })
})

it("refuses a changed body, a wrong secret, a stale timestamp; a replay is answered without processing", async () => {
  const secret = "receiver-test-secret-0123456789"
  server?.close()
  await listen(secret)
  const body = JSON.stringify({ event_type: "job.completed", timestamp: new Date().toISOString(), tenant_id: randomUUID(), data: { job_number: "R-1" } })
  const now = Math.floor(Date.now() / 1000)
  const send = (headers: Record<string, string>, payload = body) => fetch(receiverUrl, { method: "POST", headers, body: payload })
  const headers = (o: { secret?: string; id?: string; timestamp?: number; body?: string } = {}) =>
    deliveryHeaders({ secret: o.secret ?? secret, deliveryId: o.id ?? randomUUID(), eventType: "job.completed", body: o.body ?? body, timestamp: o.timestamp ?? now })
  const before = received.length
  const good = headers()
  expect((await send(good)).status).toBe(204)
  expect((await send(good)).status).toBe(200) // the same delivery again: not processed twice
  expect((await send(headers(), body.replace("R-1", "R-2"))).status).toBe(401)
  expect((await send(headers({ secret: "another-secret" }))).status).toBe(401)
  expect((await send(headers({ timestamp: now - 3600 }))).status).toBe(401)
  expect((await send(headers({ timestamp: now + 3600 }))).status).toBe(401)
  // a good Standard Webhooks signature with a forged X-Service-Signature
  expect((await send({ ...headers(), "x-service-signature": "00".repeat(32) })).status).toBe(401)
  await new Promise((r) => setTimeout(r, 50))
  expect(received.slice(before).map((e) => e.data.job_number)).toEqual(["R-1"])
})
