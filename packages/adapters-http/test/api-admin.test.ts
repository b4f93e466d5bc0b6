// Running a service (issue 10): the monthly reset task (spec 4.13), the admin export (spec 4.11) with
// session tokens, and API-key management (spec 4.12), through a real server on both databases.
import { SignJWT } from "jose"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MonthlyReset, MonthlyResetStore, Tenants } from "@mes/domain"
import { client, expectDetail, expectError, type Harness, nestedJob, startServer } from "./harness.ts"

const CRON_SECRET = "cron-secret-for-tests"
const SERVICE_ROLE_KEY = "service-role-key-for-tests"
const JWT_SECRET = "a-session-secret-of-at-least-32-bytes!!"

let h: Harness
beforeAll(async () => {
  h = await startServer({ env: { CRON_SECRET, SERVICE_ROLE_KEY, MES_JWT_SECRET: JWT_SECRET } })
})
afterAll(() => h.close())

const anon = () => client(h.url)
const reset = (headers: Record<string, string>) => anon().post("/monthly-reset-cron", {}, { headers })

const sign = (claims: Record<string, unknown>, options: { secret?: string; exp?: number } = {}) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setExpirationTime(options.exp ?? Math.floor(Date.now() / 1000) + 600)
    .sign(new TextEncoder().encode(options.secret ?? JWT_SECRET))

/** A tenant with an admin and an operator profile, and a session token for each. */
const tenantWithUsers = async (name: string) => {
  const t = await h.as(name)
  const admin = (await t.api.post("/api-profiles", { display_name: "Ada", role: "admin" })).body.data.profile.id
  const operator = (await t.api.post("/api-profiles", { display_name: "Otto", role: "operator" })).body.data.profile.id
  return {
    ...t,
    admin,
    operator,
    adminToken: await sign({ sub: admin, tenant_id: t.tenantId, role: "admin" }),
    operatorToken: await sign({ sub: operator, tenant_id: t.tenantId, role: "operator" })
  }
}

const usage = async (tenantId: string) =>
  Number((await h.sql("SELECT current_month_parts FROM tenant_usage WHERE tenant_id = $1", [tenantId]))[0]!.current_month_parts)

