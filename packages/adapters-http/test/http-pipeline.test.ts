// The request pipeline (spec 4, 5, 7; DECISIONS "Requests and errors"): 400 before 401, key checks
// for both headers, 404/405 envelopes, CORS, body limit, query errors, OpenAPI and the docs page.
import { gzipSync } from "node:zlib"
import * as Duration from "effect/Duration"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { generateApiKey, keyPrefix, sha256Hex } from "@mes/domain"
import { client, expectError, type Harness, nestedJob, rawExchange, type Reply, sleep, stalledPost, startServer } from "./harness.ts"

let h: Harness
let key: string
let tenantId: string
let api: ReturnType<typeof client>
let anonymous: ReturnType<typeof client>

beforeAll(async () => {
  h = await startServer()
  const t = await h.tenant("Pipeline")
  key = t.key
  tenantId = t.tenantId
  api = client(h.url, key)
  anonymous = client(h.url)
})
afterAll(() => h.close())

/** Inserts an API key row directly (what `mes key create` does), to test key variants. */
const insertKey = async (k: string, environment: "live" | "test", revoked = false) => {
  await h.sql(
    `INSERT INTO api_keys (tenant_id, id, key_prefix, key_hash, environment, revoked_at)
     VALUES ($1, gen_random_uuid(), $2, $3, $4, ${revoked ? "now()" : "NULL"})`,
    [tenantId, keyPrefix(k), await sha256Hex(k), environment]
  )
}

describe("400 before 401 (spec 7.4)", () => {
  it("a malformed JSON body is 400 BAD_REQUEST without a key", async () => {
    expectError(await anonymous.post("/api-jobs", undefined, { raw: "{not json" }), 400, "BAD_REQUEST")
  })

  it("a malformed JSON body is 400 with a wrong key, and with a valid key", async () => {
    expectError(await client(h.url, "svc_live_wrong").post("/api-jobs", undefined, { raw: '{"job_number":' }), 400, "BAD_REQUEST")
    expectError(await api.post("/api-jobs", undefined, { raw: "[1, 2" }), 400, "BAD_REQUEST")
    expectError(await anonymous.send("PATCH", `/api-jobs?id=7c0b9a52-3c8e-4f7e-9a53-0d8f6f1f2b11`, undefined, { raw: "{" }), 400, "BAD_REQUEST")
  })
})

describe("authentication cache (MES_AUTH_CACHE_TTL)", () => {
  let cached: Harness
  beforeAll(async () => {
    cached = await startServer({ env: { MES_AUTH_CACHE_TTL: "1500ms" } })
  })
  afterAll(() => cached.close())

  const revoke = (h: Harness, k: string) => h.sql("UPDATE api_keys SET revoked_at = now() WHERE key_prefix = $1", [keyPrefix(k)])

  it("a revoked key keeps working until the TTL passes, then is 401; a new key works at once", async () => {
    const t = await cached.tenant("Cached")
    const api = client(cached.url, t.key)
    expect((await api.get("/api-jobs")).status).toBe(200)
    await revoke(cached, t.key)
    expect((await api.get("/api-jobs")).status).toBe(200) // served from the cache
    await new Promise((resolve) => setTimeout(resolve, 1600))
    expectError(await api.get("/api-jobs"), 401, "UNAUTHORIZED")
    const again = await cached.tenant("Cached again")
    expect((await client(cached.url, again.key).get("/api-jobs")).status).toBe(200)
  })

  it("a suspended tenant's key stops within the TTL too", async () => {
    const t = await cached.tenant("Suspended")
    const api = client(cached.url, t.key)
    expect((await api.get("/api-jobs")).status).toBe(200)
    await cached.sql("UPDATE tenants SET status = 'suspended' WHERE id = $1", [t.tenantId])
    await new Promise((resolve) => setTimeout(resolve, 1600))
    expectError(await api.get("/api-jobs"), 401, "UNAUTHORIZED")
  })

  it("with MES_AUTH_CACHE_TTL=0 a revoked key is refused on the next request", async () => {
    const uncached = await startServer({ env: { MES_AUTH_CACHE_TTL: "0" } })
    try {
      const t = await uncached.tenant("Uncached")
      const api = client(uncached.url, t.key)
      expect((await api.get("/api-jobs")).status).toBe(200)
      await revoke(uncached, t.key)
      expectError(await api.get("/api-jobs"), 401, "UNAUTHORIZED")
    } finally {
      await uncached.close()
    }
  })
})

