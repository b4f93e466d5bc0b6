import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, expectDetail, expectError, type Harness, nestedJob, type Reply, startServer } from "./harness.ts"

let h: Harness
let api: ReturnType<typeof client>
let apiB: ReturnType<typeof client>
let tenantA: string

const UNKNOWN = "00000000-0000-4000-8000-000000000000"

const createCell = async (body: Record<string, unknown>, as = api) => {
  const res = await as.post("/api-cells", body)
  expect(res.status).toBe(201)
  return res.body.data.cell
}

beforeAll(async () => {
  h = await startServer()
  ;({ tenantId: tenantA, api } = await h.as("A"))
  apiB = (await h.as("B")).api
})
afterAll(() => h.close())

describe("POST /api-cells", () => {
  it("creates a cell with every field and answers 201 data.cell", async () => {
    const body = { name: "Laser", color: "#ff0000", sequence: 3, active: false, external_id: "C-1", external_source: "erp" }
    const res = await api.post("/api-cells", body)
    expect(res.status).toBe(201)
    expect(res.body.success).toBe(true)
    const { cell } = res.body.data
    expect(cell).toMatchObject({ ...body, tenant_id: tenantA })
    expect(cell.id).toMatch(/^[0-9a-f-]{36}$/)
    expect(typeof cell.created_at).toBe("string")
    expect(typeof cell.updated_at).toBe("string")
  })

  it("defaults active to true and optional fields to null", async () => {
    const cell = await createCell({ name: "Defaults" })
    expect(cell).toMatchObject({ name: "Defaults", active: true, color: null, sequence: null, external_id: null, external_source: null })
  })

  it("answers 422 with a detail per invalid field", async () => {
    const res = await api.post("/api-cells", { color: "x".repeat(65), sequence: 1.5, active: "yes" })
    expectDetail(res, "name", "NOT_NULL")
    expectDetail(res, "color", "MAX_LENGTH")
    expectDetail(res, "sequence", "TYPE_MISMATCH")
    expectDetail(res, "active", "TYPE_MISMATCH")
    expect(res.body.error.details[0].entityType).toBe("cell")
    expectDetail(await api.post("/api-cells", { name: "" }), "name", "MIN_LENGTH")
    expectDetail(await api.post("/api-cells", { name: "n".repeat(256) }), "name", "MAX_LENGTH")
    expectError(await api.post("/api-cells", [{ name: "array" }]), 422, "VALIDATION_ERROR")
  })

  it("answers 400 for a body that is not JSON and 401 without a key", async () => {
    expectError(await api.post("/api-cells", undefined, { raw: "{name:" }), 400, "BAD_REQUEST")
    expectError(await client(h.url).post("/api-cells", { name: "No key" }), 401, "UNAUTHORIZED")
  })

  it("answers 409 for a duplicate name in the tenant, even when other fields are invalid", async () => {
    await createCell({ name: "Saw" })
    const dup = await api.post("/api-cells", { name: "Saw" })
    expectError(dup, 409, "CONFLICT")
    expectError(await api.post("/api-cells", { name: "Saw", sequence: "first" }), 409, "CONFLICT")
  })

  it("allows the same name in another tenant", async () => {
    await createCell({ name: "Shared name" })
    const other = await createCell({ name: "Shared name" }, apiB)
    expect(other.tenant_id).not.toBe(tenantA)
  })

  it("answers 409 for a duplicate external_source and external_id", async () => {
    await createCell({ name: "Ext 1", external_id: "X-9", external_source: "erp" })
    expectError(await api.post("/api-cells", { name: "Ext 2", external_id: "X-9", external_source: "erp" }), 409, "CONFLICT")
  })
})

