// Database outages (issue 8 item 5) and readiness (item 4). On PostgreSQL the server's pool goes through a
// TCP proxy the test cuts and black-holes: requests answer 503 SERVICE_UNAVAILABLE with Retry-After within
// the configured bound, /ready says 503, /health stays 200, and the pool and the webhook dispatcher recover
// by themselves when the database returns, with every event delivered once; meanwhile the dispatcher warns in one
// line why it cannot poll, without the cause's trace. On PGlite, what applies: /ready.
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect, Exit, Layer, Logger, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { testDatabaseKind } from "@mes/adapters-pg"
import { UrlGuard } from "@mes/domain"
import { WebhookDispatcher } from "../src/index.ts"
import { client, expectError, type Harness, nestedJob, retryWhile, sleep, startServer, startServerThroughProxy } from "./harness.ts"
import type { TcpProxy } from "./tcp-proxy.ts"

const timed = async <A>(f: () => Promise<A>) => {
  const t0 = Date.now()
  const value = await f()
  return { value, ms: Date.now() - t0 }
}

describe("readiness", () => {
  let h: Harness
  beforeAll(async () => {
    h = await startServer()
  })
  afterAll(() => h.close())

  it("GET /ready is 200 when the database answers and holds every migration; /health is 200", async () => {
    const ready = await client(h.url).get("/ready")
    expect(ready.status).toBe(200)
    expect(ready.body).toEqual({ success: true, data: { status: "ready", database: "ok", migrations: "ok" } })
    expect((await client(h.url).get("/health")).status).toBe(200)
  })

  it("GET /ready is 503 with Retry-After while a migration is missing", async () => {
    const [row] = await h.sql("SELECT max(migration_id) AS v FROM mes_migrations")
    const latest = Number(row!.v)
    await h.sql("DELETE FROM mes_migrations WHERE migration_id = $1", [latest])
    try {
      const res = await client(h.url).get("/ready")
      expectError(res, 503, "SERVICE_UNAVAILABLE")
      expect(res.body.error.message).toContain("migrations are pending")
      expect(res.headers.get("retry-after")).toBe("5")
    } finally {
      await h.sql("INSERT INTO mes_migrations (migration_id, name) VALUES ($1, 'restored')", [latest])
    }
    expect((await client(h.url).get("/ready")).status).toBe(200)
  })
})

