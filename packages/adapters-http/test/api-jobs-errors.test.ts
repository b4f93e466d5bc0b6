// /api-jobs through a real server (spec 4.1, 4.15, 5.6, 7; DECISIONS): list filters, sorts and
// pagination, read one, PATCH fields and status moves, soft delete, conflicts, nested rules,
// races, atomic creates and tenant isolation on every id-taking endpoint.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, expectError, type Harness, nestedJob, type Reply, startServer } from "./harness.ts"

let h: Harness
let api: ReturnType<typeof client>
let tenantId: string

beforeAll(async () => {
  h = await startServer()
  const t = await h.tenant("Acme")
  tenantId = t.tenantId
  api = client(h.url, t.key)
})
afterAll(() => h.close())

const UNKNOWN_ID = "7c0b9a52-3c8e-4f7e-9a53-0d8f6f1f2b11"

/** The one detail at `field` of a 422 response. */
const detailAt = (res: Reply, field: string) => {
  expectError(res, 422, "VALIDATION_ERROR")
  const found = (res.body.error.details as Array<any>).filter((d) => d.field === field)
  expect(found, `a detail at ${field} in ${JSON.stringify(res.body.error.details)}`).toHaveLength(1)
  return found[0]
}

const create = async (c: ReturnType<typeof client>, body: unknown) => {
  const res = await c.post("/api-jobs", body)
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return res.body.data.job
}

const count = async (table: "jobs" | "parts" | "operations", tenant: string) =>
  Number((await h.sql(`SELECT count(*)::int AS n FROM ${table} WHERE tenant_id = $1`, [tenant]))[0]!.n)

