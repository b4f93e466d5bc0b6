import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, type Harness, nestedJob, startServer } from "./harness.ts"

let h: Harness
let api: ReturnType<typeof client>
let other: ReturnType<typeof client>
let jobId: string
let tenantA: string

beforeAll(async () => {
  h = await startServer()
  ;({ tenantId: tenantA, api } = await h.as("A"))
  other = (await h.as("B")).api
  const res = await api.post("/api-jobs", nestedJob("PJ-1", 1, 2))
  jobId = res.body.data.job_id
})
afterAll(() => h.close())

const newPart = (extra: Record<string, unknown> = {}) => api.post("/api-parts", { job_id: jobId, part_number: `SP-${Math.random()}`, quantity: 3, ...extra })

describe("POST /api-parts", () => {
  it("creates a standalone part with every optional field and counts it for the tenant", async () => {
    const before = (await h.sql("SELECT current_month_parts FROM tenant_usage WHERE tenant_id = $1", [tenantA]))[0]!.current_month_parts as number
    const res = await newPart({
      part_number: "BRACKET-7",
      material: "S355",
      description: "bracket",
      drawing_no: "DRW-7",
      cnc_program_name: "PRG7",
      is_bullet_card: true,
      material_lot: "LOT-1",
      material_supplier: "Steelco",
      material_cert_number: "CERT-9",
      drawing_url: "https://example.com/d.pdf",
      step_file_url: "https://example.com/d.step",
      notes: "n",
      metadata: { a: 1 },
      file_paths: ["/a", "/b"],
      parent_part_number: "P-1"
    })
    expect(res.status).toBe(201)
    const part = res.body.data.part
    expect(part).toMatchObject({ job_id: jobId, part_number: "BRACKET-7", quantity: 3, is_bullet_card: true, status: "not_started", metadata: { a: 1 }, file_paths: ["/a", "/b"] })
    const parents = await api.get(`/api-parts?job_id=${jobId}&part_number=P-1`)
    expect(part.parent_part_id).toBe(parents.body.data.parts[0].id)
    const after = (await h.sql("SELECT current_month_parts FROM tenant_usage WHERE tenant_id = $1", [tenantA]))[0]!.current_month_parts as number
    expect(after).toBe(before + 1)
  })

  it("refuses a duplicate part_number in the job with 409", async () => {
    const res = await newPart({ part_number: "P-1" })
    expect(res.status).toBe(409)
    expect(res.body.error.code).toBe("CONFLICT")
  })

  it("answers 422 FK_CONSTRAINT for a job of another tenant or none, and for a parent outside the job", async () => {
    const foreign = await other.post("/api-jobs", nestedJob("B-1"))
    const res = await newPart({ job_id: foreign.body.data.job_id })
    expect(res.status).toBe(422)
    expect(res.body.error.details[0]).toMatchObject({ field: "job_id", constraint: "FK_CONSTRAINT" })
    const otherJob = await api.post("/api-jobs", nestedJob("PJ-2"))
    const res2 = await newPart({ parent_part_id: otherJob.body.data.parts[0].part_id })
    expect(res2.status).toBe(422)
    expect(res2.body.error.details[0]).toMatchObject({ field: "parent_part_id", constraint: "FK_CONSTRAINT" })
  })

  it("checks job, cell and material in the create's statement: a foreign job is the only detail; a refusal writes nothing", async () => {
    const count = async (query: string) => (await h.sql(query, [tenantA]))[0]!.n as number
    const state = async () => ({
      parts: await count("SELECT count(*)::int AS n FROM parts WHERE tenant_id = $1"),
      usage: await count("SELECT current_month_parts AS n FROM tenant_usage WHERE tenant_id = $1"),
      events: await count("SELECT count(*)::int AS n FROM event_log WHERE tenant_id = $1 AND event_type = 'part.created'")
    })
    const before = await state()
    const foreignJob = (await other.post("/api-jobs", nestedJob("B-2"))).body.data.job_id
    const foreignCell = (await other.post("/api-cells", { name: "Their saw" })).body.data.cell.id
    const onlyJob = await newPart({ job_id: foreignJob, current_cell_id: foreignCell })
    expect(onlyJob.status).toBe(422)
    expect(onlyJob.body.error.details.map((d: any) => [d.field, d.constraint])).toEqual([["job_id", "FK_CONSTRAINT"]])
    const both = await newPart({ current_cell_id: foreignCell, material_id: "00000000-0000-4000-8000-000000000000" })
    expect(both.body.error.details.map((d: any) => [d.field, d.constraint])).toEqual([["current_cell_id", "FK_CONSTRAINT"], ["material_id", "FK_CONSTRAINT"]])
    expect(await state()).toEqual(before)
    const made = (await newPart({ part_number: "ONE-STATEMENT" })).body.data.part
    expect(await state()).toEqual({ parts: before.parts + 1, usage: before.usage + 1, events: before.events + 1 })
    const [event] = await h.sql("SELECT data FROM event_log WHERE tenant_id = $1 AND event_type = 'part.created' ORDER BY seq DESC LIMIT 1", [tenantA])
    const data = typeof event!.data === "string" ? JSON.parse(event!.data) : event!.data
    expect(data).toEqual({ part_id: made.id, part_number: "ONE-STATEMENT", job_id: jobId, status: "not_started", part: made })
  })

  it("checks the parent and material_id in the create's statement too: the parent's, the material's, then the references' details", async () => {
    const count = async () => (await h.sql("SELECT count(*)::int AS n FROM parts WHERE tenant_id = $1", [tenantA]))[0]!.n as number
    const steel = (await api.post("/api-materials", { name: "PX-STEEL" })).body.data.material.id
    const elsewhere = (await api.post("/api-jobs", nestedJob("PJ-PARENT"))).body.data.parts[0].part_id
    const before = await count()
    const foreignCell = (await other.post("/api-cells", { name: "Their press" })).body.data.cell.id
    const all = await newPart({ parent_part_number: "NO-SUCH", material_id: steel, material: "Brass", current_cell_id: foreignCell })
    expect(all.status).toBe(422)
    expect(all.body.error.details.map((d: any) => [d.field, d.message])).toEqual([
      ["parent_part_number", "part NO-SUCH is not a part of this job"],
      ["material", `material must be 'PX-STEEL', the name of material_id ${steel}`],
      ["current_cell_id", `cell ${foreignCell} does not exist in this tenant`]
    ])
    // another job's part, by id (the id wins over a number that would be found)
    const byId = await newPart({ parent_part_id: elsewhere, parent_part_number: "P-1" })
    expect(byId.body.error.details.map((d: any) => [d.field, d.message])).toEqual([["parent_part_id", `part ${elsewhere} is not a part of this job`]])
    // a job not the tenant's is the only detail
    const foreignJob = (await other.post("/api-jobs", nestedJob("B-3"))).body.data.job_id
    expect((await newPart({ job_id: foreignJob, parent_part_number: "NO-SUCH", material_id: steel, material: "Brass" })).body.error.details.map((d: any) => d.field))
      .toEqual(["job_id"])
    expect(await count()).toBe(before)
    // found: the parent by number, material from material_id, in the record and its event
    const p1 = (await api.get(`/api-parts?job_id=${jobId}&part_number=P-1`)).body.data.parts[0].id
    const made = await newPart({ parent_part_number: "P-1", material_id: steel })
    expect(made.status).toBe(201)
    expect(made.body.data.part).toMatchObject({ parent_part_id: p1, material_id: steel, material: "PX-STEEL" })
    const [event] = await h.sql("SELECT data FROM event_log WHERE tenant_id = $1 AND event_type = 'part.created' ORDER BY seq DESC LIMIT 1", [tenantA])
    expect(JSON.parse(event!.data as string).part).toEqual(made.body.data.part)
    expect((await newPart({ parent_part_id: p1, parent_part_number: "NO-SUCH" })).body.data.part.parent_part_id).toBe(p1)
    expect(await count()).toBe(before + 2)
  })

  it("collects every validation error of a bad body", async () => {
    const res = await api.post("/api-parts", { job_id: "nope", quantity: 0, drawing_no: "x".repeat(256) })
    expect(res.status).toBe(422)
    const byField = Object.fromEntries(res.body.error.details.map((d: any) => [d.field, d.constraint]))
    expect(byField).toEqual({ job_id: "UUID_FORMAT", part_number: "NOT_NULL", quantity: "MIN_VALUE", drawing_no: "MAX_LENGTH" })
    expect(res.body.error.message).toContain("4 errors")
  })
})

