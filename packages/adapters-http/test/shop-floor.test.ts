// Shop-floor extras (issue 12): scrap reasons, good/scrap/rework quantities with running totals, operator
// assignments and work queues, substep templates applied to operations, cell downtime and OEE, and their events.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { testDatabaseKind } from "@mes/adapters-pg"
import { client, expectDetail, expectError, type Harness, nestedJob, type Reply, startServer } from "./harness.ts"

let h: Harness
let api: ReturnType<typeof client>
let other: ReturnType<typeof client>
let tenantId: string
/** Records of the tenant to hang things on. */
const mine = { job: "", part: "", op: "", op2: "", cell: "", profile: "", reason: "" }

beforeAll(async () => {
  h = await startServer()
  ;({ tenantId, api } = await h.as("Shop floor"))
  other = (await h.as("Shop floor other")).api
  const job = (await api.post("/api-jobs", nestedJob("SF-1", 1, 2))).body.data
  mine.job = job.job_id
  mine.part = job.parts[0].part_id
  mine.op = job.parts[0].operations[0].operation_id
  mine.op2 = job.parts[0].operations[1].operation_id
  mine.cell = (await api.post("/api-cells", { name: "Laser 1" })).body.data.cell.id
  mine.profile = (await api.post("/api-profiles", { display_name: "Ann Operator" })).body.data.profile.id
})
afterAll(() => h.close())

/** The tenant's outbox events of `type`, oldest first. */
const events = async (type: string) =>
  (await h.sql("SELECT data FROM event_log WHERE tenant_id = $1 AND event_type = $2 ORDER BY seq", [tenantId, type])).map((r) =>
    typeof r.data === "string" ? JSON.parse(r.data) : r.data
  ) as Array<Record<string, any>>

/** A query's date or timestamp `field` outside the years 0001 to 9999: 422 with the range, as a body's timestamp. */
const expectOutOfRange = (res: Reply, field: string, constraint: "MIN_VALUE" | "MAX_VALUE") => {
  expectDetail(res, field, constraint)
  expect(res.body.error.details.find((d: any) => d.field === field)).toMatchObject({
    constraint,
    message: `${field} must be between 0001-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z`,
    entityType: "query"
  })
}

describe("/api-scrap-reasons", () => {
  it("a new tenant starts with the default set, listed by code", async () => {
    const list = (await api.get("/api-scrap-reasons")).body.data
    expect(list.scrap_reasons.map((r: any) => r.code)).toEqual(["DIMENSION", "HANDLING", "MACHINE", "MATERIAL", "OTHER", "SETUP"])
    expect(list.scrap_reasons.every((r: any) => r.active && r.tenant_id === tenantId)).toBe(true)
    expect(new Set(list.scrap_reasons.map((r: any) => r.category))).toEqual(new Set(["material", "process", "equipment", "operator", "other"]))
    mine.reason = list.scrap_reasons.find((r: any) => r.code === "DIMENSION").id
  })

  it("create, read, filter, update, delete; code unique per tenant (409); enums and required fields (422)", async () => {
    const created = await api.post("/api-scrap-reasons", { code: "BURR", description: "Burr left after cutting", category: "process" })
    expect(created.status).toBe(201)
    const reason = created.body.data.scrap_reason
    expect(reason).toMatchObject({ code: "BURR", category: "process", active: true })
    expect((await api.get(`/api-scrap-reasons?id=${reason.id}`)).body.data.scrap_reason).toEqual(reason)
    expectError(await api.post("/api-scrap-reasons", { code: "BURR", description: "again" }), 409, "CONFLICT")
    // 409 before 422 (spec 7.4)
    expectError(await api.post("/api-scrap-reasons", { code: "BURR", category: "weather" }), 409, "CONFLICT")
    expect((await other.post("/api-scrap-reasons", { code: "BURR", description: "theirs" })).status).toBe(201)
    expectDetail(await api.post("/api-scrap-reasons", { code: "X1", description: "d", category: "weather" }), "category", "ENUM_CONSTRAINT")
    expectDetail(await api.post("/api-scrap-reasons", { description: "no code" }), "code", "NOT_NULL")
    expectDetail(await api.get("/api-scrap-reasons?category=weather"), "category", "ENUM_CONSTRAINT")
    const codes = async (q: string) => (await api.get(`/api-scrap-reasons?${q}`)).body.data.scrap_reasons.map((r: any) => r.code)
    expect(await codes("category=process")).toEqual(["BURR", "DIMENSION", "SETUP"])
    expect(await codes("search=burr")).toEqual(["BURR"])
    const patched = await api.patch(`/api-scrap-reasons?id=${reason.id}`, { active: false, description: "Burr" })
    expect(patched.body.data.scrap_reason).toMatchObject({ active: false, description: "Burr" })
    expect(await codes("active=false")).toEqual(["BURR"])
    expect((await api.delete(`/api-scrap-reasons?id=${reason.id}`)).body.data).toEqual({ id: reason.id, deleted: true })
    expectError(await api.get(`/api-scrap-reasons?id=${reason.id}`), 404, "NOT_FOUND")
  })
})

