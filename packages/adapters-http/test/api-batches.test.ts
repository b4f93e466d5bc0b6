// /api-batches and /api-batch-lifecycle (spec 2.6, 3.3, 4.6): CRUD, one batch per operation,
// start/stop moving the operations, and the tracked time shared across them.
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { distributeBatchTime } from "@mes/domain"
import { client, expectDetail, expectError, type Harness, nestedJob, startServer } from "./harness.ts"

let h: Harness
let api: ReturnType<typeof client>
let other: ReturnType<typeof client>
let cell: string
let foreignCell: string
let operator: string
let n = 0

beforeAll(async () => {
  h = await startServer()
  api = (await h.as("A")).api
  other = (await h.as("B")).api
  cell = (await api.post("/api-cells", { name: "Laser" })).body.data.cell.id
  foreignCell = (await other.post("/api-cells", { name: "B laser" })).body.data.cell.id
  operator = (await api.post("/api-profiles", { display_name: "Olga" })).body.data.profile.id
})
afterAll(() => h.close())

/** Operations on one new part, with estimates (minutes or null). */
const newOps = async (...estimates: Array<number | null>) => {
  const body = nestedJob(`BJ-${++n}`, 1, estimates.length)
  body.parts[0]!.operations.forEach((o: any, i) => (o.estimated_time_minutes = estimates[i]))
  const data = (await api.post("/api-jobs", body)).body.data
  return { part: data.parts[0].part_id as string, ops: data.parts[0].operations.map((o: any) => o.operation_id as string) }
}
const newBatch = async (operation_ids: Array<string> = [], extra: Record<string, unknown> = {}) => {
  const res = await api.post("/api-batches", { batch_number: `B-${++n}`, cell_id: cell, operation_ids, ...extra })
  expect(res.status).toBe(201)
  return res.body.data.batch
}
const act = (action: string, id: string, body?: unknown, as = api) => as.post(`/api-batch-lifecycle/${action}?id=${id}`, body)
const op = async (id: string) => (await api.get(`/api-operations?id=${id}`)).body.data.operation
const batchOf = async (id: string) => (await api.get(`/api-batches?id=${id}`)).body.data.batch