describe("GET /api-parts", () => {
  it("filters by job, job_number, part_number, material, material_lot, status and search, with pagination", async () => {
    await newPart({ part_number: "FLT-A", material: "ALU", material_lot: "L-77", notes: "needle in haystack" })
    await newPart({ part_number: "FLT-B", material: "ALU", material_lot: "L-78" })
    const check = async (q: string, expected: Array<string>) => {
      const res = await api.get(`/api-parts?${q}&sort=part_number&order=asc`)
      expect(res.status).toBe(200)
      expect(res.body.data.parts.map((p: any) => p.part_number)).toEqual(expected)
    }
    await check("material=ALU", ["FLT-A", "FLT-B"])
    await check("material=alu", [])
    await check("material_lot=L-77", ["FLT-A"])
    await check("part_number=flt", ["FLT-A", "FLT-B"])
    await check("search=HAYSTACK", ["FLT-A"])
    await check(`job_id=${jobId}&part_number=FLT`, ["FLT-A", "FLT-B"])
    await check("job_number=pj-1&part_number=flt", ["FLT-A", "FLT-B"])
    await check("job_number=nomatch", [])
    const page = await api.get(`/api-parts?job_id=${jobId}&limit=2&offset=1&sort=part_number`)
    expect(page.body.data.pagination).toMatchObject({ limit: 2, offset: 1 })
    expect(page.body.data.pagination.total).toBeGreaterThanOrEqual(4)
    expect(page.body.data.parts).toHaveLength(2)
    expect((await api.get("/api-parts?status=bogus")).status).toBe(422)
    expect((await api.get("/api-parts?sort=bogus")).status).toBe(422)
  })

  it("reads one part by id, 403 for another tenant, 404 for an unknown id", async () => {
    const p = (await newPart()).body.data.part
    expect((await api.get(`/api-parts?id=${p.id}`)).body.data.part.id).toBe(p.id)
    expect((await other.get(`/api-parts?id=${p.id}`)).status).toBe(403)
    expect((await api.get(`/api-parts?id=${crypto.randomUUID()}`)).status).toBe(404)
    expect((await api.get(`/api-parts?id=nope`)).status).toBe(400)
    expect((await other.get(`/api-parts?job_id=${jobId}`)).body.data.parts).toEqual([])
  })
})