describe("GET /api-jobs list (spec 4.1, 4.15)", () => {
  let lister: ReturnType<typeof client>
  const fixtures = [
    { job_number: "LST-001", customer: "Acme Steel", priority: 5, due_date: "2024-03-01", status: "not_started" },
    { job_number: "LST-002", customer: "Beta Works", priority: 50, due_date: "2024-01-15", status: "in_progress" },
    { job_number: "LST-003", customer: "NORTH ACME Aerospace", priority: 1, due_date: "2024-02-10", status: "on_hold" },
    { job_number: "XYZ-004", customer: "Gamma", priority: 0, due_date: "2024-12-31", status: "completed" }
  ] as const
  const numbers = (res: Reply) => (res.body.data.jobs as Array<any>).map((j) => j.job_number)

  beforeAll(async () => {
    const t = await h.tenant("Lister")
    lister = client(h.url, t.key)
    // sequential, so created_at follows this order
    for (const f of fixtures) await create(lister, nestedJob(f.job_number, 2, 2, { ...f, notes: `notes of ${f.job_number}` }))
  })

  it("defaults to created_at desc with limit 100, offset 0 and the total", async () => {
    const res = await lister.get("/api-jobs")
    expect(res.status).toBe(200)
    expect(res.body.success).toBe(true)
    expect(numbers(res)).toEqual(["XYZ-004", "LST-003", "LST-002", "LST-001"])
    expect(res.body.data.pagination).toEqual({ limit: 100, offset: 0, total: 4 })
  })

  it("each job carries the fields of spec 4.1 and its parts", async () => {
    const res = await lister.get("/api-jobs?job_number=LST-001")
    const [job] = res.body.data.jobs
    expect(job).toMatchObject({
      id: expect.any(String),
      job_number: "LST-001",
      customer: "Acme Steel",
      status: "not_started",
      due_date: "2024-03-01",
      started_at: null,
      notes: "notes of LST-001",
      priority: 5
    })
    expect(job.parts.map((p: any) => p.part_number).sort()).toEqual(["P-1", "P-2"])
    for (const p of job.parts) expect(p.job_id).toBe(job.id)
  })

  it("filters by status (exact)", async () => {
    for (const f of fixtures) {
      const res = await lister.get(`/api-jobs?status=${f.status}`)
      expect(res.status).toBe(200)
      expect(numbers(res)).toEqual([f.job_number])
      expect(res.body.data.pagination.total).toBe(1)
    }
  })

  it("filters by customer (partial, case-insensitive)", async () => {
    const res = await lister.get("/api-jobs?customer=acme&sort=job_number&order=asc")
    expect(numbers(res)).toEqual(["LST-001", "LST-003"])
    expect(res.body.data.pagination.total).toBe(2)
    expect(numbers(await lister.get("/api-jobs?customer=WORKS"))).toEqual(["LST-002"])
    expect(numbers(await lister.get("/api-jobs?customer=nobody"))).toEqual([])
  })

  it("filters by job_number (partial)", async () => {
    expect(numbers(await lister.get("/api-jobs?job_number=ST-00&sort=job_number&order=asc"))).toEqual(["LST-001", "LST-002", "LST-003"])
    expect(numbers(await lister.get("/api-jobs?job_number=lst-002"))).toEqual(["LST-002"])
    expect(numbers(await lister.get("/api-jobs?job_number=04"))).toEqual(["XYZ-004"])
  })

  it("filters by priority (exact integer)", async () => {
    expect(numbers(await lister.get("/api-jobs?priority=5"))).toEqual(["LST-001"])
    expect(numbers(await lister.get("/api-jobs?priority=0"))).toEqual(["XYZ-004"])
    expect(numbers(await lister.get("/api-jobs?priority=7"))).toEqual([])
  })

  it("search runs over job_number and customer", async () => {
    expect(numbers(await lister.get("/api-jobs?search=xyz"))).toEqual(["XYZ-004"])
    expect(numbers(await lister.get("/api-jobs?search=gAmM"))).toEqual(["XYZ-004"])
    expect(numbers(await lister.get("/api-jobs?search=beta"))).toEqual(["LST-002"])
    expect(numbers(await lister.get("/api-jobs?search=acme&sort=job_number&order=asc"))).toEqual(["LST-001", "LST-003"])
    expect(numbers(await lister.get("/api-jobs?search=nothing-matches"))).toEqual([])
  })

  it("combines filters", async () => {
    expect(numbers(await lister.get("/api-jobs?customer=acme&status=on_hold"))).toEqual(["LST-003"])
    expect(numbers(await lister.get("/api-jobs?search=acme&priority=5"))).toEqual(["LST-001"])
  })

  const sortKeys = ["job_number", "customer", "due_date", "created_at", "status", "priority"] as const
  for (const sort of sortKeys) {
    for (const order of ["asc", "desc"] as const) {
      it(`sorts by ${sort} ${order}`, async () => {
        const key = (f: (typeof fixtures)[number], i: number): string | number => (sort === "created_at" ? i : f[sort])
        const expected = fixtures
          .map((f, i) => ({ n: f.job_number, k: key(f, i) }))
          .sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0))
          .map((x) => x.n)
        if (order === "desc") expected.reverse()
        const res = await lister.get(`/api-jobs?sort=${sort}&order=${order}`)
        expect(res.status).toBe(200)
        expect(numbers(res)).toEqual(expected)
      })
    }
  }

  it("paginates with limit and offset and reports the total", async () => {
    const page1 = await lister.get("/api-jobs?sort=job_number&order=asc&limit=2")
    expect(numbers(page1)).toEqual(["LST-001", "LST-002"])
    expect(page1.body.data.pagination).toEqual({ limit: 2, offset: 0, total: 4 })
    const page2 = await lister.get("/api-jobs?sort=job_number&order=asc&limit=2&offset=2")
    expect(numbers(page2)).toEqual(["LST-003", "XYZ-004"])
    expect(page2.body.data.pagination).toEqual({ limit: 2, offset: 2, total: 4 })
    const page3 = await lister.get("/api-jobs?sort=job_number&order=asc&limit=3&offset=3")
    expect(numbers(page3)).toEqual(["XYZ-004"])
    const beyond = await lister.get("/api-jobs?limit=2&offset=10")
    expect(numbers(beyond)).toEqual([])
    expect(beyond.body.data.pagination).toEqual({ limit: 2, offset: 10, total: 4 })
    const filtered = await lister.get("/api-jobs?customer=acme&limit=1")
    expect(filtered.body.data.jobs).toHaveLength(1)
    expect(filtered.body.data.pagination).toEqual({ limit: 1, offset: 0, total: 2 })
  })

  it("rejects malformed and out-of-range list parameters", async () => {
    expectError(await lister.get("/api-jobs?limit=ten"), 400, "BAD_REQUEST")
    expectError(await lister.get("/api-jobs?offset=x"), 400, "BAD_REQUEST")
    expectError(await lister.get("/api-jobs?priority=high"), 400, "BAD_REQUEST")
    expect(detailAt(await lister.get("/api-jobs?limit=0"), "limit")).toMatchObject({ constraint: "MIN_VALUE", value: 0 })
    expect(detailAt(await lister.get("/api-jobs?limit=1001"), "limit")).toMatchObject({ constraint: "MAX_VALUE", value: 1001 })
    expect(detailAt(await lister.get("/api-jobs?offset=-1"), "offset")).toMatchObject({ constraint: "MIN_VALUE", value: -1 })
    expect(detailAt(await lister.get("/api-jobs?status=paused"), "status")).toMatchObject({ constraint: "ENUM_CONSTRAINT", value: "paused" })
    expect(detailAt(await lister.get("/api-jobs?sort=deleted_at"), "sort")).toMatchObject({ constraint: "ENUM_CONSTRAINT" })
    expect(detailAt(await lister.get("/api-jobs?order=sideways"), "order")).toMatchObject({ constraint: "ENUM_CONSTRAINT" })
  })
})

describe("GET /api-jobs?id= (read one)", () => {
  it("answers data.job with its parts and their operations in sequence order", async () => {
    const job = await create(api, nestedJob("READ-1", 2, 3))
    const res = await api.get(`/api-jobs?id=${job.id}`)
    expect(res.status).toBe(200)
    expect(res.body.success).toBe(true)
    const read = res.body.data.job
    expect(read).toMatchObject({ id: job.id, job_number: "READ-1", customer: "Acme Steel", status: "not_started" })
    expect(read.parts.map((p: any) => p.part_number).sort()).toEqual(["P-1", "P-2"])
    for (const p of read.parts) {
      expect(p.job_id).toBe(job.id)
      expect(p.operations.map((o: any) => [o.sequence, o.operation_name])).toEqual([[1, "Op 1"], [2, "Op 2"], [3, "Op 3"]])
      for (const o of p.operations) expect(o.part_id).toBe(p.id)
    }
  })

  it("an uppercase UUID reads the same job", async () => {
    const job = await create(api, nestedJob("READ-2"))
    const res = await api.get(`/api-jobs?id=${job.id.toUpperCase()}`)
    expect(res.status).toBe(200)
    expect(res.body.data.job.id).toBe(job.id)
  })
})

