// Master data (issue 11): cells and resources sync (spec 4.10), /api-resources, the /api-materials catalog and
// parts' material_id, and sync that leaves records holding the synced values untouched ("unchanged").
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, detailsOf, expectDetail, expectError, type Harness, nestedJob, startServer } from "./harness.ts"

let h: Harness
let api: ReturnType<typeof client>
let other: ReturnType<typeof client>
let tenantId: string

beforeAll(async () => {
  h = await startServer()
  ;({ tenantId, api } = await h.as("Master data"))
  other = (await h.as("Master data other")).api
})
afterAll(() => h.close())

const outboxCount = async () => Number((await h.sql("SELECT count(*) AS n FROM event_log WHERE tenant_id = $1", [tenantId]))[0]!.n)
const updatedAt = async (table: string, id: string) => String((await h.sql(`SELECT updated_at::text AS t FROM ${table} WHERE id = $1`, [id]))[0]!.t)

describe("PUT /api-cells/sync and POST /api-cells/bulk-sync (spec 4.10)", () => {
  it("creates (201), updates (200) and leaves an identical record alone (200 unchanged)", async () => {
    const cell = { external_id: "WC-10", external_source: "erp", name: "Laser 1", color: "#f00", sequence: 1 }
    const created = await api.put("/api-cells/sync", cell)
    expect(created.status).toBe(201)
    expect(created.body.data).toEqual({ action: "created", id: expect.any(String), external_id: "WC-10" })
    const id = created.body.data.id
    const updated = await api.put("/api-cells/sync", { ...cell, color: "#0f0" })
    expect(updated.status).toBe(200)
    expect(updated.body.data).toEqual({ action: "updated", id, external_id: "WC-10" })
    const before = await updatedAt("cells", id)
    const same = await api.put("/api-cells/sync", { ...cell, color: "#0f0" })
    expect(same.status).toBe(200)
    expect(same.body.data).toEqual({ action: "unchanged", id, external_id: "WC-10" })
    expect(await updatedAt("cells", id)).toBe(before)
    expect((await api.get(`/api-cells?id=${id}`)).body.data.cell).toMatchObject({ name: "Laser 1", color: "#0f0", external_source: "erp" })
    // the other tenant's same external key is its own record
    expect((await other.put("/api-cells/sync", cell)).status).toBe(201)
  })

  it("requires external_id (and external_source) for sync, with the spec's message", async () => {
    const res = await api.put("/api-cells/sync", { external_source: "erp", name: "No key" })
    expectDetail(res, "external_id", "NOT_NULL")
    expect(res.body.error.details[0].message).toBe("external_id is required for sync operations")
    expectDetail(await api.put("/api-cells/sync", { external_id: "X", external_source: "erp", name: "" }), "name", "MIN_LENGTH")
  })

  it("bulk-sync takes `cells` or `items`, reports each record (a duplicate name is that record's error), ≤ 1,000", async () => {
    await api.post("/api-cells", { name: "Manual saw" })
    const res = await api.post("/api-cells/bulk-sync", {
      cells: [
        { external_id: "WC-20", external_source: "erp", name: "Saw 20" },
        { external_id: "WC-21", external_source: "erp", name: "Manual saw" },
        { external_id: "WC-10", external_source: "erp", name: "Laser 1", color: "#0f0", sequence: 1 }
      ]
    })
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({ total: 3, created: 1, updated: 0, unchanged: 1, errors: 1 })
    expect(res.body.data.results.map((r: any) => r.action)).toEqual(["created", "error", "unchanged"])
    expect(res.body.data.results[1].error).toContain("name")
    expect((await api.post("/api-cells/bulk-sync", { items: [{ external_id: "WC-20", external_source: "erp", name: "Saw 20" }] })).body.data.unchanged).toBe(1)
    const tooMany = Array.from({ length: 1001 }, (_, i) => ({ external_id: `MANY-${i}`, external_source: "erp", name: `Many ${i}` }))
    expectDetail(await api.post("/api-cells/bulk-sync", { cells: tooMany }), "cells", "MAX_LENGTH")
    // the key the records came under, not the first accepted one
    expectDetail(await api.post("/api-cells/bulk-sync", { items: tooMany }), "items", "MAX_LENGTH")
    expect(await h.sql("SELECT 1 FROM cells WHERE external_id LIKE 'MANY-%'")).toHaveLength(0)
  })
})