describe("PATCH /api-parts", () => {
  it("updates fields and refuses tenant_id, id and created_at", async () => {
    const p = (await newPart()).body.data.part
    const res = await api.patch(`/api-parts?id=${p.id}`, { quantity: 9, material: "S235", status: "in_progress" })
    expect(res.status).toBe(200)
    expect(res.body.data.part).toMatchObject({ quantity: 9, material: "S235", status: "in_progress" })
    const bad = await api.patch(`/api-parts?id=${p.id}`, { id: crypto.randomUUID(), tenant_id: crypto.randomUUID(), created_at: "2020-01-01" })
    expect(bad.status).toBe(422)
    expect(bad.body.error.details.map((d: any) => d.field).sort()).toEqual(["created_at", "id", "tenant_id"])
  })

  it("refuses a part as its own parent and parent cycles with CIRCULAR_REFERENCE", async () => {
    const a = (await newPart()).body.data.part
    const b = (await newPart({ parent_part_id: a.id })).body.data.part
    const self = await api.patch(`/api-parts?id=${a.id}`, { parent_part_id: a.id })
    expect(self.status).toBe(422)
    expect(self.body.error.details[0].constraint).toBe("CIRCULAR_REFERENCE")
    const cycle = await api.patch(`/api-parts?id=${a.id}`, { parent_part_id: b.id })
    expect(cycle.status).toBe(422)
    expect(cycle.body.error.details[0].constraint).toBe("CIRCULAR_REFERENCE")
  })

  it("checks a PATCH's parent and material_id in its statement: the parent's, the material's, then the references' details; a refusal changes nothing", async () => {
    const partRow = async (id: string) => (await api.get(`/api-parts?id=${id}`)).body.data.part
    const foreignCell = (await other.post("/api-cells", { name: "Their saw, for a PATCH" })).body.data.cell.id
    const elsewhere = (await api.post("/api-jobs", nestedJob("PJ-PATCH-PARENT"))).body.data.parts[0].part_id
    const a = (await newPart({ part_number: "PA-A" })).body.data.part
    const b = (await newPart({ part_number: "PA-B", parent_part_id: a.id })).body.data.part
    const c = (await newPart({ part_number: "PA-C", parent_part_number: "PA-B" })).body.data.part
    const details = (res: any) => res.body.error.details.map((d: any) => [d.field, d.constraint, d.message])
    const before = await partRow(a.id)
    // not in the job, by number and by id (the id wins over a number), with a foreign cell after it
    expect(details(await api.patch(`/api-parts?id=${a.id}`, { parent_part_number: "NO-SUCH", current_cell_id: foreignCell, notes: "x" }))).toEqual([
      ["parent_part_number", "FK_CONSTRAINT", "part NO-SUCH is not a part of this job"],
      ["current_cell_id", "FK_CONSTRAINT", `cell ${foreignCell} does not exist in this tenant`]
    ])
    expect(details(await api.patch(`/api-parts?id=${a.id}`, { parent_part_id: elsewhere, parent_part_number: "PA-B" }))).toEqual([
      ["parent_part_id", "FK_CONSTRAINT", `part ${elsewhere} is not a part of this job`]
    ])
    // loops: itself, and three levels up by number
    expect(details(await api.patch(`/api-parts?id=${a.id}`, { parent_part_id: a.id }))).toEqual([
      ["parent_part_id", "CIRCULAR_REFERENCE", "a part cannot be its own parent"]
    ])
    expect(details(await api.patch(`/api-parts?id=${a.id}`, { parent_part_number: "PA-A" }))).toEqual([
      ["parent_part_number", "CIRCULAR_REFERENCE", "a part cannot be its own parent"]
    ])
    expect(details(await api.patch(`/api-parts?id=${a.id}`, { parent_part_number: "PA-C", notes: "loop" }))).toEqual([
      ["parent_part_number", "CIRCULAR_REFERENCE", "the parent is a descendant of this part"]
    ])
    expect(await partRow(a.id)).toEqual(before)
    // 404 / 403 come first
    expect((await other.patch(`/api-parts?id=${a.id}`, { parent_part_number: "NO-SUCH" })).status).toBe(403)
    expect((await api.patch("/api-parts?id=00000000-0000-4000-8000-000000000000", { parent_part_id: a.id })).status).toBe(404)
    // found by number, then cleared with null; the answer is what is stored
    const moved = await api.patch(`/api-parts?id=${c.id}`, { parent_part_number: "PA-A", notes: "moved" })
    expect(moved.status).toBe(200)
    expect(moved.body.data.part).toMatchObject({ parent_part_id: a.id, notes: "moved" })
    expect(await partRow(c.id)).toMatchObject(moved.body.data.part)
    expect((await api.patch(`/api-parts?id=${b.id}`, { parent_part_id: null })).body.data.part.parent_part_id).toBe(null)
    expect((await api.patch(`/api-parts?id=${a.id}`, { parent_part_id: b.id })).body.data.part.parent_part_id).toBe(b.id)
    // material_id: its name where material is left out or null, else material must be that name
    const steel = (await api.post("/api-materials", { name: "PA-STEEL" })).body.data.material.id
    const beforeMaterial = await partRow(c.id)
    expect(details(await api.patch(`/api-parts?id=${c.id}`, { parent_part_number: "NO-SUCH", material_id: steel, material: "Brass", current_cell_id: foreignCell }))).toEqual([
      ["parent_part_number", "FK_CONSTRAINT", "part NO-SUCH is not a part of this job"],
      ["material", "FK_CONSTRAINT", `material must be 'PA-STEEL', the name of material_id ${steel}`],
      ["current_cell_id", "FK_CONSTRAINT", `cell ${foreignCell} does not exist in this tenant`]
    ])
    expect(details(await api.patch(`/api-parts?id=${c.id}`, { material_id: steel, material: "Brass" }))).toEqual([
      ["material", "FK_CONSTRAINT", `material must be 'PA-STEEL', the name of material_id ${steel}`]
    ])
    expect(await partRow(c.id)).toEqual(beforeMaterial)
    expect((await api.patch(`/api-parts?id=${c.id}`, { material_id: steel })).body.data.part).toMatchObject({ material_id: steel, material: "PA-STEEL" })
    await api.patch(`/api-parts?id=${c.id}`, { material: "Loose", material_id: null })
    expect((await api.patch(`/api-parts?id=${c.id}`, { material_id: steel, material: null })).body.data.part).toMatchObject({ material_id: steel, material: "PA-STEEL" })
    expect((await api.patch(`/api-parts?id=${c.id}`, { material_id: steel, material: "PA-STEEL", notes: "agreed" })).body.data.part).toMatchObject({ notes: "agreed" })
  })

  it("answers 403 for another tenant's part before validating the body", async () => {
    const p = (await newPart()).body.data.part
    const res = await other.patch(`/api-parts?id=${p.id}`, { quantity: 0 })
    expect(res.status).toBe(403)
    expect(res.body.error.code).toBe("FORBIDDEN")
  })
})

