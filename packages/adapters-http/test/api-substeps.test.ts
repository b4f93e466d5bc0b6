import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, expectDetail, expectError, type Harness, nestedJob, type Reply, startServer } from "./harness.ts"

let h: Harness
let api: ReturnType<typeof client>
let apiB: ReturnType<typeof client>
let tenantA: string
let operationId: string
let otherOperationId: string

const UNKNOWN = "00000000-0000-4000-8000-000000000000"
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

const createSubstep = async (body: Record<string, unknown>, as = api) => {
  const res = await as.post("/api-substeps", body)
  expect(res.status).toBe(201)
  return res.body.data.substep
}

/** A job of the tenant with one part and `ops` operations; their ids. */
const operations = async (jobNumber: string, ops = 1, as = api) => {
  const res = await as.post("/api-jobs", nestedJob(jobNumber, 1, ops))
  expect(res.status).toBe(201)
  return { jobId: res.body.data.job_id as string, ops: res.body.data.parts[0].operations.map((o: any) => o.operation_id as string) }
}

beforeAll(async () => {
  h = await startServer()
  ;({ tenantId: tenantA, api } = await h.as("A"))
  apiB = (await h.as("B")).api
  ;[operationId, otherOperationId] = (await operations("SJ-1", 2)).ops
})
afterAll(() => h.close())

describe("POST /api-substeps", () => {
  it("creates a substep and answers 201 data.substep with its fields", async () => {
    const res = await api.post("/api-substeps", { operation_id: operationId, description: "Check burrs", sequence: 2, completed: false })
    expect(res.status).toBe(201)
    expect(res.body.success).toBe(true)
    const { substep } = res.body.data
    expect(substep).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      tenant_id: tenantA,
      operation_id: operationId,
      description: "Check burrs",
      sequence: 2,
      completed: false,
      completed_at: null,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO)
    })
    expect((await api.get(`/api-substeps?id=${substep.id}`)).body).toEqual({ success: true, data: { substep } })
  })

  it("defaults completed to false and ignores unknown keys", async () => {
    const substep = await createSubstep({ operation_id: operationId, description: "Defaults", sequence: 1, colour: "red" })
    expect(substep).toMatchObject({ completed: false, completed_at: null })
    expect(substep).not.toHaveProperty("colour")
  })

  it("stamps completed_at when created completed", async () => {
    const substep = await createSubstep({ operation_id: operationId, description: "Done already", sequence: 3, completed: true })
    expect(substep.completed).toBe(true)
    expect(substep.completed_at).toMatch(ISO)
    expect(Math.abs(Date.parse(substep.completed_at) - Date.now())).toBeLessThan(60_000)
  })

  it("answers 422 with a detail per invalid or missing field", async () => {
    const missing = await api.post("/api-substeps", { operation_id: operationId })
    expectDetail(missing, "description", "NOT_NULL")
    expectDetail(missing, "sequence", "NOT_NULL")
    expect(missing.body.error.details).toHaveLength(2)
    expect(missing.body.error.details[0]).toMatchObject({ entityType: "substep", entityIndex: 0 })
    expectDetail(await api.post("/api-substeps", { description: "x", sequence: 1 }), "operation_id", "NOT_NULL")
    expectDetail(await api.post("/api-substeps", { operation_id: operationId, description: "x", sequence: 0 }), "sequence", "MIN_VALUE")
    expectDetail(await api.post("/api-substeps", { operation_id: operationId, description: "x", sequence: -3 }), "sequence", "MIN_VALUE")
    expectDetail(await api.post("/api-substeps", { operation_id: operationId, description: "x", sequence: 1.5 }), "sequence", "TYPE_MISMATCH")
    expectDetail(await api.post("/api-substeps", { operation_id: operationId, description: "", sequence: 1 }), "description", "MIN_LENGTH")
    expectDetail(await api.post("/api-substeps", { operation_id: "not-a-uuid", description: "x", sequence: 1 }), "operation_id", "UUID_FORMAT")
    expectDetail(await api.post("/api-substeps", { operation_id: operationId, description: "x", sequence: 1, completed: "yes" }), "completed", "TYPE_MISMATCH")
    expectError(await api.post("/api-substeps", [{ operation_id: operationId, description: "x", sequence: 1 }]), 422, "VALIDATION_ERROR")
  })

  it("answers 422 FK_CONSTRAINT for an operation that does not exist", async () => {
    const res = await api.post("/api-substeps", { operation_id: UNKNOWN, description: "Orphan", sequence: 1 })
    expectDetail(res, "operation_id", "FK_CONSTRAINT")
    expect(res.body.error.details).toEqual([expect.objectContaining({ value: UNKNOWN, entityType: "substep" })])
  })

  it("answers 400 for a body that is not JSON and 401 without a key", async () => {
    expectError(await api.post("/api-substeps", undefined, { raw: "{description:" }), 400, "BAD_REQUEST")
    expectError(await client(h.url).post("/api-substeps", { operation_id: operationId, description: "x", sequence: 1 }), 401, "UNAUTHORIZED")
  })
})

