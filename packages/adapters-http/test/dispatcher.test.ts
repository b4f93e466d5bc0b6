// The webhook dispatcher against a real local receiver (node:http on 127.0.0.1) and the test
// database (PGlite, or a fresh PostgreSQL database with DATABASE_URL): body, headers and both
// signatures, subscription/tenant/active filtering, retries with a stable delivery id and their
// logs, 410, timeouts, slow receivers, two dispatchers on one database, restarts and shutdown.
import { createHmac, timingSafeEqual } from "node:crypto"
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Cause, Duration, Effect, Exit, Layer, References, Scope } from "effect"
import { Webhook } from "standardwebhooks"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { DeliveryStore, EVENT_TYPES, UrlGuard } from "@mes/domain"
import { Db, DeliveryStorePg, eventWrites, testDatabaseKind } from "@mes/adapters-pg"
import { classifyAddress, CommitSignal, DEFAULT_RETRY_SCHEDULE, type DispatcherOptions, parseRetrySchedule, standardWebhooksKey, WebhookDispatcher } from "../src/index.ts"
import { freePort, type Harness, nestedJob, sleep, startServer } from "./harness.ts"

// ---------------------------------------------------------------------------------------------
// a receiver that records every request and answers as each path is told

interface Received {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly at: number
}

type Behaviour = (nth: number, request: Received) => { readonly status?: number; readonly delayMs?: number; readonly hang?: boolean }