describe("POST /monthly-reset-cron (spec 4.13)", () => {
  it("refuses every caller but the cron secret and the service key, and any method but POST", async () => {
    const t = await h.tenant("Reset auth")
    expectError(await reset({}), 401, "UNAUTHORIZED")
    expectError(await reset({ "x-cron-secret": "wrong" }), 401, "UNAUTHORIZED")
    expectError(await reset({ "x-cron-secret": CRON_SECRET.slice(0, -1) }), 401, "UNAUTHORIZED")
    expectError(await reset({ authorization: "Bearer wrong" }), 401, "UNAUTHORIZED")
    // a tenant's API key is not the service key
    expectError(await reset({ authorization: `Bearer ${t.key}` }), 401, "UNAUTHORIZED")
    expectError(await reset({ "x-api-key": t.key }), 401, "UNAUTHORIZED")
    for (const method of ["GET", "PUT", "PATCH", "DELETE"]) {
      const res = await anon().send(method, "/monthly-reset-cron", method === "GET" || method === "DELETE" ? undefined : {}, {
        headers: { "x-cron-secret": CRON_SECRET }
      })
      expectError(res, 405, "METHOD_NOT_ALLOWED")
      expect(res.headers.get("allow")).toContain("POST")
    }
    expect((await reset({ "x-cron-secret": CRON_SECRET })).status).toBe(200)
    expect((await reset({ authorization: `Bearer ${SERVICE_ROLE_KEY}` })).status).toBe(200)
  })

  it("takes an Idempotency-Key as any POST may, and ignores it: the task is no tenant's, and keys are a tenant's", async () => {
    for (const headers of [{ "x-cron-secret": CRON_SECRET }, { authorization: `Bearer ${SERVICE_ROLE_KEY}` }]) {
      const first = await reset({ ...headers, "idempotency-key": "reset-key" })
      expect(first.status, JSON.stringify(first.body)).toBe(200)
      const again = await reset({ ...headers, "idempotency-key": "reset-key" })
      expect(again.status, JSON.stringify(again.body)).toBe(200)
      expect(again.headers.get("idempotent-replayed")).toBeNull()
    }
    // a malformed key is still refused as on every POST
    expectError(await reset({ "x-cron-secret": CRON_SECRET, "idempotency-key": "a key with spaces" }), 400, "BAD_REQUEST")
  })

  it("resets every active tenant's count with one log record each, reports it, and a second run finds 0", async () => {
    const a = await h.as("Reset A")
    const b = await h.as("Reset B")
    const suspended = await h.as("Reset suspended")
    await a.api.post("/api-jobs", nestedJob("R-A1", 3, 1))
    await a.api.post("/api-parts", { job_id: (await a.api.post("/api-jobs", nestedJob("R-A2", 1, 1))).body.data.job.id, part_number: "X", quantity: 1 })
    await b.api.post("/api-jobs", nestedJob("R-B1", 2, 1))
    await suspended.api.post("/api-jobs", nestedJob("R-S1", 4, 1))
    await h.sql("UPDATE tenants SET status = 'suspended' WHERE id = $1", [suspended.tenantId])
    expect(await usage(a.tenantId)).toBe(5)

    const first = await reset({ "x-cron-secret": CRON_SECRET })
    expect(first.status).toBe(200)
    expect(first.body.success).toBe(true)
    const { summary, reset_details, message } = first.body.data
    const detail = (id: string) => reset_details.find((d: any) => d.tenant_id === id)
    expect(detail(a.tenantId)).toEqual({ tenant_id: a.tenantId, previous_count: 5, reset_successful: true })
    expect(detail(b.tenantId)).toEqual({ tenant_id: b.tenantId, previous_count: 2, reset_successful: true })
    expect(detail(suspended.tenantId)).toBeUndefined()
    expect(summary).toMatchObject({ successful_resets: reset_details.length, failed_resets: 0, total_tenants_reset: reset_details.length })
    expect(summary.total_parts_reset).toBe(reset_details.reduce((n: number, d: any) => n + d.previous_count, 0))
    expect(Number.isInteger(summary.duration_ms)).toBe(true)
    expect(Date.parse(summary.reset_timestamp)).toBeGreaterThan(Date.now() - 60_000)
    expect(typeof message).toBe("string")
    expect(await usage(a.tenantId)).toBe(0)
    expect(await usage(suspended.tenantId)).toBe(4)

    const logs = await h.sql("SELECT * FROM monthly_reset_logs WHERE tenant_id = $1", [a.tenantId])
    expect(logs).toHaveLength(1)
    expect(logs[0]).toMatchObject({ previous_parts_count: 5, reset_type: "automatic", metadata: { trigger: "http" } })
    expect(new Date(logs[0]!.billing_period_end as string).toISOString()).toBe(summary.reset_timestamp)

    const second = await reset({ authorization: `Bearer ${SERVICE_ROLE_KEY}` })
    expect(second.body.data.reset_details.every((d: any) => d.previous_count === 0 && d.reset_successful)).toBe(true)
    expect(second.body.data.summary.total_parts_reset).toBe(0)
    const again = await h.sql("SELECT * FROM monthly_reset_logs WHERE tenant_id = $1 ORDER BY reset_date", [a.tenantId])
    expect(again).toHaveLength(2)
    // the second record's billing period starts where the first ended
    expect(new Date(again[1]!.billing_period_start as string).getTime()).toBe(new Date(again[0]!.reset_date as string).getTime())
    // parts created after the reset count towards the new period
    await a.api.post("/api-jobs", nestedJob("R-A3", 2, 1))
    expect(await usage(a.tenantId)).toBe(2)
  })

  it("one tenant's failure does not stop the others: the statement is retried tenant by tenant", async () => {
    const a = await h.as("Fail A")
    const b = await h.as("Fail B")
    await a.api.post("/api-jobs", nestedJob("F-A", 2, 1))
    await b.api.post("/api-jobs", nestedJob("F-B", 3, 1))
    // a store whose statement fails whenever it includes tenant b
    const report = await h.run(Effect.gen(function*() {
      const store = yield* MonthlyResetStore
      const failing = MonthlyResetStore.of({
        ...store,
        reset: (plan) => plan.entries.some((e) => e.tenant_id === b.tenantId) ? Effect.die(new Error("disk full")) : store.reset(plan)
      })
      return yield* Effect.flatMap(Effect.service(MonthlyReset), (r) => r.run("cli")).pipe(
        Effect.provide(Layer.fresh(MonthlyReset.layer).pipe(Layer.provide(Layer.succeed(MonthlyResetStore, failing))))
      )
    }))
    const detail = (id: string) => report.reset_details.find((d) => d.tenant_id === id)
    expect(detail(a.tenantId)).toEqual({ tenant_id: a.tenantId, previous_count: 2, reset_successful: true })
    expect(detail(b.tenantId)).toEqual({ tenant_id: b.tenantId, previous_count: 0, reset_successful: false })
    expect(report.summary.failed_resets).toBe(1)
    expect(report.summary.successful_resets).toBe(report.reset_details.length - 1)
    expect(await usage(a.tenantId)).toBe(0)
    expect(await usage(b.tenantId)).toBe(3)
  })

  it("the schedule: two runners of one period at once reset once; a later period runs again", async () => {
    const t = await h.as("Schedule")
    await t.api.post("/api-jobs", nestedJob("S-1", 2, 1))
    const future = new Date(Date.UTC(2099, 5, 1, 0, 0, 0, 5))
    const [x, y] = await h.run(Effect.gen(function*() {
      const store = yield* MonthlyResetStore
      // two services as two processes would build them, over one database
      const one = () => Effect.flatMap(Effect.service(MonthlyReset), (r) => r.runScheduled(future)).pipe(
        Effect.provide(Layer.fresh(MonthlyReset.layer).pipe(Layer.provide(Layer.succeed(MonthlyResetStore, store))))
      )
      return yield* Effect.all([one(), one()], { concurrency: 2 })
    }))
    expect([x, y].filter((r) => r !== undefined)).toHaveLength(1)
    const ran = (x ?? y)!
    expect(ran.reset_details.find((d) => d.tenant_id === t.tenantId)).toMatchObject({ previous_count: 2, reset_successful: true })
    const logs = await h.sql("SELECT metadata FROM monthly_reset_logs WHERE tenant_id = $1", [t.tenantId])
    expect(logs).toEqual([{ metadata: { trigger: "schedule", period_start: "2099-06-01T00:00:00.000Z" } }])
    // the same period again: nothing; the next one: runs
    expect(await h.run(Effect.flatMap(Effect.service(MonthlyReset), (r) => r.runScheduled(new Date(Date.UTC(2099, 5, 20)))))).toBeUndefined()
    expect(await h.run(Effect.flatMap(Effect.service(MonthlyReset), (r) => r.runScheduled(new Date(Date.UTC(2099, 6, 1)))))).toBeDefined()
  })
})