describe("GET /api-substeps", () => {
  let list: ReturnType<typeof client>
  let op: string
  const made: Record<string, any> = {}
  const descriptions = (res: Reply) => {
    expect(res.status).toBe(200)
    return res.body.data.substeps.map((s: any) => s.description)
  }

  beforeAll(async () => {
    ;({ api: list } = await h.as("Lists"))
    const [first, second] = (await operations("SJ-LIST", 2, list)).ops
    op = first!
    // created in this order: created_at ascending is A, B, C, D
    for (const [description, sequence, completed] of [["A", 3, true], ["B", 1, false], ["C", 4, false], ["D", 2, true]] as const) {
      made[description] = await createSubstep({ operation_id: op, description, sequence, completed }, list)
    }
    await createSubstep({ operation_id: second, description: "Other operation", sequence: 5 }, list)
  })

  it("lists an operation's substeps by sequence ascending with pagination", async () => {
    const res = await list.get(`/api-substeps?operation_id=${op}`)
    expect(res.body.success).toBe(true)
    expect(descriptions(res)).toEqual(["B", "D", "A", "C"])
    expect(res.body.data.pagination).toEqual({ limit: 100, offset: 0, total: 4 })
    expect(res.body.data.substeps[0]).toEqual(made.B)
    expect((await list.get("/api-substeps")).body.data.pagination.total).toBe(5)
  })

  it("filters by completed; ?id= reads one", async () => {
    expect(descriptions(await list.get(`/api-substeps?operation_id=${op}&completed=true`))).toEqual(["D", "A"])
    expect(descriptions(await list.get(`/api-substeps?operation_id=${op}&completed=false`))).toEqual(["B", "C"])
    expect(descriptions(await list.get("/api-substeps?completed=false"))).toEqual(["B", "C", "Other operation"])
    expect((await list.get(`/api-substeps?id=${made.C.id}`)).body).toEqual({ success: true, data: { substep: made.C } })
    const none = await list.get(`/api-substeps?operation_id=${UNKNOWN}`)
    expect(none.body.data).toEqual({ substeps: [], pagination: { limit: 100, offset: 0, total: 0 } })
  })

  it("sorts by sequence, created_at and completed in both orders", async () => {
    const sorted = (q: string) => list.get(`/api-substeps?operation_id=${op}&${q}`).then(descriptions)
    expect(await sorted("sort=sequence&order=asc")).toEqual(["B", "D", "A", "C"])
    expect(await sorted("sort=sequence&order=desc")).toEqual(["C", "A", "D", "B"])
    expect(await sorted("sort=created_at")).toEqual(["A", "B", "C", "D"])
    expect(await sorted("sort=created_at&order=asc")).toEqual(["A", "B", "C", "D"])
    expect(await sorted("sort=created_at&order=desc")).toEqual(["D", "C", "B", "A"])
    const completed = async (q: string) =>
      (await list.get(`/api-substeps?operation_id=${op}&${q}`)).body.data.substeps.map((s: any) => s.completed)
    expect(await completed("sort=completed&order=asc")).toEqual([false, false, true, true])
    expect(await completed("sort=completed&order=desc")).toEqual([true, true, false, false])
    expect(await completed("sort=completed")).toEqual([false, false, true, true])
  })

  it("pages with limit and offset", async () => {
    const page = await list.get(`/api-substeps?operation_id=${op}&limit=2&offset=1`)
    expect(descriptions(page)).toEqual(["D", "A"])
    expect(page.body.data.pagination).toEqual({ limit: 2, offset: 1, total: 4 })
    const past = await list.get(`/api-substeps?operation_id=${op}&offset=10`)
    expect(past.body.data).toEqual({ substeps: [], pagination: { limit: 100, offset: 10, total: 4 } })
  })

  it("refuses malformed and invalid query parameters", async () => {
    expectError(await list.get("/api-substeps?operation_id=nope"), 400, "BAD_REQUEST")
    expectError(await list.get("/api-substeps?completed=maybe"), 400, "BAD_REQUEST")
    expectError(await list.get("/api-substeps?id=nope"), 400, "BAD_REQUEST")
    expectDetail(await list.get("/api-substeps?sort=description"), "sort", "ENUM_CONSTRAINT")
    expectDetail(await list.get("/api-substeps?order=up"), "order", "ENUM_CONSTRAINT")
    expectDetail(await list.get("/api-substeps?limit=0"), "limit", "MIN_VALUE")
  })

  it("answers 404 for an id no tenant has", async () => {
    expectError(await list.get(`/api-substeps?id=${UNKNOWN}`), 404, "NOT_FOUND")
  })
})