const startReceiver = async () => {
  const received: Array<Received> = []
  const behaviours = new Map<string, Behaviour>()
  const hanging = new Set<ServerResponse>()
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const path = req.url ?? "/"
      const nth = received.filter((r) => r.path === path).length + 1
      const request: Received = { path, headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() }
      received.push(request)
      const b = behaviours.get(path)?.(nth, request) ?? {}
      const reply = () => {
        hanging.delete(res)
        if (!res.writableEnded) res.writeHead(b.status ?? 200, { "content-type": "text/plain" }).end(b.status === undefined ? "ok" : `status ${b.status}`)
      }
      if (b.hang === true) hanging.add(res)
      else if (b.delayMs !== undefined) {
        hanging.add(res)
        setTimeout(reply, b.delayMs)
      } else reply()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  let n = 0
  return {
    received,
    /** A fresh path on this receiver, answering as `behaviour` says (200 at once by default). */
    path: (behaviour?: Behaviour) => {
      const path = `/hook-${++n}`
      if (behaviour !== undefined) behaviours.set(path, behaviour)
      return { url: base + path, path, set: (b: Behaviour) => behaviours.set(path, b) }
    },
    at: (path: string) => received.filter((r) => r.path === path),
    close: async () => {
      for (const res of hanging) res.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

// ---------------------------------------------------------------------------------------------

let h: Harness
let receiver: Awaited<ReturnType<typeof startReceiver>>
const running: Array<() => Promise<void>> = []

beforeAll(async () => {
  h = await startServer()
  receiver = await startReceiver()
})

afterEach(async () => {
  // stop what a test left running and settle its leftovers, so tests never feed each other
  for (const stop of running.splice(0)) await stop()
  await h.sql("UPDATE webhook_deliveries SET status = 'failed', locked_until = NULL WHERE status = 'pending'")
  await h.sql("DELETE FROM outbox")
})

afterAll(async () => {
  for (const stop of running.splice(0)) await stop()
  await receiver?.close()
  await h?.close()
})

const FAST: DispatcherOptions = { pollInterval: "10 millis", schedule: ["0 millis", "100 millis", "100 millis"], timeout: "2 seconds" }

/** Starts a dispatcher layer over the test database (or over `database`, a second pool). */
/** The database's DeliveryStore with some of its methods replaced (to count calls), for `startDispatcher`'s `provide`. */
const wrappedStore = (replace: (store: DeliveryStore["Service"]) => Partial<DeliveryStore["Service"]>) =>
  Layer.effect(DeliveryStore, Effect.map(Effect.service(DeliveryStore), (store) => DeliveryStore.of({ ...store, ...replace(store) })))

const startDispatcher = async (
  options: DispatcherOptions = {},
  extra: {
    readonly guard?: UrlGuard["Service"]
    readonly database?: Layer.Layer<any, unknown>
    /** Further services for the dispatcher (a CommitSignal, a wrapped store). */
    readonly provide?: Layer.Layer<any, unknown, any>
  } = {}
) => {
  const scope = Effect.runSync(Scope.make())
  let layer: Layer.Layer<WebhookDispatcher, unknown, any> = WebhookDispatcher.layer({ ...FAST, ...options }).pipe(
    Layer.provide(Layer.succeed(UrlGuard, extra.guard ?? UrlGuard.allowAll))
  )
  if (extra.provide !== undefined) layer = layer.pipe(Layer.provide(extra.provide))
  if (extra.database !== undefined) layer = layer.pipe(Layer.provide(DeliveryStorePg), Layer.provide(extra.database))
  // failed deliveries log a warning; tests provoke many
  layer = layer.pipe(Layer.provide(Layer.succeed(References.MinimumLogLevel, "Error")))
  await h.run(Layer.buildWithScope(layer, scope))
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
  running.push(stop)
  return { stop }
}

const waitFor = async <A>(what: string, probe: () => A | undefined | false | Promise<A | undefined | false>, timeoutMs = 5_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await probe()
    if (v !== undefined && v !== false) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(10)
  }
}

type Api = Awaited<ReturnType<Harness["as"]>>["api"]

const register = async (api: Api, url: string, events: ReadonlyArray<string>) => {
  const res = await api.post("/api-webhooks", { url, events })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  const id = res.body.data.webhook.id as string
  const secret = res.body.data.secret as string
  expect(typeof secret).toBe("string")
  return { id, secret }
}

const enqueue = async (tenantId: string, eventType: string, data: Record<string, unknown>) => {
  const rows = await h.sql(
    `WITH ${eventWrites("$1", "SELECT gen_random_uuid() AS event_id, $2::text AS type, $3::text AS data, 1 AS n")} SELECT event_id FROM ev_rows`,
    [tenantId, eventType, JSON.stringify(data)]
  )
  return rows[0]!.event_id as string
}

const logsOf = async (api: Api, webhookId: string) => {
  const res = await api.get(`/api-webhook-logs?webhook_id=${webhookId}&limit=100`)
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return [...(res.body.data.webhook_logs as Array<Record<string, any>>)].sort((a, b) => a.attempt - b.attempt)
}

const header = (r: Received, name: string) => {
  const v = r.headers[name]
  return Array.isArray(v) ? v.join(",") : v
}

/** Asserts every header and both signatures of a received request; answers its parsed body. */
const expectSigned = (r: Received, secret: string) => {
  const body = JSON.parse(r.body)
  const deliveryId = header(r, "x-service-delivery")!
  expect(deliveryId).toMatch(/^[0-9a-f-]{36}$/)
  expect(header(r, "content-type")).toBe("application/json")
  expect(header(r, "x-service-event")).toBe(body.event_type)
  expect(header(r, "webhook-id")).toBe(deliveryId)
  const ts = Number(header(r, "webhook-timestamp"))
  expect(Number.isInteger(ts)).toBe(true)
  expect(Math.abs(ts - r.at / 1000)).toBeLessThan(5)
  // X-Service-Signature: lowercase hex HMAC-SHA256 of the raw body, key = the secret's UTF-8 bytes
  const hex = createHmac("sha256", Buffer.from(secret, "utf8")).update(Buffer.from(r.body, "utf8")).digest("hex")
  const got = header(r, "x-service-signature")!
  expect(got).toMatch(/^[0-9a-f]{64}$/)
  expect(timingSafeEqual(Buffer.from(got, "hex"), Buffer.from(hex, "hex"))).toBe(true)
  // Standard Webhooks: recomputed here, and verified by the reference implementation
  const key = secret.startsWith("whsec_") ? Buffer.from(secret.slice(6), "base64") : Buffer.from(secret, "utf8")
  const expected = "v1," + createHmac("sha256", key).update(`${deliveryId}.${ts}.${r.body}`).digest("base64")
  expect(header(r, "webhook-signature")).toBe(expected)
  // (the package's raw *string* form keeps only the low byte of each char: give it the UTF-8 bytes)
  const verifier = secret.startsWith("whsec_") ? new Webhook(secret) : new Webhook(Buffer.from(secret, "utf8"), { format: "raw" })
  expect(verifier.verify(r.body, {
    "webhook-id": header(r, "webhook-id")!,
    "webhook-timestamp": header(r, "webhook-timestamp")!,
    "webhook-signature": header(r, "webhook-signature")!
  })).toEqual(body)
  // the documented body, keys in this order
  expect(Object.keys(body)).toEqual(["event_type", "timestamp", "tenant_id", "data"])
  expect(body.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  expect(typeof body.data).toBe("object")
  return body
}

// ---------------------------------------------------------------------------------------------

describe("retry schedule and signing helpers", () => {
  it("parses MES_WEBHOOK_RETRY_SCHEDULE and defaults to immediately, 4.5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h", () => {
    const hours = (n: number) => n * 3_600_000
    const expected = [0, 4_500, 300_000, 1_800_000, hours(2), hours(5), hours(10), hours(10)]
    expect(parseRetrySchedule("0,4.5s,5m,30m,2h,5h,10h,10h").map(Duration.toMillis)).toEqual(expected)
    expect(DEFAULT_RETRY_SCHEDULE.map((d) => Duration.toMillis(Duration.fromInputUnsafe(d)))).toEqual(expected)
    expect(parseRetrySchedule(" 250ms , 1.5s, 2 minutes").map(Duration.toMillis)).toEqual([250, 1_500, 120_000])
    for (const bad of ["", "5", "5x", "1s,,2s", "-1s", "Infinity"]) expect(() => parseRetrySchedule(bad), bad).toThrow(/is not comma-separated delays/)
  })

  it("a timeout or poll interval of 0, any of them beyond 365 days, or a concurrency (all, or a tenant's) beyond 1000 is refused where the dispatcher is built", () => {
    // at 0: a busy poll or instant timeouts; beyond: leases and next attempts PostgreSQL's timestamps cannot hold
    for (const [options, wanted] of [
      [{ pollInterval: "0 millis" }, "the webhook poll interval must be a duration of more than 0 and at most 365d"],
      [{ timeout: 0 }, "the webhook timeout must be a duration of more than 0 and at most 365d"],
      [{ pollInterval: "-5 millis" }, "the webhook poll interval must be a duration of more than 0 and at most 365d"],
      [{ timeout: "366 days" }, "the webhook timeout must be a duration of more than 0 and at most 365d"],
      [{ schedule: ["0 millis", "400 days"] }, "the webhook retry schedule needs at least one delay, each from 0 to 365d"],
      // a worker is a fiber started at once: 100,000,000 of them kept the server from starting
      [{ concurrency: 100_000_000 }, "the webhook concurrency must be a whole number from 1 to 1000"],
      [{ concurrency: 0 }, "the webhook concurrency must be a whole number from 1 to 1000"],
      [{ tenantConcurrency: 0 }, "the webhook concurrency of a tenant must be a whole number from 1 to 1000"],
      [{ tenantConcurrency: 2.5 }, "the webhook concurrency of a tenant must be a whole number from 1 to 1000"]
    ] as const) {
      const exit = Effect.runSyncExit(Layer.build(WebhookDispatcher.layer(options)).pipe(Effect.scoped) as unknown as Effect.Effect<unknown, unknown>)
      expect(Exit.isFailure(exit), wanted).toBe(true)
      expect(String(Cause.squash((exit as Exit.Failure<unknown, unknown>).cause)), wanted).toContain(wanted)
    }
    expect(() => parseRetrySchedule("0,366d"), "366d").toThrow("'0,366d' is not comma-separated delays like 0,5s,5m,2h, each a duration of at most 365d")
  })

  it("derives the Standard Webhooks key from a whsec_ secret, else uses the UTF-8 secret", () => {
    expect(standardWebhooksKey("whsec_AAECAw==")).toEqual(Buffer.from([0, 1, 2, 3]))
    expect(standardWebhooksKey("plain-secret")).toEqual(Buffer.from("plain-secret", "utf8"))
  })
})

describe("webhook dispatcher", () => {
  it("delivers API events signed, in the documented shape, only to subscribed active webhooks of the tenant", async () => {
    const a = await h.as("Dispatch A")
    const b = await h.as("Dispatch B")
    const main = receiver.path()
    const unsubscribed = receiver.path()
    const inactive = receiver.path()
    const otherTenant = receiver.path()
    const hook = await register(a.api, main.url, ["job.created", "part.created"])
    await register(a.api, unsubscribed.url, ["job.completed"])
    const off = await register(a.api, inactive.url, ["job.created"])
    expect((await a.api.patch(`/api-webhooks?id=${off.id}`, { active: false })).status).toBe(200)
    await register(b.api, otherTenant.url, ["job.created"])
    await startDispatcher()

    const created = await a.api.post("/api-jobs", nestedJob("WH-1", 1, 1))
    expect(created.status).toBe(201)
    const got = await waitFor("job.created and part.created", () => receiver.at(main.path).length >= 2 && receiver.at(main.path))
    const bodies = got.map((r) => expectSigned(r, hook.secret))
    expect(bodies.map((x) => x.event_type).sort()).toEqual(["job.created", "part.created"])
    const job = bodies.find((x) => x.event_type === "job.created")
    expect(job).toMatchObject({ tenant_id: a.tenantId, data: { job_number: "WH-1" } })
    expect(new Set(got.map((r) => header(r, "x-service-delivery"))).size).toBe(2)

    // every attempt logged, readable through the API
    const logs = await waitFor("two logs", async () => {
      const l = await logsOf(a.api, hook.id)
      return l.length >= 2 && l
    })
    expect(logs).toHaveLength(2)
    for (const log of logs) {
      expect(log).toMatchObject({ webhook_id: hook.id, attempt: 1, status: "succeeded", status_code: 200, error: null, next_retry_at: null })
      expect(got.map((r) => header(r, "x-service-delivery"))).toContain(log.delivery_id)
      expect(log.duration_ms).toBeGreaterThanOrEqual(0)
    }

    await sleep(300)
    expect(receiver.at(main.path)).toHaveLength(2)
    expect(receiver.at(unsubscribed.path)).toHaveLength(0)
    expect(receiver.at(inactive.path)).toHaveLength(0)
    expect(receiver.at(otherTenant.path)).toHaveLength(0)
  })

  it("signs every event type's delivery verifiably (UTF-8 payloads included)", async () => {
    const t = await h.as("Every Event")
    const target = receiver.path()
    const hook = await register(t.api, target.url, [...EVENT_TYPES])
    await startDispatcher()
    for (const type of EVENT_TYPES) await enqueue(t.tenantId, type, { kind: type, note: "Müller ✓ «naïve» 日本", n: 1.5, nested: { a: [1, null] } })
    const got = await waitFor("every event type", () => receiver.at(target.path).length >= EVENT_TYPES.length && receiver.at(target.path))
    expect(got.map((r) => JSON.parse(r.body).event_type).sort()).toEqual([...EVENT_TYPES].sort())
    for (const r of got) {
      const body = expectSigned(r, hook.secret)
      expect(body).toMatchObject({ tenant_id: t.tenantId, data: { kind: body.event_type, note: "Müller ✓ «naïve» 日本" } })
    }
  })

  it("also signs with a secret that is not whsec_ (raw UTF-8 key for the Standard Webhooks signature)", async () => {
    const t = await h.as("Raw Secret")
    const target = receiver.path()
    const hook = await register(t.api, target.url, ["job.updated"])
    await h.sql("UPDATE webhooks SET secret = 'my-plain ✓ secret' WHERE id = $1", [hook.id])
    await startDispatcher()
    await enqueue(t.tenantId, "job.updated", { job_id: "x" })
    const [r] = await waitFor("delivery", () => receiver.at(target.path).length >= 1 && receiver.at(target.path))
    expectSigned(r!, "my-plain ✓ secret")
  })

  it("with the default schedule and poll interval, the first retry reaches the receiver within 5 s of the failed attempt", async () => {
    const t = await h.as("Default Retry")
    const target = receiver.path((nth) => (nth === 1 ? { status: 500 } : {}))
    await register(t.api, target.url, ["job.started"])
    await startDispatcher({ schedule: DEFAULT_RETRY_SCHEDULE, pollInterval: "250 millis", timeout: "10 seconds" })
    await enqueue(t.tenantId, "job.started", { job_id: "j1" })
    const [first, second] = await waitFor("two attempts", () => receiver.at(target.path).length >= 2 && receiver.at(target.path), 8_000)
    // spec DECISIONS: the first retry of a failed delivery happens within 5 seconds
    expect(second!.at - first!.at).toBeLessThan(5_000)
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(4_000)
  }, 15_000)

  it("retries a failed attempt with the same delivery id and logs both attempts", async () => {
    const t = await h.as("Retry")
    const target = receiver.path((nth) => (nth === 1 ? { status: 500 } : {}))
    const hook = await register(t.api, target.url, ["job.started"])
    await startDispatcher({ schedule: ["0 millis", "200 millis", "200 millis"] })
    await enqueue(t.tenantId, "job.started", { job_id: "j1" })
    const [first, second] = await waitFor("two attempts", () => receiver.at(target.path).length >= 2 && receiver.at(target.path))
    expect(header(second!, "x-service-delivery")).toBe(header(first!, "x-service-delivery"))
    expect(header(second!, "webhook-id")).toBe(header(first!, "webhook-id"))
    expect(second!.body).toBe(first!.body)
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(150)
    expectSigned(first!, hook.secret)
    expectSigned(second!, hook.secret)

    const logs = await waitFor("two logs", async () => {
      const l = await logsOf(t.api, hook.id)
      return l.length >= 2 && l
    })
    const deliveryId = header(first!, "x-service-delivery")
    expect(logs[0]).toMatchObject({ attempt: 1, status: "retrying", status_code: 500, delivery_id: deliveryId, event_type: "job.started" })
    expect(logs[0]!.error).toMatch(/HTTP 500/)
    expect(logs[0]!.next_retry_at).toEqual(expect.any(String))
    expect(logs[1]).toMatchObject({ attempt: 2, status: "succeeded", status_code: 200, delivery_id: deliveryId, error: null, next_retry_at: null })
    const [delivery] = await h.sql("SELECT status, attempts, locked_until, last_status_code FROM webhook_deliveries WHERE id = $1", [deliveryId])
    expect(delivery).toMatchObject({ status: "succeeded", attempts: 2, locked_until: null, last_status_code: 200 })
    await sleep(300)
    expect(receiver.at(target.path)).toHaveLength(2)
  })

  it("retries timeouts, network errors and non-2xx until the schedule is used up, then fails the delivery", async () => {
    const t = await h.as("Exhaust")
    const hanging = receiver.path(() => ({ hang: true }))
    const failing = receiver.path(() => ({ status: 503 }))
    const slowHook = await register(t.api, hanging.url, ["part.updated"])
    const failHook = await register(t.api, failing.url, ["part.updated"])
    const closedPort = await freePort()
    const deadHook = await register(t.api, `http://127.0.0.1:${closedPort}/nothing-listens-here`, ["part.updated"])
    await startDispatcher({ timeout: "300 millis", schedule: ["0 millis", "50 millis"] })
    await enqueue(t.tenantId, "part.updated", { part_id: "p" })
    const settled = async (id: string) => {
      const l = await logsOf(t.api, id)
      return l.length >= 2 && l
    }
    const slowLogs = await waitFor("timeouts logged", () => settled(slowHook.id))
    const failLogs = await waitFor("503s logged", () => settled(failHook.id))
    const deadLogs = await waitFor("refused connections logged", () => settled(deadHook.id))
    expect(slowLogs.map((l) => [l.attempt, l.status, l.status_code])).toEqual([[1, "retrying", null], [2, "failed", null]])
    expect(slowLogs[0]!.error).toMatch(/timeout/)
    expect(slowLogs[0]!.duration_ms).toBeGreaterThanOrEqual(250)
    expect(slowLogs[1]!.next_retry_at).toBeNull()
    expect(failLogs.map((l) => [l.attempt, l.status, l.status_code])).toEqual([[1, "retrying", 503], [2, "failed", 503]])
    expect(deadLogs.map((l) => [l.attempt, l.status, l.status_code])).toEqual([[1, "retrying", null], [2, "failed", null]])
    expect(deadLogs[0]!.error).toMatch(/network error: .*ECONNREFUSED/)
    const rows = await h.sql("SELECT status, attempts FROM webhook_deliveries WHERE webhook_id = ANY($1::uuid[])", [
      `{${slowHook.id},${failHook.id},${deadHook.id}}`
    ])
    expect(rows).toHaveLength(3)
    for (const row of rows) expect(row).toMatchObject({ status: "failed", attempts: 2 })
    expect(receiver.at(hanging.path)).toHaveLength(2)
    expect(receiver.at(failing.path)).toHaveLength(2)
  })

  it("a receiver answering 410 deactivates its webhook", async () => {
    const t = await h.as("Gone")
    const target = receiver.path(() => ({ status: 410 }))
    const hook = await register(t.api, target.url, ["batch.started"])
    await startDispatcher()
    await enqueue(t.tenantId, "batch.started", { batch_id: "b" })
    const [log] = await waitFor("the 410 logged", async () => {
      const l = await logsOf(t.api, hook.id)
      return l.length >= 1 && l
    })
    expect(log).toMatchObject({ attempt: 1, status: "failed", status_code: 410, next_retry_at: null })
    const read = await t.api.get(`/api-webhooks?id=${hook.id}`)
    expect(read.body.data.webhook.active).toBe(false)
    await enqueue(t.tenantId, "batch.started", { batch_id: "b2" })
    await sleep(300)
    expect(receiver.at(target.path)).toHaveLength(1)
    expect(await h.sql("SELECT 1 FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'pending'", [hook.id])).toHaveLength(0)
  })

  /** One attempt of a fresh tenant's webhook to the receiver (at `host`) under `guard`: refused, its log's error. */
  const refusedUnder = async (tenant: string, host: string, guard: UrlGuard["Service"]) => {
    const t = await h.as(tenant)
    const target = receiver.path()
    const hook = await register(t.api, target.url.replace("127.0.0.1", host), ["issue.created"])
    await startDispatcher({ schedule: ["0 millis"] }, { guard })
    await enqueue(t.tenantId, "issue.created", { issue_id: "i" })
    const [log] = await waitFor("the refusal logged", async () => {
      const l = await logsOf(t.api, hook.id)
      return l.length >= 1 && l
    })
    expect(log).toMatchObject({ attempt: 1, status: "failed", status_code: null })
    expect(receiver.at(target.path)).toHaveLength(0)
    return log!.error as string
  }

  it("refuses a URL the SSRF guard rejects at delivery time: a failed attempt with the reason", async () => {
    const guard = UrlGuard.of({ check: (url) => Effect.succeed(url.includes("127.0.0.1") ? "a loopback address" : undefined) })
    expect(await refusedUnder("Guarded", "127.0.0.1", guard)).toMatch(/refused: a loopback address/)
  })

  it("connects only where its own lookup allows, with a guard that judges addresses: a name that passed the check but resolves to loopback is refused (DNS rebinding)", async () => {
    // the check saw a public address, as it would for a name that changes its answer between the two lookups
    const guard = UrlGuard.of({ check: () => Effect.succeed(undefined), checkAddress: classifyAddress })
    expect(await refusedUnder("Rebinding", "localhost", guard)).toMatch(/^network error: localhost resolves to (127\.0\.0\.1|::1), a loopback address$/)
  })

  it("one slow receiver delays neither another webhook nor the API", async () => {
    const t = await h.as("Slow")
    const slow = receiver.path(() => ({ delayMs: 3_000 }))
    const fast = receiver.path()
    await register(t.api, slow.url, ["job.created"])
    await register(t.api, fast.url, ["job.created"])
    await startDispatcher({ timeout: "10 seconds" })

    const t0 = Date.now()
    expect((await t.api.post("/api-jobs", nestedJob("SLOW-1"))).status).toBe(201)
    await waitFor("the fast receiver", () => receiver.at(fast.path).length >= 1)
    expect(Date.now() - t0).toBeLessThan(1_500)
    await waitFor("the slow receiver is busy", () => receiver.at(slow.path).length >= 1)

    // a second event while the slow attempt is still in flight: claimed and delivered at once
    const t1 = Date.now()
    const second = await t.api.post("/api-jobs", nestedJob("SLOW-2"))
    expect(second.status).toBe(201)
    expect(Date.now() - t1).toBeLessThan(1_000)
    await waitFor("the fast receiver again", () => receiver.at(fast.path).length >= 2)
    expect(Date.now() - t1).toBeLessThan(1_500)
    expect(Date.now() - t0).toBeLessThan(2_800) // the first slow attempt has not answered yet
    await waitFor("both slow attempts", () => receiver.at(slow.path).length >= 2, 8_000)
    expect(receiver.at(fast.path)).toHaveLength(2)
  })

  describe("one tenant's receivers that answer late or never leave workers to the other tenants", () => {
    // four workers, two of them at most for a tenant not known to answer in time (within 1 s); an attempt gives
    // up after 2 s and is not retried
    const SHARED: DispatcherOptions = { concurrency: 4, timeout: "2 seconds", schedule: ["0 millis"], shutdownGrace: "10 millis" }
    /** A tenant whose webhook's receiver answers as `behaviour` says, with `n` deliveries due. */
    const tenantWith = async (name: string, n: number, behaviour?: Behaviour) => {
      const t = await h.as(name)
      const hook = receiver.path(behaviour)
      await register(t.api, hook.url, ["operation.completed"])
      for (let i = 0; i < n; i++) await enqueue(t.tenantId, "operation.completed", { n: i })
      return { ...t, hook }
    }
    const hang: Behaviour = () => ({ hang: true })

    it("a tenant not known to answer in time sends at most half of them at once: another's delivery goes out at once", async () => {
      const hole = await tenantWith("Black Hole", 20, hang)
      const other = await tenantWith("Beside The Hole", 0)
      await startDispatcher(SHARED)
      // its first attempts hold two workers, not four
      await waitFor("the black hole's first attempts", () => receiver.at(hole.hook.path).length >= 2)
      const t0 = Date.now()
      await enqueue(other.tenantId, "operation.completed", { n: 1 })
      await waitFor("the other tenant's delivery", () => receiver.at(other.hook.path).length >= 1, 10_000)
      expect(Date.now() - t0).toBeLessThan(1_000)
      expect(receiver.at(hole.hook.path)).toHaveLength(2)
      // when they time out it is slow: two more, and no more
      await waitFor("the next two", () => receiver.at(hole.hook.path).length >= 4, 5_000)
      await sleep(300)
      expect(receiver.at(hole.hook.path)).toHaveLength(4)
      const t1 = Date.now()
      await enqueue(other.tenantId, "operation.completed", { n: 2 })
      await waitFor("the other tenant's second delivery", () => receiver.at(other.hook.path).length >= 2, 10_000)
      expect(Date.now() - t1).toBeLessThan(1_000)
    })

    it("a tenant whose receiver answers in time is limited only until its first attempts answer", async () => {
      const quick = await tenantWith("Answers In Time", 12, () => ({ delayMs: 300 }))
      await startDispatcher(SHARED)
      await waitFor("all its deliveries", () => receiver.at(quick.hook.path).length >= 12, 5_000)
      // two at first; once they answered (300 ms), four at once
      const at = receiver.at(quick.hook.path).map((r) => r.at)
      expect(at[1]! - at[0]!).toBeLessThan(250)
      expect(at[2]! - at[0]!).toBeGreaterThanOrEqual(250)
      expect(at[5]! - at[2]!).toBeLessThan(250)
      expect(at[9]! - at[6]!).toBeLessThan(250)
    })

    it("what the workers give back (past a tenant's share or the reserve) goes back to the database in one statement, not one per delivery", async () => {
      const released: Array<ReadonlyArray<string>> = []
      const counting = wrappedStore((store) => ({ release: (ids) => Effect.suspend(() => (released.push(ids), store.release(ids))) }))
      const holes = [await tenantWith("Give Back One", 6, hang), await tenantWith("Give Back Two", 6, hang), await tenantWith("Give Back Three", 6, hang)]
      await startDispatcher(SHARED, { provide: counting })
      // the first claim takes two of each; a worker sends each tenant's first, and the fourth worker is the reserve
      await waitFor("each black hole's first attempt", () => holes.every((hole) => receiver.at(hole.hook.path).length >= 1))
      await waitFor("the three given back", () => released.flat().length >= 3)
      await sleep(300)
      expect(released.flat()).toHaveLength(3)
      expect(released).toHaveLength(1)
      expect(holes.map((hole) => receiver.at(hole.hook.path).length)).toEqual([1, 1, 1])
    })

    it("two such tenants leave a worker free: another's first delivery goes out at once, not after their attempts time out", async () => {
      const holes = [await tenantWith("Black Hole One", 12, hang), await tenantWith("Black Hole Two", 12, hang)]
      const other = await tenantWith("Behind Two Holes", 0)
      await startDispatcher(SHARED)
      // two workers for one, one for the other: the fourth (an eighth of four, at least one) is the reserve
      await waitFor("both black holes' attempts", () => holes.every((hole) => receiver.at(hole.hook.path).length >= 1))
      await sleep(300)
      expect(holes.map((hole) => receiver.at(hole.hook.path).length).sort()).toEqual([1, 2])
      const t0 = Date.now()
      await enqueue(other.tenantId, "operation.completed", { n: 1 })
      await waitFor("the other tenant's delivery", () => receiver.at(other.hook.path).length >= 1, 20_000)
      // before their first attempts time out (2 s)
      expect(Date.now() - t0).toBeLessThan(1_000)
      // and as theirs time out, the black holes go on with three workers at most, not after their backlog
      await waitFor("their next attempts", () => holes.every((hole) => receiver.at(hole.hook.path).length >= 3), 8_000)
      await enqueue(other.tenantId, "operation.completed", { n: 2 })
      const t1 = Date.now()
      await waitFor("the other tenant's second delivery", () => receiver.at(other.hook.path).length >= 2, 20_000)
      expect(Date.now() - t1).toBeLessThan(1_000)
    })
  })

  it("two dispatchers on one database make each attempt once", async () => {
    const t = await h.as("Two Dispatchers")
    const ok = receiver.path()
    // the first attempt of every delivery fails, its retry succeeds
    const flaky = receiver.path((_, r) =>
      receiver.received.filter((x) => x.path === r.path && header(x, "x-service-delivery") === header(r, "x-service-delivery")).length === 1
        ? { status: 500 }
        : {}
    )
    const okHook = await register(t.api, ok.url, ["operation.completed"])
    await register(t.api, flaky.url, ["operation.completed"])
    const calls = [0, 0]
    const counting = (i: number) => UrlGuard.of({ check: () => Effect.sync(() => void calls[i]++).pipe(Effect.as(undefined)) })
    const options: DispatcherOptions = { batchSize: 7, concurrency: 6, pollInterval: "5 millis", schedule: ["0 millis", "20 millis", "20 millis", "20 millis"] }
    // on PostgreSQL the second dispatcher has its own connection pool, like another server process
    const [{ db }] = testDatabaseKind() === "postgres" ? await h.sql("SELECT current_database() AS db") : [{ db: undefined }]
    let database: Layer.Layer<any, unknown> | undefined
    if (typeof db === "string") {
      const url = new URL(process.env.DATABASE_URL!)
      url.pathname = `/${db}`
      database = Db.postgres(url.toString(), { maxConnections: 4 })
    }
    await startDispatcher(options, { guard: counting(0) })
    await startDispatcher(options, { guard: counting(1), ...(database !== undefined ? { database } : {}) })

    const N = 120
    for (let i = 0; i < N; i += 40) {
      await h.sql(
        `WITH ${
          eventWrites("$1", "SELECT gen_random_uuid() AS event_id, 'operation.completed' AS type, json_build_object('n', g) AS data, g AS n FROM generate_series($2::int, $3::int) g")
        } SELECT 1`,
        [t.tenantId, i, i + 39]
      )
    }
    await waitFor("every delivery succeeded", async () => {
      const [row] = await h.sql(
        "SELECT count(*)::int AS n FROM webhook_deliveries WHERE tenant_id = $1 AND status = 'succeeded'",
        [t.tenantId]
      )
      return row!.n === 2 * N
    }, 30_000)
    await sleep(200)

    const perDelivery = (path: string) => {
      const m = new Map<string, number>()
      for (const r of receiver.at(path)) m.set(header(r, "x-service-delivery")!, (m.get(header(r, "x-service-delivery")!) ?? 0) + 1)
      return m
    }
    const okCounts = perDelivery(ok.path)
    expect(okCounts.size).toBe(N)
    expect([...okCounts.values()].every((c) => c === 1)).toBe(true)
    const flakyRequests = receiver.at(flaky.path).length
    const flakyCounts = perDelivery(flaky.path)
    expect(flakyCounts.size).toBe(N)
    expect([...flakyCounts.values()].every((c) => c === 2)).toBe(true)
    expect(flakyRequests).toBe(2 * N)
    // every request is one logged attempt: no attempt was made twice, none went unlogged
    const [logs] = await h.sql(
      `SELECT count(*)::int AS n, count(DISTINCT (delivery_id, attempt))::int AS distinct_attempts
       FROM webhook_logs WHERE tenant_id = $1`,
      [t.tenantId]
    )
    expect(logs).toEqual({ n: N + flakyRequests, distinct_attempts: N + flakyRequests })
    const [attempts] = await h.sql("SELECT sum(attempts)::int AS n FROM webhook_deliveries WHERE tenant_id = $1", [t.tenantId])
    expect(attempts!.n).toBe(N + flakyRequests)
    expect(calls[0]! + calls[1]!).toBe(N + flakyRequests)
    expect(calls[0]).toBeGreaterThan(0)
    expect(calls[1]).toBeGreaterThan(0)
    expect((await logsOf(t.api, okHook.id)).every((l) => l.attempt === 1 && l.status === "succeeded")).toBe(true)
  })

  it("a commit wakes it only for a tenant with an active webhook; a write to the webhooks makes it ask again", async () => {
    const calls = { fanOut: 0, asked: [] as Array<ReadonlyArray<string>> }
    const counting = wrappedStore((store) => ({
      fanOut: (limit) => Effect.suspend(() => (calls.fanOut++, store.fanOut(limit))),
      subscribedTenants: (ids) => Effect.suspend(() => (calls.asked.push(ids), store.subscribedTenants(ids)))
    }))
    const signal = await h.run(Effect.provide(Effect.service(CommitSignal), CommitSignal.layer))
    const notify = (tenantId: string, webhooksChanged = false) => h.run(signal.notify({ tenantId, webhooksChanged }))
    const quiet = await h.as("Signal quiet")
    const hooked = await h.as("Signal hooked")
    const target = receiver.path()
    await register(hooked.api, target.url, ["job.created"])
    // from here only the signal can wake it within 30 s
    await startDispatcher({ pollInterval: "30 seconds" }, { provide: Layer.merge(counting, Layer.succeed(CommitSignal, signal)) })
    await waitFor("the first fan-out, at start", () => calls.fanOut === 1)

    // a tenant without webhooks: asked once, then its commits run nothing
    for (let i = 0; i < 20; i++) await notify(quiet.tenantId)
    await sleep(100)
    expect(calls.asked).toEqual([[quiet.tenantId]])
    expect(calls.fanOut).toBe(1)

    // a tenant with one: asked, then each commit fans out, and its event goes out at once
    expect((await hooked.api.post("/api-jobs", nestedJob("SIG-1", 1, 1))).status).toBe(201)
    await notify(hooked.tenantId)
    await waitFor("SIG-1 delivered", () => receiver.at(target.path).some((r) => r.body.includes("SIG-1")))
    expect(calls.asked).toEqual([[quiet.tenantId], [hooked.tenantId]])
    const fannedOut = calls.fanOut
    expect(fannedOut).toBeGreaterThan(1)
    await notify(hooked.tenantId)
    await waitFor("a fan-out for the next commit", () => calls.fanOut > fannedOut)

    // the quiet tenant registers a webhook: that write makes the dispatcher ask again, and its next event goes out at once
    const later = receiver.path()
    await register(quiet.api, later.url, ["job.created"])
    await notify(quiet.tenantId, true)
    expect((await quiet.api.post("/api-jobs", nestedJob("SIG-2", 1, 1))).status).toBe(201)
    await notify(quiet.tenantId)
    await waitFor("SIG-2 delivered", () => receiver.at(later.path).some((r) => r.body.includes("SIG-2")))
    expect(calls.asked).toEqual([[quiet.tenantId], [hooked.tenantId], [quiet.tenantId]])

    // the service-level caller acts for no tenant: it always wakes the dispatcher
    const before = calls.fanOut
    await notify("")
    await waitFor("a fan-out for the service caller's commit", () => calls.fanOut > before)
  })

  it("pending deliveries survive a restart", async () => {
    const t = await h.as("Restart")
    const target = receiver.path()
    await register(t.api, target.url, ["step.added"])
    const first = await startDispatcher()
    await first.stop()
    // events and due deliveries written while no dispatcher runs
    await enqueue(t.tenantId, "step.added", { n: 1 })
    await enqueue(t.tenantId, "step.added", { n: 2 })
    await sleep(200)
    expect(receiver.at(target.path)).toHaveLength(0)
    await startDispatcher()
    const got = await waitFor("both after the restart", () => receiver.at(target.path).length >= 2 && receiver.at(target.path))
    expect(got.map((r) => JSON.parse(r.body).data.n).sort()).toEqual([1, 2])
  })

  it("shutdown lets an in-flight attempt finish within the grace period", async () => {
    const t = await h.as("Grace")
    const target = receiver.path(() => ({ delayMs: 300 }))
    const hook = await register(t.api, target.url, ["step.completed"])
    const d = await startDispatcher({ shutdownGrace: "3 seconds" })
    await enqueue(t.tenantId, "step.completed", { n: 1 })
    await waitFor("the attempt in flight", () => receiver.at(target.path).length >= 1)
    await d.stop()
    const [row] = await h.sql("SELECT status, attempts, locked_until FROM webhook_deliveries WHERE webhook_id = $1", [hook.id])
    expect(row).toMatchObject({ status: "succeeded", attempts: 1, locked_until: null })
  })

  it("shutdown releases the lease of an attempt that outlives the grace period; the next dispatcher retries it at once", async () => {
    const t = await h.as("Release")
    const target = receiver.path(() => ({ hang: true }))
    const hook = await register(t.api, target.url, ["ncr.created"])
    const d = await startDispatcher({ shutdownGrace: "100 millis", timeout: "10 seconds" })
    await enqueue(t.tenantId, "ncr.created", { n: 1 })
    await waitFor("the attempt in flight", () => receiver.at(target.path).length >= 1)
    const [leased] = await h.sql("SELECT locked_until FROM webhook_deliveries WHERE webhook_id = $1", [hook.id])
    expect(leased!.locked_until).not.toBeNull()
    const t0 = Date.now()
    await d.stop()
    expect(Date.now() - t0).toBeLessThan(2_000)
    const [row] = await h.sql("SELECT status, attempts, locked_until FROM webhook_deliveries WHERE webhook_id = $1", [hook.id])
    expect(row).toMatchObject({ status: "pending", attempts: 0, locked_until: null })
    expect(await h.sql("SELECT 1 FROM webhook_logs WHERE webhook_id = $1", [hook.id])).toHaveLength(0)

    target.set(() => ({}))
    await startDispatcher()
    const got = await waitFor("the retry", () => receiver.at(target.path).length >= 2 && receiver.at(target.path))
    expect(header(got[1]!, "x-service-delivery")).toBe(header(got[0]!, "x-service-delivery"))
    const [log] = await waitFor("its log", async () => {
      const l = await logsOf(t.api, hook.id)
      return l.length >= 1 && l
    })
    expect(log).toMatchObject({ attempt: 1, status: "succeeded", status_code: 200 })
  })

  it("a delivery whose webhook was deactivated after fan-out fails without being sent", async () => {
    const t = await h.as("Deactivated")
    const target = receiver.path()
    const hook = await register(t.api, target.url, ["ncr.verified"])
    await enqueue(t.tenantId, "ncr.verified", { n: 1 })
    // fan out without sending: the attempt hangs in the guard until shutdown releases it
    const d = await startDispatcher({ schedule: ["0 millis"], shutdownGrace: "50 millis" }, {
      guard: UrlGuard.of({ check: () => Effect.never })
    })
    await waitFor("fanned out", async () => (await h.sql("SELECT 1 FROM webhook_deliveries WHERE webhook_id = $1", [hook.id])).length === 1)
    await d.stop() // releases the lease of the attempt stuck in the guard
    expect((await t.api.patch(`/api-webhooks?id=${hook.id}`, { active: false })).status).toBe(200)
    await startDispatcher()
    const [log] = await waitFor("the failure logged", async () => {
      const l = await logsOf(t.api, hook.id)
      return l.length >= 1 && l
    })
    expect(log).toMatchObject({ attempt: 1, status: "failed", error: "webhook is inactive" })
    expect(receiver.at(target.path)).toHaveLength(0)
  })
})
