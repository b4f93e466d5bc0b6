import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { WEBHOOKS_PER_TENANT } from "@mes/domain"
import { client, expectDetail, expectError, type Harness, startServer } from "./harness.ts"

let h: Harness
let api: ReturnType<typeof client>
let apiB: ReturnType<typeof client>
let tenantA: string
let tenantB: string

const UNKNOWN = "00000000-0000-4000-8000-000000000000"
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const GENERATED_SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/
const URL_A = "https://hooks.example.com/mes"

const register = async (body: Record<string, unknown>, as = api) => {
  const res = await as.post("/api-webhooks", body)
  expect(res.status).toBe(201)
  return res.body.data.webhook
}

beforeAll(async () => {
  h = await startServer({ deployment: "self-hosted" })
  ;({ tenantId: tenantA, api } = await h.as("A"))
  ;({ tenantId: tenantB, api: apiB } = await h.as("B"))
})
afterAll(() => h.close())

describe("POST /api-webhooks", () => {
  it("registers with `events`, answers 201 data.webhook with a generated secret, also as data.secret", async () => {
    const res = await api.post("/api-webhooks", { url: URL_A, events: ["job.created", "job.completed", "job.created"], description: "ERP" })
    expect(res.status).toBe(201)
    expect(res.body.success).toBe(true)
    const { webhook, secret } = res.body.data
    expect(webhook).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      tenant_id: tenantA,
      url: URL_A,
      events: ["job.created", "job.completed"],
      event_type: null,
      active: true,
      description: "ERP",
      secret: expect.stringMatching(GENERATED_SECRET),
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO)
    })
    expect(secret).toBe(webhook.secret)
    const stored = await h.sql("SELECT secret, events FROM webhooks WHERE id = $1", [webhook.id])
    expect(stored[0]).toEqual({ secret, events: ["job.created", "job.completed"] })
  })

  it("registers with the single-event form `event_type`", async () => {
    const res = await api.post("/api-webhooks", { url: URL_A, event_type: "ncr.created", active: false })
    expect(res.status).toBe(201)
    expect(res.body.data.webhook).toMatchObject({ events: ["ncr.created"], event_type: "ncr.created", active: false, description: null })
    expect(res.body.data.secret).toMatch(GENERATED_SECRET)
  })

  it("generates a different secret for every webhook", async () => {
    const a = await register({ url: URL_A, event_type: "job.started" })
    const b = await register({ url: URL_A, event_type: "job.started" })
    expect(a.secret).not.toBe(b.secret)
  })

  it("keeps a client-supplied secret", async () => {
    const res = await api.post("/api-webhooks", { url: URL_A, events: ["step.added"], secret: "my-own-secret-of-32-characters!!" })
    expect(res.status).toBe(201)
    expect(res.body.data.webhook.secret).toBe("my-own-secret-of-32-characters!!")
    expect(res.body.data.secret).toBe("my-own-secret-of-32-characters!!")
  })

  it("accepts plain http URLs, ports and paths (self-hosted allows private targets)", async () => {
    const w = await register({ url: "http://127.0.0.1:9/x?y=1", events: ["job.updated"] })
    expect(w.url).toBe("http://127.0.0.1:9/x?y=1")
  })

  it("answers 422 for an invalid or missing url", async () => {
    expectDetail(await api.post("/api-webhooks", { url: "not a url", events: ["job.created"] }), "url", "PATTERN_MISMATCH")
    expectDetail(await api.post("/api-webhooks", { url: "ftp://example.com/x", events: ["job.created"] }), "url", "PATTERN_MISMATCH")
    expectDetail(await api.post("/api-webhooks", { url: "javascript:alert(1)", events: ["job.created"] }), "url", "PATTERN_MISMATCH")
    expectDetail(await api.post("/api-webhooks", { url: 42, events: ["job.created"] }), "url", "TYPE_MISMATCH")
    expectDetail(await api.post("/api-webhooks", { events: ["job.created"] }), "url", "NOT_NULL")
  })

  it("a url the parser would tidy up (spaces or control characters) or that carries a user name or password is 422 PATTERN_MISMATCH, on create and PATCH", async () => {
    const w = await register({ url: URL_A, events: ["job.created"] })
    for (const url of [` ${URL_A}`, `${URL_A} `, `\t${URL_A}`, "https://exa\tmple.com/hook", "https://example.com/a b", "https://user:pass@example.com/hook", "https://token@example.com/hook", "https://@example.com/hook"]) {
      const created = await api.post("/api-webhooks", { url, events: ["job.created"] })
      expectDetail(created, "url", "PATTERN_MISMATCH")
      expect(created.body.error.details[0].message).toContain("no user name or password")
      expectDetail(await api.patch(`/api-webhooks?id=${w.id}`, { url }), "url", "PATTERN_MISMATCH")
    }
    expect((await api.get(`/api-webhooks?id=${w.id}`)).body.data.webhook.url).toBe(URL_A)
    // an @ after the host is the path's, query's or fragment's
    for (const url of ["https://example.com/a@b", "https://example.com/h?by=a@b", "https://example.com/h#a@b"]) {
      expect((await register({ url, events: ["job.created"] })).url).toBe(url)
    }
  })

  it("answers 422 ENUM_CONSTRAINT at events[i] for an unknown event name", async () => {
    const res = await api.post("/api-webhooks", { url: URL_A, events: ["job.created", "job.exploded", "webhook.test"] })
    expectDetail(res, "events[1]", "ENUM_CONSTRAINT")
    expectDetail(res, "events[2]", "ENUM_CONSTRAINT")
    expect(res.body.error.details).toHaveLength(2)
    expectDetail(await api.post("/api-webhooks", { url: URL_A, event_type: "job.exploded" }), "event_type", "ENUM_CONSTRAINT")
    expectDetail(await api.post("/api-webhooks", { url: URL_A, events: [] }), "events", "MIN_LENGTH")
    expectDetail(await api.post("/api-webhooks", { url: URL_A, events: "job.created" }), "events", "TYPE_MISMATCH")
  })

  it("answers 422 when neither or both of events and event_type are given", async () => {
    expectDetail(await api.post("/api-webhooks", { url: URL_A }), "events", "NOT_NULL")
    const both = await api.post("/api-webhooks", { url: URL_A, events: ["job.created"], event_type: "job.created" })
    expectDetail(both, "event_type", "ENUM_CONSTRAINT")
    // all problems at once
    const many = await api.post("/api-webhooks", { url: "nope" })
    expectDetail(many, "url", "PATTERN_MISMATCH")
    expectDetail(many, "events", "NOT_NULL")
  })

  it("answers 422 for a short secret, a wrong active or a non-object body", async () => {
    expectDetail(await api.post("/api-webhooks", { url: URL_A, event_type: "job.created", secret: "short" }), "secret", "MIN_LENGTH")
    expectDetail(await api.post("/api-webhooks", { url: URL_A, event_type: "job.created", active: "yes" }), "active", "TYPE_MISMATCH")
    expectError(await api.post("/api-webhooks", [{ url: URL_A }]), 422, "VALIDATION_ERROR")
    expectError(await api.post("/api-webhooks", undefined, { raw: "{nope" }), 400, "BAD_REQUEST")
  })

  it("nothing is stored when a create is refused", async () => {
    const before = await h.sql("SELECT count(*)::int AS n FROM webhooks")
    await api.post("/api-webhooks", { url: "bad", events: ["job.created"] })
    expect(await h.sql("SELECT count(*)::int AS n FROM webhooks")).toEqual(before)
  })
})