describe("/api-operation-quantities", () => {
  it("records good, scrap (with an active reason) and rework against an operation, naming its part and job", async () => {
    const res = await api.post("/api-operation-quantities", {
      operation_id: mine.op, good: 8, scrap: 1, rework: 1, scrap_reason_id: mine.reason, user_id: mine.profile, notes: "first shift"
    })
    expect(res.status).toBe(201)
    const q = res.body.data.operation_quantity
    expect(q).toMatchObject({
      operation_id: mine.op, part_id: mine.part, job_id: mine.job, good: 8, scrap: 1, rework: 1, scrap_reason_id: mine.reason,
      user_id: mine.profile, issue_id: null, notes: "first shift", recorded_at: expect.stringMatching(/Z$/)
    })
    expect((await api.get(`/api-operation-quantities?id=${q.id}`)).body.data.operation_quantity).toEqual(q)
    const [event] = (await events("quantity.recorded")).filter((e) => e.quantity_id === q.id)
    expect(event).toMatchObject({ quantity_id: q.id, operation_id: mine.op, part_id: mine.part, job_id: mine.job, good: 8, scrap: 1, rework: 1, quantity: q })
  })

  it("refuses what cannot be recorded (422) and writes nothing", async () => {
    const before = (await api.get("/api-operation-quantities")).body.data.pagination.total
    expectDetail(await api.post("/api-operation-quantities", { operation_id: mine.op, scrap: 2 }), "scrap_reason_id", "NOT_NULL")
    expectDetail(await api.post("/api-operation-quantities", { operation_id: mine.op }), "good", "MIN_VALUE")
    expectDetail(await api.post("/api-operation-quantities", { operation_id: mine.op, good: 0, scrap: 0 }), "good", "MIN_VALUE")
    expectDetail(await api.post("/api-operation-quantities", { operation_id: mine.op, good: -1 }), "good", "MIN_VALUE")
    expectDetail(await api.post("/api-operation-quantities", { operation_id: mine.op, good: 1.5 }), "good", "TYPE_MISMATCH")
    expectDetail(await api.post("/api-operation-quantities", { good: 1 }), "operation_id", "NOT_NULL")
    expectDetail(await api.post("/api-operation-quantities", { operation_id: mine.op, good: 1, recorded_at: "yesterday" }), "recorded_at", "DATE_FORMAT")
    const inactive = (await api.post("/api-scrap-reasons", { code: "OLD", description: "retired", active: false })).body.data.scrap_reason.id
    const res = await api.post("/api-operation-quantities", { operation_id: mine.op, scrap: 1, scrap_reason_id: inactive })
    expectDetail(res, "scrap_reason_id", "FK_CONSTRAINT")
    expect(res.body.error.details[0].message).toContain("inactive")
    // checked in the create's statement: an inactive reason is the only detail, whatever else is missing; another
    // tenant's reason is not the tenant's
    const alone = await api.post("/api-operation-quantities", { operation_id: mine.op, scrap: 1, scrap_reason_id: inactive, user_id: "00000000-0000-4000-8000-00000000000a" })
    expect(alone.body.error.details.map((d: any) => [d.field, d.message])).toEqual([["scrap_reason_id", `scrap reason ${inactive} is inactive`]])
    const theirs = (await other.post("/api-scrap-reasons", { code: "THEIRS", description: "retired", active: false })).body.data.scrap_reason.id
    const foreign = await api.post("/api-operation-quantities", { operation_id: mine.op, scrap: 1, scrap_reason_id: theirs })
    expect(foreign.body.error.details.map((d: any) => [d.field, d.message])).toEqual([["scrap_reason_id", `scrap reason ${theirs} does not exist in this tenant`]])
    expect((await api.get("/api-operation-quantities")).body.data.pagination.total).toBe(before)
  })

  it("a PATCH that leaves scrap without a reason is 422; an entry links an NCR", async () => {
    const q = (await api.post("/api-operation-quantities", { operation_id: mine.op2, good: 3 })).body.data.operation_quantity
    expectDetail(await api.patch(`/api-operation-quantities?id=${q.id}`, { scrap: 2 }), "scrap_reason_id", "NOT_NULL")
    const ncr = (await api.post("/api-issues", { operation_id: mine.op2, title: "Burr", description: "d", issue_type: "ncr", severity: "high" })).body.data.issue.id
    const patched = await api.patch(`/api-operation-quantities?id=${q.id}`, { scrap: 2, scrap_reason_id: mine.reason, issue_id: ncr })
    expect(patched.status).toBe(200)
    expect(patched.body.data.operation_quantity).toMatchObject({ good: 3, scrap: 2, issue_id: ncr })
    expect((await api.get(`/api-operation-quantities?issue_id=${ncr}`)).body.data.operation_quantities.map((r: any) => r.id)).toEqual([q.id])
    await api.delete(`/api-operation-quantities?id=${q.id}`)
  })

  it("a PATCH that would leave no quantity above 0 is 422 MIN_VALUE on good, as the create, and changes nothing", async () => {
    const q = (await api.post("/api-operation-quantities", { operation_id: mine.op2, good: 3, scrap: 1, scrap_reason_id: mine.reason })).body.data.operation_quantity
    const res = await api.patch(`/api-operation-quantities?id=${q.id}`, { good: 0, scrap: 0 })
    expectDetail(res, "good", "MIN_VALUE")
    expect(res.body.error.details.map((d: any) => [d.field, d.constraint, d.message])).toEqual([
      ["good", "MIN_VALUE", "at least one of good, scrap and rework must be greater than 0"]
    ])
    expect((await api.get(`/api-operation-quantities?id=${q.id}`)).body.data.operation_quantity).toMatchObject({ good: 3, scrap: 1, rework: 0 })
    // one quantity left above 0 (the stored one or the given one) is an entry
    expect((await api.patch(`/api-operation-quantities?id=${q.id}`, { good: 0 })).body.data.operation_quantity).toMatchObject({ good: 0, scrap: 1 })
    expectDetail(await api.patch(`/api-operation-quantities?id=${q.id}`, { scrap: 0 }), "good", "MIN_VALUE")
    expect((await api.patch(`/api-operation-quantities?id=${q.id}`, { scrap: 0, rework: 2 })).body.data.operation_quantity).toMatchObject({ good: 0, scrap: 0, rework: 2 })
    await api.delete(`/api-operation-quantities?id=${q.id}`)
  })

  it("the operation and its part show running totals, exact under 20 parallel recordings", async () => {
    const totals = async () => ({
      op: (await api.get(`/api-operations?id=${mine.op}`)).body.data.operation.quantities,
      op2: (await api.get(`/api-operations?id=${mine.op2}`)).body.data.operation.quantities,
      part: (await api.get(`/api-parts?id=${mine.part}`)).body.data.part.quantities
    })
    const before = await totals()
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      api.post("/api-operation-quantities", i % 2 === 0
        ? { operation_id: mine.op, good: 2, scrap: 1, scrap_reason_id: mine.reason }
        : { operation_id: mine.op2, good: 1, rework: 1 })
    ))
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201))
    const after = await totals()
    expect(after.op).toEqual({ good: before.op.good + 20, scrap: before.op.scrap + 10, rework: before.op.rework })
    expect(after.op2).toEqual({ good: before.op2.good + 10, scrap: before.op2.scrap, rework: before.op2.rework + 10 })
    expect(after.part).toEqual({ good: after.op.good + after.op2.good, scrap: after.op.scrap + after.op2.scrap, rework: after.op.rework + after.op2.rework })
  })

  it("lists filter by operation, part, job, reason, user and time range; bad filters are 400 / 422", async () => {
    const ids = async (q: string) => (await api.get(`/api-operation-quantities?limit=1000&${q}`)).body.data.operation_quantities.length
    const all = await ids("")
    expect(await ids(`job_id=${mine.job}`)).toBe(all)
    expect(await ids(`part_id=${mine.part}`)).toBe(all)
    expect(await ids(`operation_id=${mine.op}`) + await ids(`operation_id=${mine.op2}`)).toBe(all)
    expect(await ids(`scrap_reason_id=${mine.reason}`)).toBe(11)
    expect(await ids(`user_id=${mine.profile}`)).toBe(1)
    expect(await ids("from=2000-01-01&to=2001-01-01")).toBe(0)
    expect(await ids(`from=${new Date(Date.now() - 3_600_000).toISOString()}`)).toBe(all)
    await api.post("/api-operation-quantities", { operation_id: mine.op, good: 1, recorded_at: "2026-01-05T09:00:00Z" })
    expect(await ids("from=2026-01-05&to=2026-01-06")).toBe(1)
    expectDetail(await api.get("/api-operation-quantities?from=soon"), "from", "DATE_FORMAT")
    // a well-formed date or timestamp outside the years 0001 to 9999 (an offset may take it past an end): the range
    expectOutOfRange(await api.get("/api-operation-quantities?from=0000-12-31"), "from", "MIN_VALUE")
    expectOutOfRange(await api.get("/api-operation-quantities?to=10000-01-01"), "to", "MAX_VALUE")
    expectOutOfRange(await api.get("/api-operation-quantities?to=9999-12-31T23:00:00-05:00"), "to", "MAX_VALUE")
    expectOutOfRange(await api.get("/api-downtime?from=0001-01-01T00:30:00%2B01:00"), "from", "MIN_VALUE")
    expect(await ids("from=0001-01-01&to=9999-12-31T23:59:59.999Z")).toBe(all + 1)
    expectError(await api.get("/api-operation-quantities?part_id=42"), 400, "BAD_REQUEST")
    expectDetail(await api.get("/api-operation-quantities?sort=bogus"), "sort", "ENUM_CONSTRAINT")
  })

  it("an operation with recorded quantities, and a reason in use, are not deleted (409)", async () => {
    expectError(await api.delete(`/api-operations?id=${mine.op}`), 409, "CONFLICT")
    expectError(await api.delete(`/api-scrap-reasons?id=${mine.reason}`), 409, "CONFLICT")
  })
})