describe("POST /api-jobs aliases (DECISIONS)", () => {
  it("stores customer_name as customer and description as notes", async () => {
    const res = await api.post("/api-jobs", {
      job_number: "ALIAS-1",
      customer_name: "Aliased Co",
      description: "from description",
      parts: [{ part_number: "P-1", quantity: 1, operations: [{ operation_name: "Cut", sequence: 1, estimated_time: 15, instructions: "slowly" }] }]
    })
    expect(res.status).toBe(201)
    const job = res.body.data.job
    expect(job.customer).toBe("Aliased Co")
    expect(job.notes).toBe("from description")
    expect(job).not.toHaveProperty("customer_name")
    expect(job).not.toHaveProperty("description")
    const op = job.parts[0].operations[0]
    expect(op.estimated_time_minutes).toBe(15)
    expect(op.notes).toBe("slowly")
    const read = await api.get(`/api-jobs?id=${job.id}`)
    expect(read.body.data.job).toMatchObject({ customer: "Aliased Co", notes: "from description" })
  })
})

describe("PATCH /api-jobs?id= fields", () => {
  it("updates customer, due_date, notes, metadata and priority, and a read shows them", async () => {
    const job = await create(api, nestedJob("PATCH-1"))
    const changes = { customer: "New Customer", due_date: "2024-02-29", notes: "updated", metadata: { po: "PO-9", lines: [1, 2] }, priority: 7 }
    const res = await api.patch(`/api-jobs?id=${job.id}`, changes)
    expect(res.status).toBe(200)
    expect(res.body.success).toBe(true)
    expect(res.body.data.job).toMatchObject({ id: job.id, job_number: "PATCH-1", status: "not_started", ...changes })
    const read = await api.get(`/api-jobs?id=${job.id}`)
    expect(read.body.data.job).toMatchObject(changes)
  })

  it("only changes the fields it names", async () => {
    const job = await create(api, nestedJob("PATCH-2", 1, 1, { notes: "keep me", priority: 3 }))
    const res = await api.patch(`/api-jobs?id=${job.id}`, { customer: "Only This" })
    expect(res.status).toBe(200)
    expect(res.body.data.job).toMatchObject({ customer: "Only This", notes: "keep me", priority: 3 })
  })

  it("accepts the aliases customer_name and description", async () => {
    const job = await create(api, nestedJob("PATCH-3"))
    const res = await api.patch(`/api-jobs?id=${job.id}`, { customer_name: "Via Alias", description: "alias notes" })
    expect(res.status).toBe(200)
    expect(res.body.data.job).toMatchObject({ customer: "Via Alias", notes: "alias notes" })
    expect(res.body.data.job).not.toHaveProperty("customer_name")
  })

  it("null clears a nullable field", async () => {
    const job = await create(api, nestedJob("PATCH-4", 1, 1, { due_date: "2024-05-01" }))
    const res = await api.patch(`/api-jobs?id=${job.id}`, { due_date: null, customer: null })
    expect(res.status).toBe(200)
    expect(res.body.data.job).toMatchObject({ due_date: null, customer: null })
  })

  it("rejects non-updatable fields and invalid values with 422 and leaves the job unchanged", async () => {
    const job = await create(api, nestedJob("PATCH-5", 1, 1, { priority: 2 }))
    const res = await api.patch(`/api-jobs?id=${job.id}`, { job_number: "RENAMED", priority: -1, due_date: "2023-02-29" })
    expectError(res, 422, "VALIDATION_ERROR")
    expect(detailAt(res, "job_number")).toMatchObject({ constraint: "ENUM_CONSTRAINT", value: "RENAMED", entityType: "job" })
    expect(detailAt(res, "priority")).toMatchObject({ constraint: "MIN_VALUE", value: -1 })
    expect(detailAt(res, "due_date")).toMatchObject({ constraint: "DATE_FORMAT", value: "2023-02-29" })
    expect(res.body.error.details).toHaveLength(3)
    expect(res.body.error.message).toContain("3")
    const read = await api.get(`/api-jobs?id=${job.id}`)
    expect(read.body.data.job).toMatchObject({ job_number: "PATCH-5", priority: 2, due_date: null })
  })

  it("takes due dates of years 0001 to 9999 and answers them as sent; year 0000 or past 9999 is 422 with the range", async () => {
    const job = await create(api, nestedJob("PATCH-Y1", 1, 1, { due_date: "0001-01-01" }))
    expect(job.due_date).toBe("0001-01-01")
    expect((await api.get(`/api-jobs?id=${job.id}`)).body.data.job.due_date).toBe("0001-01-01")
    expect((await api.patch(`/api-jobs?id=${job.id}`, { due_date: "0099-12-31T23:00:00-05:00" })).body.data.job.due_date).toBe("0099-12-31")
    expect((await api.patch(`/api-jobs?id=${job.id}`, { due_date: "9999-12-31" })).body.data.job.due_date).toBe("9999-12-31")
    for (const [due_date, constraint] of [["0000-01-01", "MIN_VALUE"], ["-0001-01-01", "MIN_VALUE"], ["10000-01-01", "MAX_VALUE"]]) {
      const res = await api.patch(`/api-jobs?id=${job.id}`, { due_date })
      expect(detailAt(res, "due_date")).toMatchObject({ constraint, value: due_date, message: "due_date must be between 0001-01-01 and 9999-12-31" })
    }
    expect((await api.get(`/api-jobs?id=${job.id}`)).body.data.job.due_date).toBe("9999-12-31")
  })

  it("a malformed JSON body is 400", async () => {
    const job = await create(api, nestedJob("PATCH-6"))
    expectError(await api.patch(`/api-jobs?id=${job.id}`, undefined, { raw: "{customer:" }), 400, "BAD_REQUEST")
  })
})