describe("POST /monthly-reset-cron when the database refuses", () => {
  it("a tenant whose reset fails is reported and keeps its count; a reset that cannot run is spec 4.13's 500 envelope", async () => {
    const own = await startServer({ env: { CRON_SECRET } })
    try {
      const t = await own.as("Broken log")
      await t.api.post("/api-jobs", nestedJob("B-1", 2, 1))
      await own.sql("ALTER TABLE monthly_reset_logs RENAME TO monthly_reset_logs_away")
      const partial = await client(own.url).post("/monthly-reset-cron", {}, { headers: { "x-cron-secret": CRON_SECRET } })
      expect(partial.status).toBe(200)
      expect(partial.body.data.reset_details).toEqual([{ tenant_id: t.tenantId, previous_count: 0, reset_successful: false }])
      expect(partial.body.data.summary).toMatchObject({ successful_resets: 0, failed_resets: 1, total_tenants_reset: 0 })
      expect(partial.body.data.message).toMatch(/errors/)
      expect(Number((await own.sql("SELECT current_month_parts FROM tenant_usage WHERE tenant_id = $1", [t.tenantId]))[0]!.current_month_parts)).toBe(2)
      await own.sql("ALTER TABLE monthly_reset_logs_away RENAME TO monthly_reset_logs")

      await own.sql("ALTER TABLE tenants RENAME TO tenants_away")
      const failed = await client(own.url).post("/monthly-reset-cron", {}, { headers: { "x-cron-secret": CRON_SECRET } })
      await own.sql("ALTER TABLE tenants_away RENAME TO tenants")
      expect(failed.status).toBe(500)
      expect(failed.body).toEqual({
        success: false,
        error: { code: "INTERNAL_ERROR", message: expect.any(String), timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/), statusCode: 500 }
      })
    } finally {
      await own.close()
    }
  })
})

