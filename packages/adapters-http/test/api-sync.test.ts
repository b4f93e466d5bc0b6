import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, detailsOf, type Harness, startServer } from "./harness.ts"

let h: Harness
let api: ReturnType<typeof client>
let other: ReturnType<typeof client>
let tenantA: string

beforeAll(async () => {
  h = await startServer()
  ;({ tenantId: tenantA, api } = await h.as("A"))
  other = (await h.as("B")).api
  await api.post("/api-cells", { name: "Saw" })
  await api.post("/api-cells", { name: "Weld" })
})
afterAll(() => h.close())

const erpJob = (ext: string, jobNumber: string, extra: Record<string, unknown> = {}) => ({
  external_id: ext,
  external_source: "erp",
  job_number: jobNumber,
  customer_name: "Globex",
  ...extra,
  parts: [
    {
      external_id: `${ext}-p1`,
      part_number: "A",
      quantity: 2,
      operations: [
        { external_id: `${ext}-p1-o1`, operation_name: "Saw", sequence: 1, cell_name: "Saw" },
        { external_id: `${ext}-p1-o2`, operation_name: "Weld", sequence: 2, cell_name: "Weld", estimated_time: 30 }
      ]
    },
    { external_id: `${ext}-p2`, part_number: "B", quantity: 1, parent_part_number: "A" }
  ]
})

const partsCount = async () => (await h.sql("SELECT current_month_parts FROM tenant_usage WHERE tenant_id = $1", [tenantA]))[0]!.current_month_parts as number