describe("/api-resources (spec 2.9, 4.12)", () => {
  it("CRUD with filters, sort and pagination; invalid enums are 422 ENUM_CONSTRAINT", async () => {
    const mk = (body: Record<string, unknown>) => api.post("/api-resources", body)
    const die = await mk({ name: "Die 40", type: "tooling", identifier: "T-40", location: "Rack A", description: "press brake die" })
    expect(die.status).toBe(201)
    expect(die.body.data.resource).toMatchObject({ name: "Die 40", type: "tooling", status: "available", location: "Rack A", external_id: null })
    await mk({ name: "Fixture 7", type: "fixture", location: "Weld bay", status: "in_use" })
    await mk({ name: "Mold 3", type: "mold", location: "Rack B", status: "maintenance" })
    expectDetail(await mk({ name: "X", type: "robot" }), "type", "ENUM_CONSTRAINT")
    expectDetail(await mk({ name: "X", type: "fixture", status: "lost" }), "status", "ENUM_CONSTRAINT")
    expectDetail(await mk({ type: "fixture" }), "name", "NOT_NULL")
    expectDetail(await api.get("/api-resources?type=robot"), "type", "ENUM_CONSTRAINT")

    const names = async (q: string) => (await api.get(`/api-resources?${q}`)).body.data.resources.map((r: any) => r.name)
    expect(await names("type=tooling")).toEqual(["Die 40"])
    expect(await names("status=in_use")).toEqual(["Fixture 7"])
    expect(await names("location=rack&sort=name&order=asc")).toEqual(["Die 40", "Mold 3"])
    expect(await names("search=brake")).toEqual(["Die 40"])
    expect(await names("search=t-40")).toEqual(["Die 40"])
    const page = (await api.get("/api-resources?sort=name&order=desc&limit=2&offset=1")).body.data
    expect(page.resources.map((r: any) => r.name)).toEqual(["Fixture 7", "Die 40"])
    expect(page.pagination).toEqual({ limit: 2, offset: 1, total: 3 })

    const id = die.body.data.resource.id
    const patched = await api.patch(`/api-resources?id=${id}`, { status: "maintenance", location: "Repair" })
    expect(patched.body.data.resource).toMatchObject({ status: "maintenance", location: "Repair" })
    expectDetail(await api.patch(`/api-resources?id=${id}`, { type: "robot" }), "type", "ENUM_CONSTRAINT")
    expect((await api.delete(`/api-resources?id=${id}`)).body.data).toEqual({ id, deleted: true })
    expectError(await api.get(`/api-resources?id=${id}`), 404, "NOT_FOUND")
  })

  it("sync and bulk-sync by external key, with unchanged", async () => {
    const r = { external_id: "RES-1", external_source: "erp", name: "Clamp", type: "fixture", location: "Bay 1" }
    const created = await api.put("/api-resources/sync", r)
    expect(created.status).toBe(201)
    const same = await api.put("/api-resources/sync", r)
    expect(same.body.data).toEqual({ action: "unchanged", id: created.body.data.id, external_id: "RES-1" })
    const bulk = await api.post("/api-resources/bulk-sync", { resources: [{ ...r, location: "Bay 2" }, { ...r, external_id: "RES-2", type: "spaceship" }] })
    expect(bulk.body.data).toMatchObject({ total: 2, updated: 1, errors: 1 })
    expect(bulk.body.data.results[1].error).toContain("type")
    expect((await api.post("/api-resources/bulk-sync", { items: [{ ...r, location: "Bay 2" }] })).body.data.unchanged).toBe(1)
    expectDetail(await api.put("/api-resources/sync", { external_source: "erp", name: "X", type: "mold" }), "external_id", "NOT_NULL")
  })
})

describe("/api-materials and parts' material_id (spec 4.12)", () => {
  it("lists every name the tenant uses once: catalog entries with ids, names only parts carry without", async () => {
    const job = (await api.post("/api-jobs", nestedJob("MAT-1", 2, 1))).body.data
    await api.patch(`/api-parts?id=${job.parts[0].part_id}`, { material: "S235" })
    await api.patch(`/api-parts?id=${job.parts[1].part_id}`, { material: "S235" })
    await other.post("/api-jobs", { ...nestedJob("MAT-X", 1, 1), parts: [{ part_number: "P", quantity: 1, material: "Secret alloy", operations: [{ operation_name: "o", sequence: 1 }] }] })
    const list = async () => (await api.get("/api-materials?limit=1000")).body.data.materials as Array<Record<string, any>>
    expect((await list()).filter((m) => m.name === "S235")).toEqual([expect.objectContaining({ name: "S235", id: null, in_catalog: false })])
    expect((await list()).map((m) => m.name)).not.toContain("Secret alloy")

    const entry = await api.post("/api-materials", { name: "S235", description: "structural steel" })
    expect(entry.status).toBe(201)
    expect(entry.body.data.material).toMatchObject({ name: "S235", in_catalog: true, id: expect.any(String) })
    expect((await list()).filter((m) => m.name === "S235")).toEqual([expect.objectContaining({ id: entry.body.data.material.id, in_catalog: true })])
    expectError(await api.post("/api-materials", { name: "S235" }), 409, "CONFLICT")
    expect((await api.get("/api-materials?in_catalog=true&search=s23")).body.data.materials.map((m: any) => m.name)).toEqual(["S235"])
    // used by parts (by name): not deleted
    expectError(await api.delete(`/api-materials?id=${entry.body.data.material.id}`), 409, "CONFLICT")
    const unused = (await api.post("/api-materials", { name: "Titanium" })).body.data.material.id
    expect((await api.delete(`/api-materials?id=${unused}`)).status).toBe(200)
  })

  it("material_id names an entry of the tenant; alone it fills material; with material they must agree", async () => {
    const steel = (await api.post("/api-materials", { name: "1.4301" })).body.data.material.id
    const jobId = (await api.post("/api-jobs", nestedJob("MAT-2"))).body.data.job_id
    const part = (body: Record<string, unknown>) => api.post("/api-parts", { job_id: jobId, quantity: 1, ...body })
    const filled = await part({ part_number: "F", material_id: steel })
    expect(filled.status).toBe(201)
    expect(filled.body.data.part).toMatchObject({ material_id: steel, material: "1.4301" })
    expect((await part({ part_number: "G", material_id: steel, material: "1.4301" })).status).toBe(201)
    expectDetail(await part({ part_number: "H", material_id: steel, material: "S355" }), "material", "FK_CONSTRAINT")
    expectDetail(await part({ part_number: "I", material_id: "00000000-0000-4000-8000-000000000000" }), "material_id", "FK_CONSTRAINT")
    // nested create and PATCH follow the same rule
    const nested = await api.post("/api-jobs", { ...nestedJob("MAT-3"), parts: [{ part_number: "N", quantity: 1, material_id: steel, operations: [{ operation_name: "o", sequence: 1 }] }] })
    expect(nested.status).toBe(201)
    expect(nested.body.data.job.parts[0]).toMatchObject({ material_id: steel, material: "1.4301" })
    expectDetail(await api.patch(`/api-parts?id=${filled.body.data.part.id}`, { material_id: steel, material: "Brass" }), "material", "FK_CONSTRAINT")
    // an entry parts point at is not deleted
    expectError(await api.delete(`/api-materials?id=${steel}`), 409, "CONFLICT")
  })
})