describe("401 UNAUTHORIZED (spec 5)", () => {
  const wellFormedButUnknown = generateApiKey("live")

  it("a missing key", async () => {
    expectError(await anonymous.get("/api-jobs"), 401, "UNAUTHORIZED")
    expectError(await anonymous.post("/api-jobs", nestedJob("NOKEY-1")), 401, "UNAUTHORIZED")
    expectError(await anonymous.patch("/api-jobs?id=7c0b9a52-3c8e-4f7e-9a53-0d8f6f1f2b11", { notes: "x" }), 401, "UNAUTHORIZED")
    expectError(await anonymous.delete("/api-jobs?id=7c0b9a52-3c8e-4f7e-9a53-0d8f6f1f2b11"), 401, "UNAUTHORIZED")
  })

  for (const [name, bad] of [
    ["a wrong key", () => wellFormedButUnknown],
    ["a malformed key", () => "not-a-key"],
    ["a key with the wrong prefix", () => key.replace("svc_live_", "svc_prod_")],
    ["a valid key with one character changed", () => key.slice(0, -1) + (key.endsWith("A") ? "B" : "A")],
    ["an empty bearer", () => ""]
  ] as const) {
    it(`${name} via Authorization: Bearer`, async () => {
      expectError(await anonymous.get("/api-jobs", { headers: { authorization: `Bearer ${bad()}` } }), 401, "UNAUTHORIZED")
    })

    it(`${name} via X-API-Key`, async () => {
      expectError(await anonymous.get("/api-jobs", { headers: { "x-api-key": bad() } }), 401, "UNAUTHORIZED")
    })
  }

  it("a key sent without the Bearer scheme in Authorization", async () => {
    expectError(await anonymous.get("/api-jobs", { headers: { authorization: key } }), 401, "UNAUTHORIZED")
    expectError(await anonymous.get("/api-jobs", { headers: { authorization: `Basic ${key}` } }), 401, "UNAUTHORIZED")
  })

  it("a revoked key", async () => {
    const revoked = generateApiKey("live")
    await insertKey(revoked, "live", true)
    expectError(await client(h.url, revoked).get("/api-jobs"), 401, "UNAUTHORIZED")
  })

  it("nothing is written by an unauthenticated create", async () => {
    await anonymous.post("/api-jobs", nestedJob("NOKEY-2"))
    await client(h.url, wellFormedButUnknown).post("/api-jobs", nestedJob("NOKEY-2"))
    const n = await h.sql(`SELECT count(*)::int AS n FROM jobs WHERE job_number = 'NOKEY-2'`)
    expect(n[0]!.n).toBe(0)
  })
})

describe("valid keys", () => {
  it("a live key via Authorization: Bearer", async () => {
    const res = await api.get("/api-jobs")
    expect(res.status).toBe(200)
    expect(res.body.success).toBe(true)
    expect(res.headers.get("content-type")).toMatch(/^application\/json/)
  })

  it("a live key via X-API-Key, for every method", async () => {
    const headers = { "x-api-key": key }
    expect((await anonymous.get("/api-jobs", { headers })).status).toBe(200)
    const created = await anonymous.post("/api-jobs", nestedJob("XKEY-1"), { headers })
    expect(created.status).toBe(201)
    const id = created.body.data.job.id
    const patched = await anonymous.send("PATCH", `/api-jobs?id=${id}`, { notes: "via x-api-key" }, { headers })
    expect(patched.status).toBe(200)
    expect(patched.body.data.job.notes).toBe("via x-api-key")
    const deleted = await anonymous.send("DELETE", `/api-jobs?id=${id}`, undefined, { headers })
    expect(deleted.status).toBe(200)
    expect(deleted.body.data).toEqual({ id, deleted: true })
  })

  it("the bearer scheme is case-insensitive", async () => {
    expect((await anonymous.get("/api-jobs", { headers: { authorization: `bearer ${key}` } })).status).toBe(200)
  })

  it("a svc_test_ key of the tenant works and sees the tenant's records", async () => {
    const testKey = generateApiKey("test")
    await insertKey(testKey, "test")
    const created = await api.post("/api-jobs", nestedJob("TESTKEY-1"))
    expect(created.status).toBe(201)
    const res = await client(h.url, testKey).get(`/api-jobs?id=${created.body.data.job.id}`)
    expect(res.status).toBe(200)
    expect(res.body.data.job.job_number).toBe("TESTKEY-1")
  })
})