describe("/api-assignments", () => {
  it("assigns an operator to exactly one operation, part, job or cell; emits events", async () => {
    const res = await api.post("/api-assignments", { user_id: mine.profile, operation_id: mine.op, assigned_by: mine.profile, notes: "urgent" })
    expect(res.status).toBe(201)
    const a = res.body.data.assignment
    expect(a).toMatchObject({ user_id: mine.profile, operation_id: mine.op, part_id: null, target_type: "operation", job_number: "SF-1", active: true })
    expect((await api.get(`/api-assignments?id=${a.id}`)).body.data.assignment).toEqual(a)
    expect((await events("assignment.created")).map((e) => e.assignment_id)).toContain(a.id)
    const patched = await api.patch(`/api-assignments?id=${a.id}`, { active: false })
    expect(patched.body.data.assignment.active).toBe(false)
    expect((await events("assignment.updated")).filter((e) => e.assignment_id === a.id).map((e) => e.active)).toEqual([false])
    expectDetail(await api.patch(`/api-assignments?id=${a.id}`, { user_id: mine.profile }), "user_id", "ENUM_CONSTRAINT")
    expect((await api.delete(`/api-assignments?id=${a.id}`)).status).toBe(200)
    expect((await events("assignment.removed")).map((e) => e.assignment_id)).toContain(a.id)
  })

  it("no target or several targets is 422 FK_REQUIRED; nothing is written", async () => {
    const before = (await api.get("/api-assignments")).body.data.pagination.total
    expectDetail(await api.post("/api-assignments", { user_id: mine.profile }), "operation_id", "FK_REQUIRED")
    expectDetail(await api.post("/api-assignments", { user_id: mine.profile, job_id: mine.job, cell_id: mine.cell }), "cell_id", "FK_REQUIRED")
    expectDetail(await api.post("/api-assignments", { operation_id: mine.op }), "user_id", "NOT_NULL")
    expect((await api.get("/api-assignments")).body.data.pagination.total).toBe(before)
  })

  it("a create's references are checked in its statement: another tenant's or unknown records are 422 each, nothing written, no event", async () => {
    const theirs = {
      profile: (await other.post("/api-profiles", { display_name: "Not yours" })).body.data.profile.id,
      job: (await other.post("/api-jobs", nestedJob("SF-THEIRS", 1, 1))).body.data.job_id
    }
    const before = { total: (await api.get("/api-assignments")).body.data.pagination.total, events: (await events("assignment.created")).length }
    const res = await api.post("/api-assignments", { user_id: theirs.profile, job_id: theirs.job, assigned_by: "00000000-0000-4000-8000-000000000000" })
    expect(res.status).toBe(422)
    expect(res.body.error.details.map((d: any) => [d.field, d.constraint])).toEqual([["user_id", "FK_CONSTRAINT"], ["job_id", "FK_CONSTRAINT"], ["assigned_by", "FK_CONSTRAINT"]])
    expectDetail(await api.post("/api-operation-quantities", { operation_id: mine.op, good: 1, user_id: theirs.profile }), "user_id", "FK_CONSTRAINT")
    expectDetail(await api.post("/api-substeps", { operation_id: "00000000-0000-4000-8000-000000000000", description: "x", sequence: 1 }), "operation_id", "FK_CONSTRAINT")
    expect((await api.get("/api-assignments")).body.data.pagination.total).toBe(before.total)
    expect((await events("assignment.created")).length).toBe(before.events)
    // and a create that passes answers the record its event carries (target_type and job_number are no columns)
    const made = (await api.post("/api-assignments", { user_id: mine.profile, job_id: mine.job })).body.data.assignment
    const [event] = (await events("assignment.created")).filter((e) => e.assignment_id === made.id)
    expect(event).toEqual({
      assignment_id: made.id, user_id: mine.profile, target_type: "job", operation_id: null, part_id: null, job_id: mine.job, cell_id: null,
      active: true, assignment: made
    })
    await api.delete(`/api-assignments?id=${made.id}`)
    expect((await events("assignment.removed")).filter((e) => e.assignment_id === made.id).map((e) => e.assignment)).toEqual([made])
  })

  it("GET ?user_id= is the operator's queue: earliest due date first, then highest priority, undated last", async () => {
    const op = (await api.post("/api-profiles", { display_name: "Queue Operator" })).body.data.profile.id
    const job = async (n: string, due: string | null, priority: number) =>
      (await api.post("/api-jobs", nestedJob(n, 1, 1, { ...(due === null ? {} : { due_date: due }), priority }))).body.data
    const late = await job("Q-LATE", "2027-03-01", 9)
    const soonLow = await job("Q-SOON-LOW", "2027-01-10", 1)
    const soonHigh = await job("Q-SOON-HIGH", "2027-01-10", 5)
    const undated = await job("Q-NONE", null, 10)
    await api.post("/api-assignments", { user_id: op, job_id: late.job_id })
    await api.post("/api-assignments", { user_id: op, cell_id: mine.cell })
    await api.post("/api-assignments", { user_id: op, operation_id: soonLow.parts[0].operations[0].operation_id })
    await api.post("/api-assignments", { user_id: op, part_id: soonHigh.parts[0].part_id })
    await api.post("/api-assignments", { user_id: op, job_id: undated.job_id })
    const queue = (await api.get(`/api-assignments?user_id=${op}&active=true`)).body.data.assignments
    expect(queue.map((a: any) => [a.target_type, a.job_number])).toEqual([
      ["part", "Q-SOON-HIGH"], ["operation", "Q-SOON-LOW"], ["job", "Q-LATE"], ["job", "Q-NONE"], ["cell", null]
    ])
    expect(queue[0]).toMatchObject({ due_date: "2027-01-10", priority: 5 })
    expect((await api.get(`/api-assignments?user_id=${op}&target_type=job`)).body.data.assignments).toHaveLength(2)
    expectDetail(await api.get("/api-assignments?target_type=robot"), "target_type", "ENUM_CONSTRAINT")
    // a profile with assignments is not deleted
    expectError(await api.delete(`/api-profiles?id=${op}`), 409, "CONFLICT")
  })
})