describe("PUT /api-jobs/sync", () => {
  it("creates (201) then updates (200) the same job by external id, with nested parts and operations", async () => {
    const before = await partsCount()
    const created = await api.put("/api-jobs/sync", erpJob("E-1", "SYNC-1"))
    expect(created.status).toBe(201)
    expect(created.body.data).toMatchObject({ action: "created", external_id: "E-1" })
    const id = created.body.data.id
    const job = (await api.get(`/api-jobs?id=${id}`)).body.data.job
    expect(job).toMatchObject({ job_number: "SYNC-1", customer: "Globex", external_id: "E-1", external_source: "erp" })
    expect(job.parts.map((p: any) => p.part_number)).toEqual(["A", "B"])
    expect(job.parts[1].parent_part_id).toBe(job.parts[0].id)
    expect(job.parts[0].operations.map((o: any) => o.estimated_time_minutes)).toEqual([null, 30])
    expect(await partsCount()).toBe(before + 2)

    const updated = await api.put("/api-jobs/sync", erpJob("E-1", "SYNC-1", { customer: "Initech", priority: 5 }))
    expect(updated.status).toBe(200)
    expect(updated.body.data).toEqual({ action: "updated", id, external_id: "E-1" })
    const again = (await api.get(`/api-jobs?id=${id}`)).body.data.job
    expect(again).toMatchObject({ customer: "Initech", priority: 5 })
    expect(again.parts.map((p: any) => p.id)).toEqual(job.parts.map((p: any) => p.id))
    expect(again.parts[0].operations.map((o: any) => o.id)).toEqual(job.parts[0].operations.map((o: any) => o.id))
    expect(await partsCount()).toBe(before + 2)
  })

  it("requires external_id and external_source with the spec's message", async () => {
    const res = await api.put("/api-jobs/sync", { job_number: "X" })
    expect(res.status).toBe(422)
    const ext = res.body.error.details.find((d: any) => d.field === "external_id")
    expect(ext.message).toBe("external_id is required for sync operations")
  })

  it("answers 409 when the job_number belongs to another job, and writes nothing", async () => {
    await api.post("/api-jobs", { job_number: "TAKEN", parts: [{ part_number: "x", quantity: 1, operations: [{ operation_name: "o", sequence: 1 }] }] })
    const res = await api.put("/api-jobs/sync", erpJob("E-TAKEN", "TAKEN"))
    expect(res.status).toBe(409)
    const parts = await api.get("/api-parts?search=zzz&part_number=A")
    expect(parts.body.data.parts.every((p: any) => p.external_id !== "E-TAKEN-p1")).toBe(true)
  })

  it("a part of another job is a 422 detail on its external_id, with the record's other problems, and nothing is written", async () => {
    expect((await api.put("/api-jobs/sync", erpJob("E-OWN", "SYNC-OWN"))).status).toBe(201)
    const stolen = erpJob("E-THIEF", "SYNC-THIEF")
    ;(stolen.parts[0] as Record<string, unknown>).external_id = "E-OWN-p1"
    ;(stolen.parts[0]!.operations![1] as Record<string, unknown>).sequence = 3
    ;(stolen.parts[0]!.operations![0] as Record<string, unknown>).cell_name = "Nowhere"
    const res = await api.put("/api-jobs/sync", stolen)
    expect(res.status).toBe(422)
    expect(res.body.error.details.map((d: any) => [d.field, d.constraint]).sort()).toEqual([
      ["parts[0].external_id", "UNIQUE_CONSTRAINT"],
      ["parts[0].operations[0].cell_name", "FK_CONSTRAINT"],
      ["parts[0].operations[1].sequence", "MAX_VALUE"]
    ])
    expect((await api.get("/api-jobs?job_number=SYNC-THIEF")).body.data.jobs).toEqual([])
  })

  it("a record naming one external_id twice is a 422, not a database error", async () => {
    const twice = erpJob("E-TWICE", "SYNC-TWICE")
    ;(twice.parts[1] as Record<string, unknown>).external_id = "E-TWICE-p1"
    ;(twice.parts[0]!.operations![1] as Record<string, unknown>).external_id = "E-TWICE-p1-o1"
    // and once more under the second part: the detail names that part's operation
    ;(twice.parts[1] as Record<string, unknown>).operations = [{ external_id: "E-TWICE-p1-o1", operation_name: "Paint", sequence: 1, cell_name: "Saw" }]
    const res = await api.put("/api-jobs/sync", twice)
    expect(res.status).toBe(422)
    expect(res.body.error.details.map((d: any) => [d.field, d.constraint]).sort()).toEqual([
      ["parts[0].operations[1].external_id", "UNIQUE_CONSTRAINT"],
      ["parts[1].external_id", "UNIQUE_CONSTRAINT"],
      ["parts[1].operations[0].external_id", "UNIQUE_CONSTRAINT"]
    ])
  })

  it("parallel syncs of two jobs that claim the same part: one wins, the other writes nothing", async () => {
    const claim = (ext: string) => {
      const job = erpJob(ext, `SYNC-${ext}`)
      ;(job.parts[0] as Record<string, unknown>).external_id = "E-CONTESTED"
      return job
    }
    const results = await Promise.all(["E-RACE-1", "E-RACE-2", "E-RACE-3", "E-RACE-4"].map((ext) => api.put("/api-jobs/sync", claim(ext))))
    expect(results.map((r) => r.status).filter((s) => s === 201)).toHaveLength(1)
    for (const r of results.filter((r) => r.status !== 201)) expect([409, 422]).toContain(r.status)
    const winner = results.find((r) => r.status === 201)!.body.data.id
    const jobs = (await api.get("/api-jobs?job_number=SYNC-E-RACE")).body.data.jobs
    expect(jobs.map((j: any) => j.id)).toEqual([winner])
  })

  it("keeps tenants apart: the same external id in another tenant is a different job", async () => {
    await other.post("/api-cells", { name: "Saw" })
    await other.post("/api-cells", { name: "Weld" })
    const res = await other.put("/api-jobs/sync", erpJob("E-1", "SYNC-1"))
    expect(res.status).toBe(201)
    const mine = await api.get("/api-jobs?job_number=SYNC-1")
    expect(mine.body.data.jobs.map((j: any) => j.id)).not.toContain(res.body.data.id)
  })
})