describe("PATCH /api-jobs status follows the job lifecycle (spec 3.1, DECISIONS)", () => {
  it("not_started → in_progress sets started_at", async () => {
    const job = await create(api, nestedJob("LIFE-1"))
    expect(job.started_at).toBeNull()
    const res = await api.patch(`/api-jobs?id=${job.id}`, { status: "in_progress" })
    expect(res.status).toBe(200)
    expect(res.body.data.job.status).toBe("in_progress")
    expect(Number.isNaN(Date.parse(res.body.data.job.started_at))).toBe(false)
    const read = await api.get(`/api-jobs?id=${job.id}`)
    expect(read.body.data.job).toMatchObject({ status: "in_progress", started_at: res.body.data.job.started_at })
  })

  it("in_progress → not_started is 409 INVALID_STATE_TRANSITION naming the statuses", async () => {
    const job = await create(api, nestedJob("LIFE-2"))
    expect((await api.patch(`/api-jobs?id=${job.id}`, { status: "in_progress" })).status).toBe(200)
    const res = await api.patch(`/api-jobs?id=${job.id}`, { status: "not_started" })
    expectError(res, 409, "INVALID_STATE_TRANSITION")
    expect(res.body.error.message).toContain("in_progress")
    expect(res.body.error.message).toContain("not_started")
    expect((await api.get(`/api-jobs?id=${job.id}`)).body.data.job.status).toBe("in_progress")
  })

  it("not_started → completed is 409 naming the current and the required status", async () => {
    const job = await create(api, nestedJob("LIFE-3"))
    const res = await api.patch(`/api-jobs?id=${job.id}`, { status: "completed" })
    expectError(res, 409, "INVALID_STATE_TRANSITION")
    expect(res.body.error.message).toContain("not_started")
    expect(res.body.error.message).toContain("in_progress")
    const read = (await api.get(`/api-jobs?id=${job.id}`)).body.data.job
    expect(read).toMatchObject({ status: "not_started", completed_at: null })
  })

  it("in_progress → on_hold → in_progress → completed applies each row's effects", async () => {
    const job = await create(api, nestedJob("LIFE-4"))
    const started = (await api.patch(`/api-jobs?id=${job.id}`, { status: "in_progress" })).body.data.job
    const held = await api.patch(`/api-jobs?id=${job.id}`, { status: "on_hold" })
    expect(held.status).toBe(200)
    expect(held.body.data.job.status).toBe("on_hold")
    expect(held.body.data.job.paused_at).not.toBeNull()
    const resumed = await api.patch(`/api-jobs?id=${job.id}`, { status: "in_progress" })
    expect(resumed.status).toBe(200)
    expect(resumed.body.data.job).toMatchObject({ status: "in_progress", paused_at: null, started_at: started.started_at })
    expect(resumed.body.data.job.resumed_at).not.toBeNull()
    const done = await api.patch(`/api-jobs?id=${job.id}`, { status: "completed", notes: "finished" })
    expect(done.status).toBe(200)
    expect(done.body.data.job).toMatchObject({ status: "completed", notes: "finished" })
    expect(done.body.data.job.completed_at).not.toBeNull()
    expect(typeof done.body.data.job.actual_duration).toBe("number")
  })

  it("on_hold → completed is 409 naming on_hold and in_progress", async () => {
    const job = await create(api, nestedJob("LIFE-5"))
    await api.patch(`/api-jobs?id=${job.id}`, { status: "in_progress" })
    await api.patch(`/api-jobs?id=${job.id}`, { status: "on_hold" })
    const res = await api.patch(`/api-jobs?id=${job.id}`, { status: "completed" })
    expectError(res, 409, "INVALID_STATE_TRANSITION")
    expect(res.body.error.message).toContain("on_hold")
    expect(res.body.error.message).toContain("in_progress")
  })

  it("an unknown status is 422 ENUM_CONSTRAINT", async () => {
    const job = await create(api, nestedJob("LIFE-6"))
    expect(detailAt(await api.patch(`/api-jobs?id=${job.id}`, { status: "paused" }), "status")).toMatchObject({
      constraint: "ENUM_CONSTRAINT",
      value: "paused"
    })
  })
})