describe("/api-templates and /api-templates/items", () => {
  it("a template carries its ordered items; names are unique (409); duplicate sequences are 422", async () => {
    const res = await api.post("/api-templates", {
      name: "Laser first-off", description: "checks", items: [{ description: "Check drawing revision" }, { description: "Measure first part" }, { description: "Deburr", sequence: 5 }]
    })
    expect(res.status).toBe(201)
    const t = res.body.data.template
    expect(t).toMatchObject({ name: "Laser first-off", active: true })
    expect(t.items.map((i: any) => [i.sequence, i.description])).toEqual([[1, "Check drawing revision"], [2, "Measure first part"], [5, "Deburr"]])
    expect((await api.get(`/api-templates?id=${t.id}`)).body.data.template).toEqual(t)
    // a template without items answers none
    const bare = (await api.post("/api-templates", { name: "Bare" })).body.data.template
    expect(bare.items).toEqual([])
    expect((await api.get(`/api-templates?id=${bare.id}`)).body.data.template).toEqual(bare)
    // one statement each: of two creates of one name at once, one is 201 and the other 409, with no items left
    const both = await Promise.all([1, 2].map((k) => api.post("/api-templates", { name: "Twice", items: [{ description: `item ${k}` }] })))
    expect(both.map((r) => r.status).sort()).toEqual([201, 409])
    const twice = both.find((r) => r.status === 201)!.body.data.template
    expect((await api.get(`/api-templates/items?template_id=${twice.id}`)).body.data.template_items.map((i: any) => i.id)).toEqual(twice.items.map((i: any) => i.id))
    expectError(await api.post("/api-templates", { name: "Laser first-off" }), 409, "CONFLICT")
    expectDetail(await api.post("/api-templates", { name: "Dup", items: [{ description: "a" }, { description: "b", sequence: 1 }] }), "items[1].sequence", "UNIQUE_CONSTRAINT")
    expectDetail(await api.post("/api-templates", { name: "Empty item", items: [{ description: "" }] }), "items[0].description", "MIN_LENGTH")
    expect((await api.get("/api-templates?search=Dup")).body.data.templates).toEqual([])
  })

  it("items have CRUD of their own; a sequence taken in the template is 409", async () => {
    const t = (await api.post("/api-templates", { name: "Saw", items: [{ description: "Clamp" }] })).body.data.template
    const item = await api.post("/api-templates/items", { template_id: t.id, description: "Check blade", sequence: 2 })
    expect(item.status).toBe(201)
    expect(item.body.data.template_item).toMatchObject({ template_id: t.id, sequence: 2 })
    expectError(await api.post("/api-templates/items", { template_id: t.id, description: "again", sequence: 2 }), 409, "CONFLICT")
    const list = (await api.get(`/api-templates/items?template_id=${t.id}`)).body.data.template_items
    expect(list.map((i: any) => i.description)).toEqual(["Clamp", "Check blade"])
    const id = item.body.data.template_item.id
    expect((await api.patch(`/api-templates/items?id=${id}`, { description: "Check blade tension" })).body.data.template_item.description).toBe("Check blade tension")
    expect((await api.delete(`/api-templates/items?id=${id}`)).status).toBe(200)
    expect((await api.get(`/api-templates?id=${t.id}`)).body.data.template.items.map((i: any) => i.description)).toEqual(["Clamp"])
  })

  it("a sequence taken in the template is 409 even when another field is refused (spec 7.4), on create and PATCH", async () => {
    const t = (await api.post("/api-templates", { name: "Press brake", items: [{ description: "Align" }, { description: "Bend" }] })).body.data.template
    const lone = (await api.post("/api-templates", { name: "Press brake 2", items: [{ description: "Align" }] })).body.data.template
    const [first] = t.items
    expectError(await api.post("/api-templates/items", { template_id: t.id, description: 5, sequence: 2 }), 409, "CONFLICT")
    expectError(await api.patch(`/api-templates/items?id=${first.id}`, { sequence: 2, description: 5 }), 409, "CONFLICT")
    // its own sequence, a free one, one taken only in another template: the 422
    expectDetail(await api.patch(`/api-templates/items?id=${first.id}`, { sequence: 1, description: 5 }), "description", "TYPE_MISMATCH")
    expectDetail(await api.patch(`/api-templates/items?id=${first.id}`, { sequence: 3, description: 5 }), "description", "TYPE_MISMATCH")
    expectDetail(await api.post("/api-templates/items", { template_id: lone.id, description: 5, sequence: 2 }), "description", "TYPE_MISMATCH")
    expectDetail(await api.post("/api-templates/items", { template_id: "not-a-uuid", description: 5, sequence: 2 }), "description", "TYPE_MISMATCH")
    // 404 / 403 before the 409
    expectError(await other.patch(`/api-templates/items?id=${first.id}`, { sequence: 2, description: 5 }), 403, "FORBIDDEN")
    expect((await api.get(`/api-templates?id=${t.id}`)).body.data.template).toEqual(t)
  })

  it("apply creates the items as substeps after the operation's own, in one statement, with step.added each", async () => {
    const t = (await api.get("/api-templates?search=Laser")).body.data.templates[0]
    await api.post("/api-substeps", { operation_id: mine.op2, description: "Existing", sequence: 3 })
    const before = (await events("step.added")).length
    const res = await api.post(`/api-templates/apply?id=${t.id}&operation_id=${mine.op2}`)
    expect(res.status).toBe(201)
    expect(res.body.data.substeps.map((s: any) => [s.sequence, s.description, s.completed])).toEqual([
      [4, "Check drawing revision", false], [5, "Measure first part", false], [6, "Deburr", false]
    ])
    const added = (await events("step.added")).slice(before)
    expect(added.map((e) => e.substep_id)).toEqual(res.body.data.substeps.map((s: any) => s.id))
    const listed = (await api.get(`/api-substeps?operation_id=${mine.op2}`)).body.data.substeps
    expect(listed.map((s: any) => s.description)).toEqual(["Existing", "Check drawing revision", "Measure first part", "Deburr"])
  })

  it("apply: 422 without ids, 400 for malformed ids, 404 unknown, 403 another tenant's, 409 inactive", async () => {
    const t = (await api.get("/api-templates?search=Saw")).body.data.templates[0]
    const before = { substeps: (await api.get(`/api-substeps?operation_id=${mine.op}`)).body.data.pagination.total, events: (await events("step.added")).length }
    expectDetail(await api.post(`/api-templates/apply?id=${t.id}`), "operation_id", "NOT_NULL")
    expectError(await api.post(`/api-templates/apply?id=${t.id}&operation_id=00000000-0000-4000-8000-000000000000`), 404, "NOT_FOUND")
    expectError(await api.post(`/api-templates/apply?id=${t.id}&operation_id=nope`), 400, "BAD_REQUEST")
    expectError(await api.post(`/api-templates/apply?id=00000000-0000-4000-8000-000000000000&operation_id=${mine.op}`), 404, "NOT_FOUND")
    const theirJob = (await other.post("/api-jobs", nestedJob("THEIRS-1"))).body.data
    expectError(await api.post(`/api-templates/apply?id=${t.id}&operation_id=${theirJob.parts[0].operations[0].operation_id}`), 403, "FORBIDDEN")
    const theirTemplate = (await other.post("/api-templates", { name: "Theirs", items: [{ description: "x" }] })).body.data.template
    expectError(await api.post(`/api-templates/apply?id=${theirTemplate.id}&operation_id=${mine.op}`), 403, "FORBIDDEN")
    await api.patch(`/api-templates?id=${t.id}`, { active: false })
    expectError(await api.post(`/api-templates/apply?id=${t.id}&operation_id=${mine.op}`), 409, "CONFLICT")
    // 403 for the operation before 409 for the template; no refusal writes a substep or an event
    expectError(await api.post(`/api-templates/apply?id=${t.id}&operation_id=${theirJob.parts[0].operations[0].operation_id}`), 403, "FORBIDDEN")
    expect((await api.get(`/api-substeps?operation_id=${mine.op}`)).body.data.pagination.total).toBe(before.substeps)
    expect((await events("step.added")).length).toBe(before.events)
  })

  it("apply numbers up to 2147483647; items that would pass it are 409 saying so, nothing added", async () => {
    const op = (await api.post("/api-jobs", nestedJob("SF-SEQ"))).body.data.parts[0].operations[0].operation_id
    const t = (await api.post("/api-templates", { name: "Two steps", items: [{ description: "One" }, { description: "Two" }] })).body.data.template
    expect((await api.post("/api-substeps", { operation_id: op, description: "Far", sequence: 2147483645 })).status).toBe(201)
    const applied = await api.post(`/api-templates/apply?id=${t.id}&operation_id=${op}`)
    expect(applied.status).toBe(201)
    expect(applied.body.data.substeps.map((s: any) => s.sequence)).toEqual([2147483646, 2147483647])
    const before = (await events("step.added")).length
    const refused = await api.post(`/api-templates/apply?id=${t.id}&operation_id=${op}`)
    expectError(refused, 409, "CONFLICT")
    expect(refused.body.error.message).toBe(
      `operation ${op}'s substeps already reach sequence 2147483647: the template's items would be numbered past 2147483647; renumber the substeps first (nothing was added)`
    )
    expect((await api.get(`/api-substeps?operation_id=${op}`)).body.data.pagination.total).toBe(3)
    expect((await events("step.added")).length).toBe(before)
  })
})