describe("/api-batches", () => {
  it("creates a draft batch with every field and its operations in order", async () => {
    const { ops } = await newOps(10, 20)
    const parent = await newBatch()
    const res = await api.post("/api-batches", {
      batch_number: "NEST-1",
      batch_type: "laser_nesting",
      cell_id: cell,
      material: "S355",
      thickness_mm: 4,
      parent_batch_id: parent.id,
      nesting_metadata: { sheets: 3 },
      nesting_image_url: "https://example.com/n.png",
      layout_image_url: "https://example.com/l.png",
      notes: "rush",
      operation_ids: [ops[1], ops[0]]
    })
    expect(res.status).toBe(201)
    expect(res.body.data.batch).toMatchObject({
      batch_number: "NEST-1",
      batch_type: "laser_nesting",
      status: "draft",
      thickness_mm: 4,
      parent_batch_id: parent.id,
      nesting_metadata: { sheets: 3 },
      operation_ids: [ops[1], ops[0]]
    })
  })

  it("refuses a duplicate batch_number (409), a foreign cell (422), bad URLs and types (422)", async () => {
    const b = await newBatch()
    expectError(await api.post("/api-batches", { batch_number: b.batch_number, cell_id: cell }), 409, "CONFLICT")
    expectDetail(await api.post("/api-batches", { batch_number: "X-1", cell_id: foreignCell }), "cell_id", "FK_CONSTRAINT")
    const bad = await api.post("/api-batches", { batch_number: "X-2", batch_type: "oven", nesting_image_url: "ftp://x", thickness_mm: -1 })
    expect(bad.status).toBe(422)
    expect(bad.body.error.details.map((d: any) => [d.field, d.constraint]).sort()).toEqual([
      ["batch_type", "ENUM_CONSTRAINT"],
      ["cell_id", "NOT_NULL"],
      ["nesting_image_url", "PATTERN_MISMATCH"],
      ["thickness_mm", "MIN_VALUE"]
    ])
  })

  it("a thickness_mm too large for a number (1e400, read as Infinity) is one MAX_VALUE detail, not 'must be an integer'", async () => {
    const res = await api.post("/api-batches", undefined, { raw: `{"batch_number":"B9","cell_id":"${cell}","thickness_mm":1e400}` })
    expectDetail(res, "thickness_mm", "MAX_VALUE")
    expect(res.body.error.details.map((d: any) => [d.field, d.constraint, d.message])).toEqual([
      ["thickness_mm", "MAX_VALUE", `thickness_mm must be at most ${Number.MAX_VALUE}`]
    ])
    expect((await api.get("/api-batches?search=B9")).body.data.pagination.total).toBe(0)
  })

  it("an operation belongs to at most one batch: 409 on create, and only one of two concurrent creates wins", async () => {
    const { ops } = await newOps(null)
    await newBatch([ops[0]])
    expectError(await api.post("/api-batches", { batch_number: `B-${++n}`, cell_id: cell, operation_ids: [ops[0]] }), 409, "CONFLICT")
    const { ops: fresh } = await newOps(null)
    const both = await Promise.all([1, 2].map((i) => api.post("/api-batches", { batch_number: `RACE-${n}-${i}`, cell_id: cell, operation_ids: fresh })))
    expect(both.map((r) => r.status).sort()).toEqual([201, 409])
  })

  it("a create is one statement: 409 for a taken number before 422, 422 before an operation held elsewhere, and a refusal writes nothing", async () => {
    const { ops } = await newOps(null, null)
    const held = await newBatch([ops[0]])
    const count = async () => (await api.get("/api-batches")).body.data.pagination.total
    const before = await count()
    // a taken number with a foreign cell and a held operation: the number's 409
    const taken = await api.post("/api-batches", { batch_number: held.batch_number, cell_id: foreignCell, operation_ids: [ops[0]] })
    expectError(taken, 409, "CONFLICT")
    expect(taken.body.error.message).toContain("batch_number")
    // a foreign cell with a held operation: the cell's 422
    expectDetail(await api.post("/api-batches", { batch_number: `B-${++n}`, cell_id: foreignCell, operation_ids: [ops[1], ops[0]] }), "cell_id", "FK_CONSTRAINT")
    // a held operation alone: 409 naming it; the free operation stays free
    const busy = await api.post("/api-batches", { batch_number: `B-${++n}`, cell_id: cell, operation_ids: [ops[1], ops[0]] })
    expectError(busy, 409, "CONFLICT")
    expect(busy.body.error.message).toContain(ops[0])
    // a repeated operation: 422 with the other reasons, nothing written
    const repeated = await api.post("/api-batches", { batch_number: `B-${++n}`, cell_id: foreignCell, operation_ids: [ops[1], ops[1]] })
    expect(repeated.body.error.details.map((d: any) => [d.field, d.constraint]).sort()).toEqual([["cell_id", "FK_CONSTRAINT"], ["operation_ids[1]", "UNIQUE_CONSTRAINT"]])
    expect(await count()).toBe(before)
    const free = await newBatch([ops[1]])
    expect(free.operation_ids).toEqual([ops[1]])
    expect((await batchOf(free.id)).operation_ids).toEqual([ops[1]])
  })

  it("operation_ids must be the tenant's and not repeated (422)", async () => {
    const theirs = (await other.post("/api-jobs", nestedJob(`BB-${++n}`))).body.data.parts[0].operations[0].operation_id
    const { ops } = await newOps(null)
    const res = await api.post("/api-batches", { batch_number: `B-${++n}`, cell_id: cell, operation_ids: [ops[0], theirs, ops[0]] })
    expect(res.status).toBe(422)
    expect(res.body.error.details.map((d: any) => [d.field, d.constraint])).toEqual(expect.arrayContaining([
      ["operation_ids[1]", "FK_CONSTRAINT"],
      ["operation_ids[2]", "UNIQUE_CONSTRAINT"]
    ]))
  })

  it("lists with status, batch_type, cell_id, material and search filters", async () => {
    await newBatch([], { batch_type: "saw_batch", material: "ALU-TUBE" })
    const ids = async (q: string) => (await api.get(`/api-batches?${q}`)).body.data.batches.map((b: any) => b.material)
    expect(await ids("batch_type=saw_batch")).toEqual(["ALU-TUBE"])
    expect(await ids("material=ALU-TUBE")).toEqual(["ALU-TUBE"])
    expect(await ids("search=alu-t")).toEqual(["ALU-TUBE"])
    expect((await api.get(`/api-batches?cell_id=${cell}&status=draft`)).body.data.pagination.total).toBeGreaterThan(1)
    expectDetail(await api.get("/api-batches?status=done"), "status", "ENUM_CONSTRAINT")
    expect((await other.get("/api-batches")).body.data.batches).toEqual([])
  })

  it("PATCH moves draft → ready once, refuses operation_ids, and cancels a batch not yet started", async () => {
    const b = await newBatch()
    const ready = await api.patch(`/api-batches?id=${b.id}`, { status: "ready", notes: "go" })
    expect(ready.body.data.batch).toMatchObject({ status: "ready", notes: "go" })
    expectError(await api.patch(`/api-batches?id=${b.id}`, { status: "ready" }), 409, "INVALID_STATE_TRANSITION")
    expectDetail(await api.patch(`/api-batches?id=${b.id}`, { operation_ids: [] }), "operation_ids", "ENUM_CONSTRAINT")
    expectError(await api.patch(`/api-batches?id=${b.id}`, { status: "in_progress" }), 409, "INVALID_STATE_TRANSITION")
    expect((await api.patch(`/api-batches?id=${b.id}`, { status: "cancelled" })).body.data.batch.status).toBe("cancelled")
    expectDetail(await api.patch(`/api-batches?id=${b.id}`, { parent_batch_id: b.id }), "parent_batch_id", "CIRCULAR_REFERENCE")
  })

  it("PATCH with a status is one statement: 404 / 403, the fields' references (422) before the state (409), and a refusal changes nothing", async () => {
    const b = await newBatch([], { notes: "before" })
    expectError(await api.patch("/api-batches?id=00000000-0000-4000-8000-000000000002", { status: "ready", cell_id: foreignCell }), 404, "NOT_FOUND")
    expectError(await other.patch(`/api-batches?id=${b.id}`, { status: "ready" }), 403, "FORBIDDEN")
    expectDetail(await api.patch(`/api-batches?id=${b.id}`, { status: "ready", cell_id: foreignCell, notes: "x" }), "cell_id", "FK_CONSTRAINT")
    expect(await batchOf(b.id)).toMatchObject({ status: "draft", notes: "before", updated_at: b.updated_at })
    await act("start", b.id)
    // started: the foreign cell is still answered first, then the state
    expectDetail(await api.patch(`/api-batches?id=${b.id}`, { status: "cancelled", cell_id: foreignCell }), "cell_id", "FK_CONSTRAINT")
    const late = await api.patch(`/api-batches?id=${b.id}`, { status: "cancelled", notes: "late" })
    expectError(late, 409, "INVALID_STATE_TRANSITION")
    expect(late.body.error.message).toContain("'in_progress'")
    expect(await batchOf(b.id)).toMatchObject({ status: "in_progress", notes: "before" })
    // a move with fields: both in the answer and stored
    const c = await newBatch()
    const cancelled = await api.patch(`/api-batches?id=${c.id}`, { status: "cancelled", notes: "called off", cell_id: cell })
    expect(cancelled.status).toBe(200)
    expect(cancelled.body.data.batch).toMatchObject({ status: "cancelled", notes: "called off" })
    expect(await batchOf(c.id)).toEqual(cancelled.body.data.batch)
    // a new parent with a status: its chain is walked in the move's statement; a loop is 422 with the fields'
    // references, before the state, and nothing moves
    const up = await newBatch()
    const down = (await api.patch(`/api-batches?id=${(await newBatch()).id}`, { parent_batch_id: up.id })).body.data.batch
    const loop = await api.patch(`/api-batches?id=${up.id}`, { status: "ready", parent_batch_id: down.id, cell_id: foreignCell })
    expect(loop.body.error.details.map((d: any) => [d.field, d.constraint])).toEqual([["cell_id", "FK_CONSTRAINT"], ["parent_batch_id", "CIRCULAR_REFERENCE"]])
    expectDetail(await api.patch(`/api-batches?id=${up.id}`, { status: "ready", parent_batch_id: down.id }), "parent_batch_id", "CIRCULAR_REFERENCE")
    expectDetail(await api.patch(`/api-batches?id=${up.id}`, { status: "cancelled", parent_batch_id: up.id }), "parent_batch_id", "CIRCULAR_REFERENCE")
    expect(await batchOf(up.id)).toEqual(up)
    expectDetail(await api.patch(`/api-batches?id=${b.id}`, { status: "cancelled", parent_batch_id: b.id }), "parent_batch_id", "CIRCULAR_REFERENCE")
    expectError(await other.patch(`/api-batches?id=${up.id}`, { status: "ready", parent_batch_id: up.id }), 403, "FORBIDDEN")
    // without a loop, both are written
    const nested = await api.patch(`/api-batches?id=${up.id}`, { status: "ready", parent_batch_id: (await newBatch()).id })
    expect(nested.status).toBe(200)
    expect(await batchOf(up.id)).toEqual(nested.body.data.batch)
    expect(nested.body.data.batch.status).toBe("ready")
  })

  it("PATCH status other than ready or cancelled is 409 naming the current status (DECISIONS); a value that is no batch status is 422", async () => {
    const b = await newBatch([], { notes: "before" })
    for (const status of ["in_progress", "completed", "draft"]) {
      const res = await api.patch(`/api-batches?id=${b.id}`, { status, notes: "x" })
      expectError(res, 409, "INVALID_STATE_TRANSITION")
      expect(res.body.error.message).toContain("status is 'draft'")
    }
    expectDetail(await api.patch(`/api-batches?id=${b.id}`, { status: "bogus" }), "status", "ENUM_CONSTRAINT")
    // 404 / 403 first; the fields' references before the state, as every PATCH with a status
    expectError(await api.patch("/api-batches?id=00000000-0000-4000-8000-000000000003", { status: "completed" }), 404, "NOT_FOUND")
    expectError(await other.patch(`/api-batches?id=${b.id}`, { status: "in_progress" }), 403, "FORBIDDEN")
    expectDetail(await api.patch(`/api-batches?id=${b.id}`, { status: "completed", cell_id: foreignCell }), "cell_id", "FK_CONSTRAINT")
    expect(await batchOf(b.id)).toEqual(b)
  })

  it("PATCH to a batch_number another batch has is 409 even when another field is refused (spec 7.4); its own number is not taken", async () => {
    const a = await newBatch()
    const b = await newBatch()
    const theirs = (await other.post("/api-batches", { batch_number: `BT-${++n}`, cell_id: foreignCell })).body.data.batch
    expectError(await api.patch(`/api-batches?id=${b.id}`, { batch_number: a.batch_number, notes: 5 }), 409, "CONFLICT")
    expectError(await api.patch(`/api-batches?id=${b.id}`, { batch_number: a.batch_number, status: "bogus" }), 409, "CONFLICT")
    // its own number, a free one, another tenant's: the 422
    expectDetail(await api.patch(`/api-batches?id=${b.id}`, { batch_number: b.batch_number, notes: 5 }), "notes", "TYPE_MISMATCH")
    expectDetail(await api.patch(`/api-batches?id=${b.id}`, { batch_number: `B-${++n}`, notes: 5 }), "notes", "TYPE_MISMATCH")
    expectDetail(await api.patch(`/api-batches?id=${b.id}`, { batch_number: theirs.batch_number, notes: 5 }), "notes", "TYPE_MISMATCH")
    // 404 / 403 before the 409
    expectError(await other.patch(`/api-batches?id=${b.id}`, { batch_number: a.batch_number, notes: 5 }), 403, "FORBIDDEN")
    expectError(await api.patch("/api-batches?id=00000000-0000-4000-8000-000000000004", { batch_number: a.batch_number, notes: 5 }), 404, "NOT_FOUND")
    expect(await batchOf(b.id)).toEqual(b)
  })

  it("PATCH of fields: references checked in its statement (a refusal changes nothing), a parent without a cycle, 409 for a taken number", async () => {
    const parent = await newBatch()
    const b = await newBatch()
    const refused = await api.patch(`/api-batches?id=${b.id}`, { cell_id: foreignCell, notes: "half" })
    expectDetail(refused, "cell_id", "FK_CONSTRAINT")
    expect(await batchOf(b.id)).toEqual(b)
    const both = await api.patch(`/api-batches?id=${b.id}`, { parent_batch_id: b.id, cell_id: foreignCell })
    expect(both.body.error.details.map((d: any) => [d.field, d.constraint])).toEqual([["cell_id", "FK_CONSTRAINT"], ["parent_batch_id", "CIRCULAR_REFERENCE"]])
    const patched = await api.patch(`/api-batches?id=${b.id}`, { notes: "nested", material: "S235", parent_batch_id: parent.id })
    expect(patched.status).toBe(200)
    expect(patched.body.data.batch).toMatchObject({ id: b.id, notes: "nested", material: "S235", parent_batch_id: parent.id, cell_id: b.cell_id, status: "draft" })
    expect(await batchOf(b.id)).toEqual(patched.body.data.batch)
    expectDetail(await api.patch(`/api-batches?id=${parent.id}`, { parent_batch_id: b.id }), "parent_batch_id", "CIRCULAR_REFERENCE")
    // the chain is walked in the PATCH's statement: three levels up, nothing changed; 404 / 403 come first
    const c = (await api.patch(`/api-batches?id=${(await newBatch()).id}`, { parent_batch_id: b.id })).body.data.batch
    const before = await batchOf(parent.id)
    expectDetail(await api.patch(`/api-batches?id=${parent.id}`, { parent_batch_id: c.id, notes: "loop" }), "parent_batch_id", "CIRCULAR_REFERENCE")
    expect(await batchOf(parent.id)).toEqual(before)
    expectError(await other.patch(`/api-batches?id=${parent.id}`, { parent_batch_id: parent.id }), 403, "FORBIDDEN")
    expectError(await api.patch("/api-batches?id=00000000-0000-4000-8000-000000000000", { parent_batch_id: "00000000-0000-4000-8000-000000000000" }), 404, "NOT_FOUND")
    expect((await api.patch(`/api-batches?id=${c.id}`, { parent_batch_id: parent.id })).body.data.batch.parent_batch_id).toBe(parent.id)
    expectError(await api.patch(`/api-batches?id=${b.id}`, { batch_number: parent.batch_number }), 409, "CONFLICT")
    expectError(await api.patch(`/api-batches?id=00000000-0000-4000-8000-000000000000`, { notes: "x" }), 404, "NOT_FOUND")
    expectError(await api.delete(`/api-batches?id=00000000-0000-4000-8000-000000000000`), 404, "NOT_FOUND")
  })

  it("another tenant's batch is 403; a foreign parent batch is 422", async () => {
    const b = await newBatch()
    expectError(await other.get(`/api-batches?id=${b.id}`), 403, "FORBIDDEN")
    expectError(await other.patch(`/api-batches?id=${b.id}`, { notes: "x" }), 403, "FORBIDDEN")
    expectError(await other.delete(`/api-batches?id=${b.id}`), 403, "FORBIDDEN")
    expectError(await act("start", b.id, undefined, other), 403, "FORBIDDEN")
    expectDetail(await other.post("/api-batches", { batch_number: "BX", cell_id: foreignCell, parent_batch_id: b.id }), "parent_batch_id", "FK_CONSTRAINT")
  })

  it("deleting a draft batch frees its operations", async () => {
    const { ops } = await newOps(null)
    const b = await newBatch([ops[0]])
    expect((await api.delete(`/api-batches?id=${b.id}`)).body.data).toEqual({ id: b.id, deleted: true })
    await newBatch([ops[0]])
  })

  it("a cancelled batch holds no operation: a create or add-operations takes it from there, a draft batch still holds it", async () => {
    const { ops } = await newOps(null, null, null)
    const cancelled = await newBatch(ops)
    const draft = await newBatch()
    expectError(await act("add-operations", draft.id, { operation_ids: [ops[0]] }), 409, "CONFLICT")
    expect((await api.patch(`/api-batches?id=${cancelled.id}`, { status: "cancelled" })).status).toBe(200)
    const created = await newBatch([ops[0]])
    expect(created.operation_ids).toEqual([ops[0]])
    const added = await act("add-operations", draft.id, { operation_ids: [ops[1]] })
    expect(added.status).toBe(200)
    expect(added.body.data.batch.operation_ids).toEqual([ops[1]])
    // the cancelled batch keeps the one nobody took; the others are held by live batches again
    expect((await batchOf(cancelled.id)).operation_ids).toEqual([ops[2]])
    expectError(await act("add-operations", draft.id, { operation_ids: [ops[0]] }), 409, "CONFLICT")
    expectError(await api.post("/api-batches", { batch_number: `BC-${++n}`, cell_id: cell, operation_ids: [ops[1]] }), 409, "CONFLICT")
    expect((await batchOf(created.id)).operation_ids).toEqual([ops[0]])
  })
})