describe("GET /api-cells", () => {
  let list: ReturnType<typeof client>
  const cells: Record<string, any> = {}
  const names = (res: Reply) => res.body.data.cells.map((c: any) => c.name)

  beforeAll(async () => {
    list = client(h.url, (await h.tenant("Lists")).key)
    for (const body of [
      { name: "Laser 1", sequence: 2 },
      { name: "Laser 2", sequence: 1 },
      { name: "Saw", sequence: 3, active: false },
      { name: "Paint", external_id: "ERP-PAINT", external_source: "erp" }
    ]) cells[body.name] = await createCell(body, list)
  })

  it("lists the tenant's cells by sequence ascending (nulls last) with pagination", async () => {
    const res = await list.get("/api-cells")
    expect(res.status).toBe(200)
    expect(res.body.success).toBe(true)
    expect(names(res)).toEqual(["Laser 2", "Laser 1", "Saw", "Paint"])
    expect(res.body.data.pagination).toEqual({ limit: 100, offset: 0, total: 4 })
  })

  it("filters by name (partial, case-insensitive), active and search", async () => {
    expect(names(await list.get("/api-cells?name=LASER&sort=name&order=asc"))).toEqual(["Laser 1", "Laser 2"])
    expect(names(await list.get("/api-cells?active=false"))).toEqual(["Saw"])
    expect(names(await list.get("/api-cells?active=true"))).toEqual(["Laser 2", "Laser 1", "Paint"])
    expect(names(await list.get("/api-cells?search=erp-paint"))).toEqual(["Paint"])
    expect(names(await list.get("/api-cells?search=aser 2"))).toEqual(["Laser 2"])
    const none = await list.get("/api-cells?name=mill")
    expect(none.body.data).toEqual({ cells: [], pagination: { limit: 100, offset: 0, total: 0 } })
  })

  it("sorts by name, sequence and created_at in both orders", async () => {
    expect(names(await list.get("/api-cells?sort=name&order=asc"))).toEqual(["Laser 1", "Laser 2", "Paint", "Saw"])
    expect(names(await list.get("/api-cells?sort=name&order=desc"))).toEqual(["Saw", "Paint", "Laser 2", "Laser 1"])
    expect(names(await list.get("/api-cells?sort=sequence&order=desc"))).toEqual(["Saw", "Laser 1", "Laser 2", "Paint"])
    expect(names(await list.get("/api-cells?sort=created_at"))).toEqual(["Laser 1", "Laser 2", "Saw", "Paint"])
    expect(names(await list.get("/api-cells?sort=created_at&order=desc"))).toEqual(["Paint", "Saw", "Laser 2", "Laser 1"])
  })

  it("pages with limit and offset and reports the total", async () => {
    const page = await list.get("/api-cells?limit=2&offset=1")
    expect(names(page)).toEqual(["Laser 1", "Saw"])
    expect(page.body.data.pagination).toEqual({ limit: 2, offset: 1, total: 4 })
    const past = await list.get("/api-cells?offset=10")
    expect(past.body.data).toEqual({ cells: [], pagination: { limit: 100, offset: 10, total: 4 } })
  })

  it("reads one cell with ?id=", async () => {
    const res = await list.get(`/api-cells?id=${cells.Paint.id}`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true, data: { cell: cells.Paint } })
  })

})

describe("PATCH /api-cells", () => {
  it("updates fields, clears nullable ones and answers data.cell", async () => {
    const cell = await createCell({ name: "Press", color: "blue", sequence: 5 })
    const res = await api.patch(`/api-cells?id=${cell.id}`, { name: "Press 2", color: null, active: false, sequence: 7 })
    expect(res.status).toBe(200)
    expect(res.body.success).toBe(true)
    expect(res.body.data.cell).toMatchObject({ id: cell.id, name: "Press 2", color: null, active: false, sequence: 7 })
    expect((await api.get(`/api-cells?id=${cell.id}`)).body.data.cell.name).toBe("Press 2")
  })

  it("keeps its own name and refuses another cell's name with 409", async () => {
    const cell = await createCell({ name: "Mill" })
    await createCell({ name: "Lathe" })
    expect((await api.patch(`/api-cells?id=${cell.id}`, { name: "Mill", sequence: 1 })).status).toBe(200)
    expectError(await api.patch(`/api-cells?id=${cell.id}`, { name: "Lathe" }), 409, "CONFLICT")
    expectError(await api.patch(`/api-cells?id=${cell.id}`, { name: "Lathe", active: "no" }), 409, "CONFLICT")
  })

  it("answers 422 with details for invalid fields and fields that cannot be updated", async () => {
    const cell = await createCell({ name: "Weld" })
    expectDetail(await api.patch(`/api-cells?id=${cell.id}`, { name: "" }), "name", "MIN_LENGTH")
    expectDetail(await api.patch(`/api-cells?id=${cell.id}`, { name: null }), "name", "NOT_NULL")
    expectDetail(await api.patch(`/api-cells?id=${cell.id}`, { tenant_id: UNKNOWN }), "tenant_id", "ENUM_CONSTRAINT")
  })

})

describe("DELETE /api-cells", () => {
  it("deletes a cell and answers data {id, deleted: true}", async () => {
    const cell = await createCell({ name: "Temporary" })
    const res = await api.delete(`/api-cells?id=${cell.id}`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true, data: { id: cell.id, deleted: true } })
    expectError(await api.get(`/api-cells?id=${cell.id}`), 404, "NOT_FOUND")
    expectError(await api.delete(`/api-cells?id=${cell.id}`), 404, "NOT_FOUND")
  })

  it("answers 409 while an operation, a part or a job references the cell", async () => {
    const byOperation = await createCell({ name: "Used by operation" })
    const job = nestedJob("J-CELL-1")
    job.parts[0]!.operations[0] = { ...job.parts[0]!.operations[0]!, cell_id: byOperation.id } as any
    expect((await api.post("/api-jobs", job)).status).toBe(201)
    expectError(await api.delete(`/api-cells?id=${byOperation.id}`), 409, "CONFLICT")

    const byPart = await createCell({ name: "Used by part" })
    const partJob = nestedJob("J-CELL-2")
    partJob.parts[0] = { ...partJob.parts[0]!, current_cell_id: byPart.id } as any
    expect((await api.post("/api-jobs", partJob)).status).toBe(201)
    expectError(await api.delete(`/api-cells?id=${byPart.id}`), 409, "CONFLICT")

    const byJob = await createCell({ name: "Used by job" })
    expect((await api.post("/api-jobs", nestedJob("J-CELL-3", 1, 1, { current_cell_id: byJob.id }))).status).toBe(201)
    expectError(await api.delete(`/api-cells?id=${byJob.id}`), 409, "CONFLICT")
    expect((await api.get(`/api-cells?id=${byJob.id}`)).status).toBe(200)
  })
})