describe("404 and 405", () => {
  it("an unknown path is 404 NOT_FOUND, with or without a key", async () => {
    expectError(await api.get("/api-nothing-here"), 404, "NOT_FOUND")
    expectError(await anonymous.get("/api-nothing-here"), 404, "NOT_FOUND")
    expectError(await api.post("/api-jobs/unknown", {}), 404, "NOT_FOUND")
    const outside = await fetch(h.url.replace("/functions/v1", "/elsewhere"))
    expect(outside.status).toBe(404)
    const body = await outside.json()
    expect(body).toMatchObject({ success: false, error: { code: "NOT_FOUND", statusCode: 404 } })
  })

  it("PUT /api-jobs is 405 METHOD_NOT_ALLOWED with an allow header", async () => {
    for (const c of [api, anonymous]) {
      const res = await c.put("/api-jobs", nestedJob("PUT-1"))
      expectError(res, 405, "METHOD_NOT_ALLOWED")
      const allow = (res.headers.get("allow") ?? "").split(",").map((m) => m.trim()).sort()
      expect(allow).toEqual(expect.arrayContaining(["DELETE", "GET", "PATCH", "POST"]))
      expect(allow).not.toContain("PUT")
    }
    const n = await h.sql(`SELECT count(*)::int AS n FROM jobs WHERE job_number = 'PUT-1'`)
    expect(n[0]!.n).toBe(0)
  })

  it("GET /api-jobs/sync is 405 (only PUT is defined there)", async () => {
    const res = await api.get("/api-jobs/sync")
    expectError(res, 405, "METHOD_NOT_ALLOWED")
    expect(res.headers.get("allow")).toContain("PUT")
  })

  it("the server's own paths answer 405 with an allow header for a method they do not serve, not 404", async () => {
    for (const [path, allow] of [["/openapi.json", "GET, OPTIONS"], ["/docs", "GET, OPTIONS"], ["/health", "GET, OPTIONS"], ["/ready", "GET, OPTIONS"], ["/rpc", "POST, OPTIONS"]] as const) {
      for (const method of ["POST", "PUT", "PATCH", "DELETE", "GET"].filter((m) => !allow.includes(m))) {
        const res = await fetch(`${h.url}${path}`, { method })
        expect([path, method, res.status]).toEqual([path, method, 405])
        expect(res.headers.get("allow")).toBe(allow)
        expect(await res.json()).toMatchObject({ success: false, error: { code: "METHOD_NOT_ALLOWED", statusCode: 405, message: `Method ${method} is not allowed; this endpoint supports ${allow}` } })
      }
    }
  })
})

describe("CORS (spec 5.8)", () => {
  it("an OPTIONS preflight answers the CORS headers without a key", async () => {
    const res = await fetch(`${h.url}/api-jobs`, {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example.com",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type"
      }
    })
    expect(res.status === 200 || res.status === 204).toBe(true)
    expect(res.headers.get("access-control-allow-origin")).toBe("*")
    const allowed = (res.headers.get("access-control-allow-headers") ?? "").toLowerCase().split(",").map((s) => s.trim())
    expect(allowed).toEqual(expect.arrayContaining(["authorization", "x-client-info", "apikey", "content-type"]))
    const methods = (res.headers.get("access-control-allow-methods") ?? "").split(",").map((s) => s.trim())
    expect(methods).toEqual(expect.arrayContaining(["GET", "POST", "PATCH", "DELETE"]))
  })

  it("normal and error responses carry access-control-allow-origin", async () => {
    expect((await api.get("/api-jobs")).headers.get("access-control-allow-origin")).toBe("*")
    expect((await anonymous.get("/api-jobs")).headers.get("access-control-allow-origin")).toBe("*")
    expect((await api.get("/api-jobs?limit=0")).headers.get("access-control-allow-origin")).toBe("*")
    expect((await api.get("/api-nowhere")).headers.get("access-control-allow-origin")).toBe("*")
  })
})

describe("body limit", () => {
  it("a body over the limit (10 MiB by default) is 413 with the JSON envelope, and writes nothing", async () => {
    const big = JSON.stringify(nestedJob("BIG-1", 1, 1, { notes: "x".repeat(11 * 1024 * 1024) }))
    const res = await api.post("/api-jobs", undefined, { raw: big })
    expectError(res, 413, res.body?.error?.code)
    expect(typeof res.body.error.code).toBe("string")
    const n = await h.sql(`SELECT count(*)::int AS n FROM jobs WHERE job_number = 'BIG-1'`)
    expect(n[0]!.n).toBe(0)
  })

  it("a body just under the limit is accepted", async () => {
    const res = await api.post("/api-jobs", nestedJob("BIG-2", 1, 1, { notes: "y".repeat(2 * 1024 * 1024) }))
    expect(res.status).toBe(201)
    expect(res.body.data.job.notes).toHaveLength(2 * 1024 * 1024)
  })
})