describe("PATCH /api-substeps", () => {
  it("completed true stamps completed_at, true again keeps it, false clears it", async () => {
    const substep = await createSubstep({ operation_id: operationId, description: "Torque bolts", sequence: 5 })
    const done = await api.patch(`/api-substeps?id=${substep.id}`, { completed: true })
    expect(done.status).toBe(200)
    expect(done.body.success).toBe(true)
    expect(done.body.data.substep).toMatchObject({ id: substep.id, completed: true, description: "Torque bolts", sequence: 5 })
    const stamp = done.body.data.substep.completed_at
    expect(stamp).toMatch(ISO)
    expect(Date.parse(stamp)).toBeGreaterThanOrEqual(Date.parse(substep.created_at))
    expect(Date.parse(done.body.data.substep.updated_at)).toBeGreaterThan(Date.parse(substep.updated_at))
    expect((await api.get(`/api-substeps?id=${substep.id}`)).body.data.substep).toEqual(done.body.data.substep)

    const again = await api.patch(`/api-substeps?id=${substep.id}`, { completed: true, description: "Torque bolts to 40 Nm" })
    expect(again.body.data.substep).toMatchObject({ completed: true, completed_at: stamp, description: "Torque bolts to 40 Nm" })

    const reopened = await api.patch(`/api-substeps?id=${substep.id}`, { completed: false })
    expect(reopened.status).toBe(200)
    expect(reopened.body.data.substep).toMatchObject({ completed: false, completed_at: null })
    expect((await api.get(`/api-substeps?id=${substep.id}`)).body.data.substep).toMatchObject({ completed: false, completed_at: null })
  })

  it("leaves completed_at alone when completed is not in the body", async () => {
    const substep = await createSubstep({ operation_id: operationId, description: "Done", sequence: 6, completed: true })
    const res = await api.patch(`/api-substeps?id=${substep.id}`, { sequence: 7 })
    expect(res.body.data.substep).toMatchObject({ sequence: 7, completed: true, completed_at: substep.completed_at })
  })

  it("answers 422 for invalid fields and fields that cannot be updated", async () => {
    const substep = await createSubstep({ operation_id: operationId, description: "Inspect", sequence: 1 })
    const url = `/api-substeps?id=${substep.id}`
    expectDetail(await api.patch(url, { completed: "yes" }), "completed", "TYPE_MISMATCH")
    expectDetail(await api.patch(url, { completed: null }), "completed", "NOT_NULL")
    expectDetail(await api.patch(url, { sequence: 0 }), "sequence", "MIN_VALUE")
    expectDetail(await api.patch(url, { description: "" }), "description", "MIN_LENGTH")
    expectDetail(await api.patch(url, { operation_id: otherOperationId }), "operation_id", "ENUM_CONSTRAINT")
    expectDetail(await api.patch(url, { completed_at: "2026-01-01T00:00:00Z" }), "completed_at", "ENUM_CONSTRAINT")
    expect((await api.get(url)).body.data.substep).toEqual(substep)
  })

  it("answers 404 for an unknown id, 422 without an id and 400 for a malformed one", async () => {
    expectError(await api.patch(`/api-substeps?id=${UNKNOWN}`, { completed: true }), 404, "NOT_FOUND")
    expectError(await api.patch(`/api-substeps?id=${UNKNOWN}`, { completed: "yes" }), 404, "NOT_FOUND")
    expectDetail(await api.patch("/api-substeps", { completed: true }), "id", "NOT_NULL")
    expectError(await api.patch("/api-substeps?id=42", { completed: true }), 400, "BAD_REQUEST")
  })
})