describe("POST /api-jobs/bulk-sync", () => {
  it("reports each record and keeps the good ones when one fails (items or jobs key)", async () => {
    const res = await api.post("/api-jobs/bulk-sync", {
      items: [erpJob("B-1", "BULK-1"), { external_id: "B-2", external_source: "erp", job_number: "" }, erpJob("B-3", "BULK-3"), erpJob("E-1", "SYNC-1")]
    })
    expect(res.status).toBe(200)
    const d = res.body.data
    expect(d).toMatchObject({ total: 4, created: 2, updated: 1, errors: 1 })
    expect(d.results[1]).toMatchObject({ external_id: "B-2", action: "error" })
    expect(d.results[1].error).toContain("job_number")
    expect((await api.get("/api-jobs?job_number=BULK")).body.data.jobs).toHaveLength(2)
    // each problem once, by its field; the message names the field already, so it is not said twice
    const bad = await api.post("/api-jobs/bulk-sync", {
      jobs: [{ external_id: "B-4", external_source: "erp", priority: "high", due_date: "nope", parts: [{ external_id: "B-4-P", part_number: "P", quantity: 0 }], metadata: { "k\u0000": 1 } }]
    })
    expect(bad.body.data.results[0].error).toBe(
      "Validation failed for job: 5 errors: metadata.k\u0000 a field name contains a character that cannot be stored (NUL or an unpaired UTF-16 surrogate); " +
        "job_number is required; due_date must be an ISO 8601 date; priority has an invalid type (string); parts[0].quantity must be at least 1"
    )
    // the same record again holds nothing new: unchanged, nothing written
    const viaJobs = await api.post("/api-jobs/bulk-sync", { jobs: [erpJob("B-1", "BULK-1")] })
    expect(viaJobs.body.data).toMatchObject({ total: 1, created: 0, updated: 0, unchanged: 1, errors: 0 })
    expect(viaJobs.body.data.results[0]).toMatchObject({ external_id: "B-1", action: "unchanged" })
  })

  it("a due date whose time is none (25:00, an offset past ±15:59) is that record's DATE_FORMAT error, the others written; PUT sync and ERP sync alike", async () => {
    for (const [i, due_date] of ["2026-01-01T25:00:00Z", "2026-01-01T10:00:00+16:00"].entries()) {
      const put = await api.put("/api-jobs/sync", erpJob(`DT-PUT-${i}`, `DT-PUT-${i}`, { due_date }))
      expect([put.status, detailsOf(put)]).toEqual([422, ["due_date DATE_FORMAT"]])
      const bulk = await api.post("/api-jobs/bulk-sync", { jobs: [erpJob(`DT-B-${i}`, `DT-B-${i}`, { due_date }), erpJob(`DT-OK-${i}`, `DT-OK-${i}`)] })
      expect(bulk.status).toBe(200)
      expect(bulk.body.data).toMatchObject({ total: 2, created: 1, errors: 1 })
      expect(bulk.body.data.results[0]).toMatchObject({ external_id: `DT-B-${i}`, action: "error", error: expect.stringContaining("due_date must be an ISO 8601 date") })
      const erp = await api.post("/api-erp-sync/sync", { jobs: [{ external_id: `DT-E-${i}`, external_source: "erp", job_number: `DT-E-${i}`, due_date }] })
      expect(erp.status).toBe(200)
      expect(erp.body.data).toMatchObject({ total: 1, errors: 1 })
    }
  })

  it("a record failing in the database leaves nothing of itself behind", async () => {
    const bad = erpJob("B-9", "BULK-9")
    ;(bad.parts[0] as any).operations[1].sequence = 1 // duplicate sequence in the part → 422 for this record only
    const res = await api.post("/api-jobs/bulk-sync", { items: [bad, erpJob("B-10", "TAKEN")] })
    expect(res.body.data).toMatchObject({ total: 2, errors: 2 })
    expect((await api.get("/api-jobs?job_number=BULK-9")).body.data.jobs).toHaveLength(0)
  })

  // a bulk is written a chunk of 200 records per statement, all in one transaction (sync/service.ts BULK_CHUNK)
  const chunked = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, i) => ({
      external_id: `${prefix}-${i}`,
      external_source: "erp",
      job_number: `${prefix}-${i}`,
      parts: [{ external_id: `${prefix}-${i}-p`, part_number: "A", quantity: 1, operations: [{ external_id: `${prefix}-${i}-o`, operation_name: "Saw", sequence: 1, cell_name: "Saw" }] }]
    }))

  it("a refusal in a later chunk of a large bulk undoes the earlier chunks; the record-by-record path keeps the rest", async () => {
    const taken = await api.put("/api-jobs/sync", { external_id: "TAKEN-BY", external_source: "erp", job_number: "CH-TAKEN" })
    expect(taken.status).toBe(201)
    const items = chunked("CH", 450)
    items[420]!.job_number = "CH-TAKEN"
    const res = await api.post("/api-jobs/bulk-sync", { items })
    expect(res.status).toBe(200)
    // "created", not "unchanged" or "updated": nothing the first chunks' statements wrote survived the refusal
    expect(res.body.data).toMatchObject({ total: 450, created: 449, updated: 0, unchanged: 0, errors: 1 })
    expect(res.body.data.results[420]).toMatchObject({ external_id: "CH-420", action: "error" })
    expect(res.body.data.results[0]).toMatchObject({ external_id: "CH-0", action: "created" })
    const [counts] = await h.sql(
      `SELECT (SELECT count(*) FROM jobs WHERE tenant_id = $1 AND external_id LIKE 'CH-%')::int AS jobs,
        (SELECT count(*) FROM operations WHERE tenant_id = $1 AND external_id LIKE 'CH-%')::int AS operations`,
      [tenantA]
    )
    expect(counts).toEqual({ jobs: 449, operations: 449 })
  })

  it("two records of a large bulk naming one job in different chunks are synced one after the other", async () => {
    const items = chunked("CS", 450)
    items[310] = { ...items[10]!, job_number: "CS-10-renumbered" }
    const res = await api.post("/api-jobs/bulk-sync", { items })
    expect(res.body.data).toMatchObject({ total: 450, created: 449, updated: 1, errors: 0 })
    expect(res.body.data.results[310]).toMatchObject({ external_id: "CS-10", action: "updated", id: res.body.data.results[10].id })
    const job = (await api.get(`/api-jobs?id=${res.body.data.results[10].id}`)).body.data.job
    expect(job.job_number).toBe("CS-10-renumbered")
  })

  it("refuses more than 1000 records with 422 and writes nothing", async () => {
    const items = Array.from({ length: 1001 }, (_, i) => ({ external_id: `M-${i}`, external_source: "erp", job_number: `M-${i}` }))
    const res = await api.post("/api-jobs/bulk-sync", { items })
    expect(res.status).toBe(422)
    expect((await api.get("/api-jobs?job_number=M-")).body.data.pagination.total).toBe(0)
  })
})