describe("body encodings", () => {
  const post = (body: Uint8Array, headers: Record<string, string>, withKey = true) =>
    fetch(`${h.url}/api-jobs`, { method: "POST", body, headers: { "content-type": "application/json", ...(withKey ? { authorization: `Bearer ${key}` } : {}), ...headers } })
  const jobBytes = (jobNumber: string) => Buffer.from(JSON.stringify(nestedJob(jobNumber, 1, 1, { customer: "Müller" })), "utf8")
  const written = async (jobNumber: string) => (await h.sql(`SELECT customer FROM jobs WHERE job_number = $1`, [jobNumber])).map((r) => r.customer)

  it("a body that is not UTF-8 (an ERP's Windows-1252) is 400, before authentication, and writes nothing", async () => {
    const latin1 = Buffer.from(JSON.stringify(nestedJob("ENC-1", 1, 1, { customer: "Müller" })), "latin1")
    for (const withKey of [true, false]) {
      const res = await post(latin1, {}, withKey)
      expect(res.status).toBe(400)
      expect(await res.json()).toMatchObject({ success: false, error: { code: "BAD_REQUEST", message: "Request body is not valid UTF-8: JSON is sent in UTF-8" } })
    }
    expect(await written("ENC-1")).toEqual([])
  })

  it("UTF-8 with or without a byte order mark, and a charset naming UTF-8, is read as before", async () => {
    expect((await post(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), jobBytes("ENC-2")]), {})).status).toBe(201)
    expect((await post(jobBytes("ENC-3"), { "content-type": "application/json; charset=UTF-8" })).status).toBe(201)
    expect((await post(jobBytes("ENC-4"), { "content-type": 'application/json;charset="utf8"', "content-encoding": "identity" })).status).toBe(201)
    for (const n of ["ENC-2", "ENC-3", "ENC-4"]) expect(await written(n)).toEqual(["Müller"])
  })

  it("a compressed body or one declared in another charset is 415 UNSUPPORTED_MEDIA_TYPE, and writes nothing", async () => {
    const gzip = await post(gzipSync(jobBytes("ENC-5")), { "content-encoding": "gzip" })
    expect(gzip.status).toBe(415)
    expect(await gzip.json()).toMatchObject({ error: { code: "UNSUPPORTED_MEDIA_TYPE", message: "Content-Encoding gzip is not supported: send the body uncompressed" } })
    const latin1 = await post(jobBytes("ENC-6"), { "content-type": "application/json; charset=ISO-8859-1" })
    expect(latin1.status).toBe(415)
    expect(await latin1.json()).toMatchObject({ error: { code: "UNSUPPORTED_MEDIA_TYPE", message: "Request bodies are JSON in UTF-8, not iso-8859-1" } })
    expect([...await written("ENC-5"), ...await written("ENC-6")]).toEqual([])
  })
})