describe("DELETE /api-jobs?id= (soft delete)", () => {
  it("answers {id, deleted:true}; the job is then 404, gone from lists, and its number is reusable", async () => {
    const job = await create(api, nestedJob("DEL-1", 2, 2))
    const res = await api.delete(`/api-jobs?id=${job.id}`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true, data: { id: job.id, deleted: true } })

    expectError(await api.get(`/api-jobs?id=${job.id}`), 404, "NOT_FOUND")
    const list = await api.get("/api-jobs?job_number=DEL-1")
    expect(list.body.data.jobs).toEqual([])
    expect(list.body.data.pagination.total).toBe(0)
    expect((await api.get("/api-jobs?limit=1000")).body.data.jobs.map((j: any) => j.id)).not.toContain(job.id)

    expectError(await api.patch(`/api-jobs?id=${job.id}`, { notes: "x" }), 404, "NOT_FOUND")
    expectError(await api.delete(`/api-jobs?id=${job.id}`), 404, "NOT_FOUND")

    const again = await api.post("/api-jobs", nestedJob("DEL-1"))
    expect(again.status).toBe(201)
    expect(again.body.data.job.id).not.toBe(job.id)
    expect((await api.get("/api-jobs?job_number=DEL-1")).body.data.jobs.map((j: any) => j.id)).toEqual([again.body.data.job.id])
  })
})

describe("409 CONFLICT on a duplicate job_number", () => {
  it("a second create with the same number is 409 and writes nothing", async () => {
    await create(api, nestedJob("DUP-1", 1, 1))
    const jobs = await count("jobs", tenantId)
    const parts = await count("parts", tenantId)
    const res = await api.post("/api-jobs", nestedJob("DUP-1", 3, 2))
    expectError(res, 409, "CONFLICT")
    expect(res.body.error.message).toContain("DUP-1")
    expect(await count("jobs", tenantId)).toBe(jobs)
    expect(await count("parts", tenantId)).toBe(parts)
    const list = await api.get("/api-jobs?job_number=DUP-1")
    expect(list.body.data.pagination.total).toBe(1)
    expect(list.body.data.jobs[0].parts).toHaveLength(1)
  })

  it("is 409 even when other fields are invalid too (spec 7.4)", async () => {
    await create(api, nestedJob("DUP-2"))
    expectError(await api.post("/api-jobs", { job_number: "DUP-2", priority: -1, due_date: "tomorrow", parts: [] }), 409, "CONFLICT")
    expectError(await api.post("/api-jobs", { job_number: "DUP-2", parts: [{ part_number: "P", quantity: 0, operations: [] }] }), 409, "CONFLICT")
    const nestedRuleBroken = nestedJob("DUP-2", 2, 1)
    nestedRuleBroken.parts[1]!.part_number = "P-1"
    expectError(await api.post("/api-jobs", nestedRuleBroken), 409, "CONFLICT")
  })

  it("job numbers are unique per tenant, not globally", async () => {
    await create(api, nestedJob("SHARED-NUM"))
    const other = client(h.url, (await h.tenant("Other")).key)
    expect((await other.post("/api-jobs", nestedJob("SHARED-NUM"))).status).toBe(201)
  })

  it("20 parallel creates of one job_number: exactly one 201 and nineteen 409", async () => {
    const t = await h.tenant("Racer")
    const racer = client(h.url, t.key)
    const replies = await Promise.all(Array.from({ length: 20 }, () => racer.post("/api-jobs", nestedJob("RACE-1", 2, 2))))
    const statuses = replies.map((r) => r.status).sort()
    expect(statuses).toEqual([201, ...Array(19).fill(409)])
    for (const r of replies.filter((r) => r.status === 409)) expectError(r, 409, "CONFLICT")
    const list = await racer.get("/api-jobs")
    expect(list.body.data.pagination.total).toBe(1)
    expect(await count("jobs", t.tenantId)).toBe(1)
    expect(await count("parts", t.tenantId)).toBe(2)
    expect(await count("operations", t.tenantId)).toBe(4)
  })
})