describe("DELETE /api-substeps", () => {
  it("deletes a substep and answers data {id, deleted: true}", async () => {
    const substep = await createSubstep({ operation_id: operationId, description: "Temporary", sequence: 9 })
    const res = await api.delete(`/api-substeps?id=${substep.id}`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true, data: { id: substep.id, deleted: true } })
    expectError(await api.get(`/api-substeps?id=${substep.id}`), 404, "NOT_FOUND")
    expectError(await api.delete(`/api-substeps?id=${substep.id}`), 404, "NOT_FOUND")
    expectError(await api.delete(`/api-substeps?id=${UNKNOWN}`), 404, "NOT_FOUND")
  })

  it("answers 405 for a method the endpoint does not have", async () => {
    expectError(await api.put("/api-substeps", {}), 405, "METHOD_NOT_ALLOWED")
  })
})

describe("tenant isolation", () => {
  let substep: any

  beforeAll(async () => {
    substep = await createSubstep({ operation_id: operationId, description: "A's step", sequence: 1 })
  })

  it("answers 403 when another tenant reads, patches or deletes the substep, and changes nothing", async () => {
    const url = `/api-substeps?id=${substep.id}`
    expectError(await apiB.get(url), 403, "FORBIDDEN")
    expectError(await apiB.patch(url, { completed: true }), 403, "FORBIDDEN")
    expectError(await apiB.patch(url, { completed: "yes", sequence: 0 }), 403, "FORBIDDEN")
    expectError(await apiB.delete(url), 403, "FORBIDDEN")
    expect((await api.get(url)).body.data.substep).toEqual(substep)
  })

  it("answers 422 FK_CONSTRAINT when another tenant creates a substep on the operation, and stores nothing", async () => {
    const res = await apiB.post("/api-substeps", { operation_id: operationId, description: "Intruder", sequence: 1 })
    expectDetail(res, "operation_id", "FK_CONSTRAINT")
    const total = await h.sql("SELECT count(*)::int AS n FROM substeps WHERE description = 'Intruder'")
    expect(total[0]!.n).toBe(0)
  })

  it("lists only the caller's substeps", async () => {
    const res = await apiB.get(`/api-substeps?operation_id=${operationId}`)
    expect(res.body.data).toEqual({ substeps: [], pagination: { limit: 100, offset: 0, total: 0 } })
    expect((await apiB.get("/api-substeps")).body.data.pagination.total).toBe(0)
  })
})

describe("substeps follow their operation and job", () => {
  it("disappear when their operation is deleted", async () => {
    const { ops: [op] } = await operations("SJ-DEL-OP")
    const kept = await createSubstep({ operation_id: op, description: "Goes", sequence: 1 })
    await createSubstep({ operation_id: op, description: "Goes too", sequence: 2 })
    expect((await api.delete(`/api-operations?id=${op}`)).status).toBe(200)
    expectError(await api.get(`/api-substeps?id=${kept.id}`), 404, "NOT_FOUND")
    expect((await api.get(`/api-substeps?operation_id=${op}`)).body.data.pagination.total).toBe(0)
    expect(await h.sql("SELECT id FROM substeps WHERE operation_id = $1", [op])).toEqual([])
  })

  it("are hidden when their job is soft-deleted, and cannot be added to its operations", async () => {
    const { jobId, ops: [op] } = await operations("SJ-DEL-JOB")
    const substep = await createSubstep({ operation_id: op, description: "Hidden", sequence: 1 })
    expect((await api.delete(`/api-jobs?id=${jobId}`)).status).toBe(200)
    const url = `/api-substeps?id=${substep.id}`
    expectError(await api.get(url), 404, "NOT_FOUND")
    expectError(await api.patch(url, { completed: true }), 404, "NOT_FOUND")
    expectError(await api.delete(url), 404, "NOT_FOUND")
    expect((await api.get(`/api-substeps?operation_id=${op}`)).body.data.pagination.total).toBe(0)
    expect((await api.get("/api-substeps?limit=1000")).body.data.substeps.map((s: any) => s.id)).not.toContain(substep.id)
    expectDetail(await api.post("/api-substeps", { operation_id: op, description: "Late", sequence: 2 }), "operation_id", "FK_CONSTRAINT")
    // the row itself is untouched (soft delete)
    expect(await h.sql("SELECT completed FROM substeps WHERE id = $1", [substep.id])).toEqual([{ completed: false }])
  })
})