describe("part and operation sync", () => {
  it("syncs a part under a synced job and an operation under it, then updates both", async () => {
    const part = await api.put("/api-parts/sync", { external_id: "SP-1", external_source: "erp", job_external_id: "E-1", part_number: "C", quantity: 4, material: "S355" })
    expect(part.status).toBe(201)
    const op = await api.put("/api-operations/sync", { external_id: "SO-1", external_source: "erp", part_external_id: "SP-1", cell_name: "Saw", operation_name: "Cut" })
    expect(op.status).toBe(201)
    const stored = (await api.get(`/api-operations?id=${op.body.data.id}`)).body.data.operation
    expect(stored).toMatchObject({ sequence: 1, operation_name: "Cut", part_id: part.body.data.id })
    const again = await api.put("/api-operations/sync", { external_id: "SO-1", external_source: "erp", part_external_id: "SP-1", cell_name: "Weld", operation_name: "Cut 2" })
    expect(again.status).toBe(200)
    expect((await api.get(`/api-operations?id=${op.body.data.id}`)).body.data.operation).toMatchObject({ sequence: 1, operation_name: "Cut 2" })
    const partAgain = await api.put("/api-parts/sync", { external_id: "SP-1", external_source: "erp", job_external_id: "E-1", part_number: "C", quantity: 5 })
    expect(partAgain.status).toBe(200)
    expect((await api.get(`/api-parts?id=${part.body.data.id}`)).body.data.part.quantity).toBe(5)
  })

  it("finds a parent a part sync names in its statement: by number or id in the job, never outside it nor in a loop; a refusal writes nothing", async () => {
    expect((await api.put("/api-jobs/sync", { external_id: "PJ-1", external_source: "erp", job_number: "PJ-1" })).status).toBe(201)
    expect((await api.put("/api-jobs/sync", { external_id: "PJ-2", external_source: "erp", job_number: "PJ-2" })).status).toBe(201)
    const rec = (id: string, extra: Record<string, unknown> = {}, job = "PJ-1") =>
      ({ external_id: id, external_source: "erp", job_external_id: job, part_number: id, quantity: 1, ...extra })
    const sync = (body: Record<string, unknown>) => api.put("/api-parts/sync", body)
    const parentOf = async (id: string) => (await h.sql("SELECT p.parent_part_id AS parent FROM parts p WHERE p.tenant_id = $1 AND p.external_id = $2", [tenantA, id]))[0]?.parent
    const a = (await sync(rec("PA"))).body.data.id
    const b = await sync(rec("PB", { parent_part_number: "PA" }))
    expect(b.status).toBe(201)
    expect(await parentOf("PB")).toBe(a)
    const c = (await sync(rec("PC", { parent_part_id: b.body.data.id }))).body.data.id
    expect(await parentOf("PC")).toBe(b.body.data.id)
    const other = (await sync(rec("PX", {}, "PJ-2"))).body.data.id

    const events = async () => Number((await h.sql("SELECT count(*) AS n FROM event_log WHERE tenant_id = $1", [tenantA]))[0]!.n)
    const before = await events()
    // a parent outside the job, by number or by id (the id wins over a number)
    expect(detailsOf(await sync(rec("PD", { parent_part_number: "PX" })))).toEqual(["parent_part_number FK_CONSTRAINT"])
    expect(detailsOf(await sync(rec("PD", { parent_part_id: other, parent_part_number: "PA" })))).toEqual(["parent_part_id FK_CONSTRAINT"])
    expect(await parentOf("PD")).toBeUndefined()
    // itself, and a descendant (A → B → C): a loop, and A keeps no parent
    expect(detailsOf(await sync(rec("PA", { parent_part_id: a })))).toEqual(["parent_part_id CIRCULAR_REFERENCE"])
    const loop = await sync(rec("PA", { parent_part_number: "PC", quantity: 9 }))
    expect(detailsOf(loop)).toEqual(["parent_part_number CIRCULAR_REFERENCE"])
    expect(loop.body.error.details[0].message).toContain("descendant")
    expect(await parentOf("PA")).toBeNull()
    expect((await h.sql("SELECT quantity FROM parts WHERE id = $1", [a]))[0]!.quantity).toBe(1)
    // an unknown job comes first; a part of another job is 409 before its parent
    expect(detailsOf(await sync(rec("PE", { parent_part_number: "PA" }, "nope")))).toEqual(["job_external_id FK_CONSTRAINT"])
    expect((await sync(rec("PX", { parent_part_number: "PA" }))).status).toBe(409)
    expect(await events()).toBe(before)
    // a new parent without a loop, and null clears it
    expect((await sync(rec("PC", { parent_part_number: "PA" }))).body.data.action).toBe("updated")
    expect(await parentOf("PC")).toBe(a)
    expect((await sync(rec("PC", { parent_part_id: null }))).body.data.action).toBe("updated")
    expect(await parentOf("PC")).toBeNull()
    // a bulk naming parents: record by record, a later record's parent an earlier one
    const bulk = await api.post("/api-parts/bulk-sync", { parts: [rec("PF"), rec("PG", { parent_part_number: "PF" }), rec("PH", { parent_part_number: "PX" })] })
    expect(bulk.body.data.results.map((r: any) => r.action)).toEqual(["created", "created", "error"])
    expect(await parentOf("PG")).toBe(bulk.body.data.results[0].id)
    expect(c).toBeDefined()
  })

  it("answers 422 FK_CONSTRAINT for an unknown job_external_id, part_external_id or cell_name", async () => {
    const part = await api.put("/api-parts/sync", { external_id: "SP-X", external_source: "erp", job_external_id: "nope", part_number: "C", quantity: 1 })
    expect(part.status).toBe(422)
    expect(part.body.error.details[0]).toMatchObject({ field: "job_external_id", constraint: "FK_CONSTRAINT" })
    const op = await api.put("/api-operations/sync", { external_id: "SO-X", external_source: "erp", part_external_id: "nope", cell_name: "Nope", operation_name: "x" })
    expect(op.status).toBe(422)
    expect(op.body.error.details.map((d: any) => d.field).sort()).toEqual(["cell_name", "part_external_id"])
    const missingCell = await api.put("/api-operations/sync", { external_id: "SO-X", external_source: "erp", part_external_id: "SP-1", operation_name: "x" })
    expect(missingCell.status).toBe(422)
    expect(missingCell.body.error.details[0]).toMatchObject({ field: "cell_name", constraint: "NOT_NULL" })
  })

  it("a new operation without sequence after its part's 2147483647 is 409 as a create is; in a bulk or an ERP run that record alone", async () => {
    const part = (await api.put("/api-parts/sync", { external_id: "SQ-P", external_source: "erp", job_external_id: "E-1", part_number: "SQ", quantity: 1 })).body.data.id
    const last = await api.post("/api-operations", { part_id: part, operation_name: "Last", sequence: 2147483647 })
    expect(last.status).toBe(201)
    const message = "the part's operations already use sequence 2147483647; give the new operation a sequence"
    const create = await api.post("/api-operations", { part_id: part, operation_name: "After" })
    expect([create.status, create.body.error.message]).toEqual([409, message])
    const record = (ext: string, extra: Record<string, unknown> = {}) =>
      ({ external_id: ext, external_source: "erp", part_external_id: "SQ-P", cell_name: "Saw", operation_name: "Cut", ...extra })
    const one = await api.put("/api-operations/sync", record("SQ-O1"))
    expect([one.status, one.body.error.code, one.body.error.message]).toEqual([409, "CONFLICT", message])
    // in a bulk: that record alone; the records beside it, one with its own sequence on the same part, are written
    const bulk = await api.post("/api-operations/bulk-sync", {
      operations: [record("SQ-O1"), record("SQ-O2", { sequence: 7 }), record("SQ-O3"), { ...record("SQ-O4"), part_external_id: "SP-1" }]
    })
    expect(bulk.status).toBe(200)
    expect(bulk.body.data).toMatchObject({ total: 4, created: 2, errors: 2 })
    expect(bulk.body.data.results.map((r: any) => [r.external_id, r.action, r.error])).toEqual([
      ["SQ-O1", "error", message], ["SQ-O2", "created", undefined], ["SQ-O3", "error", message], ["SQ-O4", "created", undefined]
    ])
    const erp = await api.post("/api-erp-sync/sync", { operations: [record("SQ-O5"), record("SQ-O6", { sequence: 8 })] })
    expect(erp.status).toBe(200)
    expect(erp.body.data).toMatchObject({ total: 2, created: 1, errors: 1 })
    expect(erp.body.data.results.operations[0]).toMatchObject({ external_id: "SQ-O5", action: "error", error: message })
    const stored = (await api.get(`/api-operations?part_id=${part}&sort=sequence`)).body.data.operations
    expect(stored.map((o: any) => [o.external_id, o.sequence])).toEqual([["SQ-O2", 7], ["SQ-O6", 8], [null, 2147483647]])
  })

  it("bulk-syncs parts under `parts` and operations under `operations` or `items`", async () => {
    const parts = await api.post("/api-parts/bulk-sync", {
      parts: [
        { external_id: "BP-1", external_source: "erp", job_external_id: "E-1", part_number: "D", quantity: 1 },
        { external_id: "BP-2", external_source: "erp", job_external_id: "missing", part_number: "E", quantity: 1 }
      ]
    })
    expect(parts.body.data).toMatchObject({ total: 2, created: 1, errors: 1 })
    const ops = await api.post("/api-operations/bulk-sync", {
      items: [{ external_id: "BO-1", external_source: "erp", part_external_id: "BP-1", cell_name: "Saw", operation_name: "Cut" }]
    })
    expect(ops.body.data).toMatchObject({ total: 1, created: 1, errors: 0 })
    const empty = await api.post("/api-operations/bulk-sync", { nothing: [] })
    expect(empty.status).toBe(422)
  })

  it("refuses a bulk body carrying records under both of its keys (422, nothing written) rather than drop one list", async () => {
    expect((await api.put("/api-jobs/sync", { external_id: "BK-J0", external_source: "erp", job_number: "BK-J0" })).status).toBe(201)
    expect((await api.put("/api-parts/sync", { external_id: "BK-P0", external_source: "erp", job_external_id: "BK-J0", part_number: "BK0", quantity: 1 })).status).toBe(201)
    const bodies = {
      "/api-jobs/bulk-sync": ["jobs", { external_id: "BK-J1", external_source: "erp", job_number: "BK-J1" }, { external_id: "BK-J2", external_source: "erp", job_number: "BK-J2" }],
      "/api-parts/bulk-sync": ["parts", { external_id: "BK-P1", external_source: "erp", job_external_id: "BK-J0", part_number: "BK1", quantity: 1 }, { external_id: "BK-P2", external_source: "erp", job_external_id: "BK-J0", part_number: "BK2", quantity: 1 }],
      "/api-operations/bulk-sync": ["operations", { external_id: "BK-O1", external_source: "erp", part_external_id: "BK-P0", cell_name: "Saw", operation_name: "Cut" }, { external_id: "BK-O2", external_source: "erp", part_external_id: "BK-P0", cell_name: "Saw", operation_name: "Cut" }],
      "/api-cells/bulk-sync": ["cells", { external_id: "BK-C1", external_source: "erp", name: "BK 1" }, { external_id: "BK-C2", external_source: "erp", name: "BK 2" }],
      "/api-resources/bulk-sync": ["resources", { external_id: "BK-R1", external_source: "erp", name: "BK 1", type: "tooling" }, { external_id: "BK-R2", external_source: "erp", name: "BK 2", type: "tooling" }]
    } as const
    for (const [path, [key, one, two]] of Object.entries(bodies)) {
      for (const body of [{ items: [one], [key]: [two] }, { [key]: [one], items: [two] }, { items: [one], [key]: [] }]) {
        const res = await api.post(path, body)
        expect([path, res.status]).toEqual([path, 422])
        expect([path, res.status, detailsOf(res)]).toEqual([path, 422, [`${key === "jobs" ? "jobs" : "items"} ENUM_CONSTRAINT`]])
      }
      // either key alone still works
      expect((await api.post(path, { [key]: [one] })).body.data, path).toMatchObject({ total: 1, errors: 0 })
      expect((await api.post(path, { items: [two] })).body.data, path).toMatchObject({ total: 1, errors: 0 })
    }
  })

  it("the parts and operations of a deleted job do not keep their external ids: the same structure syncs again", async () => {
    const first = await api.put("/api-jobs/sync", erpJob("DEL-1", "DEL-1"))
    expect(first.status).toBe(201)
    const oldParts = (await api.get(`/api-parts?job_id=${first.body.data.id}`)).body.data.parts.map((p: { id: string }) => p.id)
    expect((await api.send("DELETE", `/api-jobs?id=${first.body.data.id}`)).status).toBe(200)

    // one by one: the job with its parts and operations again, then a part and an operation of their own
    const again = await api.put("/api-jobs/sync", erpJob("DEL-1", "DEL-1"))
    expect([again.status, again.body.data?.action], JSON.stringify(again.body)).toEqual([201, "created"])
    expect(again.body.data.id).not.toBe(first.body.data.id)
    const parts = (await api.get(`/api-parts?job_id=${again.body.data.id}`)).body.data.parts as Array<{ id: string; external_id: string }>
    expect(parts.map((p) => p.external_id).sort()).toEqual(["DEL-1-p1", "DEL-1-p2"])
    expect(parts.some((p) => oldParts.includes(p.id))).toBe(false)
    expect((await api.get(`/api-operations?part_id=${parts.find((p) => p.external_id === "DEL-1-p1")!.id}`)).body.data.operations).toHaveLength(2)
    expect((await api.send("DELETE", `/api-jobs?id=${again.body.data.id}`)).status).toBe(200)
    expect((await api.put("/api-jobs/sync", { external_id: "DEL-1", external_source: "erp", job_number: "DEL-1" })).status).toBe(201)
    const part = await api.put("/api-parts/sync", { external_id: "DEL-1-p1", external_source: "erp", job_external_id: "DEL-1", part_number: "A", quantity: 1 })
    expect(part.status, JSON.stringify(part.body)).toBe(201)
    const op = await api.put("/api-operations/sync", { external_id: "DEL-1-p1-o1", external_source: "erp", part_external_id: "DEL-1-p1", cell_name: "Saw", operation_name: "Saw" })
    expect(op.status, JSON.stringify(op.body)).toBe(201)

    // and in bulk
    const job = (await api.get("/api-jobs?job_number=DEL-1")).body.data.jobs[0]
    expect((await api.send("DELETE", `/api-jobs?id=${job.id}`)).status).toBe(200)
    const bulk = await api.post("/api-jobs/bulk-sync", { items: [erpJob("DEL-1", "DEL-1")] })
    expect(bulk.body.data, JSON.stringify(bulk.body)).toMatchObject({ total: 1, created: 1, errors: 0 })
  })
})