describe("parts' materials settled in the statement of a nested create and of a job sync", () => {
  const part = (n: string, extra: Record<string, unknown>) => ({ part_number: n, quantity: 1, ...extra, operations: [{ operation_name: "o", sequence: 1 }] })
  const jobsNumbered = async (n: string) => Number((await h.sql("SELECT count(*) AS n FROM jobs WHERE tenant_id = $1 AND job_number = $2", [tenantId, n]))[0]!.n)

  it("fills a material left out, keeps one that agrees, and refuses one that does not: its detail first, nothing written", async () => {
    const brass = (await api.post("/api-materials", { name: "CuZn37" })).body.data.material.id
    const ok = await api.post("/api-jobs", { job_number: "MATN-1", parts: [
      part("A", { material_id: brass }),
      part("B", { material_id: brass, material: "CuZn37" }),
      part("C", { material: "Oak" }),
      part("D", { material_id: brass, material: null })
    ] })
    expect(ok.status).toBe(201)
    expect(ok.body.data.job.parts.map((p: any) => [p.part_number, p.material, p.material_id])).toEqual([
      ["A", "CuZn37", brass], ["B", "CuZn37", brass], ["C", "Oak", null], ["D", "CuZn37", brass]
    ])
    // stored so, and in part.created
    expect((await api.get(`/api-parts?job_id=${ok.body.data.job_id}&sort=part_number&order=asc`)).body.data.parts.map((p: any) => p.material))
      .toEqual(["CuZn37", "CuZn37", "Oak", "CuZn37"])
    const created = await h.sql("SELECT data::json->'part'->>'material' AS m FROM event_log WHERE tenant_id = $1 AND event_type = 'part.created' AND data::json->>'job_id' = $2", [tenantId, ok.body.data.job_id])
    expect(created.map((r) => r.m).sort()).toEqual(["CuZn37", "CuZn37", "CuZn37", "Oak"])

    const before = await outboxCount()
    const cell = "00000000-0000-4000-8000-000000000000"
    const refused = await api.post("/api-jobs", { job_number: "MATN-2", current_cell_id: cell, parts: [
      part("A", { material_id: brass }),
      part("B", { material_id: brass, material: "Brass" }),
      { ...part("C", { material_id: brass, material: "Bronze" }), operations: [{ operation_name: "o", sequence: 1, cell_name: "No such cell" }] }
    ] })
    expectDetail(refused, "parts[1].material", "FK_CONSTRAINT")
    // the materials' details, then the cell name's, then the references' (as before the statement settled them)
    expect(detailsOf(refused)).toEqual([
      "parts[1].material FK_CONSTRAINT",
      "parts[2].material FK_CONSTRAINT",
      "parts[2].operations[0].cell_name FK_CONSTRAINT",
      "current_cell_id FK_CONSTRAINT"
    ])
    expect(refused.body.error.details[0].message).toContain("CuZn37")
    expect(await jobsNumbered("MATN-2")).toBe(0)
    // a disagreement alone
    const alone = await api.post("/api-jobs", { job_number: "MATN-5", parts: [part("A", { material_id: brass }), part("B", { material_id: brass, material: "Brass" })] })
    expect(detailsOf(alone)).toEqual(["parts[1].material FK_CONSTRAINT"])
    expect(await jobsNumbered("MATN-5")).toBe(0)
    expect(await outboxCount()).toBe(before)
    // a taken number is 409 first; a material of another tenant's catalog is the reference's detail alone
    expectError(await api.post("/api-jobs", { job_number: "MATN-1", parts: [part("A", { material_id: brass, material: "Brass" })] }), 409, "CONFLICT")
    const foreign = (await other.post("/api-materials", { name: "Secret" })).body.data.material.id
    const notOurs = await api.post("/api-jobs", { job_number: "MATN-3", parts: [part("A", { material_id: foreign, material: "Secret" })] })
    expect(detailsOf(notOurs)).toEqual(["parts[0].material_id FK_CONSTRAINT"])
    // a rule the plan breaks (two parts numbered alike) still names the materials with it
    const both = await api.post("/api-jobs", { job_number: "MATN-4", parts: [part("A", { material_id: brass, material: "Brass" }), part("A", {})] })
    expect(detailsOf(both)).toEqual(["parts[1].part_number UNIQUE_CONSTRAINT", "parts[0].material FK_CONSTRAINT"])
  })

  it("a job sync, one record or a bulk: a material left out takes the name (an existing part's too), a disagreement refuses the record alone", async () => {
    const alu = (await api.post("/api-materials", { name: "AlMg3" })).body.data.material.id
    const record = (id: string, parts: Array<Record<string, unknown>>) => ({ external_id: id, external_source: "erp", job_number: id, parts })
    const spart = (id: string, extra: Record<string, unknown>) => ({ external_id: id, ...part(id, extra), operations: [{ external_id: `${id}-10`, operation_name: "o", sequence: 1 }] })
    const materialsOf = async (job: string) =>
      (await h.sql("SELECT p.part_number, p.material FROM parts p JOIN jobs j ON j.id = p.job_id WHERE j.tenant_id = $1 AND j.job_number = $2 ORDER BY 1", [tenantId, job]))
        .map((r) => `${r.part_number} ${r.material}`)
    expect((await api.put("/api-jobs/sync", record("MS-1", [spart("MS-1-A", { material: "Old" }), spart("MS-1-B", { material: "Oak" })]))).status).toBe(201)
    // A now names the entry and leaves material out: it takes the name; B, naming neither, keeps its own
    const again = await api.put("/api-jobs/sync", record("MS-1", [spart("MS-1-A", { material_id: alu }), spart("MS-1-B", {})]))
    expect(again.body.data.action).toBe("updated")
    expect(await materialsOf("MS-1")).toEqual(["MS-1-A AlMg3", "MS-1-B Oak"])
    // sent again: nothing to write
    expect((await api.put("/api-jobs/sync", record("MS-1", [spart("MS-1-A", { material_id: alu, material: "AlMg3" }), spart("MS-1-B", {})]))).body.data.action).toBe("unchanged")

    const before = await outboxCount()
    const refused = await api.put("/api-jobs/sync", record("MS-2", [
      spart("MS-2-A", { material_id: alu }),
      { ...spart("MS-2-B", { material_id: alu, material: "Steel" }), operations: [{ external_id: "MS-2-B-10", operation_name: "o", sequence: 1, cell_name: "No such cell" }] }
    ]))
    expect(detailsOf(refused)).toEqual(["parts[1].material FK_CONSTRAINT", "parts[1].operations[0].cell_name FK_CONSTRAINT"])
    expect(await jobsNumbered("MS-2")).toBe(0)
    expect(await outboxCount()).toBe(before)

    // a bulk: the record that disagrees is refused, the others are written, their materials settled
    const bulk = await api.post("/api-jobs/bulk-sync", { items: [
      record("MS-3", [spart("MS-3-A", { material_id: alu })]),
      record("MS-4", [spart("MS-4-A", { material_id: alu, material: "Steel" })]),
      record("MS-5", [spart("MS-5-A", { material: "Oak" }), spart("MS-5-B", { material_id: alu, material: null })])
    ] })
    expect(bulk.body.data.results.map((r: any) => r.action)).toEqual(["created", "error", "created"])
    expect(bulk.body.data.results[1].error).toContain("AlMg3")
    expect([...await materialsOf("MS-3"), ...await materialsOf("MS-4"), ...await materialsOf("MS-5")]).toEqual(["MS-3-A AlMg3", "MS-5-A Oak", "MS-5-B AlMg3"])
  })

  it("a part sync, one record or a bulk: a material left out takes the name (an existing part's too); a disagreement is the record's one detail", async () => {
    const cu = (await api.post("/api-materials", { name: "Cu-ETP" })).body.data.material.id
    expect((await api.put("/api-jobs/sync", { external_id: "PS-J", external_source: "erp", job_number: "PS-J" })).status).toBe(201)
    const rec = (id: string, extra: Record<string, unknown>) => ({ external_id: id, external_source: "erp", job_external_id: "PS-J", part_number: id, quantity: 1, ...extra })
    const materialOf = async (id: string) => (await h.sql("SELECT material FROM parts WHERE tenant_id = $1 AND external_id = $2", [tenantId, id]))[0]?.material
    const created = await api.put("/api-parts/sync", rec("PS-1", { material_id: cu }))
    expect(created.status).toBe(201)
    expect(await materialOf("PS-1")).toBe("Cu-ETP")
    expect((await api.put("/api-parts/sync", rec("PS-2", { material: "Old" }))).status).toBe(201)
    expect((await api.put("/api-parts/sync", rec("PS-2", { material_id: cu }))).body.data.action).toBe("updated")
    expect(await materialOf("PS-2")).toBe("Cu-ETP")
    expect((await api.put("/api-parts/sync", rec("PS-2", { material_id: cu, material: null }))).body.data.action).toBe("unchanged")

    const before = await outboxCount()
    const refused = await api.put("/api-parts/sync", rec("PS-3", { material_id: cu, material: "Brass", current_cell_id: "00000000-0000-4000-8000-000000000000" }))
    expect(detailsOf(refused)).toEqual(["material FK_CONSTRAINT"])
    expect(refused.body.error.details[0].message).toContain("Cu-ETP")
    expect(await materialOf("PS-3")).toBeUndefined()
    expect(await outboxCount()).toBe(before)

    const bulk = await api.post("/api-parts/bulk-sync", { parts: [rec("PS-4", { material_id: cu }), rec("PS-5", { material_id: cu, material: "Brass" }), rec("PS-6", { material: "Oak" })] })
    expect(bulk.body.data.results.map((r: any) => r.action)).toEqual(["created", "error", "created"])
    expect(bulk.body.data.results[1].error).toContain("Cu-ETP")
    expect([await materialOf("PS-4"), await materialOf("PS-5"), await materialOf("PS-6")]).toEqual(["Cu-ETP", undefined, "Oak"])
  })
})

