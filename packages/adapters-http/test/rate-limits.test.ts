// Plan limits in cloud mode (spec 8; issue 10): requests per tenant per UTC day, counted in the database,
// 429 RATE_LIMIT_EXCEEDED past the limit, the limit headers on every response; nothing of it self-hosted.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError, type Harness, nestedJob, startServer } from "./harness.ts"

let cloud: Harness
let selfHosted: Harness
beforeAll(async () => {
  // MES_AUTH_CACHE_TTL=0: a plan change is seen by the next request
  cloud = await startServer({ env: { MES_DEPLOYMENT: "cloud", MES_AUTH_CACHE_TTL: "0" } })
  selfHosted = await startServer()
})
afterAll(async () => {
  await cloud.close()
  await selfHosted.close()
})

const nextUtcMidnight = () => {
  const now = new Date()
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)
}

describe("cloud plan limits (MES_DEPLOYMENT=cloud)", () => {
  it("a free tenant's 101st request of the day is 429 with the limit's info and headers; another tenant is unaffected", async () => {
    const t = await cloud.as("Free")
    const other = await cloud.as("Free neighbour")
    for (let i = 1; i <= 100; i++) {
      const res = i === 50 ? await t.api.post("/api-jobs", {}) : await t.api.get("/api-jobs?limit=1")
      // failed requests count too, and carry the headers
      expect(res.status).toBe(i === 50 ? 422 : 200)
      expect(res.headers.get("x-ratelimit-limit")).toBe("100")
      expect(res.headers.get("x-ratelimit-remaining")).toBe(String(100 - i))
      if (i === 1) {
        expect(Number(res.headers.get("x-ratelimit-reset"))).toBe(nextUtcMidnight() / 1000)
        expect(res.headers.get("ratelimit-policy")).toBe(`"daily";q=100;w=86400`)
        expect(res.headers.get("ratelimit")).toMatch(/^"daily";r=99;t=\d+$/)
      }
    }
    const refused = await t.api.get("/api-jobs")
    expectError(refused, 429, "RATE_LIMIT_EXCEEDED")
    const info = refused.body.error.rateLimitInfo
    expect(info.remaining).toBe(0)
    expect(Date.parse(info.resetAt)).toBe(nextUtcMidnight())
    expect(info.retryAfter).toBeGreaterThan(0)
    expect(info.retryAfter).toBeLessThanOrEqual(86_400)
    expect(refused.headers.get("retry-after")).toBe(String(info.retryAfter))
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0")
    expect(refused.headers.get("x-ratelimit-reset")).toBe(String(nextUtcMidnight() / 1000))
    // every endpoint, writes included, and nothing is written
    expectError(await t.api.post("/api-jobs", nestedJob("RL-1")), 429, "RATE_LIMIT_EXCEEDED")
    expectError(await t.api.get("/api-dashboard-stats"), 429, "RATE_LIMIT_EXCEEDED")
    expect(await cloud.sql("SELECT 1 FROM jobs WHERE tenant_id = $1", [t.tenantId])).toHaveLength(0)

    const theirs = await other.api.get("/api-jobs")
    expect(theirs.status).toBe(200)
    expect(theirs.headers.get("x-ratelimit-remaining")).toBe("99")

    // an upgrade lifts the limit at once
    await cloud.setPlan(t.tenantId, "pro")
    const upgraded = await t.api.get("/api-jobs")
    expect(upgraded.status).toBe(200)
    expect(upgraded.headers.get("x-ratelimit-limit")).toBe("1000")
  })

  it("counts exactly under concurrency: 150 requests at once, 100 admitted", async () => {
    const t = await cloud.as("Burst")
    const replies = await Promise.all(Array.from({ length: 150 }, () => t.api.get("/api-jobs?limit=1")))
    expect(replies.filter((r) => r.status === 200)).toHaveLength(100)
    expect(replies.filter((r) => r.status === 429)).toHaveLength(50)
    expect(new Set(replies.filter((r) => r.status === 200).map((r) => r.headers.get("x-ratelimit-remaining"))).size).toBe(100)
  })

  it("plans: pro 1,000, premium 10,000, enterprise unlimited (not counted, no headers)", async () => {
    const t = await cloud.as("Plans")
    for (const [plan, limit] of [["pro", "1000"], ["premium", "10000"]] as const) {
      await cloud.setPlan(t.tenantId, plan)
      expect((await t.api.get("/api-jobs")).headers.get("x-ratelimit-limit")).toBe(limit)
    }
    await cloud.setPlan(t.tenantId, "enterprise")
    const before = await cloud.sql("SELECT requests FROM api_request_counts WHERE tenant_id = $1", [t.tenantId])
    const res = await t.api.get("/api-jobs")
    expect(res.status).toBe(200)
    expect(res.headers.get("x-ratelimit-limit")).toBeNull()
    expect(await cloud.sql("SELECT requests FROM api_request_counts WHERE tenant_id = $1", [t.tenantId])).toEqual(before)
  })

  it("unauthenticated requests are not counted against anyone", async () => {
    const t = await cloud.as("Anonymous neighbour")
    const res = await fetch(`${cloud.url}/api-jobs`, { headers: { authorization: "Bearer svc_live_" + "x".repeat(40) } })
    expect(res.status).toBe(401)
    expect(res.headers.get("x-ratelimit-limit")).toBeNull()
    expect((await t.api.get("/api-jobs")).headers.get("x-ratelimit-remaining")).toBe("99")
  })
})

describe("self-hosted (default)", () => {
  it("has no limits, no headers and counts nothing", async () => {
    const t = await selfHosted.as("Unlimited")
    for (let i = 0; i < 105; i++) expect((await t.api.get("/api-jobs?limit=1")).status).toBe(200)
    const res = await t.api.get("/api-jobs")
    expect(res.headers.get("x-ratelimit-limit")).toBeNull()
    expect(res.headers.get("ratelimit")).toBeNull()
    expect(await selfHosted.sql("SELECT 1 FROM api_request_counts")).toHaveLength(0)
  })
})