describe("GET /api-export (spec 4.11)", () => {
  it("gives an admin every record of the caller's tenant only, entity by entity or all", async () => {
    const t = await tenantWithUsers("Export A")
    const other = await tenantWithUsers("Export B")
    const job = (await t.api.post("/api-jobs", nestedJob("E-1", 2, 2))).body.data.job
    await t.api.post("/api-cells", { name: "Saw" })
    await other.api.post("/api-jobs", nestedJob("E-OTHER", 1, 1))
    const admin = client(h.url, t.adminToken)

    const some = await admin.get("/api-export?entities=jobs,parts,operations&format=json")
    expect(some.status).toBe(200)
    expect(Object.keys(some.body.data)).toEqual(["jobs", "parts", "operations"])
    expect(some.body.data.jobs.map((j: any) => j.job_number)).toEqual(["E-1"])
    expect(some.body.data.jobs[0]).toMatchObject({ id: job.id, tenant_id: t.tenantId, customer: "Acme Steel" })
    expect(some.body.data.parts).toHaveLength(2)
    expect(some.body.data.operations).toHaveLength(4)
    expect(some.body.data.operations.every((o: any) => o.tenant_id === t.tenantId)).toBe(true)
    // the records are the API's own
    // (a read of one also carries its running quantity totals, which the export leaves to operation_quantities)
    const { quantities: _totals, ...read } = (await t.api.get(`/api-operations?id=${some.body.data.operations[0].id}`)).body.data.operation
    expect(some.body.data.operations[0]).toEqual(read)

    const all = await admin.get("/api-export?entities=all")
    expect(all.status).toBe(200)
    expect(Object.keys(all.body.data)).toEqual([
      "jobs", "parts", "operations", "cells", "resources", "materials", "profiles", "issues", "substeps", "batches", "time_entries", "webhooks", "webhook_logs", "api_keys"
    ])
    expect(all.body.data.cells.map((c: any) => c.name)).toEqual(["Saw"])
    expect(all.body.data.profiles).toHaveLength(2)
    expect(all.body.data.issues).toEqual([])
    // keys are listed without secret or hash
    expect(all.body.data.api_keys).toHaveLength(1)
    expect(JSON.stringify(all.body.data)).not.toContain(t.key)
    expect(all.body.data.api_keys[0]).not.toHaveProperty("key_hash")
    // a deleted job's records are gone from the export too
    await t.api.delete(`/api-jobs?id=${job.id}`)
    expect((await admin.get("/api-export?entities=jobs,parts")).body.data).toEqual({ jobs: [], parts: [] })
  })

  it("pages through more records than one page holds, each once, in creation order, skipping deleted jobs'", async () => {
    const t = await tenantWithUsers("Export pages")
    const jobs: Array<string> = []
    for (let i = 0; i < 26; i++) jobs.push((await t.api.post("/api-jobs", nestedJob(`PG-${i}`, 10, 10))).body.data.job.id)
    // a deleted job in the middle of the second page
    await t.api.delete(`/api-jobs?id=${jobs[13]}`)
    const res = await client(h.url, t.adminToken).get("/api-export?entities=operations,jobs")
    const ids = res.body.data.operations.map((o: any) => o.id)
    expect(ids).toHaveLength(2_500)
    expect(new Set(ids).size).toBe(2_500)
    expect([...ids].sort()).toEqual(ids)
    expect(res.body.data.jobs).toHaveLength(25)
    const csv = await (await fetch(`${h.url}/api-export?entities=operations&format=csv`, { headers: { authorization: `Bearer ${t.adminToken}` } })).text()
    expect(csv.split("\r\n")).toHaveLength(1 + 2_500 + 1)
  })

  it("answers CSV (RFC 4180, header row) for one entity as a download", async () => {
    const t = await tenantWithUsers("Export CSV")
    await t.api.post("/api-jobs", nestedJob("C-1", 1, 1, { customer: 'Smith, "Big" Steel', notes: "line one\nline two", metadata: { a: 1 } }))
    const res = await fetch(`${h.url}/api-export?entities=jobs&format=csv`, { headers: { authorization: `Bearer ${t.adminToken}` } })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/csv/)
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="mes-export-jobs-\d{4}-\d{2}-\d{2}\.csv"$/)
    const text = await res.text()
    const [header, ...rest] = text.split("\r\n")
    const columns = header!.split(",")
    expect(columns.slice(0, 3)).toEqual(["tenant_id", "id", "job_number"])
    expect(columns).toContain("customer")
    expect(text).toContain(`"Smith, ""Big"" Steel"`)
    expect(text).toContain(`"line one\nline two"`)
    expect(text).toContain(`"{""a"":1}"`)
    expect(rest.at(-1)).toBe("")
    // an entity without records still has its header
    const empty = await fetch(`${h.url}/api-export?entities=batches&format=csv`, { headers: { authorization: `Bearer ${t.adminToken}` } })
    expect((await empty.text()).split("\r\n")).toEqual([expect.stringMatching(/^tenant_id,id,/), ""])
    // CSV is one entity at a time
    expectDetail(await client(h.url, t.adminToken).get("/api-export?entities=jobs,parts&format=csv"), "entities", "MAX_LENGTH")
  })

  it("401 without a valid session token, 403 for an operator or an API key, 422 for an unknown entity", async () => {
    const t = await tenantWithUsers("Export auth")
    const get = (headers: Record<string, string>, query = "entities=jobs") => anon().get(`/api-export?${query}`, { headers })
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
    expectError(await get({}), 401, "UNAUTHORIZED")
    expectError(await get(bearer("not-a-token")), 401, "UNAUTHORIZED")
    // expired, forged (another secret), unsigned (alg: none), or naming another tenant's profile
    expectError(await get(bearer(await sign({ sub: t.admin, tenant_id: t.tenantId, role: "admin" }, { exp: Math.floor(Date.now() / 1000) - 10 }))), 401, "UNAUTHORIZED")
    expectError(await get(bearer(await sign({ sub: t.admin, tenant_id: t.tenantId, role: "admin" }, { secret: "another-secret-of-at-least-32-bytes!!" }))), 401, "UNAUTHORIZED")
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url")
    const unsigned = `${b64({ alg: "none", typ: "JWT" })}.${b64({ sub: t.admin, tenant_id: t.tenantId, role: "admin", exp: Math.floor(Date.now() / 1000) + 600 })}.`
    expectError(await get(bearer(unsigned)), 401, "UNAUTHORIZED")
    const [head, , sig] = t.adminToken.split(".")
    expectError(await get(bearer(`${head}.${b64({ sub: t.admin, tenant_id: t.tenantId, role: "admin", exp: 9999999999 })}.${sig}`)), 401, "UNAUTHORIZED")
    const stranger = await h.tenant("Export stranger")
    expectError(await get(bearer(await sign({ sub: t.admin, tenant_id: stranger.tenantId, role: "admin" }))), 401, "UNAUTHORIZED")
    // operator token, and an operator profile whose token claims admin
    expectError(await get(bearer(t.operatorToken)), 403, "FORBIDDEN")
    expectError(await get(bearer(await sign({ sub: t.operator, tenant_id: t.tenantId, role: "admin" }))), 403, "FORBIDDEN")
    // an integration key is not a session, however it is sent
    expectError(await get(bearer(t.key)), 403, "FORBIDDEN")
    expectError(await get({ "x-api-key": t.key }), 403, "FORBIDDEN")
    // a deactivated admin's token stops working
    const deactivated = await tenantWithUsers("Export deactivated")
    await deactivated.api.patch(`/api-profiles?id=${deactivated.admin}`, { active: false })
    expectError(await get(bearer(deactivated.adminToken)), 401, "UNAUTHORIZED")

    expectDetail(await get(bearer(t.adminToken), "entities=jobs,widgets"), "entities", "ENUM_CONSTRAINT")
    expectDetail(await get(bearer(t.adminToken), "entities="), "entities", "NOT_NULL")
    expectDetail(await get(bearer(t.adminToken), "entities=jobs&format=xml"), "format", "ENUM_CONSTRAINT")
  })

  it("a server given a session-token secret shorter than HS256's 32 bytes does not start, as with MES_JWT_SECRET", async () => {
    await expect(startServer({ server: { jwtSecret: "k".repeat(31) } }))
      .rejects.toThrow("jwtSecret is 31 bytes long: an HMAC-SHA256 key must be at least 32 bytes")
    await expect(startServer({ env: { MES_JWT_SECRET: "short-secret" } }))
      .rejects.toThrow("MES_JWT_SECRET is 12 bytes long: an HMAC-SHA256 key must be at least 32 bytes")
    const own = await startServer({ server: { jwtSecret: "k".repeat(32) } })
    await own.close()
  })
})