describe("sync without needless writes (issue 11 item 4)", () => {
  const job = (extra: Record<string, unknown> = {}) => ({
    external_id: "U-1",
    external_source: "erp",
    job_number: "UNCH-1",
    customer: "Globex",
    parts: [{ external_id: "U-1-P", part_number: "A", quantity: 2, operations: [{ external_id: "U-1-P-10", operation_name: "Cut", sequence: 1, cell_name: "Saw" }] }],
    ...extra
  })

  it("a job, part or operation that already holds the synced values: unchanged, no updated_at change, no event", async () => {
    await api.post("/api-cells", { name: "Saw" })
    const created = await api.put("/api-jobs/sync", job())
    expect(created.status).toBe(201)
    const id = created.body.data.id
    const part = (await h.sql("SELECT id FROM parts WHERE external_id = 'U-1-P'"))[0]!.id as string
    const op = (await h.sql("SELECT id FROM operations WHERE external_id = 'U-1-P-10'"))[0]!.id as string
    const stamps = async () => [await updatedAt("jobs", id), await updatedAt("parts", part), await updatedAt("operations", op)]
    const before = await stamps()
    const events = await outboxCount()

    const again = await api.put("/api-jobs/sync", job())
    expect(again.status).toBe(200)
    expect(again.body.data).toEqual({ action: "unchanged", id, external_id: "U-1" })
    const partAgain = await api.put("/api-parts/sync", { external_id: "U-1-P", external_source: "erp", job_external_id: "U-1", part_number: "A", quantity: 2 })
    expect(partAgain.body.data).toEqual({ action: "unchanged", id: part, external_id: "U-1-P" })
    const opAgain = await api.put("/api-operations/sync", { external_id: "U-1-P-10", external_source: "erp", part_external_id: "U-1-P", operation_name: "Cut", sequence: 1, cell_name: "Saw" })
    expect(opAgain.body.data).toMatchObject({ action: "unchanged", id: op })
    const bulk = await api.post("/api-jobs/bulk-sync", { jobs: [job(), job({ external_id: "U-2", job_number: "UNCH-2", parts: [{ external_id: "U-2-P", part_number: "A", quantity: 1 }] })] })
    expect(bulk.body.data.errors, JSON.stringify(bulk.body.data.results)).toBe(0)
    expect(bulk.body.data).toMatchObject({ total: 2, created: 1, updated: 0, unchanged: 1, errors: 0 })
    expect(await stamps()).toEqual(before)
    // only the created job wrote events (job.created, part.created)
    expect(await outboxCount()).toBe(events + 2)

    // one changed operation: the job is "updated", and only that operation is written
    const changed = await api.put("/api-jobs/sync", job({ parts: [{ ...(job().parts[0] as object), operations: [{ external_id: "U-1-P-10", operation_name: "Cut", sequence: 1, cell_name: "Saw", estimated_time: 12 }] }] }))
    expect(changed.body.data.action).toBe("updated")
    const after = await stamps()
    expect(after[0]).toBe(before[0])
    expect(after[1]).toBe(before[1])
    expect(after[2]).not.toBe(before[2])
  })
})