describe("/api-downtime", () => {
  it("records downtime of a cell, open-ended while it runs: downtime.started, then downtime.ended once", async () => {
    const res = await api.post("/api-downtime", { cell_id: mine.cell, reason: "Nozzle change", start_time: "2026-11-20T08:00:00Z" })
    expect(res.status).toBe(201)
    const d = res.body.data.downtime
    expect(d).toMatchObject({ cell_id: mine.cell, planned: false, end_time: null, duration_minutes: null })
    expect((await api.get(`/api-downtime?open=true&cell_id=${mine.cell}`)).body.data.downtimes.map((x: any) => x.id)).toEqual([d.id])
    const ended = await api.patch(`/api-downtime?id=${d.id}`, { end_time: "2026-11-20T08:45:00Z" })
    expect(ended.body.data.downtime).toMatchObject({ end_time: "2026-11-20T08:45:00.000Z", duration_minutes: 45 })
    await api.patch(`/api-downtime?id=${d.id}`, { end_time: "2026-11-20T08:50:00Z" })
    expect((await events("downtime.started")).filter((e) => e.downtime_id === d.id)).toHaveLength(1)
    expect((await events("downtime.ended")).filter((e) => e.downtime_id === d.id).map((e) => e.end_time)).toEqual(["2026-11-20T08:45:00.000Z"])
    expect((await api.get(`/api-downtime?open=true&cell_id=${mine.cell}`)).body.data.downtimes).toEqual([])
  })

  it("ten concurrent PATCHes ending the same downtime write downtime.ended once, with the end that won", async () => {
    const d = (await api.post("/api-downtime", { cell_id: mine.cell, reason: "Power cut", start_time: "2026-11-22T08:00:00Z" })).body.data.downtime
    const ends = Array.from({ length: 10 }, (_, i) => `2026-11-22T09:${String(i).padStart(2, "0")}:00.000Z`)
    const answers = await Promise.all(ends.map((end_time) => api.patch(`/api-downtime?id=${d.id}`, { end_time })))
    expect(answers.map((r) => r.status)).toEqual(ends.map(() => 200))
    const ended = (await events("downtime.ended")).filter((e) => e.downtime_id === d.id)
    expect(ended).toHaveLength(1)
    // the event is about the write that found the downtime open: its answer has the same end
    expect(answers.filter((r) => r.body.data.downtime.end_time === ended[0]!.end_time).length).toBeGreaterThanOrEqual(1)
    expect(ended[0]!.downtime.end_time).toBe(ended[0]!.end_time)
  })

  it("end before start is 422 (create and PATCH); an unknown cell is 422; a cell with downtime is not deleted", async () => {
    expectDetail(await api.post("/api-downtime", { cell_id: mine.cell, reason: "x", start_time: "2026-11-20T08:00:00Z", end_time: "2026-11-20T07:00:00Z" }), "end_time", "MIN_VALUE")
    const d = (await api.post("/api-downtime", { cell_id: mine.cell, reason: "Lunch", planned: true, start_time: "2026-11-20T12:00:00Z" })).body.data.downtime
    expectDetail(await api.patch(`/api-downtime?id=${d.id}`, { end_time: "2026-11-20T11:00:00Z" }), "end_time", "MIN_VALUE")
    expectDetail(await api.post("/api-downtime", { cell_id: "00000000-0000-4000-8000-000000000000", reason: "x" }), "cell_id", "FK_CONSTRAINT")
    expectDetail(await api.post("/api-downtime", { cell_id: mine.cell }), "reason", "NOT_NULL")
    expectError(await api.delete(`/api-cells?id=${mine.cell}`), 409, "CONFLICT")
    // a downtime created closed emits both events
    const closed = (await api.post("/api-downtime", { cell_id: mine.cell, reason: "Jam", start_time: "2026-11-21T08:00:00Z", end_time: "2026-11-21T08:10:00Z" })).body.data.downtime
    expect((await events("downtime.ended")).map((e) => e.downtime_id)).toContain(closed.id)
  })
})