describe.skipIf(testDatabaseKind() !== "postgres")("the database becomes unreachable (PostgreSQL through a TCP proxy)", () => {
  let proxy: TcpProxy
  let h: Harness
  let api: ReturnType<typeof client>
  let dispatcher: Scope.Closeable
  const deliveries: Array<{ id: string; type: string }> = []
  let answerAfterMs = 0
  let receiverClose: () => Promise<void>
  /** The dispatcher's warnings: their text, and whether a cause (with its trace) was logged with them. */
  const warnings: Array<{ readonly text: string; readonly withCause: boolean }> = []
  const capture = Logger.make<unknown, void>(({ cause, logLevel, message }) => {
    if (logLevel === "Warn") warnings.push({ text: [message].flat().map(String).join(" "), withCause: cause.reasons.length > 0 })
  })

  beforeAll(async () => {
    ;({ proxy, h } = await startServerThroughProxy({
      env: { MES_REQUEST_TIMEOUT: "1500ms", MES_DB_CONNECT_TIMEOUT: "1s", MES_READY_TIMEOUT: "1s", MES_AUTH_CACHE_TTL: "0" }
    }))
    api = client(h.url, (await h.tenant("Outage")).key)

    const receiver = createServer((req, res) => {
      let body = ""
      req.on("data", (c) => (body += c))
      req.on("end", () => {
        const headers: IncomingHttpHeaders = req.headers
        deliveries.push({ id: String(headers["webhook-id"]), type: JSON.parse(body).type ?? JSON.parse(body).event })
        setTimeout(() => res.writeHead(200).end("ok"), answerAfterMs)
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    receiverClose = () => new Promise<void>((resolve) => receiver.close(() => resolve()))
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
    expect((await api.post("/api-webhooks", { url, events: ["job.created"] })).status).toBe(201)

    dispatcher = Effect.runSync(Scope.make())
    await h.run(Layer.buildWithScope(
      WebhookDispatcher.layer({ pollInterval: "50 millis", schedule: ["0 millis", "200 millis", "200 millis", "200 millis"], timeout: "2 seconds" }).pipe(
        Layer.provide(Layer.succeed(UrlGuard, UrlGuard.allowAll)),
        Layer.provide(Logger.layer([capture], { mergeWithExisting: true }))
      ),
      dispatcher
    ))
  })
  afterAll(async () => {
    proxy?.restore()
    if (dispatcher !== undefined) await Effect.runPromise(Scope.close(dispatcher, Exit.void))
    await h?.close()
    await receiverClose?.()
    await proxy?.close()
  })

  const waitForDeliveries = async (n: number) => {
    const deadline = Date.now() + 10_000
    while (new Set(deliveries.map((d) => d.id)).size < n && Date.now() < deadline) await sleep(20)
  }

  it("answers 503 with Retry-After at once while the server refuses connections, and recovers when it returns", async () => {
    expect((await api.post("/api-jobs", nestedJob("O-1"))).status).toBe(201)
    await waitForDeliveries(1)

    warnings.length = 0
    proxy.cut()
    for (const request of [() => api.get("/api-jobs"), () => api.post("/api-jobs", nestedJob("O-CUT")), () => client(h.url).get("/ready")]) {
      const { value: res, ms } = await timed(request)
      expectError(res, 503, "SERVICE_UNAVAILABLE")
      expect(res.headers.get("retry-after")).toBe("5")
      expect(ms).toBeLessThan(1_400)
    }
    expect((await client(h.url).get("/health")).status).toBe(200)
    await sleep(300) // the dispatcher polls and fails meanwhile
    const whileCut = [...warnings]

    proxy.restore()
    const back = await retryWhile(() => api.get("/api-jobs"), (r) => r.status !== 200, 20)
    expect(back.status).toBe(200)
    expect(back.body.data.jobs.map((j: { job_number: string }) => j.job_number)).toEqual(["O-1"])
    expect((await client(h.url).get("/ready")).status).toBe(200)

    expect((await api.post("/api-jobs", nestedJob("O-2"))).status).toBe(201)
    await waitForDeliveries(2)
    // meanwhile the dispatcher said why in a line, once a poll (at most once a second), without the cause's trace
    expect(whileCut).toContainEqual({ text: "webhook dispatcher: polling failed (database unreachable); retrying", withCause: false })
    expect(whileCut.filter((w) => w.withCause)).toEqual([])
  })

  it("answers 503 within MES_REQUEST_TIMEOUT while the network swallows every packet", async () => {
    proxy.blackHole()
    try {
      // the first request may fail at once on a dropped pooled connection; the next ones wait for a
      // connection that never answers, and are cut by the connect timeout or MES_REQUEST_TIMEOUT
      const waits: Array<number> = []
      for (let i = 0; i < 3; i++) {
        const { value: res, ms } = await timed(() => api.get("/api-jobs"))
        expectError(res, 503, "SERVICE_UNAVAILABLE")
        expect(ms).toBeLessThan(3_000)
        waits.push(ms)
      }
      expect(Math.max(...waits)).toBeGreaterThanOrEqual(900)
      const ready = await timed(() => client(h.url).get("/ready"))
      expectError(ready.value, 503, "SERVICE_UNAVAILABLE")
      expect(ready.ms).toBeLessThan(3_000)
    } finally {
      proxy.restore()
    }
    const back = await retryWhile(() => api.get("/api-jobs"), (r) => r.status !== 200, 30)
    expect(back.status).toBe(200)
    expect((await api.post("/api-jobs", nestedJob("O-3"))).status).toBe(201)
    await waitForDeliveries(3)
  })

  it("an attempt answered while the database is away is recorded when it returns, not sent again", async () => {
    answerAfterMs = 400
    expect((await api.post("/api-jobs", nestedJob("O-4"))).status).toBe(201)
    await waitForDeliveries(4) // received; the receiver answers 400 ms later
    proxy.cut()
    await sleep(1_200) // answered meanwhile; recording it fails and is retried
    proxy.restore()
    answerAfterMs = 0
    const deadline = Date.now() + 10_000
    let rows = await h.sql("SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status").catch(() => [])
    while (JSON.stringify(rows) !== JSON.stringify([{ status: "succeeded", n: 4 }]) && Date.now() < deadline) {
      await sleep(100)
      rows = await h.sql("SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status").catch(() => [])
    }
    expect(rows).toEqual([{ status: "succeeded", n: 4 }])
  })

  it("every event was delivered once, and no delivery is left pending", async () => {
    await sleep(500)
    const ids = deliveries.map((d) => d.id)
    expect(new Set(ids).size).toBe(4)
    expect(ids.length).toBe(4)
    const rows = await h.sql("SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status")
    expect(rows).toEqual([{ status: "succeeded", n: 4 }])
  })
})