describe("bulk re-sync of records sent again byte for byte (issue 11 item 7)", () => {
  const job = (n: number, cellName: string, quantity = 5) => ({
    external_id: `RS-${n}`, external_source: "erp", job_number: `RS-${n}`, customer: "Re-sync",
    parts: [{ external_id: `RS-${n}-P`, part_number: "P", quantity, operations: [{ external_id: `RS-${n}-O`, operation_name: "Cut", sequence: 1, cell_name: cellName }] }]
  })
  const bulk = async (jobs: Array<unknown>) => {
    const res = await api.post("/api-jobs/bulk-sync", { jobs })
    expect(res.status).toBe(200)
    return res.body.data.results.map((r: any) => r.action) as Array<string>
  }
  const body = () => [job(1, "RS saw"), job(2, "RS saw"), job(3, "RS laser")]
  const opOf = async (n: number) => (await api.get(`/api-operations?search=RS-${n}-O`)).body.data.operations[0] ?? (
    (await api.get("/api-operations?limit=1000")).body.data.operations.find((o: any) => o.external_id === `RS-${n}-O`)
  )

  it("answers unchanged with nothing written, and sees every change made since by anyone", async () => {
    await api.post("/api-cells", { name: "RS saw" })
    const laser = (await api.post("/api-cells", { name: "RS laser" })).body.data.cell.id
    expect(await bulk(body())).toEqual(["created", "created", "created"])
    const remembered = await h.sql("SELECT external_id, length(input_hash) AS h FROM job_sync_state WHERE tenant_id = $1 AND external_id LIKE 'RS-%' ORDER BY 1", [tenantId])
    expect(remembered.map((r) => [r.external_id, Number(r.h)])).toEqual([["RS-1", 64], ["RS-2", 64], ["RS-3", 64]])
    const events = await outboxCount()
    const stamp = await updatedAt("jobs", (await api.get("/api-jobs?job_number=RS-1")).body.data.jobs[0].id)
    expect(await bulk(body())).toEqual(["unchanged", "unchanged", "unchanged"])
    expect(await outboxCount()).toBe(events)
    expect(await updatedAt("jobs", (await api.get("/api-jobs?job_number=RS-1")).body.data.jobs[0].id)).toBe(stamp)

    // someone changes a synced value of job 2's part: the same bytes now restore it
    const part2 = (await api.get("/api-parts?limit=1000")).body.data.parts.find((p: any) => p.external_id === "RS-2-P")
    await api.patch(`/api-parts?id=${part2.id}`, { quantity: 9 })
    expect(await bulk(body())).toEqual(["unchanged", "updated", "unchanged"])
    expect((await api.get(`/api-parts?id=${part2.id}`)).body.data.part.quantity).toBe(5)
    expect(await bulk(body())).toEqual(["unchanged", "unchanged", "unchanged"])

    // a cell renamed and its name given to another: job 3's cell_name now means the new cell
    await api.patch(`/api-cells?id=${laser}`, { name: "RS laser (old)" })
    const newLaser = (await api.post("/api-cells", { name: "RS laser" })).body.data.cell.id
    expect(await bulk(body())).toEqual(["unchanged", "unchanged", "updated"])
    expect((await opOf(3)).cell_id).toBe(newLaser)

    // a lifecycle move writes the operation (status is not synced): still unchanged; a soft-deleted job is not
    await api.post(`/api-operation-lifecycle/start?id=${(await opOf(1)).id}`)
    await api.delete(`/api-jobs?id=${(await api.get("/api-jobs?job_number=RS-2")).body.data.jobs[0].id}`)
    const after = await bulk(body())
    expect(after[0]).toBe("unchanged")
    expect(after[1]).not.toBe("unchanged")
    // the same record with its keys in another order is compared field by field: unchanged
    const reordered = body().map((j) => Object.fromEntries(Object.entries(j).reverse()))
    expect((await bulk(reordered))[0]).toBe("unchanged")
  })

  it("a key twice in one bulk is synced in order, record by record", async () => {
    expect(await bulk([job(1, "RS saw"), job(1, "RS saw", 7)])).toEqual(["unchanged", "updated"])
    expect(await bulk([job(1, "RS saw"), job(1, "RS saw", 7)])).toEqual(["updated", "updated"])
    expect(await bulk([job(1, "RS saw", 7)])).toEqual(["unchanged"])
  })
})