describe("/api-batch-lifecycle", () => {
  it("start moves the operations to in_progress and opens the operator's time entries", async () => {
    const { ops, part } = await newOps(10, 30)
    const b = await newBatch(ops)
    const res = await act("start", b.id, { operator_id: operator })
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({ operation: "start", previous_status: "draft", new_status: "in_progress", time_entries_opened: 2 })
    expect(res.body.data.operations_moved.sort()).toEqual([...ops].sort())
    expect(res.body.data.batch.started_at).not.toBeNull()
    expect((await op(ops[0])).status).toBe("in_progress")
    expect((await api.get(`/api-parts?id=${part}`)).body.data.part.status).toBe("in_progress")
    const entries = (await api.get(`/api-time-entries?batch_id=${b.id}`)).body.data.time_entries
    expect(entries.map((e: any) => [e.user_id, e.end_time])).toEqual([[operator, null], [operator, null]])
  })

  it("stop completes the operations and shares the tracked time by estimated_time_minutes", async () => {
    const { ops, part } = await newOps(10, 30)
    const b = await newBatch(ops)
    await act("start", b.id, { operator_id: operator })
    await h.sql("UPDATE time_entries SET start_time = start_time - interval '40 minutes' WHERE batch_id = $1", [b.id])
    const res = await act("stop", b.id)
    expect(res.body.data).toMatchObject({ operation: "stop", previous_status: "in_progress", new_status: "completed" })
    const shares = res.body.data.time_distribution
    expect(shares.map((s: any) => s.basis)).toEqual(["estimated_time", "estimated_time"])
    const tracked = shares[0].tracked_seconds
    expect(tracked).toBeGreaterThanOrEqual(2400)
    expect(shares.reduce((s: number, x: any) => s + x.share_seconds, 0)).toBe(tracked)
    const byOp = Object.fromEntries(shares.map((s: any) => [s.operation_id, s.share_seconds]))
    expect(byOp[ops[1]]).toBeCloseTo(byOp[ops[0]] * 3, -1)
    const [a, c] = [await op(ops[0]), await op(ops[1])]
    expect([a.status, c.status]).toEqual(["completed", "completed"])
    expect(a.actual_time).toBeCloseTo(byOp[ops[0]] / 60, 6)
    expect(c.actual_time).toBeCloseTo(byOp[ops[1]] / 60, 6)
    expect(a.completion_percentage).toBe(100)
    expect((await api.get(`/api-parts?id=${part}`)).body.data.part.status).toBe("completed")
    expect(res.body.data.batch.completed_at).not.toBeNull()
  })

  it("stop shares the tracked time exactly as distributeBatchTime does, ends each entry with its share and sums it (seed MES_MODEL_SEED)", async () => {
    // the statement computes the shares in SQL (migration 0032); the domain's function is the reference
    const estimate = fc.oneof(
      fc.constant(null),
      fc.constant(0),
      fc.integer({ min: 1, max: 480 }),
      fc.double({ min: 0, max: 10_000, noNaN: true, noDefaultInfinity: true }),
      // near the largest double: their sum, or the tracked seconds × one, overflows unless scaled; tiny ones beside
      // them: their quotients underflow to 0 (migration 0041)
      fc.constantFrom(1e308, 1.7e308, Number.MAX_VALUE, 1e100, 1e-250, 5e-324)
    )
    const draw = fc.array(fc.record({ estimate, ago: fc.integer({ min: 0, max: 200_000 }) }), { minLength: 1, maxLength: 5 })
    await fc.assert(fc.asyncProperty(draw, async (drawn) => {
      const { ops } = await newOps(...drawn.map((d) => d.estimate))
      // batch order is not creation order
      const order = [...ops].reverse()
      const b = await newBatch(order)
      expect((await act("start", b.id, { operator_id: operator })).status).toBe(200)
      for (const [i, d] of drawn.entries()) {
        await h.sql("UPDATE time_entries SET start_time = now() - make_interval(secs => $3) WHERE batch_id = $1 AND operation_id = $2", [b.id, ops[i], d.ago])
      }
      const res = await act("stop", b.id)
      expect(res.status).toBe(200)
      const shares = res.body.data.time_distribution
      const tracked = shares[0].tracked_seconds
      expect(tracked).toBeGreaterThanOrEqual(Math.max(...drawn.map((d) => d.ago)))
      const estimates = new Map<string, number | null>(ops.map((o: string, i: number) => [o, drawn[i]!.estimate]))
      expect(shares).toEqual(distributeBatchTime(tracked, order.map((o) => ({ operation_id: o, estimated_time_minutes: estimates.get(o)! }))))
      const entries = (await api.get(`/api-time-entries?batch_id=${b.id}`)).body.data.time_entries
      const minutes = new Map(shares.map((s: any) => [s.operation_id, s.share_minutes]))
      expect(entries.map((e: any) => [e.operation_id, e.duration_minutes]).sort()).toEqual(order.map((o) => [o, minutes.get(o)]).sort())
      for (const o of order) expect((await op(o)).actual_time).toBe(minutes.get(o))
    }), { seed: Number(process.env.MES_MODEL_SEED ?? 20261128), numRuns: 20 })
  })

  it("stop shares equally when an operation has no estimate", async () => {
    const { ops } = await newOps(10, null, 5)
    const b = await newBatch(ops)
    await act("start", b.id, { operator_id: operator })
    await h.sql("UPDATE time_entries SET start_time = start_time - interval '30 minutes' WHERE batch_id = $1", [b.id])
    const shares = (await act("stop", b.id)).body.data.time_distribution
    expect(shares.every((s: any) => s.basis === "equal")).toBe(true)
    const secs = shares.map((s: any) => s.share_seconds)
    expect(Math.max(...secs) - Math.min(...secs)).toBeLessThanOrEqual(1)
  })

  it("stop with estimates near the largest double, or tiny beside others, shares by them and completes the batch (was a 500, the batch stuck)", async () => {
    for (const estimates of [[1e308, 1e308], [1.7e308], [Number.MAX_VALUE, 1, Number.MAX_VALUE], [1e308, 5e-324], [1e-250, 1e100]]) {
      const { ops } = await newOps(...estimates)
      const b = await newBatch(ops)
      await act("start", b.id, { operator_id: operator })
      await h.sql("UPDATE time_entries SET start_time = start_time - interval '3601 seconds' WHERE batch_id = $1", [b.id])
      const res = await act("stop", b.id)
      expect(res.status).toBe(200)
      const shares = res.body.data.time_distribution
      expect(shares).toEqual(distributeBatchTime(shares[0].tracked_seconds, ops.map((o: string, i: number) => ({ operation_id: o, estimated_time_minutes: estimates[i]! }))))
      expect(shares.map((s: any) => [s.basis, s.weight])).toEqual(estimates.map((e) => ["estimated_time", e]))
      expect(shares.reduce((t: number, s: any) => t + s.share_seconds, 0)).toBe(shares[0].tracked_seconds)
      expect((await batchOf(b.id)).status).toBe("completed")
    }
  })

  it("stop after an entry's start was corrected to 1950: the seconds past 2147483647 are shared and recorded (was a 500, the batch stuck)", async () => {
    const { ops } = await newOps(10, 30)
    const b = await newBatch(ops)
    await act("start", b.id, { operator_id: operator })
    const entries = (await api.get(`/api-time-entries?batch_id=${b.id}`)).body.data.time_entries
    const first = entries.find((e: any) => e.operation_id === ops[0])
    expect((await api.patch(`/api-time-entries?id=${first.id}`, { start_time: "1950-01-01T00:00:00Z" })).status).toBe(200)
    const res = await act("stop", b.id)
    expect(res.status).toBe(200)
    const shares = res.body.data.time_distribution
    const tracked = shares[0].tracked_seconds
    expect(tracked).toBeGreaterThanOrEqual(Math.floor((Date.now() - Date.parse("1950-01-01T00:00:00Z")) / 1000) - 60)
    expect(tracked).toBeGreaterThan(2147483647)
    expect(shares).toEqual(distributeBatchTime(tracked, ops.map((o: string, i: number) => ({ operation_id: o, estimated_time_minutes: [10, 30][i]! }))))
    const ended = (await api.get(`/api-time-entries?batch_id=${b.id}`)).body.data.time_entries
    const minutes = new Map(shares.map((s: any) => [s.operation_id, s.share_minutes]))
    expect(ended.map((e: any) => e.duration_minutes).sort()).toEqual(ops.map((o: string) => minutes.get(o)).sort())
    const saved = await h.sql("SELECT tracked_seconds::text AS t, share_seconds::text AS s FROM batch_time_shares WHERE batch_id = $1 ORDER BY share_seconds", [b.id])
    expect(saved.map((r) => [Number(r.t), Number(r.s)])).toEqual(shares.map((s: any) => [tracked, s.share_seconds]).sort((x: any, y: any) => x[1] - y[1]))
    expect((await batchOf(b.id)).status).toBe("completed")
  })

  it("a batch started without an operator completes its operations with no time to share", async () => {
    const { ops } = await newOps(null)
    const b = await newBatch(ops)
    expect((await act("start", b.id)).body.data.time_entries_opened).toBe(0)
    const res = await act("stop", b.id)
    expect(res.body.data.time_distribution).toEqual([])
    expect((await op(ops[0])).status).toBe("completed")
  })

  it("refusals are 409 INVALID_STATE_TRANSITION naming the statuses", async () => {
    const b = await newBatch()
    const stop = await act("stop", b.id)
    expectError(stop, 409, "INVALID_STATE_TRANSITION")
    expect(stop.body.error.message).toContain("'draft'")
    expect(stop.body.error.message).toContain("'in_progress'")
    await act("start", b.id)
    expectError(await act("start", b.id), 409, "INVALID_STATE_TRANSITION")
    const { ops } = await newOps(null)
    const add = await act("add-operations", b.id, { operation_ids: [ops[0]] })
    expectError(add, 409, "INVALID_STATE_TRANSITION")
    expect(add.body.error.message).toContain("'in_progress'")
  })

  it("add-operations appends in draft and ready, refusing operations in another batch", async () => {
    const { ops } = await newOps(null, null, null)
    const b = await newBatch([ops[0]])
    const res = await act("add-operations", b.id, { operation_ids: [ops[2], ops[1]] })
    expect(res.status).toBe(200)
    expect(res.body.data.batch.operation_ids).toEqual([ops[0], ops[2], ops[1]])
    const otherBatch = await newBatch()
    expectError(await act("add-operations", otherBatch.id, { operation_ids: [ops[1]] }), 409, "CONFLICT")
    expectDetail(await act("add-operations", otherBatch.id, { operation_ids: [] }), "operation_ids", "MIN_LENGTH")
  })

  it("add-operations is one statement: 404 / 403, then 409 for the state, 422 for the operations, 409 for one held elsewhere; a refusal writes nothing", async () => {
    const { ops } = await newOps(null, null, null)
    const theirs = (await other.post("/api-jobs", nestedJob(`BB-${++n}`))).body.data.parts[0].operations[0].operation_id
    const b = await newBatch([ops[0]])
    const held = await newBatch([ops[1]])
    const add = (id: string, operation_ids: unknown, as = api) => act("add-operations", id, { operation_ids }, as)
    // an unknown batch and another tenant's are 404 and 403, even with a body that is refused
    expectError(await add("00000000-0000-4000-8000-000000000001", [ops[2]]), 404, "NOT_FOUND")
    expectError(await add(b.id, "nope", other), 403, "FORBIDDEN")
    // a foreign and a repeated operation beside a held one: 422 with both, before the held one's 409
    const bad = await add(b.id, [theirs, ops[2], ops[2], ops[1]])
    expect(bad.status).toBe(422)
    expect(bad.body.error.details.map((d: any) => [d.field, d.constraint]).sort()).toEqual([
      ["operation_ids[0]", "FK_CONSTRAINT"],
      ["operation_ids[2]", "UNIQUE_CONSTRAINT"]
    ])
    const busy = await add(b.id, [ops[2], ops[1]])
    expectError(busy, 409, "CONFLICT")
    expect(busy.body.error.message).toContain(ops[1])
    expect(busy.body.error.message).not.toContain(ops[2])
    // one already in this batch
    expectError(await add(b.id, [ops[0]]), 409, "CONFLICT")
    const stored = await batchOf(b.id)
    expect(stored.operation_ids).toEqual([ops[0]])
    expect(stored.updated_at).toBe(b.updated_at)
    // a batch that has started: the state's 409 comes before the foreign operation's 422
    await act("start", held.id)
    const started = await add(held.id, [theirs])
    expectError(started, 409, "INVALID_STATE_TRANSITION")
    expect(started.body.error.message).toContain("'in_progress'")
    // the free operation is appended, the answer and the stored batch alike
    const ok = await add(b.id, [ops[2]])
    expect(ok.status).toBe(200)
    expect(ok.body.data.batch.operation_ids).toEqual([ops[0], ops[2]])
    expect(ok.body.data.batch.updated_at > b.updated_at).toBe(true)
    expect(await batchOf(b.id)).toEqual(ok.body.data.batch)
  })

  it("add-operations naming operations already in this batch: 409 naming them (after one in another batch's 409); nothing written", async () => {
    const { ops } = await newOps(null, null, null, null)
    const b = await newBatch([ops[0], ops[1]])
    const elsewhere = await newBatch([ops[3]])
    const add = (operation_ids: Array<string>) => act("add-operations", b.id, { operation_ids })
    const here = await add([ops[0]])
    expectError(here, 409, "CONFLICT")
    expect(here.body.error.message).toBe(`operations already in this batch: ${ops[0]}`)
    // beside a free operation, in the order the request names them
    const two = await add([ops[1], ops[2], ops[0]])
    expectError(two, 409, "CONFLICT")
    expect(two.body.error.message).toBe(`operations already in this batch: ${ops[1]}, ${ops[0]}`)
    // one in another batch is answered first
    const both = await add([ops[0], ops[3]])
    expectError(both, 409, "CONFLICT")
    expect(both.body.error.message).toBe(`operations already in another batch: ${ops[3]}`)
    const stored = await batchOf(b.id)
    expect(stored.operation_ids).toEqual([ops[0], ops[1]])
    expect(stored.updated_at).toBe(b.updated_at)
    expect((await batchOf(elsewhere.id)).operation_ids).toEqual([ops[3]])
    expect((await add([ops[2]])).body.data.batch.operation_ids).toEqual([ops[0], ops[1], ops[2]])
  })

  it("parallel add-operations to one batch append one after another: each answer holds the appends before it, in order", async () => {
    const { ops } = await newOps(...Array.from({ length: 10 }, () => null))
    const b = await newBatch()
    const all = await Promise.all(ops.map((o: string) => act("add-operations", b.id, { operation_ids: [o] })))
    expect(all.map((r) => r.status)).toEqual(ops.map(() => 200))
    const final: Array<string> = (await batchOf(b.id)).operation_ids
    expect([...final].sort()).toEqual([...ops].sort())
    // the k-th append to commit answers the first k operations of the batch, its own last
    const answers = all.map((r, i) => ({ own: ops[i], ids: r.body.data.batch.operation_ids as Array<string> })).sort((x, y) => x.ids.length - y.ids.length)
    answers.forEach((a, k) => {
      expect(a.ids).toEqual(final.slice(0, k + 1))
      expect(a.ids[k]).toBe(a.own)
    })
  })

  it("start and stop answer 404 / 403 before a refused body's 422", async () => {
    const b = await newBatch()
    for (const action of ["start", "stop"]) {
      expectError(await act(action, "00000000-0000-4000-8000-000000000003", { operator_id: "nope" }), 404, "NOT_FOUND")
      expectError(await act(action, b.id, { operator_id: "nope" }, other), 403, "FORBIDDEN")
      expectDetail(await act(action, b.id, { operator_id: "nope" }), "operator_id", "UUID_FORMAT")
    }
  })

  it("20 parallel starts: exactly one 200 and one set of time entries", async () => {
    const { ops } = await newOps(null, null)
    const b = await newBatch(ops)
    const all = await Promise.all(Array.from({ length: 20 }, () => act("start", b.id, { operator_id: operator })))
    expect(all.filter((r) => r.status === 200)).toHaveLength(1)
    expect(all.filter((r) => r.status === 409)).toHaveLength(19)
    expect((await api.get(`/api-time-entries?batch_id=${b.id}`)).body.data.time_entries).toHaveLength(2)
  })

  it("an operator of another tenant is 422 FK_CONSTRAINT and the batch stays draft", async () => {
    const foreign = (await other.post("/api-profiles", { display_name: "B op" })).body.data.profile.id
    const b = await newBatch()
    expectDetail(await act("start", b.id, { operator_id: foreign }), "operator_id", "FK_CONSTRAINT")
    expect((await batchOf(b.id)).status).toBe("draft")
  })
})