describe("query parameters (DECISIONS)", () => {
  it("a malformed query is 400 before authentication (spec 7.4), a well-formed one without a key is 401", async () => {
    const anon = client(h.url)
    for (const q of ["limit=abc", "offset=1.5", "id=nope", "priority=high"]) {
      const res = await anon.get(`/api-jobs?${q}`)
      expect(res.status, q).toBe(400)
      expect(res.body.error.code).toBe("BAD_REQUEST")
    }
    expect((await anon.patch("/api-jobs?id=nope", { notes: "x" })).status).toBe(400)
    expect((await anon.get("/api-jobs?limit=0")).status).toBe(401)
    expect((await anon.get("/api-jobs?limit=5")).status).toBe(401)
  })

  it("a non-numeric limit is 400 BAD_REQUEST", async () => {
    expectError(await api.get("/api-jobs?limit=abc"), 400, "BAD_REQUEST")
    expectError(await api.get("/api-jobs?offset=1e2"), 400, "BAD_REQUEST")
  })

  it("a parameter given more than once is 400 naming it, before authentication, and nothing is read or changed", async () => {
    const ids: Array<string> = []
    for (const n of ["TWICE-1", "TWICE-2"]) ids.push((await api.post("/api-jobs", nestedJob(n, 1, 1))).body.data.job_id)
    const both = `id=${ids[0]}&id=${ids[1]}`
    const cases: Array<[Promise<Reply>, string]> = [
      [api.get(`/api-jobs?${both}`), "id"],
      [api.patch(`/api-jobs?${both}`, { notes: "changed" }), "id"],
      [api.delete(`/api-jobs?${both}`), "id"],
      [anonymous.delete(`/api-jobs?${both}`), "id"],
      [api.get("/api-jobs?limit=1&limit=abc"), "limit"],
      [api.get("/api-jobs?status=not_started&offset=0&status=completed"), "status"],
      [api.get(`/api-jobs?limit=5&limit=5`), "limit"]
    ]
    for (const [reply, name] of cases) {
      const res = await reply
      expectError(res, 400, "BAD_REQUEST")
      expect(res.body.error.message).toBe(`query parameter ${name} is given more than once`)
    }
    for (const id of ids) {
      const res = await api.get(`/api-jobs?id=${id}`)
      expect(res.status).toBe(200)
      expect(res.body.data.job.notes).not.toBe("changed")
    }
  })

  it("a parameter whose percent-escapes are not UTF-8 is 400 naming it, before authentication; U+FFFD sent as its escapes is a value like any", async () => {
    const made = await api.post("/api-jobs", { ...nestedJob("LATIN-1", 1, 1), customer: "Müller" })
    expect(made.status).toBe(201)
    const message = (name: string) => `query parameter ${name} is not UTF-8 once percent-decoded: percent-encode its UTF-8 bytes`
    // %FC is "ü" in Windows-1252 and ISO 8859-1: decoded as URLs are, it became U+FFFD and matched nothing, silently
    for (const [reply, name] of [
      [api.get("/api-jobs?customer=M%FCller"), "customer"],
      [api.get("/api-jobs?limit=5&search=M%C3%BCller%FC"), "search"],
      [anonymous.get("/api-jobs?customer=M%FCller"), "customer"],
      [api.delete(`/api-jobs?id=${made.body.data.job_id}&customer=%FC`), "customer"]
    ] as Array<[Promise<Reply>, string]>) {
      const res = await reply
      expectError(res, 400, "BAD_REQUEST")
      expect(res.body.error.message).toBe(message(name))
    }
    expect((await api.get(`/api-jobs?id=${made.body.data.job_id}`)).status).toBe(200)
    // the same name in UTF-8 is found; U+FFFD sent as its own UTF-8 escapes is searched for like any text
    const found = await api.get("/api-jobs?customer=M%C3%BCller")
    expect(found.body.data.jobs.map((j: any) => j.job_number)).toContain("LATIN-1")
    const spelt = await api.get("/api-jobs?customer=M%EF%BF%BDller")
    expect([spelt.status, spelt.body.data.jobs]).toEqual([200, []])
  })

  it("limit=0 is 422 VALIDATION_ERROR with a detail for limit", async () => {
    const res = await api.get("/api-jobs?limit=0")
    expectError(res, 422, "VALIDATION_ERROR")
    expect(res.body.error.details).toEqual([
      { field: "limit", message: expect.any(String), value: 0, constraint: "MIN_VALUE", entityType: "query", entityIndex: 0 }
    ])
  })
})

describe("every error answer is the spec 7.1 envelope", () => {
  it("for each status the pipeline produces", async () => {
    const cases: Array<[Promise<Reply>, number, string]> = [
      [anonymous.post("/api-jobs", undefined, { raw: "{" }), 400, "BAD_REQUEST"],
      [api.get("/api-jobs?id=nope"), 400, "BAD_REQUEST"],
      [anonymous.get("/api-jobs"), 401, "UNAUTHORIZED"],
      [api.get("/api-jobs?id=7c0b9a52-3c8e-4f7e-9a53-0d8f6f1f2b11"), 404, "NOT_FOUND"],
      [api.get("/no-such-path"), 404, "NOT_FOUND"],
      [api.put("/api-jobs", {}), 405, "METHOD_NOT_ALLOWED"],
      [api.post("/api-jobs", { job_number: "" }), 422, "VALIDATION_ERROR"],
      [api.delete("/api-jobs"), 422, "VALIDATION_ERROR"]
    ]
    for (const [reply, status, code] of cases) {
      const res = await reply
      expectError(res, status, code)
      expect(Object.keys(res.body).sort()).toEqual(["error", "success"])
    }
  })
})

