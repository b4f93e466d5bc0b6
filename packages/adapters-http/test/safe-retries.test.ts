// Safe retries (issue 8 items 6 and 7): Idempotency-Key on POST, PUT and PATCH replays the first answer, and
// ETag / If-Match refuse a PATCH based on a stale read with 412.
import { Effect, Exit, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Db, testDatabaseKind } from "@mes/adapters-pg"
import { BASE_PATH, endpoints } from "../src/contract/api.ts"
import { client, expectDetail, expectError, type Harness, nestedJob, startServer } from "./harness.ts"

let h: Harness
let api: ReturnType<typeof client>
let tenantId: string
let profileId: string

beforeAll(async () => {
  h = await startServer({ env: { MES_IDEMPOTENCY_TTL: "1500ms" } })
  const t = await h.as("Retries")
  api = t.api
  tenantId = t.tenantId
  profileId = (await api.post("/api-profiles", { display_name: "Olga" })).body.data.profile.id
})
afterAll(() => h.close())

const count = async (table: string, where = "true", params: ReadonlyArray<unknown> = []) =>
  Number((await h.sql(`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`, params))[0]!.n)

const keyed = (key: string) => ({ headers: { "idempotency-key": key } })

describe("Idempotency-Key", () => {
  it("the same create twice makes one job; the second answer is the first, marked as replayed", async () => {
    const body = nestedJob("IK-1", 2, 2)
    const first = await api.post("/api-jobs", body, keyed("create-ik-1"))
    const second = await api.post("/api-jobs", body, keyed("create-ik-1"))
    expect(first.status).toBe(201)
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    expect(second.status).toBe(201)
    expect(second.headers.get("idempotent-replayed")).toBe("true")
    expect(second.body).toEqual(first.body)
    expect(await count("jobs", "job_number = 'IK-1'")).toBe(1)
    // one job.created event, not two
    expect(await count("event_log", "event_type = 'job.created' AND data::text LIKE '%IK-1%'")).toBe(1)
  })

  it("the same key with another body, path or method is 422 and changes nothing", async () => {
    expect((await api.post("/api-jobs", nestedJob("IK-2"), keyed("k-2"))).status).toBe(201)
    expectDetail(await api.post("/api-jobs", nestedJob("IK-2b"), keyed("k-2")), "Idempotency-Key", "UNIQUE_CONSTRAINT")
    expectDetail(await api.post("/api-cells", { name: "IK cell" }, keyed("k-2")), "Idempotency-Key", "UNIQUE_CONSTRAINT")
    expect(await count("jobs", "job_number = 'IK-2b'")).toBe(0)
    expect(await count("cells", "name = 'IK cell'")).toBe(0)
  })

  it("a refused write keeps no key: the corrected request with the same key runs", async () => {
    expectDetail(await api.post("/api-jobs", { job_number: "IK-3" }, keyed("k-3")), "parts", "NOT_NULL")
    const corrected = await api.post("/api-jobs", { job_number: "IK-3" }, keyed("k-3"))
    expect(corrected.status).toBe(422) // the same request again is refused again, it is not a replay
    expect(corrected.headers.get("idempotent-replayed")).toBeNull()
    expect((await api.post("/api-jobs", nestedJob("IK-3"), keyed("k-3"))).status).toBe(201)
  })

  it("a double-clicked start gives one time entry, sequentially and at once", async () => {
    const job = await api.post("/api-jobs", nestedJob("IK-START", 1, 2))
    const ops = (await api.get(`/api-operations?job_id=${job.body.data.job.id}`)).body.data.operations.map((o: { id: string }) => o.id)
    const start = (op: string, key: string) => api.post(`/api-operation-lifecycle/start?id=${op}&user_id=${profileId}`, undefined, keyed(key))

    const a = await start(ops[0], "start-a")
    const b = await start(ops[0], "start-a")
    expect([a.status, b.status]).toEqual([200, 200])
    expect(b.headers.get("idempotent-replayed")).toBe("true")
    expect(await count("time_entries", "operation_id = $1", [ops[0]])).toBe(1)

    const both = await Promise.all([start(ops[1], "start-b"), start(ops[1], "start-b")])
    // one ran; the other replayed it, or was told the first is still in progress
    expect(both.map((r) => r.status).sort()).toEqual(expect.arrayContaining([200]))
    for (const r of both) expect([200, 409]).toContain(r.status)
    expect(await count("time_entries", "operation_id = $1", [ops[1]])).toBe(1)
  })

  it("PUT sync and PATCH honour the key too", async () => {
    const sync = { external_id: "E-IK", external_source: "erp", job_number: "IK-SYNC" }
    const first = await api.put("/api-jobs/sync", sync, keyed("sync-1"))
    const again = await api.send("PUT", "/api-jobs/sync", sync, keyed("sync-1"))
    expect([first.status, again.status]).toEqual([201, 201])
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    const id = first.body.data.id
    const p1 = await api.send("PATCH", `/api-jobs?id=${id}`, { notes: "one" }, keyed("patch-1"))
    const p2 = await api.send("PATCH", `/api-jobs?id=${id}`, { notes: "one" }, keyed("patch-1"))
    expect(p2.headers.get("idempotent-replayed")).toBe("true")
    expect(p2.body).toEqual(p1.body)
  })

  it("an invalid key is 400; keys expire after MES_IDEMPOTENCY_TTL", async () => {
    expectError(await api.post("/api-jobs", nestedJob("IK-BAD"), keyed("a key with spaces")), 400, "BAD_REQUEST")
    expectError(await api.post("/api-jobs", nestedJob("IK-BAD"), keyed("x".repeat(256))), 400, "BAD_REQUEST")
    expect((await api.post("/api-cells", { name: "TTL 1" }, keyed("ttl"))).status).toBe(201)
    await new Promise((resolve) => setTimeout(resolve, 1_700))
    // expired: the key is free for another request
    expect((await api.post("/api-cells", { name: "TTL 2" }, keyed("ttl"))).status).toBe(201)
  })

  it.skipIf(testDatabaseKind() !== "postgres")("a second request while the first holds the key is 409 at once", async () => {
    // hold the key's lock from another session, as a first request still running would
    const [{ db }] = (await h.sql("SELECT current_database() AS db")) as Array<{ db: string }>
    const url = new URL(process.env.DATABASE_URL!)
    url.pathname = `/${db}`
    const scope = Effect.runSync(Scope.make())
    const context = await Effect.runPromise(Layer.buildWithScope(Db.postgres(url.toString(), { maxConnections: 1, pipeline: 1 }), scope))
    const run = (statement: string, params: ReadonlyArray<unknown>) =>
      Effect.runPromise(Effect.provideContext(Effect.gen(function*() {
        const sql = yield* SqlClient
        return yield* sql.unsafe(statement, params)
      }), context) as Effect.Effect<unknown, unknown>)
    try {
      await run("SELECT pg_advisory_lock(hashtextextended($1 || '/' || $2, 0))", [tenantId, "held"])
      const t0 = Date.now()
      const res = await api.post("/api-cells", { name: "Held" }, keyed("held"))
      expectError(res, 409, "CONFLICT")
      expect(Date.now() - t0).toBeLessThan(1_000)
      expect(await count("cells", "name = 'Held'")).toBe(0)
    } finally {
      await run("SELECT pg_advisory_unlock_all()", []).catch(() => undefined)
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
    expect((await api.post("/api-cells", { name: "Held" }, keyed("held"))).status).toBe(201)
  })
})

describe("ETag and If-Match", () => {
  const resources = async () => {
    const job = await api.post("/api-jobs", nestedJob(`ET-${Math.random().toString(36).slice(2, 8)}`))
    const jobId = job.body.data.job.id
    const partId = job.body.data.parts[0].part_id
    const opId = (await api.get(`/api-operations?part_id=${partId}`)).body.data.operations[0].id
    return [
      { path: "/api-jobs", id: jobId, patch: (n: string) => ({ notes: n }), field: "notes", singular: "job" },
      { path: "/api-parts", id: partId, patch: (n: string) => ({ notes: n }), field: "notes", singular: "part" },
      { path: "/api-operations", id: opId, patch: (n: string) => ({ notes: n }), field: "notes", singular: "operation" },
      { path: "/api-profiles", id: profileId, patch: (n: string) => ({ display_name: n }), field: "display_name", singular: "profile" }
    ]
  }

  it("a read of one record carries an ETag; a PATCH with a stale If-Match is 412 and changes nothing", async () => {
    for (const r of await resources()) {
      const read = await api.get(`${r.path}?id=${r.id}`)
      const etag = read.headers.get("etag")
      expect(etag, r.path).toMatch(/^"[A-Za-z0-9_-]{27}"$/)
      expect((await api.get(`${r.path}?id=${r.id}`)).headers.get("etag"), "unchanged record, same tag").toBe(etag)

      const ok = await api.send("PATCH", `${r.path}?id=${r.id}`, r.patch("first"), { headers: { "if-match": etag! } })
      expect(ok.status, `${r.path} ${JSON.stringify(ok.body)}`).toBe(200)
      const stale = await api.send("PATCH", `${r.path}?id=${r.id}`, r.patch("second"), { headers: { "if-match": etag! } })
      expectError(stale, 412, "PRECONDITION_FAILED")
      expect((await api.get(`${r.path}?id=${r.id}`)).body.data[r.singular][r.field]).toBe("first")
      expect((await api.get(`${r.path}?id=${r.id}`)).headers.get("etag")).not.toBe(etag)

      // without If-Match, and with *, PATCH works as before
      expect((await api.send("PATCH", `${r.path}?id=${r.id}`, r.patch("third"))).status).toBe(200)
      expect((await api.send("PATCH", `${r.path}?id=${r.id}`, r.patch("fourth"), { headers: { "if-match": "*" } })).status).toBe(200)
      // a list of tags matches any of them; a weak tag never matches
      const now = (await api.get(`${r.path}?id=${r.id}`)).headers.get("etag")!
      expect((await api.send("PATCH", `${r.path}?id=${r.id}`, r.patch("fifth"), { headers: { "if-match": `"nope", ${now}` } })).status).toBe(200)
      const weak = (await api.get(`${r.path}?id=${r.id}`)).headers.get("etag")!
      expectError(await api.send("PATCH", `${r.path}?id=${r.id}`, r.patch("sixth"), { headers: { "if-match": `W/${weak}` } }), 412, "PRECONDITION_FAILED")
    }
  })

  it("a read with If-None-Match naming the current tag is 304 without the record; another tag, or a changed record, is 200", async () => {
    for (const r of await resources()) {
      const etag = (await api.get(`${r.path}?id=${r.id}`)).headers.get("etag")!
      for (const cached of [etag, `W/${etag}`, `"nope", ${etag}`, "*"]) {
        const same = await api.get(`${r.path}?id=${r.id}`, { headers: { "if-none-match": cached } })
        expect([r.path, cached, same.status, same.body, same.headers.get("etag")]).toEqual([r.path, cached, 304, "", etag])
      }
      const other = await api.get(`${r.path}?id=${r.id}`, { headers: { "if-none-match": '"nope"' } })
      expect([other.status, other.body.data[r.singular].id]).toEqual([200, r.id])
      expect((await api.send("PATCH", `${r.path}?id=${r.id}`, r.patch("changed"))).status).toBe(200)
      const changed = await api.get(`${r.path}?id=${r.id}`, { headers: { "if-none-match": etag } })
      expect([changed.status, changed.body.data[r.singular][r.field]]).toEqual([200, "changed"])
      expect(changed.headers.get("etag")).not.toBe(etag)
    }
    // lists and unknown ids are answered as before
    expect((await api.get("/api-jobs?limit=1", { headers: { "if-none-match": "*" } })).status).toBe(200)
    expectError(await api.get("/api-jobs?id=7c0b9a52-3c8e-4f7e-9a53-0d8f6f1f2b11", { headers: { "if-none-match": "*" } }), 404, "NOT_FOUND")
  })

  /** A record of each group that has a PATCH, and a change of one of its fields (the i-th value). */
  const everyResource = async () => {
    const tag = Math.random().toString(36).slice(2, 8)
    const created = async (path: string, body: unknown, singular: string): Promise<string> => {
      const res = await api.post(path, body)
      expect(res.status, `${path} ${JSON.stringify(res.body)}`).toBe(201)
      return res.body.data[singular].id
    }
    const job = (await api.post("/api-jobs", nestedJob(`EV-${tag}`))).body.data
    const partId = job.parts[0].part_id as string
    const opId = (await api.get(`/api-operations?part_id=${partId}`)).body.data.operations[0].id as string
    const cellId = await created("/api-cells", { name: `EV ${tag}` }, "cell")
    const templateId = await created("/api-templates", { name: `EV ${tag}` }, "template")
    const upload = (await api.post("/api-upload-url", { content_type: "image/png" })).body.data
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82, 1, 2, 3, 4])
    expect((await fetch(new URL(h.url).origin + upload.upload_url, { method: "PUT", headers: { "content-type": "image/png" }, body: png })).status).toBe(201)
    const text = (field: string) => (i: number) => ({ [field]: `${field} ${tag} ${i}` })
    const fixture = (singular: string, id: string, patch: (i: number) => Record<string, unknown>) => ({ singular, id, patch })
    return {
      jobs: fixture("job", job.job.id, text("notes")),
      parts: fixture("part", partId, text("notes")),
      operations: fixture("operation", opId, text("notes")),
      cells: fixture("cell", cellId, text("name")),
      resources: fixture("resource", await created("/api-resources", { name: `EV ${tag}`, type: "tooling" }, "resource"), text("name")),
      materials: fixture("material", await created("/api-materials", { name: `EV-${tag}` }, "material"), text("description")),
      profiles: fixture("profile", profileId, text("display_name")),
      substeps: fixture("substep", await created("/api-substeps", { operation_id: opId, description: "Check", sequence: 1 }, "substep"), text("description")),
      issues: fixture("issue", await created("/api-issues", { operation_id: opId, title: "Scratch", description: "On the surface", severity: "low" }, "issue"), text("title")),
      batches: fixture("batch", await created("/api-batches", { batch_number: `EV-${tag}`, cell_id: cellId }, "batch"), text("notes")),
      timeEntries: fixture(
        "time_entry",
        await created("/api-time-entries", { operation_id: opId, start_time: "2026-11-02T09:00:00.000Z", end_time: "2026-11-02T10:00:00.000Z" }, "time_entry"),
        (i) => ({ end_time: `2026-11-02T10:0${i}:00.000Z` })
      ),
      webhooks: fixture("webhook", await created("/api-webhooks", { url: "http://127.0.0.1:9/hook", events: ["job.completed"] }, "webhook"), text("description")),
      scrapReasons: fixture("scrap_reason", await created("/api-scrap-reasons", { code: `EV${tag}`.toUpperCase(), description: "Burr", category: "process" }, "scrap_reason"), text("description")),
      quantities: fixture("operation_quantity", await created("/api-operation-quantities", { operation_id: opId, good: 1 }, "operation_quantity"), text("notes")),
      assignments: fixture("assignment", await created("/api-assignments", { user_id: profileId, operation_id: opId }, "assignment"), text("notes")),
      templates: fixture("template", templateId, text("description")),
      templateItems: fixture("template_item", await created("/api-templates/items", { template_id: templateId, description: "Photo", sequence: 1 }, "template_item"), text("description")),
      downtime: fixture("downtime", await created("/api-downtime", { cell_id: cellId, reason: "Nozzle", start_time: "2026-01-05T10:00:00Z" }, "downtime"), text("reason")),
      partImages: fixture("part_image", await created("/api-parts-images", { part_id: partId, storage_key: upload.key }, "part_image"), text("caption"))
    } as Record<string, ReturnType<typeof fixture>>
  }

  it("every PATCH endpoint of the API honours If-Match: its read's ETag is stable, a stale one is 412 and writes nothing", async () => {
    const records = await everyResource()
    const patches = endpoints().filter((e) => e.method === "PATCH")
    expect(patches.length).toBeGreaterThanOrEqual(19)
    for (const e of patches) {
      const r = records[e.group]
      // a new PATCH endpoint needs a record here: so none is left out
      expect(r, `a record for PATCH ${e.path} (group ${e.group}) in everyResource`).toBeDefined()
      const url = `${e.path.slice(BASE_PATH.length)}?id=${r!.id}`
      const etag = (await api.get(url)).headers.get("etag")
      expect(etag, url).toMatch(/^"[A-Za-z0-9_-]{27}"$/)
      expect((await api.get(url)).headers.get("etag"), `${url}: an unchanged record keeps its tag`).toBe(etag)
      const ok = await api.send("PATCH", url, r!.patch(1), { headers: { "if-match": etag! } })
      expect(ok.status, `${url} ${JSON.stringify(ok.body)}`).toBe(200)
      const stale = await api.send("PATCH", url, r!.patch(2), { headers: { "if-match": etag! } })
      expect([url, stale.status, stale.body.error?.code]).toEqual([url, 412, "PRECONDITION_FAILED"])
      const [field, value] = Object.entries(r!.patch(1))[0]!
      expect([url, (await api.get(url)).body.data[r!.singular][field]]).toEqual([url, value])
      const now = (await api.get(url)).headers.get("etag")!
      expect(now, url).not.toBe(etag)
      expect((await api.send("PATCH", url, r!.patch(3), { headers: { "if-match": now } })).status, url).toBe(200)
    }
  })

  it("404 comes before 412, and two PATCHes with the same If-Match at once: one wins, one is 412", async () => {
    expectError(await api.send("PATCH", "/api-jobs?id=7c0b9a52-3c8e-4f7e-9a53-0d8f6f1f2b11", { notes: "x" }, { headers: { "if-match": '"x"' } }), 404, "NOT_FOUND")
    const [job] = await resources()
    const etag = (await api.get(`/api-jobs?id=${job!.id}`)).headers.get("etag")!
    const both = await Promise.all(["left", "right"].map((n) => api.send("PATCH", `/api-jobs?id=${job!.id}`, { notes: n }, { headers: { "if-match": etag } })))
    expect(both.map((r) => r.status).sort()).toEqual([200, 412])
  })
})