describe("GET /api-webhooks", () => {
  let subscribed: string
  let inactive: string
  let both: string
  let listApi: ReturnType<typeof client>

  beforeAll(async () => {
    const t = await h.as("lists")
    const as = t.api
    subscribed = (await register({ url: URL_A, events: ["operation.paused", "batch.started"] }, as)).id
    inactive = (await register({ url: URL_A, event_type: "operation.paused", active: false }, as)).id
    both = (await register({ url: URL_A, events: ["batch.completed"] }, as)).id
    listApi = as
  })

  const ids = (res: { body: any }) => res.body.data.webhooks.map((w: any) => w.id)

  it("lists the tenant's webhooks newest first with pagination, never with the secret", async () => {
    const res = await listApi.get("/api-webhooks")
    expect(res.status).toBe(200)
    expect(ids(res)).toEqual([both, inactive, subscribed])
    expect(res.body.data.pagination).toEqual({ limit: 100, offset: 0, total: 3 })
    for (const w of res.body.data.webhooks) expect(w).not.toHaveProperty("secret")
    const page = await listApi.get("/api-webhooks?limit=1&offset=1&order=asc")
    expect(ids(page)).toEqual([inactive])
    expect(page.body.data.pagination).toEqual({ limit: 1, offset: 1, total: 3 })
  })

  it("filters by event_type (webhooks subscribed to it) and active", async () => {
    expect(ids(await listApi.get("/api-webhooks?event_type=operation.paused")).sort()).toEqual([subscribed, inactive].sort())
    expect(ids(await listApi.get("/api-webhooks?event_type=batch.completed"))).toEqual([both])
    expect(ids(await listApi.get("/api-webhooks?event_type=job.created"))).toEqual([])
    expect(ids(await listApi.get("/api-webhooks?active=false"))).toEqual([inactive])
    expect(ids(await listApi.get("/api-webhooks?active=true&event_type=operation.paused"))).toEqual([subscribed])
  })

  it("refuses bad filter values (422 unknown event, 400 malformed boolean)", async () => {
    expectDetail(await listApi.get("/api-webhooks?event_type=job.exploded"), "event_type", "ENUM_CONSTRAINT")
    expectError(await listApi.get("/api-webhooks?active=maybe"), 400, "BAD_REQUEST")
    expectDetail(await listApi.get("/api-webhooks?sort=url"), "sort", "ENUM_CONSTRAINT")
  })

  it("reads one with ?id= and never answers the secret", async () => {
    const created = await api.post("/api-webhooks", { url: URL_A, event_type: "job.created" })
    const { webhook, secret } = created.body.data
    const res = await api.get(`/api-webhooks?id=${webhook.id}`)
    expect(res.status).toBe(200)
    const { secret: _s, ...rest } = webhook
    expect(res.body).toEqual({ success: true, data: { webhook: rest } })
    expect(JSON.stringify(res.body)).not.toContain(secret)
    expect(JSON.stringify((await api.get("/api-webhooks")).body)).not.toContain(secret)
    expectError(await api.get(`/api-webhooks?id=${UNKNOWN}`), 404, "NOT_FOUND")
    expectError(await api.get("/api-webhooks?id=nope"), 400, "BAD_REQUEST")
  })
})