describe("DELETE /api-parts", () => {
  it("deletes a part with its operations", async () => {
    const job = (await api.post("/api-jobs", nestedJob("PJ-DEL", 1, 3))).body.data
    const partId = job.parts[0].part_id
    const res = await api.delete(`/api-parts?id=${partId}`)
    expect(res.status).toBe(200)
    expect(res.body.data).toEqual({ id: partId, deleted: true })
    expect((await api.get(`/api-operations?part_id=${partId}`)).body.data.operations).toEqual([])
    expect((await api.get(`/api-parts?id=${partId}`)).status).toBe(404)
  })

  it("refuses with 409, naming the part, while one of its operations has time entries; nothing is deleted", async () => {
    const part = (await api.post("/api-jobs", nestedJob("PJ-DEL-TIME", 1, 2))).body.data.parts[0]
    const op = part.operations[1].operation_id
    const olga = (await api.post("/api-profiles", { display_name: "Olga" })).body.data.profile.id
    expect((await api.post(`/api-operation-lifecycle/start?id=${op}&user_id=${olga}`)).status).toBe(200)
    const res = await api.delete(`/api-parts?id=${part.part_id}`)
    expect(res.status).toBe(409)
    expect(res.body.error).toMatchObject({ code: "CONFLICT", message: "part cannot be deleted: one of its operations has time entries" })
    expect((await api.get(`/api-parts?id=${part.part_id}`)).status).toBe(200)
    expect((await api.get(`/api-operations?part_id=${part.part_id}`)).body.data.operations).toHaveLength(2)
    // the operation's own delete says it of the operation
    const own = await api.delete(`/api-operations?id=${op}`)
    expect(own.status).toBe(409)
    expect(own.body.error.message).toBe("operation has time entries and cannot be deleted")
  })

  it("refuses with 409 while the part has child parts, and 403 for another tenant", async () => {
    const parent = (await newPart()).body.data.part
    await newPart({ parent_part_id: parent.id })
    const res = await api.delete(`/api-parts?id=${parent.id}`)
    expect(res.status).toBe(409)
    expect(res.body.error.code).toBe("CONFLICT")
    expect((await other.delete(`/api-parts?id=${parent.id}`)).status).toBe(403)
    expect((await api.delete(`/api-parts`)).status).toBe(422)
  })
})