describe("GET /api-oee", () => {
  let oee: ReturnType<typeof client>
  let cell = ""
  beforeAll(async () => {
    oee = (await h.as("OEE plant")).api
    cell = (await oee.post("/api-cells", { name: "Press" })).body.data.cell.id
    await oee.post("/api-cells", { name: "Idle cell" })
    // one operation at the press: 60 estimated minutes for a part of 10 → 6 ideal minutes per unit
    const job = (await oee.post("/api-jobs", {
      job_number: "OEE-1",
      parts: [{ part_number: "P", quantity: 10, operations: [{ operation_name: "Press", sequence: 1, cell_id: cell, estimated_time_minutes: 60 }] }]
    })).body.data
    const op = job.parts[0].operations[0].operation_id
    const reason = (await oee.get("/api-scrap-reasons?search=MACHINE")).body.data.scrap_reasons[0].id
    // 2026-01-05: ran 08:00-10:00 (120 min); down unplanned 10:00-10:30 (30), planned 12:00-13:00 (60);
    // recorded 12 good, 2 scrap, 1 rework = 15 units = 90 ideal minutes
    expect((await oee.post("/api-time-entries", { operation_id: op, start_time: "2026-01-05T08:00:00Z", end_time: "2026-01-05T10:00:00Z" })).status).toBe(201)
    await oee.post("/api-downtime", { cell_id: cell, reason: "Die stuck", start_time: "2026-01-05T10:00:00Z", end_time: "2026-01-05T10:30:00Z" })
    await oee.post("/api-downtime", { cell_id: cell, reason: "Lunch", planned: true, start_time: "2026-01-05T12:00:00Z", end_time: "2026-01-05T13:00:00Z" })
    await oee.post("/api-operation-quantities", { operation_id: op, good: 12, recorded_at: "2026-01-05T09:00:00Z" })
    await oee.post("/api-operation-quantities", { operation_id: op, scrap: 2, rework: 1, scrap_reason_id: reason, recorded_at: "2026-01-05T09:30:00Z" })
  })

  const day5 = {
    run_minutes: 120, unplanned_downtime_minutes: 30, planned_downtime_minutes: 60, planned_production_minutes: 150, ideal_minutes: 90,
    good: 12, scrap: 2, rework: 1, availability: 0.8, performance: 0.75, quality: 0.8, oee: 0.48
  }

  it("by day: availability, performance and quality with their inputs, and the total", async () => {
    const res = await oee.get(`/api-oee?cell_id=${cell}&from=2026-01-05&to=2026-01-07&group_by=day`)
    expect(res.status).toBe(200)
    const r = res.body.data
    expect(r).toMatchObject({ from: "2026-01-05T00:00:00.000Z", to: "2026-01-07T00:00:00.000Z", group_by: "day", cell_id: cell })
    expect(r.rows).toHaveLength(2)
    expect(r.rows[0]).toEqual({ group: "2026-01-05", cell_id: cell, cell_name: "Press", from: "2026-01-05T00:00:00.000Z", to: "2026-01-06T00:00:00.000Z", ...day5 })
    expect(r.rows[1]).toMatchObject({ group: "2026-01-06", run_minutes: 0, good: 0, availability: null, performance: null, quality: null, oee: null })
    expect(r.total).toMatchObject({ group: "total", ...day5 })
  })

  it("by shift (06:00, 14:00, 22:00 UTC) and by cell", async () => {
    const shifts = (await oee.get(`/api-oee?from=2026-01-05T06:00:00Z&to=2026-01-05T22:00:00Z&group_by=shift`)).body.data
    expect(shifts.rows.map((s: any) => [s.group, s.run_minutes, s.oee])).toEqual([["2026-01-05T06:00:00.000Z", 120, 0.48], ["2026-01-05T14:00:00.000Z", 0, null]])
    const cells = (await oee.get(`/api-oee?from=2026-01-05&to=2026-01-06&group_by=cell`)).body.data
    expect(cells.rows.map((c: any) => [c.cell_name, c.oee])).toEqual([["Idle cell", null], ["Press", 0.48]])
    expect(cells.total).toMatchObject(day5)
  })

  it("a window clips what runs across its edges", async () => {
    const r = (await oee.get(`/api-oee?cell_id=${cell}&from=2026-01-05T09:00:00Z&to=2026-01-05T10:15:00Z&group_by=cell`)).body.data
    expect(r.rows[0]).toMatchObject({ run_minutes: 60, unplanned_downtime_minutes: 15, planned_downtime_minutes: 0, good: 12, scrap: 2, rework: 1 })
  })

  it("bad queries are 422 (enum, date format, empty or too long a window), another tenant's cell 403", async () => {
    expectDetail(await oee.get("/api-oee?group_by=week"), "group_by", "ENUM_CONSTRAINT")
    expectDetail(await oee.get("/api-oee?from=yesterday"), "from", "DATE_FORMAT")
    expectOutOfRange(await oee.get("/api-oee?from=0000-01-01&to=2026-01-01"), "from", "MIN_VALUE")
    expectOutOfRange(await oee.get("/api-oee?to=10000-01-01"), "to", "MAX_VALUE")
    expectDetail(await oee.get("/api-oee?from=2026-01-05&to=2026-01-05"), "to", "MIN_VALUE")
    expectDetail(await oee.get("/api-oee?from=2020-01-01&to=2026-01-01&group_by=shift"), "from", "MAX_VALUE")
    expectError(await oee.get("/api-oee?cell_id=12"), 400, "BAD_REQUEST")
    expectError(await oee.get(`/api-oee?cell_id=${mine.cell}`), 403, "FORBIDDEN")
    const recent = await oee.get("/api-oee")
    expect(recent.status).toBe(200)
    expect(recent.body.data.rows).toHaveLength(7)
  })

  /** A tenant with one cell and an operation at it (`estimate` minutes for a part of `quantity`). */
  const plant = async (name: string, estimate: number, quantity = 1) => {
    const api = (await h.as(name)).api
    const cell = (await api.post("/api-cells", { name: "Big press" })).body.data.cell.id
    const job = (await api.post("/api-jobs", {
      job_number: "OEE-BIG",
      parts: [{ part_number: "P", quantity, operations: [{ operation_name: "Press", sequence: 1, cell_id: cell, estimated_time_minutes: estimate }] }]
    })).body.data
    const reason = (await api.get("/api-scrap-reasons?search=MACHINE")).body.data.scrap_reasons[0].id
    return { api, cell, op: job.parts[0].operations[0].operation_id as string, reason: reason as string }
  }

  it("quantities past 2147483647 are summed exactly, as the operation's totals, for the cell and the whole tenant", async () => {
    const p = await plant("OEE large quantities", 60, 10)
    for (const recorded_at of ["2026-02-02T09:00:00Z", "2026-02-02T10:00:00Z"]) {
      expect((await p.api.post("/api-operation-quantities", { operation_id: p.op, good: 2147483647, recorded_at })).status).toBe(201)
    }
    expect((await p.api.post("/api-operation-quantities", { operation_id: p.op, scrap: 1, scrap_reason_id: p.reason, recorded_at: "2026-02-02T11:00:00Z" })).status).toBe(201)
    expect((await p.api.get(`/api-operations?id=${p.op}`)).body.data.operation.quantities).toEqual({ good: 4294967294, scrap: 1, rework: 0 })
    // 4294967295 units × 6 ideal minutes each
    const expected = { good: 4294967294, scrap: 1, rework: 0, ideal_minutes: 25769803770, quality: 1, run_minutes: 0, performance: null }
    for (const q of [`cell_id=${p.cell}&`, ""]) {
      const res = await p.api.get(`/api-oee?${q}from=2026-02-02&to=2026-02-03`)
      expect(res.status).toBe(200)
      expect(res.body.data.rows[0]).toMatchObject(expected)
      expect(res.body.data.total).toMatchObject(expected)
    }
    // recorded now: the default window (the last 7 days) as well
    expect((await p.api.post("/api-operation-quantities", { operation_id: p.op, good: 2147483647, scrap: 1, scrap_reason_id: p.reason })).status).toBe(201)
    const recent = await p.api.get("/api-oee")
    expect(recent.status).toBe(200)
    expect(recent.body.data.total).toMatchObject({ good: 2147483647, scrap: 1, ideal_minutes: 12884901888 })
  })

  it("estimates near the largest double: reported while the numbers fit, a 409 saying why where they do not", async () => {
    const p = await plant("OEE huge estimates", 1e308)
    // 2026-03-02: one unit of 1e308 minutes over an hour's run
    await p.api.post("/api-time-entries", { operation_id: p.op, start_time: "2026-03-02T08:00:00Z", end_time: "2026-03-02T09:00:00Z" })
    await p.api.post("/api-operation-quantities", { operation_id: p.op, good: 1, recorded_at: "2026-03-02T08:30:00Z" })
    const fits = await p.api.get(`/api-oee?cell_id=${p.cell}&from=2026-03-02&to=2026-03-03`)
    expect(fits.status).toBe(200)
    expect(fits.body.data.rows[0]).toMatchObject({ ideal_minutes: 1e308, run_minutes: 60, performance: 1e308 / 60, quality: 1, availability: 1, oee: 1e308 / 60 })
    expect(fits.body.data.total).toMatchObject({ ideal_minutes: 1e308, performance: 1e308 / 60 })
    // 2026-03-04: ten units, 1e309 ideal minutes in the day's row
    await p.api.post("/api-operation-quantities", { operation_id: p.op, good: 10, recorded_at: "2026-03-04T08:30:00Z" })
    // 2026-03-05 and 06: one unit each, each day's row fits and their total does not
    await p.api.post("/api-operation-quantities", { operation_id: p.op, good: 1, recorded_at: "2026-03-05T08:30:00Z" })
    await p.api.post("/api-operation-quantities", { operation_id: p.op, good: 1, recorded_at: "2026-03-06T08:30:00Z" })
    const refused = [
      [`cell_id=${p.cell}&from=2026-03-04&to=2026-03-05`, "2026-03-04"],
      ["from=2026-03-01&to=2026-03-08&group_by=cell", p.cell],
      [`cell_id=${p.cell}&from=2026-03-05&to=2026-03-07`, "total"]
    ]
    for (const [q, group] of refused) {
      const res = await p.api.get(`/api-oee?${q}`)
      expectError(res, 409, "CONFLICT")
      expect(res.body.error.message).toContain(`ideal_minutes of ${group} is past the largest number it can carry (1.7976931348623157e+308)`)
      expect(res.body.error.message).toContain("estimated_time_minutes")
    }
    // the other windows and cells are reported
    expect((await p.api.get(`/api-oee?cell_id=${p.cell}&from=2026-03-06&to=2026-03-07`)).body.data.total).toMatchObject({ ideal_minutes: 1e308, good: 1 })
    expect((await p.api.get("/api-oee?from=2026-03-01&to=2026-03-04")).status).toBe(200)
  })
})