describe("PATCH and DELETE /api-webhooks", () => {
  it("changes active, url, events, event_type and description; the answer has no secret", async () => {
    const created = await api.post("/api-webhooks", { url: URL_A, events: ["job.created"] })
    const { webhook, secret } = created.body.data
    const off = await api.patch(`/api-webhooks?id=${webhook.id}`, { active: false })
    expect(off.status).toBe(200)
    expect(off.body.data.webhook).toMatchObject({ id: webhook.id, active: false, url: URL_A, events: ["job.created"] })
    expect(off.body.data.webhook).not.toHaveProperty("secret")
    expect(JSON.stringify(off.body)).not.toContain(secret)

    const moved = await api.patch(`/api-webhooks?id=${webhook.id}`, { url: "https://other.example.com/in", events: ["part.created", "part.updated"], description: "moved" })
    expect(moved.body.data.webhook).toMatchObject({
      url: "https://other.example.com/in",
      events: ["part.created", "part.updated"],
      event_type: null,
      description: "moved",
      active: false
    })
    const single = await api.patch(`/api-webhooks?id=${webhook.id}`, { event_type: "ncr.verified", active: true, description: null })
    expect(single.body.data.webhook).toMatchObject({ events: ["ncr.verified"], event_type: "ncr.verified", active: true, description: null })
    expect(Date.parse(single.body.data.webhook.updated_at)).toBeGreaterThanOrEqual(Date.parse(webhook.updated_at))
    // the secret is unchanged by PATCH
    expect((await h.sql("SELECT secret FROM webhooks WHERE id = $1", [webhook.id]))[0]!.secret).toBe(secret)
  })

  it("refuses unknown fields, bad values and both event forms with 422", async () => {
    const w = await register({ url: URL_A, events: ["job.created"] })
    expectDetail(await api.patch(`/api-webhooks?id=${w.id}`, { secret: "a-new-secret-1234567890" }), "secret", "ENUM_CONSTRAINT")
    expectDetail(await api.patch(`/api-webhooks?id=${w.id}`, { tenant_id: tenantB }), "tenant_id", "ENUM_CONSTRAINT")
    expectDetail(await api.patch(`/api-webhooks?id=${w.id}`, { url: "mailto:x@example.com" }), "url", "PATTERN_MISMATCH")
    expectDetail(await api.patch(`/api-webhooks?id=${w.id}`, { events: ["nope"] }), "events[0]", "ENUM_CONSTRAINT")
    expectDetail(await api.patch(`/api-webhooks?id=${w.id}`, { events: [] }), "events", "MIN_LENGTH")
    expectDetail(await api.patch(`/api-webhooks?id=${w.id}`, { events: ["job.created"], event_type: "job.created" }), "event_type", "ENUM_CONSTRAINT")
    expectDetail(await api.patch(`/api-webhooks?id=${w.id}`, { active: 1 }), "active", "TYPE_MISMATCH")
    expect((await api.get(`/api-webhooks?id=${w.id}`)).body.data.webhook).toMatchObject({ url: URL_A, events: ["job.created"], active: true })
  })

  it("answers 404 for unknown ids and 422 without an id", async () => {
    expectError(await api.patch(`/api-webhooks?id=${UNKNOWN}`, { active: false }), 404, "NOT_FOUND")
    expectError(await api.delete(`/api-webhooks?id=${UNKNOWN}`), 404, "NOT_FOUND")
    expectDetail(await api.patch("/api-webhooks", { active: false }), "id", "NOT_NULL")
    expectDetail(await api.delete("/api-webhooks"), "id", "NOT_NULL")
  })

  it("deletes a webhook with its deliveries and logs", async () => {
    const w = await register({ url: URL_A, events: ["job.created"] })
    const queued = await api.post(`/api-webhooks/test?id=${w.id}`)
    expect(queued.status).toBe(200)
    const res = await api.delete(`/api-webhooks?id=${w.id}`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true, data: { id: w.id, deleted: true } })
    expectError(await api.get(`/api-webhooks?id=${w.id}`), 404, "NOT_FOUND")
    expect(await h.sql("SELECT id FROM webhook_deliveries WHERE webhook_id = $1", [w.id])).toEqual([])
  })

  it("answers 405 for methods the endpoints do not have", async () => {
    expectError(await api.put("/api-webhooks", {}), 405, "METHOD_NOT_ALLOWED")
    expectError(await api.get("/api-webhooks/test"), 405, "METHOD_NOT_ALLOWED")
    expectError(await api.post("/api-webhook-logs", {}), 405, "METHOD_NOT_ALLOWED")
    expectError(await api.patch("/api-webhook-logs", {}), 405, "METHOD_NOT_ALLOWED")
    expectError(await api.delete("/api-webhook-logs"), 405, "METHOD_NOT_ALLOWED")
    expectError(await api.put("/api-webhook-logs", {}), 405, "METHOD_NOT_ALLOWED")
    expectError(await api.get("/api-webhook-logs/redeliver"), 405, "METHOD_NOT_ALLOWED")
  })

  it("requires an API key", async () => {
    expectError(await client(h.url).get("/api-webhooks"), 401, "UNAUTHORIZED")
    expectError(await client(h.url).get("/api-webhook-logs"), 401, "UNAUTHORIZED")
  })
})