describe("GET /api-erp-sync/changes (issue 11 item 5)", () => {
  /** Pages through the feed from `since` until it is empty; every change and the last cursor. */
  const drain = async (api2: ReturnType<typeof client>, since = "", limit = 7, types = "") => {
    const all: Array<Record<string, any>> = []
    let cursor = since
    for (let i = 0; i < 1000; i++) {
      const res = await api2.get(`/api-erp-sync/changes?limit=${limit}${cursor === "" ? "" : `&since=${cursor}`}${types === "" ? "" : `&types=${types}`}`)
      expect(res.status).toBe(200)
      all.push(...res.body.data.changes)
      cursor = res.body.data.next_cursor
      if (!res.body.data.has_more) break
    }
    return { all, cursor }
  }

  it("returns every event of the tenant once, in order, page by page, while writes go on; then nothing until the next change", async () => {
    const { api: feed } = await h.as("Change feed")
    const stranger = await h.as("Change feed stranger")
    await stranger.api.post("/api-jobs", nestedJob("STRANGER", 1, 1))
    const first = await feed.post("/api-jobs", nestedJob("CF-1", 2, 2))
    const ops = first.body.data.parts.flatMap((p: any) => p.operations.map((o: any) => o.operation_id))
    // a reader pages with small pages while operations start and complete concurrently
    const seen: Array<Record<string, any>> = []
    let cursor = ""
    const writer = (async () => {
      // four writers at once, one per operation
      await Promise.all(ops.map(async (op: string) => {
        await feed.post(`/api-operation-lifecycle/start?id=${op}`)
        await feed.post(`/api-operation-lifecycle/complete?id=${op}`)
      }))
      await feed.post("/api-issues", { operation_id: ops[0], title: "Burr", description: "d", issue_type: "ncr", severity: "high" })
    })()
    let writing = true
    void writer.then(() => (writing = false))
    while (writing) {
      const page = await drain(feed, cursor, 3)
      seen.push(...page.all)
      cursor = page.cursor
    }
    await writer
    const rest = await drain(feed, cursor, 3)
    seen.push(...rest.all)

    const logged = await h.sql("SELECT event_id::text AS id FROM event_log WHERE tenant_id = (SELECT tenant_id FROM jobs WHERE job_number = 'CF-1') ORDER BY xid, seq")
    expect(seen.map((c) => c.event_id)).toEqual(logged.map((r) => r.id))
    expect(new Set(seen.map((c) => c.event_id)).size).toBe(seen.length)
    const types = seen.map((c) => c.event_type)
    expect(types[0]).toBe("job.created")
    expect(types.filter((t) => t === "operation.completed")).toHaveLength(4)
    expect(types.at(-1)).toBe("ncr.created")
    for (const op of ops) {
      const mine = seen.filter((c) => c.data.operation_id === op).map((c) => c.event_type)
      expect(mine.indexOf("operation.started")).toBeLessThan(mine.indexOf("operation.completed"))
    }
    expect(seen[0]).toMatchObject({ cursor: expect.stringMatching(/^\d+\.\d+$/), occurred_at: expect.stringMatching(/Z$/), data: expect.any(Object) })
    expect(seen.some((c) => JSON.stringify(c.data).includes("STRANGER"))).toBe(false)

    // caught up: an empty page keeps the cursor; the next change comes next
    const idle = await feed.get(`/api-erp-sync/changes?since=${rest.cursor}`)
    expect(idle.body.data).toEqual({ changes: [], next_cursor: rest.cursor, has_more: false })
    await feed.patch(`/api-jobs?id=${first.body.data.job_id}`, { notes: "done" })
    expect((await feed.get(`/api-erp-sync/changes?since=${rest.cursor}`)).body.data.changes.map((c: any) => c.event_type)).toEqual(["job.updated"])
    // a filter by type
    expect((await drain(feed, "", 100, "operation.completed,ncr.created")).all.map((c) => c.event_type)).toEqual([
      "operation.completed", "operation.completed", "operation.completed", "operation.completed", "ncr.created"
    ])
  })

  it("refuses a malformed cursor (400), a limit out of range and an unknown type (422)", async () => {
    expectError(await api.get("/api-erp-sync/changes?since=yesterday"), 400, "BAD_REQUEST")
    expectError(await api.get("/api-erp-sync/changes?limit=ten"), 400, "BAD_REQUEST")
    expectDetail(await api.get("/api-erp-sync/changes?limit=0"), "limit", "MIN_VALUE")
    expectDetail(await api.get("/api-erp-sync/changes?limit=1001"), "limit", "MAX_VALUE")
    expectDetail(await api.get("/api-erp-sync/changes?types=job.exploded"), "types", "ENUM_CONSTRAINT")
  })
})

