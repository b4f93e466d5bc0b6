import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, type Harness, nestedJob, startServer } from "./harness.ts"

let h: Harness
let api: ReturnType<typeof client>
let other: ReturnType<typeof client>
let tenantA: string
let partId: string
let jobId: string
let cellId: string
let operatorId: string

beforeAll(async () => {
  h = await startServer()
  ;({ tenantId: tenantA, api } = await h.as("A"))
  other = (await h.as("B")).api
  cellId = (await api.post("/api-cells", { name: "Laser 1" })).body.data.cell.id
  operatorId = (await api.post("/api-profiles", { display_name: "Olga" })).body.data.profile.id
  const job = (await api.post("/api-jobs", nestedJob("OJ-1", 1, 2))).body.data
  jobId = job.job_id
  partId = job.parts[0].part_id
})
afterAll(() => h.close())

describe("POST /api-operations", () => {
  it("numbers the sequence max+1 when omitted and resolves cell_name and aliases", async () => {
    const res = await api.post("/api-operations", {
      part_id: partId,
      operation_name: "Deburr",
      cell_name: "Laser 1",
      estimated_time: 12.5,
      instructions: "gently",
      assigned_operator_id: operatorId,
      setup_time_minutes: 3
    })
    expect(res.status).toBe(201)
    expect(res.body.data.operation).toMatchObject({
      sequence: 3,
      cell_id: cellId,
      estimated_time_minutes: 12.5,
      notes: "gently",
      assigned_operator_id: operatorId,
      status: "not_started",
      actual_time: 0,
      completion_percentage: 0
    })
  })

  it("gives 10 parallel creates without sequence 10 distinct consecutive numbers", async () => {
    const part = (await api.post("/api-parts", { job_id: jobId, part_number: "SEQ", quantity: 1 })).body.data.part
    const all = await Promise.all(Array.from({ length: 10 }, (_, i) => api.post("/api-operations", { part_id: part.id, operation_name: `op${i}` })))
    expect(all.map((r) => r.status)).toEqual(Array(10).fill(201))
    expect(all.map((r) => r.body.data.operation.sequence).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
  })

  it("answers 409 for a duplicate sequence in the part", async () => {
    const res = await api.post("/api-operations", { part_id: partId, operation_name: "Dup", sequence: 1 })
    expect(res.status).toBe(409)
  })

  it("answers 422 FK_CONSTRAINT for references into another tenant and unknown cell names", async () => {
    const bCell = (await other.post("/api-cells", { name: "B cell" })).body.data.cell.id
    const bOp = (await other.post("/api-profiles", { display_name: "B person" })).body.data.profile.id
    const bJob = (await other.post("/api-jobs", nestedJob("B-OJ"))).body.data
    const res = await api.post("/api-operations", { part_id: bJob.parts[0].part_id, operation_name: "X", cell_id: bCell, assigned_operator_id: bOp })
    expect(res.status).toBe(422)
    expect(res.body.error.details.map((d: any) => [d.field, d.constraint]).sort()).toEqual([
      ["assigned_operator_id", "FK_CONSTRAINT"],
      ["cell_id", "FK_CONSTRAINT"],
      ["part_id", "FK_CONSTRAINT"]
    ])
    const named = await api.post("/api-operations", { part_id: partId, operation_name: "X", cell_name: "B cell" })
    expect(named.status).toBe(422)
    expect(named.body.error.details[0]).toMatchObject({ field: "cell_name", constraint: "FK_CONSTRAINT" })
  })

  it("resolves cell_name in the create's statement: an unknown name after the missing references, nothing written; cell_id wins", async () => {
    // a job and a cell of its own: the list tests below count the first job's and Laser 1's operations
    const part = { id: (await api.post("/api-jobs", nestedJob("OJ-NAMED"))).body.data.parts[0].part_id as string }
    const press = (await api.post("/api-cells", { name: "Press 9" })).body.data.cell.id
    const count = async () => (await api.get(`/api-operations?part_id=${part.id}`)).body.data.operations.length
    const both = await api.post("/api-operations", {
      part_id: part.id,
      operation_name: "X",
      cell_name: "No such cell",
      assigned_operator_id: "00000000-0000-4000-8000-000000000009"
    })
    expect(both.status).toBe(422)
    expect(both.body.error.details.map((d: any) => [d.field, d.constraint, d.value ?? null])).toEqual([
      ["assigned_operator_id", "FK_CONSTRAINT", "00000000-0000-4000-8000-000000000009"],
      ["cell_name", "FK_CONSTRAINT", "No such cell"]
    ])
    expect(both.body.error.details[1].message).toBe("cell named 'No such cell' does not exist in this tenant")
    const onlyName = await api.post("/api-operations", { part_id: part.id, operation_name: "X", cell_name: "No such cell" })
    expect(onlyName.body.error.details.map((d: any) => d.field)).toEqual(["cell_name"])
    expect(await count()).toBe(1)
    // a name that is found is the cell; a cell_id given is the cell whatever the name says
    const found = await api.post("/api-operations", { part_id: part.id, operation_name: "Y", cell_name: "Press 9" })
    expect([found.status, found.body.data.operation.cell_id, found.body.data.operation.sequence]).toEqual([201, press, 2])
    const given = await api.post("/api-operations", { part_id: part.id, operation_name: "Z", cell_id: press, cell_name: "No such cell" })
    expect([given.status, given.body.data.operation.cell_id, given.body.data.operation.sequence]).toEqual([201, press, 3])
    expect(await count()).toBe(3)
  })
})

describe("GET /api-operations", () => {
  it("filters by part, job, cell, cell_name, status, operator, name and search; sorts; sort_by alias", async () => {
    const ids = (q: string) => api.get(`/api-operations?${q}`).then((r) => {
      expect(r.status).toBe(200)
      return r.body.data.operations.map((o: any) => o.operation_name)
    })
    expect(await ids(`part_id=${partId}&sort=sequence&order=asc`)).toEqual(["Op 1", "Op 2", "Deburr"])
    expect(await ids(`job_id=${jobId}&cell_id=${cellId}`)).toEqual(["Deburr"])
    expect(await ids(`cell_name=laser`)).toEqual(["Deburr"])
    expect(await ids(`assigned_operator_id=${operatorId}`)).toEqual(["Deburr"])
    expect(await ids(`part_id=${partId}&operation_name=OP&sort_by=sequence&sort_order=desc`)).toEqual(["Op 2", "Op 1"])
    expect(await ids(`search=gently`)).toEqual(["Deburr"])
    expect(await ids(`part_id=${partId}&sort=estimated_time&order=desc&limit=1`)).toEqual(["Deburr"])
    expect(await ids(`status=completed`)).toEqual([])
    expect((await api.get("/api-operations?status=stopped")).status).toBe(422)
    expect((await other.get(`/api-operations?part_id=${partId}`)).body.data.operations).toEqual([])
  })
})

describe("PATCH /api-operations", () => {
  it("updates allowed fields and refuses others", async () => {
    const op = (await api.get(`/api-operations?part_id=${partId}&sort=sequence&order=asc`)).body.data.operations[0]
    const res = await api.patch(`/api-operations?id=${op.id}`, { completion_percentage: 40, notes: "half", actual_time: 15, cell_id: cellId, assigned_operator_id: operatorId })
    expect(res.status).toBe(200)
    expect(res.body.data.operation).toMatchObject({ completion_percentage: 40, notes: "half", actual_time: 15, cell_id: cellId })
    const bad = await api.patch(`/api-operations?id=${op.id}`, { operation_name: "renamed", completion_percentage: 101 })
    expect(bad.status).toBe(422)
    expect(bad.body.error.details.map((d: any) => [d.field, d.constraint]).sort()).toEqual([
      ["completion_percentage", "MAX_VALUE"],
      ["operation_name", "ENUM_CONSTRAINT"]
    ])
  })

  it("takes instructions as notes (DECISIONS: aliases), with a status move too; notes wins over it; estimated_time stays not updatable", async () => {
    const op = (await api.get(`/api-operations?part_id=${partId}&sort=sequence&order=asc`)).body.data.operations[0]
    const res = await api.patch(`/api-operations?id=${op.id}`, { instructions: "use the jig" })
    expect([res.status, res.body.data?.operation.notes]).toEqual([200, "use the jig"])
    expect((await api.get(`/api-operations?id=${op.id}`)).body.data.operation.notes).toBe("use the jig")
    const both = await api.patch(`/api-operations?id=${op.id}`, { notes: "canonical", instructions: "alias" })
    expect(both.body.data.operation.notes).toBe("canonical")
    const moved = await api.patch(`/api-operations?id=${op.id}`, { status: "in_progress", instructions: "started on the jig" })
    expect([moved.status, moved.body.data?.operation.status, moved.body.data?.operation.notes]).toEqual([200, "in_progress", "started on the jig"])
    const bad = await api.patch(`/api-operations?id=${op.id}`, { instructions: 5, estimated_time: 3 })
    expect(bad.status).toBe(422)
    expect(bad.body.error.details.map((d: any) => [d.field, d.constraint]).sort()).toEqual([["estimated_time", "ENUM_CONSTRAINT"], ["notes", "TYPE_MISMATCH"]])
  })

  it("status completed works from any state and sets completed_at; paused is an alias of on_hold", async () => {
    const [a, b] = (await api.get(`/api-operations?part_id=${partId}&sort=sequence&order=asc`)).body.data.operations
    const done = await api.patch(`/api-operations?id=${a.id}`, { status: "completed" })
    expect(done.status).toBe(200)
    expect(done.body.data.operation.status).toBe("completed")
    expect(done.body.data.operation.completed_at).not.toBeNull()
    const started = await api.patch(`/api-operations?id=${b.id}`, { status: "in_progress" })
    expect(started.body.data.operation.started_at).not.toBeNull()
    const paused = await api.patch(`/api-operations?id=${b.id}`, { status: "paused" })
    expect(paused.status).toBe(200)
    expect(paused.body.data.operation.status).toBe("on_hold")
    expect(paused.body.data.operation.paused_at).not.toBeNull()
    const listed = await api.get(`/api-operations?part_id=${partId}&status=paused`)
    expect(listed.body.data.operations.map((o: any) => o.id)).toEqual([b.id])
    const back = await api.patch(`/api-operations?id=${b.id}`, { status: "not_started" })
    expect(back.status).toBe(409)
    expect(back.body.error.code).toBe("INVALID_STATE_TRANSITION")
    expect(back.body.error.message).toContain("on_hold")
  })

  it("a status move with fields the move also sets: completion is 100; actual_time keeps the PATCH value when no entry runs", async () => {
    const [, b] = (await api.get(`/api-operations?part_id=${partId}&sort=sequence&order=asc`)).body.data.operations
    const done = await api.patch(`/api-operations?id=${b.id}`, { status: "completed", completion_percentage: 50, actual_time: 7, notes: "done" })
    expect(done.status).toBe(200)
    expect(done.body.data.operation).toMatchObject({ status: "completed", completion_percentage: 100, actual_time: 7, notes: "done" })
    expect((await api.get(`/api-operations?id=${b.id}`)).body.data.operation).toMatchObject({ completion_percentage: 100, actual_time: 7 })
  })

  it("403 for another tenant's operation, 404 unknown, 400 bad id", async () => {
    const op = (await api.get(`/api-operations?part_id=${partId}`)).body.data.operations[0]
    expect((await other.patch(`/api-operations?id=${op.id}`, { notes: "x" })).status).toBe(403)
    expect((await other.get(`/api-operations?id=${op.id}`)).status).toBe(403)
    expect((await api.patch(`/api-operations?id=${crypto.randomUUID()}`, { notes: "x" })).status).toBe(404)
    expect((await api.patch(`/api-operations?id=12`, { notes: "x" })).status).toBe(400)
  })
})

describe("DELETE /api-operations", () => {
  it("deletes an operation without time entries and refuses one with time entries (409)", async () => {
    const ops = (await api.post("/api-jobs", nestedJob("OJ-DEL", 1, 2))).body.data.parts[0].operations
    const del = await api.delete(`/api-operations?id=${ops[0].operation_id}`)
    expect(del.status).toBe(200)
    expect(del.body.data).toEqual({ id: ops[0].operation_id, deleted: true })
    await h.sql("INSERT INTO time_entries (tenant_id, id, operation_id, start_time) VALUES ($1, $2, $3, now())", [tenantA, crypto.randomUUID(), ops[1].operation_id])
    const refused = await api.delete(`/api-operations?id=${ops[1].operation_id}`)
    expect(refused.status).toBe(409)
    expect(refused.body.error.code).toBe("CONFLICT")
    expect((await other.delete(`/api-operations?id=${ops[1].operation_id}`)).status).toBe(403)
  })
})