/** Inserts a delivery and its attempt logs directly (the dispatcher writes them in production). */
const seedDelivery = async (
  tenantId: string,
  webhookId: string,
  o: { eventType: string; status: string; attempts: number; logs: ReadonlyArray<{ status: string; code: number | null; at: string; error?: string }> }
) => {
  const deliveryId = randomUUID()
  const eventId = randomUUID()
  await h.sql(
    `INSERT INTO webhook_deliveries (tenant_id, id, webhook_id, event_id, event_type, body, status, attempts, next_attempt_at)
     VALUES ($1, $2, $3, $4, $5, '{}', $6, $7, now() + interval '1 day')`,
    [tenantId, deliveryId, webhookId, eventId, o.eventType, o.status, o.attempts]
  )
  const logIds: Array<string> = []
  for (const [i, log] of o.logs.entries()) {
    const id = randomUUID()
    logIds.push(id)
    await h.sql(
      `INSERT INTO webhook_logs (tenant_id, id, webhook_id, delivery_id, event_id, event_type, attempt, status, status_code, duration_ms, error, next_retry_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
      [
        tenantId,
        id,
        webhookId,
        deliveryId,
        eventId,
        o.eventType,
        i + 1,
        log.status,
        log.code,
        15 + i,
        log.error ?? null,
        log.status === "retrying" ? "2030-01-01T00:00:05.000Z" : null,
        log.at
      ]
    )
  }
  return { deliveryId, eventId, logIds }
}

describe("/api-webhook-logs", () => {
  let as: ReturnType<typeof client>
  let tenant: string
  let w1: string
  let w2: string
  let first: Awaited<ReturnType<typeof seedDelivery>>
  let second: Awaited<ReturnType<typeof seedDelivery>>
  let third: Awaited<ReturnType<typeof seedDelivery>>

  beforeAll(async () => {
    const t = await h.as("logs")
    as = t.api
    tenant = t.tenantId
    w1 = (await register({ url: URL_A, events: ["job.created", "job.completed"] }, as)).id
    w2 = (await register({ url: URL_A, events: ["job.created"] }, as)).id
    first = await seedDelivery(tenant, w1, {
      eventType: "job.created",
      status: "succeeded",
      attempts: 2,
      logs: [
        { status: "retrying", code: 500, at: "2030-01-01T00:00:00.000Z", error: "HTTP 500" },
        { status: "succeeded", code: 200, at: "2030-01-01T00:00:06.000Z" }
      ]
    })
    second = await seedDelivery(tenant, w1, {
      eventType: "job.completed",
      status: "failed",
      attempts: 1,
      logs: [{ status: "failed", code: null, at: "2030-01-01T00:01:00.000Z", error: "connect ECONNREFUSED" }]
    })
    third = await seedDelivery(tenant, w2, {
      eventType: "job.created",
      status: "succeeded",
      attempts: 1,
      logs: [{ status: "succeeded", code: 204, at: "2030-01-01T00:02:00.000Z" }]
    })
  })

  const ids = (res: { body: any }) => res.body.data.webhook_logs.map((l: any) => l.id)

  it("lists every attempt of the tenant, newest first, with pagination", async () => {
    const res = await as.get("/api-webhook-logs")
    expect(res.status).toBe(200)
    expect(ids(res)).toEqual([third.logIds[0], second.logIds[0], first.logIds[1], first.logIds[0]])
    expect(res.body.data.pagination).toEqual({ limit: 100, offset: 0, total: 4 })
    expect(res.body.data.webhook_logs[3]).toEqual({
      id: first.logIds[0],
      tenant_id: tenant,
      webhook_id: w1,
      delivery_id: first.deliveryId,
      event_id: first.eventId,
      event_type: "job.created",
      attempt: 1,
      status: "retrying",
      status_code: 500,
      duration_ms: 15,
      error: "HTTP 500",
      next_retry_at: "2030-01-01T00:00:05.000Z",
      created_at: "2030-01-01T00:00:00.000Z"
    })
    const page = await as.get("/api-webhook-logs?limit=2&offset=1")
    expect(ids(page)).toEqual([second.logIds[0], first.logIds[1]])
    expect(page.body.data.pagination).toEqual({ limit: 2, offset: 1, total: 4 })
    expect(ids(await as.get("/api-webhook-logs?order=asc&limit=1"))).toEqual([first.logIds[0]])
    // another tenant sees none of them
    expect(ids(await apiB.get("/api-webhook-logs"))).toEqual([])
  })

  it("filters by webhook_id, event_type, status and delivery_id", async () => {
    expect(ids(await as.get(`/api-webhook-logs?webhook_id=${w2}`))).toEqual([third.logIds[0]])
    expect(ids(await as.get("/api-webhook-logs?event_type=job.completed"))).toEqual([second.logIds[0]])
    expect(ids(await as.get("/api-webhook-logs?status=succeeded"))).toEqual([third.logIds[0], first.logIds[1]])
    expect(ids(await as.get("/api-webhook-logs?status=retrying"))).toEqual([first.logIds[0]])
    expect(ids(await as.get(`/api-webhook-logs?delivery_id=${first.deliveryId}`))).toEqual([first.logIds[1], first.logIds[0]])
    expect(ids(await as.get(`/api-webhook-logs?webhook_id=${w1}&status=failed`))).toEqual([second.logIds[0]])
    expect(ids(await as.get(`/api-webhook-logs?webhook_id=${UNKNOWN}`))).toEqual([])
  })

  it("refuses bad filter values", async () => {
    expectDetail(await as.get("/api-webhook-logs?status=pending"), "status", "ENUM_CONSTRAINT")
    expectError(await as.get("/api-webhook-logs?webhook_id=nope"), 400, "BAD_REQUEST")
    expectError(await as.get("/api-webhook-logs?delivery_id=nope"), 400, "BAD_REQUEST")
    expectError(await as.get("/api-webhook-logs?limit=x"), 400, "BAD_REQUEST")
    expectDetail(await as.get("/api-webhook-logs?limit=0"), "limit", "MIN_VALUE")
  })

  it("reads one log with ?id=", async () => {
    const res = await as.get(`/api-webhook-logs?id=${second.logIds[0]}`)
    expect(res.status).toBe(200)
    expect(res.body.data.webhook_log).toMatchObject({
      id: second.logIds[0],
      webhook_id: w1,
      delivery_id: second.deliveryId,
      event_type: "job.completed",
      attempt: 1,
      status: "failed",
      status_code: null,
      error: "connect ECONNREFUSED",
      next_retry_at: null
    })
    expectError(await as.get(`/api-webhook-logs?id=${UNKNOWN}`), 404, "NOT_FOUND")
  })

  it("is tenant-scoped: another tenant's log or webhook id is 403", async () => {
    expectError(await apiB.get(`/api-webhook-logs?id=${first.logIds[0]}`), 403, "FORBIDDEN")
    expectError(await apiB.get(`/api-webhook-logs?webhook_id=${w1}`), 403, "FORBIDDEN")
    expectError(await apiB.post(`/api-webhook-logs/redeliver?id=${first.logIds[0]}`), 403, "FORBIDDEN")
  })

  it("redeliver puts the log's delivery back to pending, due now, with the same delivery id", async () => {
    const before = await h.sql("SELECT status, attempts FROM webhook_deliveries WHERE id = $1", [second.deliveryId])
    expect(before[0]).toEqual({ status: "failed", attempts: 1 })
    const res = await as.post(`/api-webhook-logs/redeliver?id=${second.logIds[0]}`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true, data: { delivery_id: second.deliveryId } })
    const [row] = await h.sql(
      "SELECT status, attempts, next_attempt_at <= now() AS due FROM webhook_deliveries WHERE id = $1",
      [second.deliveryId]
    )
    expect(row).toMatchObject({ status: "pending", attempts: 1, due: true })
    // a succeeded delivery can be sent again too
    const again = await as.post(`/api-webhook-logs/redeliver?id=${first.logIds[0]}`)
    expect(again.body.data.delivery_id).toBe(first.deliveryId)
    expect((await h.sql("SELECT status FROM webhook_deliveries WHERE id = $1", [first.deliveryId]))[0]!.status).toBe("pending")
  })

  it("redeliver needs an existing log id", async () => {
    expectError(await as.post(`/api-webhook-logs/redeliver?id=${UNKNOWN}`), 404, "NOT_FOUND")
    expectDetail(await as.post("/api-webhook-logs/redeliver"), "id", "NOT_NULL")
    expectError(await as.post("/api-webhook-logs/redeliver?id=nope"), 400, "BAD_REQUEST")
  })
})

describe("POST /api-webhooks/test", () => {
  it("queues a pending webhook.test delivery for that one webhook", async () => {
    const w = await register({ url: URL_A, events: ["job.created"] })
    const other = await register({ url: URL_A, events: ["job.created"] })
    const started = Date.now()
    const res = await api.post(`/api-webhooks/test?id=${w.id}`)
    expect(res.status).toBe(200)
    const deliveryId = res.body.data.delivery_id
    expect(res.body).toEqual({ success: true, data: { delivery_id: expect.stringMatching(/^[0-9a-f-]{36}$/) } })
    const rows = await h.sql(
      "SELECT tenant_id, webhook_id, event_type, body, status, attempts, next_attempt_at <= now() AS due FROM webhook_deliveries WHERE id = $1",
      [deliveryId]
    )
    expect(rows).toHaveLength(1)
    const row = rows[0]!
    expect(row).toMatchObject({ tenant_id: tenantA, webhook_id: w.id, event_type: "webhook.test", status: "pending", attempts: 0, due: true })
    const body = JSON.parse(row.body as string)
    expect(Object.keys(body)).toEqual(["event_type", "timestamp", "tenant_id", "data"])
    expect(body).toEqual({ event_type: "webhook.test", timestamp: expect.stringMatching(ISO), tenant_id: tenantA, data: { webhook_id: w.id } })
    expect(row.body).toBe(JSON.stringify(body))
    expect(Date.parse(body.timestamp)).toBeGreaterThanOrEqual(started - 1000)
    expect(await h.sql("SELECT id FROM webhook_deliveries WHERE webhook_id = $1", [other.id])).toEqual([])
    // every call is a new delivery
    const second = await api.post(`/api-webhooks/test?id=${w.id}`)
    expect(second.body.data.delivery_id).not.toBe(deliveryId)
  })

  it("answers 404 for an unknown webhook and 422 without an id", async () => {
    expectError(await api.post(`/api-webhooks/test?id=${UNKNOWN}`), 404, "NOT_FOUND")
    expectDetail(await api.post("/api-webhooks/test"), "id", "NOT_NULL")
  })
})

describe("tenant isolation", () => {
  it("answers 403 for another tenant's webhook on every id-taking endpoint and changes nothing", async () => {
    const created = await apiB.post("/api-webhooks", { url: URL_A, events: ["job.created"] })
    const w = created.body.data.webhook
    expectError(await api.get(`/api-webhooks?id=${w.id}`), 403, "FORBIDDEN")
    expectError(await api.patch(`/api-webhooks?id=${w.id}`, { active: false }), 403, "FORBIDDEN")
    // 403 wins over 422 (spec 7.4)
    expectError(await api.patch(`/api-webhooks?id=${w.id}`, { url: "bad", nope: 1 }), 403, "FORBIDDEN")
    expectError(await api.delete(`/api-webhooks?id=${w.id}`), 403, "FORBIDDEN")
    expectError(await api.post(`/api-webhooks/test?id=${w.id}`), 403, "FORBIDDEN")
    expectError(await api.get(`/api-webhook-logs?webhook_id=${w.id}`), 403, "FORBIDDEN")
    expect(await h.sql("SELECT id FROM webhook_deliveries WHERE webhook_id = $1", [w.id])).toEqual([])
    expect((await apiB.get(`/api-webhooks?id=${w.id}`)).body.data.webhook).toMatchObject({ active: true, url: URL_A })
    expect((await api.get("/api-webhooks")).body.data.webhooks.map((x: any) => x.id)).not.toContain(w.id)
  })
})

describe("SSRF guard", () => {
  let cloud: Harness
  let capi: ReturnType<typeof client>

  beforeAll(async () => {
    cloud = await startServer({ deployment: "cloud" })
    capi = (await cloud.as("cloud")).api
  })
  afterAll(() => cloud.close())

  it("refuses loopback and metadata targets at registration with 422 PATTERN_MISMATCH and the reason", async () => {
    const loopback = await capi.post("/api-webhooks", { url: "http://127.0.0.1:9/x", events: ["job.created"] })
    expectDetail(loopback, "url", "PATTERN_MISMATCH")
    expect(loopback.body.error.message).toMatch(/loopback/)
    expect(loopback.body.error.details[0].message).toMatch(/loopback/)
    const metadata = await capi.post("/api-webhooks", { url: "http://169.254.169.254/", event_type: "job.created" })
    expectDetail(metadata, "url", "PATTERN_MISMATCH")
    expect(metadata.body.error.message).toMatch(/metadata/)
    for (const url of ["http://10.1.2.3/", "http://[::1]/", "http://[::ffff:192.168.1.1]/", "http://localhost:8080/", "http://metadata.google.internal/"]) {
      expectDetail(await capi.post("/api-webhooks", { url, events: ["job.created"] }), "url", "PATTERN_MISMATCH")
    }
    // reported together with the other problems of the request
    const many = await capi.post("/api-webhooks", { url: "http://127.0.0.1/", events: ["nope"] })
    expectDetail(many, "url", "PATTERN_MISMATCH")
    expectDetail(many, "events[0]", "ENUM_CONSTRAINT")
    expect(await cloud.sql("SELECT id FROM webhooks")).toEqual([])
  })

  it("allows public targets and checks a PATCHed url again", async () => {
    const w = (await capi.post("/api-webhooks", { url: "https://93.184.216.34/hook", events: ["job.created"] })).body.data.webhook
    expect(w.url).toBe("https://93.184.216.34/hook")
    const res = await capi.patch(`/api-webhooks?id=${w.id}`, { url: "http://192.168.0.10/hook" })
    expectDetail(res, "url", "PATTERN_MISMATCH")
    expect(res.body.error.message).toMatch(/private/)
    expect((await capi.patch(`/api-webhooks?id=${w.id}`, { active: false })).status).toBe(200)
    expect((await capi.get(`/api-webhooks?id=${w.id}`)).body.data.webhook.url).toBe("https://93.184.216.34/hook")
  })

  it("self-hosted allows the same targets", async () => {
    const res = await api.post("/api-webhooks", { url: "http://169.254.169.254/", events: ["job.created"] })
    expect(res.status).toBe(201)
  })
})

describe("webhooks per tenant (MES_DEPLOYMENT=cloud)", () => {
  let cloud: Harness
  beforeAll(async () => {
    cloud = await startServer({ deployment: "cloud", env: { MES_DEPLOYMENT: "cloud" } })
  })
  afterAll(() => cloud.close())

  /** A cloud tenant on the plan without a daily request limit, so that only the webhook cap can refuse. */
  const enterprise = async (name: string) => {
    const t = await cloud.as(name)
    await cloud.setPlan(t.tenantId, "enterprise")
    return t
  }
  const hook = (i: number) => ({ url: `https://93.184.216.34/hook/${i}`, events: ["job.created"] })

  it(`a tenant holds at most ${WEBHOOKS_PER_TENANT}: registrations at once past it are 402 QUOTA_EXCEEDED, exactly, and a delete makes room`, async () => {
    const t = await enterprise("capped")
    const held: Array<string> = []
    for (let i = 0; i < WEBHOOKS_PER_TENANT - 3; i++) held.push((await register(hook(i), t.api)).id)
    // thirty at once for the last three places
    const racing = await Promise.all(Array.from({ length: 30 }, (_, i) => t.api.post("/api-webhooks", hook(1000 + i))))
    expect(racing.map((r) => r.status).sort()).toEqual([201, 201, 201, ...Array.from({ length: 27 }, () => 402)])
    for (const r of racing.filter((r) => r.status === 402)) {
      expectError(r, 402, "QUOTA_EXCEEDED")
      expect(r.body.error.message).toBe(`A tenant holds at most ${WEBHOOKS_PER_TENANT} webhooks: delete one to register another`)
    }
    expect(await cloud.sql("SELECT count(*)::int AS n FROM webhooks WHERE tenant_id = $1", [t.tenantId])).toEqual([{ n: WEBHOOKS_PER_TENANT }])
    // spec 7.4: 402 before 422; inactive ones count too
    expectError(await t.api.post("/api-webhooks", { url: "not a url", events: ["nope"] }), 402, "QUOTA_EXCEEDED")
    expect((await t.api.patch(`/api-webhooks?id=${held[0]}`, { active: false })).status).toBe(200)
    expectError(await t.api.post("/api-webhooks", hook(2000)), 402, "QUOTA_EXCEEDED")
    // another tenant has its own
    const other = await enterprise("neighbour")
    await register(hook(0), other.api)
    // a delete makes room for one
    expect((await t.api.delete(`/api-webhooks?id=${held[0]}`)).status).toBe(200)
    expectDetail(await t.api.post("/api-webhooks", { url: "not a url", events: ["job.created"] }), "url", "PATTERN_MISMATCH")
    await register(hook(3000), t.api)
    expectError(await t.api.post("/api-webhooks", hook(3001)), 402, "QUOTA_EXCEEDED")
  })

  it("self-hosted has no cap", async () => {
    const t = await h.as("uncapped")
    for (let i = 0; i <= WEBHOOKS_PER_TENANT; i++) await register(hook(i), t.api)
    expect(await h.sql("SELECT count(*)::int AS n FROM webhooks WHERE tenant_id = $1", [t.tenantId])).toEqual([{ n: WEBHOOKS_PER_TENANT + 1 }])
  })
})