describe("POST /api-erp-sync/diff and /sync, GET /api-erp-sync/status (issue 11 item 5)", () => {
  const body = (extra: Record<string, unknown> = {}) => ({
    cells: [{ external_id: "ERP-WC-1", external_source: "erp2", name: "ERP Press" }],
    resources: [{ external_id: "ERP-R-1", external_source: "erp2", name: "Press die", type: "tooling" }],
    jobs: [{
      external_id: "ERP-J-1",
      external_source: "erp2",
      job_number: "ERP-1",
      parts: [{ external_id: "ERP-J-1-P", part_number: "A", quantity: 3, operations: [{ external_id: "ERP-J-1-P-10", operation_name: "Press", sequence: 1, cell_name: "ERP Press" }] }]
    }],
    parts: [{ external_id: "ERP-P-2", external_source: "erp2", job_external_id: "ERP-J-1", part_number: "B", quantity: 1 }],
    operations: [{ external_id: "ERP-O-2", external_source: "erp2", part_external_id: "ERP-P-2", operation_name: "Deburr", sequence: 1, cell_name: "ERP Press" }],
    ...extra
  })
  const actions = (report: any) => Object.fromEntries(Object.entries(report.results).map(([k, v]: [string, any]) => [k, v.map((r: any) => r.action)]))
  const counts = async () => (await h.sql(`SELECT (SELECT count(*) FROM jobs WHERE tenant_id = $1)::int AS jobs, (SELECT count(*) FROM parts WHERE tenant_id = $1)::int AS parts,
    (SELECT count(*) FROM cells WHERE tenant_id = $1)::int AS cells, (SELECT count(*) FROM resources WHERE tenant_id = $1)::int AS resources,
    (SELECT count(*) FROM event_log WHERE tenant_id = $1)::int AS outbox, (SELECT count(*) FROM sync_runs WHERE tenant_id = $1)::int AS runs`, [tenantId]))[0]

  it("diff says what a sync would do and writes nothing; sync applies it in dependency order; diff again finds it unchanged", async () => {
    const before = await counts()
    const diff = await api.post("/api-erp-sync/diff", body())
    expect(diff.status).toBe(200)
    expect(diff.body.data).toMatchObject({ mode: "upsert", dry_run: true, total: 5, created: 5, errors: 0 })
    expect(actions(diff.body.data)).toEqual({ cells: ["created"], resources: ["created"], jobs: ["created"], parts: ["created"], operations: ["created"] })
    expect(await counts()).toEqual(before)

    const sync = await api.post("/api-erp-sync/sync", body())
    expect(sync.body.data).toMatchObject({ dry_run: false, total: 5, created: 5 })
    const ids = Object.fromEntries(Object.entries(sync.body.data.results).map(([k, v]: [string, any]) => [k, v[0].id]))
    expect((await api.get(`/api-operations?id=${(await h.sql("SELECT id FROM operations WHERE external_id = 'ERP-O-2'"))[0]!.id}`)).body.data.operation.cell_id).toBe(ids.cells)
    const again = await api.post("/api-erp-sync/diff", body())
    expect(actions(again.body.data)).toEqual({ cells: ["unchanged"], resources: ["unchanged"], jobs: ["unchanged"], parts: ["unchanged"], operations: ["unchanged"] })

    // what an update would change, field by field (a job whose own fields stay says `parts`)
    const b = body()
    const changes = await api.post("/api-erp-sync/diff", {
      cells: [{ ...b.cells[0], color: "#00f" }],
      jobs: [{ ...b.jobs[0], customer: "New customer", notes: "rush" }],
      parts: [{ ...b.parts[0], quantity: 2 }]
    })
    expect(changes.body.data.results.cells[0]).toMatchObject({ action: "updated", changed_fields: ["color"] })
    expect(changes.body.data.results.jobs[0]).toMatchObject({ action: "updated", changed_fields: ["customer", "notes"] })
    expect(changes.body.data.results.parts[0]).toMatchObject({ action: "updated", changed_fields: ["quantity"] })
    const nested = await api.post("/api-erp-sync/diff", { jobs: [{ ...b.jobs[0], parts: [{ ...b.jobs[0]!.parts[0], quantity: 4 }] }] })
    expect(nested.body.data.results.jobs[0]).toMatchObject({ action: "updated", changed_fields: ["parts"] })
    expect((await api.get(`/api-cells?id=${ids.cells}`)).body.data.cell.color).toBeNull()

    const status = (await api.get("/api-erp-sync/status")).body.data.sources.find((s: any) => s.external_source === "erp2")
    expect(status.runs[0]).toMatchObject({ kind: "erp-sync", total: 5, created: 5, updated: 0, unchanged: 0, skipped: 0, errors: 0 })
    expect(Date.parse(status.last_sync_at)).toBeGreaterThan(Date.now() - 60_000)
    // diffs are not runs
    expect(status.runs).toHaveLength(1)
  })

  it("modes: create_only skips updates, update_only skips creates; a refused record is reported and the rest kept", async () => {
    const changedJob = { ...body().jobs[0], customer: "Changed" }
    const newJob = { ...body().jobs[0], external_id: "ERP-J-9", job_number: "ERP-9", parts: [{ external_id: "ERP-J-9-P", part_number: "A", quantity: 1 }] }
    const createOnly = await api.post("/api-erp-sync/sync", { mode: "create_only", jobs: [changedJob, newJob] })
    expect(actions(createOnly.body.data).jobs).toEqual(["skipped", "created"])
    expect((await api.get(`/api-jobs?id=${createOnly.body.data.results.jobs[0].id}`)).body.data.job.customer).toBeNull()

    const newer = { ...newJob, external_id: "ERP-J-10", job_number: "ERP-10", parts: [{ external_id: "ERP-J-10-P", part_number: "A", quantity: 1 }] }
    const updateOnly = await api.post("/api-erp-sync/sync", { mode: "update_only", jobs: [changedJob, newer] })
    expect(actions(updateOnly.body.data).jobs).toEqual(["updated", "skipped"])
    expect(await h.sql("SELECT 1 FROM jobs WHERE external_id = 'ERP-J-10'")).toHaveLength(0)

    const mixed = await api.post("/api-erp-sync/sync", { parts: [{ external_id: "ERP-P-X", external_source: "erp2", job_external_id: "NO-SUCH-JOB", part_number: "X", quantity: 1 }], cells: [{ external_id: "ERP-WC-2", external_source: "erp2", name: "ERP Saw" }] })
    expect(mixed.body.data).toMatchObject({ total: 2, created: 1, errors: 1 })
    expect(mixed.body.data.results.parts[0]).toMatchObject({ external_id: "ERP-P-X", action: "error", error: expect.stringContaining("job_external_id") })
  })

  it("update_only: a job record that would create a part or an operation beneath its job is skipped whole, nothing of it written", async () => {
    const job = (parts: Array<Record<string, unknown>>) => ({ external_id: "UO-J", external_source: "erp3", job_number: "UO-1", parts })
    const p1 = { external_id: "UO-P1", part_number: "EP1", quantity: 1, operations: [{ external_id: "UO-O1", operation_name: "Cut", sequence: 1 }] }
    const created = await api.post("/api-erp-sync/sync", { jobs: [job([p1])] })
    expect(created.body.data).toMatchObject({ created: 1, errors: 0 })
    const jobId = created.body.data.results.jobs[0].id
    const stored = async () => (await api.get(`/api-jobs?id=${jobId}`)).body.data.job.parts.map((p: any) => [p.part_number, p.quantity, p.operations.map((o: any) => o.external_id)])
    const before = await outboxCount()

    // a new part (with an operation) beside an updated one; a new operation under an existing part
    const newPart = job([{ ...p1, quantity: 3 }, { external_id: "UO-P2", part_number: "EP2", quantity: 1, operations: [{ external_id: "UO-O2", operation_name: "x", sequence: 1 }] }])
    const newOperation = job([{ ...p1, operations: [...p1.operations, { external_id: "UO-O3", operation_name: "y", sequence: 2 }] }])
    for (const record of [newPart, newOperation]) {
      const diff = await api.post("/api-erp-sync/diff", { mode: "update_only", jobs: [record] })
      expect(diff.body.data).toMatchObject({ total: 1, created: 0, updated: 0, skipped: 1 })
      const sync = await api.post("/api-erp-sync/sync", { mode: "update_only", jobs: [record] })
      expect(sync.status).toBe(200)
      expect(sync.body.data).toMatchObject({ total: 1, created: 0, updated: 0, unchanged: 0, skipped: 1, errors: 0 })
      expect(sync.body.data.results.jobs[0]).toEqual({ external_id: "UO-J", id: jobId, action: "skipped" })
    }
    expect(await stored()).toEqual([["EP1", 1, ["UO-O1"]]])
    expect(await h.sql("SELECT 1 FROM parts WHERE external_id = 'UO-P2' UNION ALL SELECT 1 FROM operations WHERE external_id IN ('UO-O2', 'UO-O3')")).toHaveLength(0)
    expect(await outboxCount()).toBe(before)
    const status = (await api.get("/api-erp-sync/status")).body.data.sources.find((s: any) => s.external_source === "erp3")
    expect(status.runs[0]).toMatchObject({ total: 1, created: 0, updated: 0, skipped: 1 })

    // what already exists is updated under update_only
    const update = await api.post("/api-erp-sync/sync", { mode: "update_only", jobs: [job([{ ...p1, quantity: 3 }])] })
    expect(update.body.data).toMatchObject({ created: 0, updated: 1, skipped: 0 })
    expect(await stored()).toEqual([["EP1", 3, ["UO-O1"]]])
  })

  it("refuses a bad mode, an unknown list, a list that is not an array, and more than 1,000 records in all (nothing written)", async () => {
    expectDetail(await api.post("/api-erp-sync/sync", { mode: "replace" }), "mode", "ENUM_CONSTRAINT")
    expectDetail(await api.post("/api-erp-sync/sync", { widgets: [] }), "widgets", "ENUM_CONSTRAINT")
    expectDetail(await api.post("/api-erp-sync/diff", { jobs: {} }), "jobs", "TYPE_MISMATCH")
    expectDetail(await api.post("/api-erp-sync/sync", []), "", "TYPE_MISMATCH")
    const cells = Array.from({ length: 600 }, (_, i) => ({ external_id: `BIG-C-${i}`, external_source: "big", name: `Big ${i}` }))
    const resources = Array.from({ length: 401 }, (_, i) => ({ external_id: `BIG-R-${i}`, external_source: "big", name: `Big ${i}`, type: "fixture" }))
    expectDetail(await api.post("/api-erp-sync/sync", { cells, resources }), "", "MAX_LENGTH")
    expect(await h.sql("SELECT 1 FROM cells WHERE external_source = 'big'")).toHaveLength(0)
  })
})