describe("/api-key-generate (spec 4.12, 5.3)", () => {
  it("generates a key once, lists keys without secrets, and a revoked key stops working", async () => {
    const t = await tenantWithUsers("Keys")
    const created = await t.api.post("/api-key-generate", { name: "ERP connector", environment: "test" })
    expect(created.status).toBe(201)
    const { api_key, key } = created.body.data
    expect(api_key).toMatch(/^svc_test_[A-Za-z0-9]{40}$/)
    expect(key).toMatchObject({ name: "ERP connector", environment: "test", prefix: api_key.slice(0, 16), tenant_id: t.tenantId, revoked_at: null })
    // the new key works, and its use is noted
    const fresh = client(h.url, api_key)
    expect((await fresh.get("/api-jobs")).status).toBe(200)

    const listed = await t.api.get("/api-key-generate")
    expect(listed.status).toBe(200)
    expect(listed.body.data.pagination).toMatchObject({ total: 2 })
    const mine = listed.body.data.api_keys.find((k: any) => k.id === key.id)
    expect(Object.keys(mine).sort()).toEqual(["created_at", "environment", "id", "last_used_at", "name", "prefix", "revoked_at", "tenant_id"])
    expect(mine.last_used_at).toMatch(/^\d{4}-/)
    expect(JSON.stringify(listed.body)).not.toContain(api_key)
    expect(JSON.stringify(listed.body)).not.toContain(t.key)

    const revoked = await t.api.delete(`/api-key-generate?id=${key.id}`)
    expect(revoked.status).toBe(200)
    expect(revoked.body.data.api_key).toMatchObject({ id: key.id, revoked_at: expect.stringMatching(/^\d{4}-/) })
    expectError(await fresh.get("/api-jobs"), 401, "UNAUTHORIZED")
    expect((await t.api.get("/api-key-generate?revoked=false")).body.data.api_keys.map((k: any) => k.id)).not.toContain(key.id)
    // revoking twice keeps the first time
    expect((await t.api.delete(`/api-key-generate?id=${key.id}`)).body.data.api_key.revoked_at).toBe(revoked.body.data.api_key.revoked_at)
  })

  it("an admin session may manage keys too; operators, other tenants' keys and bad bodies are refused", async () => {
    const t = await tenantWithUsers("Keys auth")
    const other = await h.as("Keys other")
    const byAdmin = await client(h.url, t.adminToken).post("/api-key-generate", { environment: "live" })
    expect(byAdmin.status).toBe(201)
    expect(byAdmin.body.data.api_key).toMatch(/^svc_live_/)
    expect(byAdmin.body.data.key.name).toBeNull()
    expectError(await client(h.url, t.operatorToken).post("/api-key-generate", { environment: "live" }), 403, "FORBIDDEN")
    expectError(await anon().post("/api-key-generate", { environment: "live" }), 401, "UNAUTHORIZED")
    expectDetail(await t.api.post("/api-key-generate", {}), "environment", "NOT_NULL")
    expectDetail(await t.api.post("/api-key-generate", { environment: "prod" }), "environment", "ENUM_CONSTRAINT")
    expectDetail(await t.api.post("/api-key-generate", { environment: "live", name: "" }), "name", "MIN_LENGTH")
    const theirs = (await other.api.get("/api-key-generate")).body.data.api_keys[0].id
    expectError(await t.api.delete(`/api-key-generate?id=${theirs}`), 403, "FORBIDDEN")
    expectError(await t.api.delete(`/api-key-generate?id=00000000-0000-4000-8000-000000000000`), 404, "NOT_FOUND")
    expect((await other.api.get("/api-jobs")).status).toBe(200)
  })

  it("mes key create issues keys the endpoint lists (one Tenants service behind both)", async () => {
    const t = await h.as("Keys cli")
    const key = await h.run(Effect.flatMap(Effect.service(Tenants), (s) => s.createKey(t.tenantId, { test: true, name: "cli" })))
    const listed = (await t.api.get("/api-key-generate?environment=test")).body.data.api_keys
    expect(listed.map((k: any) => k.prefix)).toEqual([key.slice(0, 16)])
  })
})