describe("new events are registrable", () => {
  it("a webhook subscribes to quantity, assignment and downtime events", async () => {
    const res = await api.post("/api-webhooks", {
      url: "https://example.com/hook",
      events: ["quantity.recorded", "assignment.created", "assignment.updated", "assignment.removed", "downtime.started", "downtime.ended"]
    })
    expect(res.status).toBe(201)
  })
})

describe("a timestamp without an offset is UTC (DECISIONS: dates and timestamps)", () => {
  it("an offset past ±15:59 (which PostgreSQL cannot take, and no zone has) is DATE_FORMAT, not a database error; ±15:59 is taken", async () => {
    for (const offset of ["+16:00", "-18:00", "+23:59", "-23:59"]) {
      const at = `2026-01-01T10:00:00${offset}`
      expectDetail(await api.post("/api-time-entries", { operation_id: mine.op2, start_time: at, end_time: "2026-01-03T00:00:00Z" }), "start_time", "DATE_FORMAT")
      expectDetail(await api.post("/api-downtime", { cell_id: mine.cell, reason: "Offset", start_time: at, end_time: "2026-01-03T00:00:00Z" }), "start_time", "DATE_FORMAT")
      expectDetail(await api.post("/api-operation-quantities", { operation_id: mine.op2, good: 1, recorded_at: at }), "recorded_at", "DATE_FORMAT")
    }
    const entry = await api.post("/api-time-entries", { operation_id: mine.op2, start_time: "2026-01-01T10:00:00+15:59", end_time: "2026-01-01T10:00:00-15:59" })
    expect(entry.status, JSON.stringify(entry.body)).toBe(201)
    expect(entry.body.data.time_entry).toMatchObject({ start_time: "2025-12-31T18:01:00.000Z", end_time: "2026-01-02T01:59:00.000Z" })
    const q = await api.post("/api-operation-quantities", { operation_id: mine.op2, good: 1, recorded_at: "2026-01-01T10:00:00+1559" })
    expect(q.body.data.operation_quantity.recorded_at).toBe("2025-12-31T18:01:00.000Z")
  })

  it("in a body and a query, whatever the server's time zone and the database session's", async () => {
    const tz = process.env.TZ
    const pglite = testDatabaseKind() === "pglite"
    // the server's local time 5 hours behind UTC in January; PGlite's one session 9 hours ahead
    process.env.TZ = "America/New_York"
    if (pglite) await h.sql("SET TIME ZONE 'Asia/Tokyo'")
    try {
      expect(new Date(2026, 0, 2, 10).toISOString()).toBe("2026-01-02T15:00:00.000Z")
      // read as local time, the start came after the end (422)
      const down = await api.post("/api-downtime", { cell_id: mine.cell, reason: "Zone", start_time: "2026-01-02T10:00:00", end_time: "2026-01-02T12:00:00Z" })
      expect(down.status).toBe(201)
      expect(down.body.data.downtime).toMatchObject({ start_time: "2026-01-02T10:00:00.000Z", end_time: "2026-01-02T12:00:00.000Z", duration_minutes: 120 })
      const entry = await api.post("/api-time-entries", { operation_id: mine.op2, start_time: "2026-01-02 10:00", end_time: "2026-01-02T10:30:00Z" })
      expect(entry.body.data.time_entry).toMatchObject({ start_time: "2026-01-02T10:00:00.000Z", duration_minutes: 30 })
      // a date alone is its UTC midnight
      const q = (await api.post("/api-operation-quantities", { operation_id: mine.op2, good: 1, recorded_at: "2027-03-04" })).body.data.operation_quantity
      expect(q.recorded_at).toBe("2027-03-04T00:00:00.000Z")
      const found = async (range: string) => (await api.get(`/api-operation-quantities?operation_id=${mine.op2}&${range}`)).body.data.operation_quantities.map((x: any) => x.id)
      expect(await found("from=2027-03-04T00:00:00&to=2027-03-04T00:00:01")).toEqual([q.id])
      expect(await found("from=2027-03-03T23:00:00&to=2027-03-04T00:00")).toEqual([])
      const oee = (await api.get(`/api-oee?cell_id=${mine.cell}&from=2026-01-02T10:00&to=2026-01-02T11:00:00&group_by=cell`)).body.data
      expect(oee).toMatchObject({ from: "2026-01-02T10:00:00.000Z", to: "2026-01-02T11:00:00.000Z" })
      expect(oee.total.unplanned_downtime_minutes).toBe(60)
    } finally {
      if (tz === undefined) delete process.env.TZ
      else process.env.TZ = tz
      if (pglite) await h.sql("RESET TIME ZONE")
    }
  })
})