// A soft-deleted job hides its parts and operations (DECISIONS), so none of them may stay in a batch that can still
// move them: the job's DELETE is 409 while one of its operations is in a batch not completed or cancelled, and goes
// once that batch is finished, cancelled or deleted. 404 / 403 come first, as for every delete.
/** A new job with one part of `ops` operations. */
const newJobOf = async (ops = 1) => {
  const data = (await api.post("/api-jobs", nestedJob(`JDEL-${++n}`, 1, ops))).body.data
  return { job: data.job_id as string, ops: data.parts[0].operations.map((o: any) => o.operation_id as string) }
}
const deleteJob = (id: string, as = api) => as.delete(`/api-jobs?id=${id}`)

describe("DELETE /api-jobs?id= of a job with operations in a batch", () => {
  it("is 409 while the batch is draft, ready or in progress; nothing is hidden and the batch runs on", async () => {
    const { job, ops } = await newJobOf(2)
    const b = await newBatch([ops[1]!])
    for (const status of ["draft", "ready", "in_progress"]) {
      if (status === "ready") expect((await api.patch(`/api-batches?id=${b.id}`, { status: "ready" })).status).toBe(200)
      if (status === "in_progress") expect((await act("start", b.id, { operator_id: operator })).status).toBe(200)
      const res = await deleteJob(job)
      expectError(res, 409, "CONFLICT")
      expect(res.body.error.message).toContain(b.batch_number)
      expect((await api.get(`/api-jobs?id=${job}`)).status).toBe(200)
      expect((await api.get(`/api-operations?id=${ops[1]}`)).status).toBe(200)
      expect((await api.get(`/api-batches?id=${b.id}`)).body.data.batch).toMatchObject({ status, operation_ids: [ops[1]] })
    }
    // the batch stops as ever, then the job goes and hides its operations
    expect((await act("stop", b.id, {})).status).toBe(200)
    expect((await api.get(`/api-operations?id=${ops[1]}`)).body.data.operation.status).toBe("completed")
    expect((await deleteJob(job)).body.data).toEqual({ id: job, deleted: true })
    expectError(await api.get(`/api-operations?id=${ops[1]}`), 404, "NOT_FOUND")
    expectError(await deleteJob(job), 404, "NOT_FOUND")
  })

  it("goes once the batch is cancelled or deleted, and the hidden operation can join no batch", async () => {
    const a = await newJobOf()
    const cancelled = await newBatch(a.ops)
    expectError(await deleteJob(a.job), 409, "CONFLICT")
    expect((await api.patch(`/api-batches?id=${cancelled.id}`, { status: "cancelled" })).status).toBe(200)
    expect((await deleteJob(a.job)).status).toBe(200)
    expectError(await api.get(`/api-operations?id=${a.ops[0]}`), 404, "NOT_FOUND")

    const d = await newJobOf()
    const deleted = await newBatch(d.ops)
    expectError(await deleteJob(d.job), 409, "CONFLICT")
    expect((await api.delete(`/api-batches?id=${deleted.id}`)).status).toBe(200)
    expect((await deleteJob(d.job)).status).toBe(200)
    // hidden: a new batch cannot take it
    const res = await api.post("/api-batches", { batch_number: `BDEL-${++n}`, cell_id: cell, operation_ids: d.ops })
    expect(res.status).toBe(422)
  })

  it("a job of another tenant is 403 and an unknown one 404, before the batch's 409", async () => {
    const { job, ops } = await newJobOf()
    await newBatch(ops)
    expectError(await deleteJob(job, other), 403, "FORBIDDEN")
    expectError(await deleteJob("00000000-0000-4000-8000-000000000000"), 404, "NOT_FOUND")
    expectError(await deleteJob(job), 409, "CONFLICT")
  })

  it("the probe of the defect: the batch never starts or stops a hidden operation", async () => {
    const { job, ops } = await newJobOf()
    const b = await newBatch(ops)
    expectError(await deleteJob(job), 409, "CONFLICT")
    expect((await api.get(`/api-operations?id=${ops[0]}`)).status).toBe(200)
    const started = await act("start", b.id, { operator_id: operator })
    expect(started.body.data.operations_moved).toEqual(ops)
    const stopped = await act("stop", b.id, {})
    expect(stopped.body.data.operations_moved).toEqual(ops)
    // only now, with the batch completed, does the job go; its operations are hidden from the batch's moves for good
    expect((await deleteJob(job)).status).toBe(200)
    expectError(await api.get(`/api-operations?id=${ops[0]}`), 404, "NOT_FOUND")
    expectError(await act("start", b.id, { operator_id: operator }), 409, "INVALID_STATE_TRANSITION")
  })
})