describe("422 nested rules (spec 7.3, DECISIONS)", () => {
  let writer: ReturnType<typeof client>
  let writerId: string
  let cellId: string
  let foreignCellId: string

  beforeAll(async () => {
    const t = await h.tenant("Writer")
    writer = client(h.url, t.key)
    writerId = t.tenantId
    cellId = "3f1c2a7e-8d4b-4c1a-9e2f-5a6b7c8d9e01"
    foreignCellId = "3f1c2a7e-8d4b-4c1a-9e2f-5a6b7c8d9e02"
    await h.sql(`INSERT INTO cells (tenant_id, id, name) VALUES ($1, $2, 'Milling')`, [writerId, cellId])
    await h.sql(`INSERT INTO cells (tenant_id, id, name) VALUES ($1, $2, 'Lathe')`, [tenantId, foreignCellId])
  })

  /** Posts a job that must be refused with 422 and checks that nothing of it was written. */
  const refused = async (body: any) => {
    const before = await Promise.all([count("jobs", writerId), count("parts", writerId), count("operations", writerId)])
    const res = await writer.post("/api-jobs", body)
    expectError(res, 422, "VALIDATION_ERROR")
    expect(await Promise.all([count("jobs", writerId), count("parts", writerId), count("operations", writerId)])).toEqual(before)
    const list = await writer.get(`/api-jobs?job_number=${encodeURIComponent(body.job_number)}`)
    expect(list.body.data.pagination.total).toBe(0)
    return res
  }

  it("duplicate part_number in one request → UNIQUE_CONSTRAINT at parts[1].part_number", async () => {
    const body = nestedJob("N-DUP-PART", 2, 1)
    body.parts[1]!.part_number = "P-1"
    const res = await refused(body)
    expect(res.body.error.details).toEqual([
      { field: "parts[1].part_number", message: expect.any(String), value: "P-1", constraint: "UNIQUE_CONSTRAINT", entityType: "part", entityIndex: 1 }
    ])
    expect(res.body.error.message).toContain("1 error")
  })

  it("duplicate sequence in one part → UNIQUE_CONSTRAINT", async () => {
    const body = nestedJob("N-DUP-SEQ", 1, 2)
    body.parts[0]!.operations[1]!.sequence = 1
    const res = await refused(body)
    expect(detailAt(res, "parts[0].operations[1].sequence")).toEqual({
      field: "parts[0].operations[1].sequence",
      message: expect.any(String),
      value: 1,
      constraint: "UNIQUE_CONSTRAINT",
      entityType: "operation",
      entityIndex: 1
    })
  })

  it("non-consecutive sequences are refused", async () => {
    const body = nestedJob("N-GAP-SEQ", 1, 2)
    body.parts[0]!.operations[1]!.sequence = 3
    const res = await refused(body)
    expect(detailAt(res, "parts[0].operations[1].sequence")).toMatchObject({ value: 3, entityType: "operation", entityIndex: 1 })
    expect(res.body.error.details).toHaveLength(1)
  })

  it("sequences in any order but consecutive are accepted", async () => {
    const body = nestedJob("N-ORDER-SEQ", 1, 3)
    const ops = body.parts[0]!.operations
    ops[0]!.sequence = 3
    ops[2]!.sequence = 1
    const res = await writer.post("/api-jobs", body)
    expect(res.status).toBe(201)
    expect(res.body.data.job.parts[0].operations.map((o: any) => o.sequence).sort()).toEqual([1, 2, 3])
  })

  it("parent_part_number resolves to a part of the same job", async () => {
    const body: any = nestedJob("N-PARENT", 2, 1)
    body.parts[1].parent_part_number = "P-1"
    const res = await writer.post("/api-jobs", body)
    expect(res.status).toBe(201)
    const parts = res.body.data.job.parts
    const p1 = parts.find((p: any) => p.part_number === "P-1")
    const p2 = parts.find((p: any) => p.part_number === "P-2")
    expect(p2.parent_part_id).toBe(p1.id)
    expect(p1.parent_part_id).toBeNull()
    expect(p2).not.toHaveProperty("parent_part_number")
  })

  it("a part naming itself as parent → CIRCULAR_REFERENCE", async () => {
    const body: any = nestedJob("N-SELF", 2, 1)
    body.parts[1].parent_part_number = "P-2"
    const res = await refused(body)
    expect(detailAt(res, "parts[1].parent_part_number")).toMatchObject({ constraint: "CIRCULAR_REFERENCE", value: "P-2", entityType: "part", entityIndex: 1 })
  })

  it("a parent cycle across parts → CIRCULAR_REFERENCE", async () => {
    const body: any = nestedJob("N-CYCLE", 2, 1)
    body.parts[0].parent_part_number = "P-2"
    body.parts[1].parent_part_number = "P-1"
    const res = await refused(body)
    expect(res.body.error.details.every((d: any) => d.constraint === "CIRCULAR_REFERENCE")).toBe(true)
    expect(res.body.error.details.length).toBeGreaterThan(0)
  })

  it("a parent part number outside the job → FK_CONSTRAINT", async () => {
    await create(writer, nestedJob("N-OTHER-JOB"))
    const body: any = nestedJob("N-PARENT-OUT", 1, 1)
    body.parts[0].part_number = "Q-1"
    body.parts[0].parent_part_number = "P-1" // exists, but in N-OTHER-JOB
    const res = await refused(body)
    expect(detailAt(res, "parts[0].parent_part_number")).toMatchObject({ constraint: "FK_CONSTRAINT", value: "P-1" })
  })

  it("a known cell_name resolves to the tenant's cell", async () => {
    const body: any = nestedJob("N-CELL-OK", 1, 1)
    body.parts[0].operations[0].cell_name = "Milling"
    const res = await writer.post("/api-jobs", body)
    expect(res.status).toBe(201)
    expect(res.body.data.job.parts[0].operations[0].cell_id).toBe(cellId)
  })

  it("an unknown cell_name → FK_CONSTRAINT", async () => {
    const body: any = nestedJob("N-CELL-BAD", 1, 2)
    body.parts[0].operations[1].cell_name = "Nowhere"
    const res = await refused(body)
    expect(res.body.error.details).toEqual([
      { field: "parts[0].operations[1].cell_name", message: expect.any(String), value: "Nowhere", constraint: "FK_CONSTRAINT", entityType: "operation", entityIndex: 1 }
    ])
  })

  it("another tenant's cell, by name or by id → FK_CONSTRAINT, never linked (DECISIONS)", async () => {
    const byName: any = nestedJob("N-CELL-FOREIGN-1", 1, 1)
    byName.parts[0].operations[0].cell_name = "Lathe"
    expect(detailAt(await refused(byName), "parts[0].operations[0].cell_name")).toMatchObject({ constraint: "FK_CONSTRAINT" })
    const byId: any = nestedJob("N-CELL-FOREIGN-2", 1, 1)
    byId.parts[0].operations[0].cell_id = foreignCellId
    expect(detailAt(await refused(byId), "parts[0].operations[0].cell_id")).toMatchObject({ constraint: "FK_CONSTRAINT", value: foreignCellId })
    const jobCell = nestedJob("N-CELL-FOREIGN-3", 1, 1, { current_cell_id: foreignCellId })
    expect(detailAt(await refused(jobCell), "current_cell_id")).toMatchObject({ constraint: "FK_CONSTRAINT", entityType: "job" })
  })

  it("a job without parts → MIN_LENGTH at parts", async () => {
    const res = await refused({ job_number: "N-NO-PARTS", parts: [] })
    expect(res.body.error.details).toEqual([
      { field: "parts", message: expect.any(String), value: [], constraint: "MIN_LENGTH", entityType: "job", entityIndex: 0 }
    ])
  })

  it("a job with no parts key → NOT_NULL at parts", async () => {
    expect(detailAt(await refused({ job_number: "N-PARTS-MISSING" }), "parts")).toMatchObject({ constraint: "NOT_NULL", entityType: "job" })
  })

  it("a part without operations → MIN_LENGTH at parts[1].operations", async () => {
    const body: any = nestedJob("N-NO-OPS", 2, 1)
    body.parts[1].operations = []
    expect((await refused(body)).body.error.details).toEqual([
      { field: "parts[1].operations", message: expect.any(String), value: [], constraint: "MIN_LENGTH", entityType: "part", entityIndex: 1 }
    ])
  })

  it("collects every violation at once, with paths, entities and the count", async () => {
    const body: any = {
      job_number: "N-MANY",
      priority: -1,
      due_date: "2024-13-01",
      parts: [
        { part_number: "P-1", quantity: 0, operations: [{ operation_name: "A", sequence: 1 }, { operation_name: "B", sequence: 0 }] },
        { part_number: "P-2", quantity: "two", operations: [{ operation_name: "", sequence: 1 }] }
      ]
    }
    const res = await refused(body)
    const got = (res.body.error.details as Array<any>).map((d) => [d.field, d.constraint, d.entityType, d.entityIndex]).sort()
    expect(got).toEqual([
      ["due_date", "DATE_FORMAT", "job", 0],
      ["parts[0].operations[1].sequence", "MIN_VALUE", "operation", 1],
      ["parts[0].quantity", "MIN_VALUE", "part", 0],
      ["parts[1].operations[0].operation_name", "MIN_LENGTH", "operation", 0],
      ["parts[1].quantity", "TYPE_MISMATCH", "part", 1],
      ["priority", "MIN_VALUE", "job", 0]
    ])
    expect(res.body.error.message).toContain("6 errors")
    expect(detailAt(res, "parts[1].quantity").value).toBe("two")
  })

  it("a due_date that is not a calendar date → DATE_FORMAT; 2024-02-29 is accepted", async () => {
    for (const due_date of ["2023-02-29", "tomorrow", "2024-13-01"]) {
      expect(detailAt(await refused(nestedJob(`N-DATE-${due_date}`, 1, 1, { due_date })), "due_date")).toMatchObject({
        constraint: "DATE_FORMAT",
        value: due_date
      })
    }
    const ok = await writer.post("/api-jobs", nestedJob("N-DATE-LEAP", 1, 1, { due_date: "2024-02-29" }))
    expect(ok.status).toBe(201)
    expect(ok.body.data.job.due_date).toBe("2024-02-29")
  })

  it("a due date whose time of day or offset is none (25:00, :60, 24:30, past ±15:59) → DATE_FORMAT on create and PATCH, not a database error", async () => {
    const bad = ["2026-01-01T25:00:00Z", "2026-01-01T10:60Z", "2026-01-01T12:00:61Z", "2026-01-01T24:30:00Z", "2026-01-01T10:00:00-23:59", "2026-01-01T10:00:00+99:99", "2026-01-01T10:00:00+16:00"]
    for (const due_date of bad) {
      expect(detailAt(await refused(nestedJob(`N-TIME-${due_date}`, 1, 1, { due_date })), "due_date")).toMatchObject({
        constraint: "DATE_FORMAT",
        value: due_date,
        message: "due_date must be an ISO 8601 date"
      })
    }
    const job = await create(writer, nestedJob("N-TIME-OK", 1, 1, { due_date: "2026-01-01T24:00:00Z" }))
    expect(job.due_date).toBe("2026-01-01")
    for (const due_date of bad) {
      for (const field of ["due_date", "due_date_override"]) {
        expect(detailAt(await writer.patch(`/api-jobs?id=${job.id}`, { [field]: due_date }), field)).toMatchObject({ constraint: "DATE_FORMAT", value: due_date })
      }
    }
    const ok = await writer.patch(`/api-jobs?id=${job.id}`, { due_date: "2026-03-01T10:00:00-15:59", due_date_override: "2026-03-02T23:59:59+15:59" })
    expect([ok.status, ok.body.data.job.due_date, ok.body.data.job.due_date_override]).toEqual([200, "2026-03-01", "2026-03-02"])
  })

  it("length limits count characters (code points): 255 emoji are a job_number, customer, part_number and operation_name; 256 are MAX_LENGTH", async () => {
    const chars = (n: number) => "😀".repeat(n)
    const job = (n: number) => ({
      job_number: `${chars(n - 1)}J`,
      customer: chars(n),
      parts: [{ part_number: chars(n), quantity: 1, operations: [{ operation_name: chars(n), sequence: 1 }] }]
    })
    const created = await writer.post("/api-jobs", job(255))
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.body.data.job).toMatchObject({ job_number: `${chars(254)}J`, customer: chars(255) })
    expect((await h.sql("SELECT char_length(job_number) AS n FROM jobs WHERE id = $1", [created.body.data.job.id]))[0]!.n).toBe(255)
    // a second create of the same number is its 409, found before the 422s (the number is one worth looking up)
    expectError(await writer.post("/api-jobs", job(255)), 409, "CONFLICT")
    const res = await refused(job(256))
    for (const field of ["job_number", "customer", "parts[0].part_number", "parts[0].operations[0].operation_name"]) {
      expect(detailAt(res, field)).toMatchObject({ constraint: "MAX_LENGTH", message: `${field} must have a length of at most 255` })
    }
    expect(res.body.error.details).toHaveLength(4)
    const patched = await writer.patch(`/api-jobs?id=${created.body.data.job.id}`, { customer: `${chars(254)}é` })
    expect([patched.status, patched.body.data.job.customer]).toEqual([200, `${chars(254)}é`])
  })

  it("a body that is not an object is 422; malformed JSON is 400; both write nothing", async () => {
    const before = await count("jobs", writerId)
    expectError(await writer.post("/api-jobs", [nestedJob("N-ARRAY")]), 422, "VALIDATION_ERROR")
    expectError(await writer.post("/api-jobs", undefined, { raw: '{"job_number": "N-BROKEN", "parts": [' }), 400, "BAD_REQUEST")
    expect(await count("jobs", writerId)).toBe(before)
  })
})