describe("OpenAPI and docs", () => {
  it("GET /functions/v1/openapi.json is an OpenAPI 3.1 document with the api-jobs path", async () => {
    const res = await fetch(`${h.url}/openapi.json`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^application\/json/)
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> }
    expect(doc.openapi).toMatch(/^3\.1\./)
    expect(Object.keys(doc.paths)).toContain("/functions/v1/api-jobs")
    for (const path of [
      "/api-parts", "/api-operations", "/api-jobs/sync", "/api-jobs/bulk-sync", "/api-cells", "/api-profiles",
      "/api-job-lifecycle/start", "/api-operation-lifecycle/pause", "/api-batch-lifecycle/add-operations",
      "/api-batches", "/api-time-entries", "/api-issues", "/api-substeps"
    ]) expect(Object.keys(doc.paths)).toContain(`/functions/v1${path}`)
    expect(Object.keys(doc.paths["/functions/v1/api-jobs"]!).sort()).toEqual(expect.arrayContaining(["delete", "get", "patch", "post"]))
    // every operation documents the database-unavailable answer (issue 8)
    const post = doc.paths["/functions/v1/api-jobs"]!.post as { responses: Record<string, unknown> }
    expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(["201", "400", "401", "422", "503"]))
    const patch = doc.paths["/functions/v1/api-issues"]!.patch as { responses: Record<string, unknown> }
    expect(Object.keys(patch.responses)).toEqual(expect.arrayContaining(["200", "404", "412", "422", "503"]))
  })

  it("GET /functions/v1/docs is an HTML page that loads nothing from a CDN", async () => {
    const res = await fetch(`${h.url}/docs`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/html/)
    const html = await res.text()
    expect(html.toLowerCase()).toContain("<html")
    expect(html).not.toMatch(/<script[^>]+src=["']https?:/i)
    expect(html).not.toMatch(/<link[^>]+href=["']https?:/i)
    expect(html).not.toContain("unpkg")
  })

  it("the docs page embeds the OpenAPI document and does not fetch web fonts", async () => {
    const html = await (await fetch(`${h.url}/docs`)).text()
    expect(html).toContain("/functions/v1/api-jobs")
    expect(html).toMatch(/"withDefaultFonts":\s*false/)
  })
})

describe("a body that does not arrive", () => {
  let slow: Harness
  beforeAll(async () => {
    slow = await startServer({ server: { requestTimeout: Duration.seconds(1) } })
  })
  afterAll(() => slow.close())

  it("is 408 REQUEST_TIMEOUT once no byte came for MES_REQUEST_TIMEOUT and its connection is closed, where it held both for Node's 5 minutes", async () => {
    const { key } = await slow.as("Slow body")
    const port = new URL(slow.url).port
    const started = Date.now()
    // 100 bytes declared, 12 sent, and the connection kept open
    const answer = await rawExchange(port, stalledPost("/functions/v1/api-jobs", key))
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(answer).toMatch(/^HTTP\/1\.1 408 /)
    expect(answer.toLowerCase()).toContain("connection: close")
    expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toEqual({
      success: false,
      error: { code: "REQUEST_TIMEOUT", message: "No byte of the request body came for 1s", statusCode: 408 }
    })
    // a body that does arrive is read as ever
    const api = client(slow.url, key)
    expect((await api.post("/api-jobs", nestedJob("SLOW-1", 1, 1))).status).toBe(201)
  })

  it("a body that keeps coming is read however long it takes (a large sync over a slow link), not cut at MES_REQUEST_TIMEOUT", async () => {
    const { key, api } = await slow.as("Trickled body")
    const body = Buffer.from(JSON.stringify(nestedJob("TRICKLE-1", 1, 1)))
    const started = Date.now()
    // a tenth of the body every 250 ms: 2.5 s in all, past the 1 s timeout, never quiet for it
    const answer = await rawExchange(new URL(slow.url).port, async (socket) => {
      socket.write(`POST /functions/v1/api-jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`)
      const step = Math.ceil(body.length / 10)
      for (let at = 0; at < body.length; at += step) {
        await sleep(250)
        socket.write(body.subarray(at, at + step))
      }
    })
    expect(Date.now() - started).toBeGreaterThan(2_000)
    expect(answer).toMatch(/^HTTP\/1\.1 201 /)
    expect((await api.get("/api-jobs?job_number=TRICKLE-1")).body.data.jobs).toHaveLength(1)
  })
})