describe("tenant isolation on every id-taking endpoint (spec 5.6, 7.4)", () => {
  let a: ReturnType<typeof client>
  let b: ReturnType<typeof client>
  let jobA: any

  beforeAll(async () => {
    a = client(h.url, (await h.tenant("Tenant A")).key)
    b = client(h.url, (await h.tenant("Tenant B")).key)
    jobA = await create(a, nestedJob("ISO-A", 1, 2, { notes: "A's notes" }))
  })

  it("B cannot read A's job: 403 FORBIDDEN", async () => {
    expectError(await b.get(`/api-jobs?id=${jobA.id}`), 403, "FORBIDDEN")
  })

  it("B cannot update A's job: 403, also with an invalid body (403 before 422), and nothing changes", async () => {
    expectError(await b.patch(`/api-jobs?id=${jobA.id}`, { notes: "B was here" }), 403, "FORBIDDEN")
    expectError(await b.patch(`/api-jobs?id=${jobA.id}`, { status: "in_progress" }), 403, "FORBIDDEN")
    expectError(await b.patch(`/api-jobs?id=${jobA.id}`, { priority: -1, job_number: "X" }), 403, "FORBIDDEN")
    const read = await a.get(`/api-jobs?id=${jobA.id}`)
    expect(read.body.data.job).toMatchObject({ notes: "A's notes", status: "not_started", job_number: "ISO-A" })
  })

  it("B cannot delete A's job: 403, and the job is still there", async () => {
    expectError(await b.delete(`/api-jobs?id=${jobA.id}`), 403, "FORBIDDEN")
    expect((await a.get(`/api-jobs?id=${jobA.id}`)).status).toBe(200)
  })

  it("B's list does not show A's jobs, even when filtering for them", async () => {
    const res = await b.get("/api-jobs?job_number=ISO-A")
    expect(res.status).toBe(200)
    expect(res.body.data.jobs).toEqual([])
    expect(res.body.data.pagination.total).toBe(0)
    expect((await b.get(`/api-jobs?search=ISO-A`)).body.data.jobs).toEqual([])
  })

  it("an unknown id is 404 on GET, PATCH and DELETE (404 before 422)", async () => {
    expectError(await a.get(`/api-jobs?id=${UNKNOWN_ID}`), 404, "NOT_FOUND")
    expectError(await a.patch(`/api-jobs?id=${UNKNOWN_ID}`, { notes: "x" }), 404, "NOT_FOUND")
    expectError(await a.patch(`/api-jobs?id=${UNKNOWN_ID}`, { priority: -1 }), 404, "NOT_FOUND")
    expectError(await a.delete(`/api-jobs?id=${UNKNOWN_ID}`), 404, "NOT_FOUND")
  })

  it("a non-UUID id is 400 on GET, PATCH and DELETE", async () => {
    expectError(await a.get("/api-jobs?id=123"), 400, "BAD_REQUEST")
    expectError(await a.patch("/api-jobs?id=not-a-uuid", { notes: "x" }), 400, "BAD_REQUEST")
    expectError(await a.delete("/api-jobs?id=ISO-A"), 400, "BAD_REQUEST")
  })

  it("a missing id is 422 on PATCH and DELETE, with a detail for id", async () => {
    for (const res of [await a.patch("/api-jobs", { notes: "x" }), await a.delete("/api-jobs"), await a.delete("/api-jobs?id=")]) {
      expect(detailAt(res, "id")).toMatchObject({ constraint: "NOT_NULL" })
    }
    expect((await a.get(`/api-jobs?id=${jobA.id}`)).body.data.job.notes).toBe("A's notes")
  })
})
