// What every resource shares, checked on all of them: `?id=` handling (422 missing, 400 malformed,
// 404 unknown, 403 another tenant's: spec 5.6, 7.4, DECISIONS), list query errors (400 malformed,
// 422 out of range), and every foreign-key field refusing another tenant's record (422
// FK_CONSTRAINT, nothing written).
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, expectDetail, expectError, type Harness, nestedJob, startServer } from "./harness.ts"

let h: Harness
let a: ReturnType<typeof client>
let b: ReturnType<typeof client>

/** Records of tenant B that tenant A must not reach. */
const theirs = { job: "", part: "", operation: "", cell: "", profile: "", batch: "", issue: "", substep: "", time_entry: "", resource: "", material: "",
  scrap_reason: "", operation_quantity: "", assignment: "", template: "", template_item: "", downtime: "", part_image: "" }
/** Records of tenant A to hang references on. */
const mine = { job: "", part: "", operation: "", batch: "", cell: "", profile: "", template: "", quantity: "", assignment: "" }

/** A PNG uploaded through a signed URL of the tenant's; its storage key. */
const uploaded = async (as: ReturnType<typeof client>) => {
  const u = (await as.post("/api-upload-url", { content_type: "image/png" })).body.data
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3])
  const res = await fetch(new URL(h.url).origin + u.upload_url, { method: "PUT", headers: { "content-type": "image/png" }, body: png })
  if (res.status !== 201) throw new Error(`upload ${res.status}`)
  return u.key as string
}

beforeAll(async () => {
  h = await startServer()
  a = (await h.as("A")).api
  b = (await h.as("B")).api
  theirs.cell = (await b.post("/api-cells", { name: "B cell" })).body.data.cell.id
  theirs.resource = (await b.post("/api-resources", { name: "B fixture", type: "fixture" })).body.data.resource.id
  theirs.material = (await b.post("/api-materials", { name: "B steel" })).body.data.material.id
  theirs.profile = (await b.post("/api-profiles", { display_name: "B operator" })).body.data.profile.id
  const bJob = (await b.post("/api-jobs", nestedJob("B-1"))).body.data
  theirs.job = bJob.job_id
  theirs.part = bJob.parts[0].part_id
  theirs.operation = bJob.parts[0].operations[0].operation_id
  theirs.batch = (await b.post("/api-batches", { batch_number: "B-BATCH", cell_id: theirs.cell })).body.data.batch.id
  theirs.issue = (await b.post("/api-issues", { operation_id: theirs.operation, title: "t", description: "d" })).body.data.issue.id
  theirs.substep = (await b.post("/api-substeps", { operation_id: theirs.operation, description: "d", sequence: 1 })).body.data.substep.id
  theirs.time_entry = (await b.post("/api-time-entries", { operation_id: theirs.operation, start_time: new Date().toISOString() })).body.data.time_entry.id
  theirs.scrap_reason = (await b.post("/api-scrap-reasons", { code: "B-REASON", description: "d" })).body.data.scrap_reason.id
  theirs.operation_quantity = (await b.post("/api-operation-quantities", { operation_id: theirs.operation, good: 1 })).body.data.operation_quantity.id
  theirs.assignment = (await b.post("/api-assignments", { user_id: theirs.profile, operation_id: theirs.operation })).body.data.assignment.id
  const bTemplate = (await b.post("/api-templates", { name: "B template", items: [{ description: "d" }] })).body.data.template
  theirs.template = bTemplate.id
  theirs.template_item = bTemplate.items[0].id
  theirs.downtime = (await b.post("/api-downtime", { cell_id: theirs.cell, reason: "B down" })).body.data.downtime.id
  theirs.part_image = (await b.post("/api-parts-images", { part_id: theirs.part, storage_key: await uploaded(b) })).body.data.part_image.id
  mine.cell = (await a.post("/api-cells", { name: "A cell" })).body.data.cell.id
  await a.post("/api-resources", { name: "A fixture", type: "fixture" })
  await a.post("/api-materials", { name: "A steel" })
  await a.post("/api-profiles", { display_name: "A operator" })
  const aJob = (await a.post("/api-jobs", nestedJob("A-1"))).body.data
  mine.job = aJob.job_id
  mine.part = aJob.parts[0].part_id
  mine.operation = aJob.parts[0].operations[0].operation_id
  mine.batch = (await a.post("/api-batches", { batch_number: "A-BATCH", cell_id: mine.cell })).body.data.batch.id
  await a.post("/api-issues", { operation_id: mine.operation, title: "t", description: "d" })
  await a.post("/api-substeps", { operation_id: mine.operation, description: "d", sequence: 1 })
  await a.post("/api-time-entries", { operation_id: mine.operation, start_time: new Date().toISOString() })
  mine.profile = (await a.get("/api-profiles")).body.data.profiles[0].id
  mine.template = (await a.post("/api-templates", { name: "A template", items: [{ description: "d" }] })).body.data.template.id
  mine.quantity = (await a.post("/api-operation-quantities", { operation_id: mine.operation, good: 1 })).body.data.operation_quantity.id
  mine.assignment = (await a.post("/api-assignments", { user_id: mine.profile, operation_id: mine.operation })).body.data.assignment.id
  await a.post("/api-downtime", { cell_id: mine.cell, reason: "A down" })
  await a.post("/api-parts-images", { part_id: mine.part, storage_key: await uploaded(a) })
})
afterAll(() => h.close())

const RESOURCES = [
  "/api-jobs",
  "/api-parts",
  "/api-operations",
  "/api-cells",
  "/api-profiles",
  "/api-batches",
  "/api-issues",
  "/api-substeps",
  "/api-time-entries",
  "/api-resources",
  "/api-materials",
  "/api-scrap-reasons",
  "/api-operation-quantities",
  "/api-assignments",
  "/api-templates",
  "/api-templates/items",
  "/api-downtime",
  "/api-parts-images"
] as const
/** Resources without DELETE (spec 4.7 has none for issues): 405. */
const NO_DELETE: ReadonlyArray<string> = ["/api-issues"]
const UNKNOWN = "00000000-0000-4000-8000-000000000000"

describe.each(RESOURCES)("%s ?id= handling", (path) => {
  it("GET: 404 for an unknown id, 400 for a non-UUID id, 422 for an empty id", async () => {
    expectError(await a.get(`${path}?id=${UNKNOWN}`), 404, "NOT_FOUND")
    expectError(await a.get(`${path}?id=not-a-uuid`), 400, "BAD_REQUEST")
    expectDetail(await a.get(`${path}?id=`), "id", "NOT_NULL")
  })

  it("PATCH and DELETE: 422 without id, 400 for a non-UUID id, 404 for an unknown id even with an invalid body", async () => {
    expectDetail(await a.patch(path, { notes: "x" }), "id", "NOT_NULL")
    expectError(await a.patch(`${path}?id=42`, { notes: "x" }), 400, "BAD_REQUEST")
    expectError(await a.patch(`${path}?id=${UNKNOWN}`, { bogus_field: 1 }), 404, "NOT_FOUND")
    if (NO_DELETE.includes(path)) {
      expectError(await a.delete(`${path}?id=${UNKNOWN}`), 405, "METHOD_NOT_ALLOWED")
      return
    }
    expectDetail(await a.delete(path), "id", "NOT_NULL")
    expectError(await a.delete(`${path}?id=abc`), 400, "BAD_REQUEST")
    expectError(await a.delete(`${path}?id=${UNKNOWN}`), 404, "NOT_FOUND")
  })
})

describe.each(RESOURCES)("%s list query errors", (path) => {
  it("400 for malformed numbers and booleans, 422 for out-of-range values, enums and sorts", async () => {
    expectError(await a.get(`${path}?limit=abc`), 400, "BAD_REQUEST")
    expectError(await a.get(`${path}?offset=1.5`), 400, "BAD_REQUEST")
    expectDetail(await a.get(`${path}?limit=0`), "limit", "MIN_VALUE")
    expectDetail(await a.get(`${path}?limit=1001`), "limit", "MAX_VALUE")
    expectDetail(await a.get(`${path}?offset=-1`), "offset", "MIN_VALUE")
    expectDetail(await a.get(`${path}?sort=bogus`), "sort", "ENUM_CONSTRAINT")
    expectDetail(await a.get(`${path}?order=up`), "order", "ENUM_CONSTRAINT")
  })

  it("an offset past the end is an empty page with the true total", async () => {
    const res = await a.get(`${path}?offset=500`)
    expect(res.status).toBe(200)
    const data = res.body.data
    expect(Object.values(data).find(Array.isArray)).toEqual([])
    expect(data.pagination).toEqual({ limit: 100, offset: 500, total: expect.any(Number) })
    expect(data.pagination.total).toBeGreaterThan(0)
  })
})

describe("another tenant's record by id is 403 FORBIDDEN", () => {
  const cases: Array<[string, keyof typeof theirs, "get" | "patch" | "delete" | "post", Record<string, unknown>?]> = [
    ["/api-jobs", "job", "get"], ["/api-jobs", "job", "patch", { notes: "x" }], ["/api-jobs", "job", "delete"],
    ["/api-parts", "part", "get"], ["/api-parts", "part", "patch", { notes: "x" }], ["/api-parts", "part", "delete"],
    ["/api-operations", "operation", "get"], ["/api-operations", "operation", "patch", { notes: "x" }], ["/api-operations", "operation", "delete"],
    ["/api-cells", "cell", "get"], ["/api-cells", "cell", "patch", { color: "red" }], ["/api-cells", "cell", "delete"],
    ["/api-profiles", "profile", "get"], ["/api-profiles", "profile", "patch", { display_name: "x" }], ["/api-profiles", "profile", "delete"],
    ["/api-batches", "batch", "get"], ["/api-batches", "batch", "patch", { notes: "x" }], ["/api-batches", "batch", "delete"],
    ["/api-issues", "issue", "get"], ["/api-issues", "issue", "patch", { resolution_notes: "x" }],
    ["/api-substeps", "substep", "get"], ["/api-substeps", "substep", "patch", { completed: true }], ["/api-substeps", "substep", "delete"],
    ["/api-time-entries", "time_entry", "get"], ["/api-time-entries", "time_entry", "patch", { end_time: new Date().toISOString() }],
    ["/api-time-entries", "time_entry", "delete"],
    ["/api-resources", "resource", "get"], ["/api-resources", "resource", "patch", { location: "x" }], ["/api-resources", "resource", "delete"],
    ["/api-materials", "material", "get"], ["/api-materials", "material", "patch", { description: "x" }], ["/api-materials", "material", "delete"],
    ["/api-scrap-reasons", "scrap_reason", "get"], ["/api-scrap-reasons", "scrap_reason", "patch", { description: "x" }],
    ["/api-scrap-reasons", "scrap_reason", "delete"],
    ["/api-operation-quantities", "operation_quantity", "get"], ["/api-operation-quantities", "operation_quantity", "patch", { notes: "x" }],
    ["/api-operation-quantities", "operation_quantity", "delete"],
    ["/api-assignments", "assignment", "get"], ["/api-assignments", "assignment", "patch", { notes: "x" }], ["/api-assignments", "assignment", "delete"],
    ["/api-templates", "template", "get"], ["/api-templates", "template", "patch", { description: "x" }], ["/api-templates", "template", "delete"],
    ["/api-templates/items", "template_item", "get"], ["/api-templates/items", "template_item", "patch", { description: "x" }],
    ["/api-templates/items", "template_item", "delete"],
    ["/api-downtime", "downtime", "get"], ["/api-downtime", "downtime", "patch", { notes: "x" }], ["/api-downtime", "downtime", "delete"],
    ["/api-parts-images", "part_image", "get"], ["/api-parts-images", "part_image", "patch", { caption: "x" }], ["/api-parts-images", "part_image", "delete"],
    ["/api-job-lifecycle/start", "job", "post"], ["/api-operation-lifecycle/start", "operation", "post"],
    ["/api-batch-lifecycle/start", "batch", "post"], ["/api-batch-lifecycle/add-operations", "batch", "post", { operation_ids: [] }]
  ]
  it.each(cases)("%s %s %s", async (path, kind, method, body) => {
    const url = `${path}?id=${theirs[kind]}`
    const res = method === "get"
      ? await a.get(url)
      : method === "patch"
      ? await a.patch(url, body)
      : method === "post"
      ? await a.post(url, body)
      : await a.delete(url)
    expectError(res, 403, "FORBIDDEN")
  })

  it("left every one of those records untouched", async () => {
    expect((await b.get(`/api-jobs?id=${theirs.job}`)).body.data.job.notes).toBeNull()
    expect((await b.get(`/api-parts?id=${theirs.part}`)).body.data.part.notes).toBeNull()
    expect((await b.get(`/api-operations?id=${theirs.operation}`)).body.data.operation.notes).toBeNull()
    expect((await b.get(`/api-cells?id=${theirs.cell}`)).body.data.cell.color).toBeNull()
    expect((await b.get(`/api-profiles?id=${theirs.profile}`)).body.data.profile.display_name).toBe("B operator")
    expect((await b.get(`/api-batches?id=${theirs.batch}`)).body.data.batch).toMatchObject({ notes: null, status: "draft" })
    expect((await b.get(`/api-issues?id=${theirs.issue}`)).body.data.issue.resolution_notes).toBeNull()
    expect((await b.get(`/api-substeps?id=${theirs.substep}`)).body.data.substep.completed).toBe(false)
    expect((await b.get(`/api-time-entries?id=${theirs.time_entry}`)).body.data.time_entry.end_time).toBeNull()
    expect((await b.get(`/api-resources?id=${theirs.resource}`)).body.data.resource.location).toBeNull()
    expect((await b.get(`/api-materials?id=${theirs.material}`)).body.data.material.description).toBeNull()
    expect((await b.get(`/api-scrap-reasons?id=${theirs.scrap_reason}`)).body.data.scrap_reason.description).toBe("d")
    expect((await b.get(`/api-operation-quantities?id=${theirs.operation_quantity}`)).body.data.operation_quantity.notes).toBeNull()
    expect((await b.get(`/api-assignments?id=${theirs.assignment}`)).body.data.assignment.notes).toBeNull()
    expect((await b.get(`/api-templates?id=${theirs.template}`)).body.data.template).toMatchObject({ description: null, items: [{ description: "d" }] })
    expect((await b.get(`/api-downtime?id=${theirs.downtime}`)).body.data.downtime.notes).toBeNull()
    expect((await b.get(`/api-parts-images?id=${theirs.part_image}`)).body.data.part_image.caption).toBeNull()
    expect((await b.get(`/api-jobs?id=${theirs.job}`)).body.data.job.status).toBe("not_started")
    expect((await b.get(`/api-operations?id=${theirs.operation}`)).body.data.operation.status).toBe("not_started")
  })
})

describe("a foreign key into another tenant is 422 FK_CONSTRAINT and writes nothing", () => {
  const job = (part: Record<string, unknown> = {}, op: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
    job_number: `X-${Math.random()}`,
    ...extra,
    parts: [{ part_number: "P", quantity: 1, ...part, operations: [{ operation_name: "o", sequence: 1, ...op }] }]
  })
  const cases: Array<[string, "post" | "patch", () => string, () => Record<string, unknown>, string]> = [
    ["job create current_cell_id", "post", () => "/api-jobs", () => job({}, {}, { current_cell_id: theirs.cell }), "current_cell_id"],
    ["nested part current_cell_id", "post", () => "/api-jobs", () => job({ current_cell_id: theirs.cell }), "parts[0].current_cell_id"],
    ["nested operation cell_id", "post", () => "/api-jobs", () => job({}, { cell_id: theirs.cell }), "parts[0].operations[0].cell_id"],
    ["nested operation cell_name", "post", () => "/api-jobs", () => job({}, { cell_name: "B cell" }), "parts[0].operations[0].cell_name"],
    ["nested operation assigned_operator_id", "post", () => "/api-jobs", () => job({}, { assigned_operator_id: theirs.profile }), "parts[0].operations[0].assigned_operator_id"],
    ["job PATCH current_cell_id", "patch", () => `/api-jobs?id=${mine.job}`, () => ({ current_cell_id: theirs.cell }), "current_cell_id"],
    ["part create job_id", "post", () => "/api-parts", () => ({ job_id: theirs.job, part_number: "Q", quantity: 1 }), "job_id"],
    ["part create parent_part_id", "post", () => "/api-parts", () => ({ job_id: mine.job, part_number: "Q", quantity: 1, parent_part_id: theirs.part }), "parent_part_id"],
    ["part create current_cell_id", "post", () => "/api-parts", () => ({ job_id: mine.job, part_number: "Q", quantity: 1, current_cell_id: theirs.cell }), "current_cell_id"],
    ["part PATCH parent_part_id", "patch", () => `/api-parts?id=${mine.part}`, () => ({ parent_part_id: theirs.part }), "parent_part_id"],
    ["part PATCH current_cell_id", "patch", () => `/api-parts?id=${mine.part}`, () => ({ current_cell_id: theirs.cell }), "current_cell_id"],
    ["nested part material_id", "post", () => "/api-jobs", () => job({ material_id: theirs.material }), "parts[0].material_id"],
    ["part create material_id", "post", () => "/api-parts", () => ({ job_id: mine.job, part_number: "Q", quantity: 1, material_id: theirs.material }), "material_id"],
    ["part PATCH material_id", "patch", () => `/api-parts?id=${mine.part}`, () => ({ material_id: theirs.material }), "material_id"],
    ["operation create part_id", "post", () => "/api-operations", () => ({ part_id: theirs.part, operation_name: "o" }), "part_id"],
    ["operation create cell_id", "post", () => "/api-operations", () => ({ part_id: mine.part, operation_name: "o", cell_id: theirs.cell }), "cell_id"],
    ["operation create assigned_operator_id", "post", () => "/api-operations", () => ({ part_id: mine.part, operation_name: "o", assigned_operator_id: theirs.profile }), "assigned_operator_id"],
    ["operation PATCH cell_id", "patch", () => `/api-operations?id=${mine.operation}`, () => ({ cell_id: theirs.cell }), "cell_id"],
    ["operation PATCH assigned_operator_id", "patch", () => `/api-operations?id=${mine.operation}`, () => ({ assigned_operator_id: theirs.profile }), "assigned_operator_id"],
    ["batch create cell_id", "post", () => "/api-batches", () => ({ batch_number: "FK-1", cell_id: theirs.cell }), "cell_id"],
    ["batch create parent_batch_id", "post", () => "/api-batches", () => ({ batch_number: "FK-2", cell_id: mine.cell, parent_batch_id: theirs.batch }), "parent_batch_id"],
    ["batch create operation_ids", "post", () => "/api-batches", () => ({ batch_number: "FK-3", cell_id: mine.cell, operation_ids: [theirs.operation] }), "operation_ids[0]"],
    ["batch PATCH cell_id", "patch", () => `/api-batches?id=${mine.batch}`, () => ({ cell_id: theirs.cell }), "cell_id"],
    ["batch add-operations", "post", () => `/api-batch-lifecycle/add-operations?id=${mine.batch}`, () => ({ operation_ids: [theirs.operation] }), "operation_ids[0]"],
    ["batch start operator_id", "post", () => `/api-batch-lifecycle/start?id=${mine.batch}`, () => ({ operator_id: theirs.profile }), "operator_id"],
    ["issue operation_id", "post", () => "/api-issues", () => ({ operation_id: theirs.operation, title: "t", description: "d" }), "operation_id"],
    ["issue reported_by_id", "post", () => "/api-issues", () => ({ operation_id: mine.operation, title: "t", description: "d", reported_by_id: theirs.profile }), "reported_by_id"],
    ["substep operation_id", "post", () => "/api-substeps", () => ({ operation_id: theirs.operation, description: "d", sequence: 1 }), "operation_id"],
    ["time entry operation_id", "post", () => "/api-time-entries", () => ({ operation_id: theirs.operation, start_time: new Date().toISOString() }), "operation_id"],
    ["time entry user_id", "post", () => "/api-time-entries", () => ({ operation_id: mine.operation, user_id: theirs.profile, start_time: new Date().toISOString() }), "user_id"],
    ["quantity operation_id", "post", () => "/api-operation-quantities", () => ({ operation_id: theirs.operation, good: 1 }), "operation_id"],
    ["quantity scrap_reason_id", "post", () => "/api-operation-quantities", () => ({ operation_id: mine.operation, scrap: 1, scrap_reason_id: theirs.scrap_reason }), "scrap_reason_id"],
    ["quantity user_id", "post", () => "/api-operation-quantities", () => ({ operation_id: mine.operation, good: 1, user_id: theirs.profile }), "user_id"],
    ["quantity issue_id", "post", () => "/api-operation-quantities", () => ({ operation_id: mine.operation, good: 1, issue_id: theirs.issue }), "issue_id"],
    ["assignment user_id", "post", () => "/api-assignments", () => ({ user_id: theirs.profile, operation_id: mine.operation }), "user_id"],
    ["assignment operation_id", "post", () => "/api-assignments", () => ({ user_id: mine.profile, operation_id: theirs.operation }), "operation_id"],
    ["assignment part_id", "post", () => "/api-assignments", () => ({ user_id: mine.profile, part_id: theirs.part }), "part_id"],
    ["assignment job_id", "post", () => "/api-assignments", () => ({ user_id: mine.profile, job_id: theirs.job }), "job_id"],
    ["assignment cell_id", "post", () => "/api-assignments", () => ({ user_id: mine.profile, cell_id: theirs.cell }), "cell_id"],
    ["assignment assigned_by", "post", () => "/api-assignments", () => ({ user_id: mine.profile, cell_id: mine.cell, assigned_by: theirs.profile }), "assigned_by"],
    ["quantity PATCH scrap_reason_id", "patch", () => `/api-operation-quantities?id=${mine.quantity}`, () => ({ scrap: 1, scrap_reason_id: theirs.scrap_reason }), "scrap_reason_id"],
    ["quantity PATCH user_id", "patch", () => `/api-operation-quantities?id=${mine.quantity}`, () => ({ user_id: theirs.profile }), "user_id"],
    ["quantity PATCH issue_id", "patch", () => `/api-operation-quantities?id=${mine.quantity}`, () => ({ issue_id: theirs.issue }), "issue_id"],
    ["assignment PATCH assigned_by", "patch", () => `/api-assignments?id=${mine.assignment}`, () => ({ assigned_by: theirs.profile }), "assigned_by"],
    ["template item template_id", "post", () => "/api-templates/items", () => ({ template_id: theirs.template, description: "d", sequence: 9 }), "template_id"],
    ["downtime cell_id", "post", () => "/api-downtime", () => ({ cell_id: theirs.cell, reason: "x" }), "cell_id"],
    ["part image part_id", "post", () => "/api-parts-images", () => ({ part_id: theirs.part, storage_key: `${mine.job}/none.png` }), "part_id"],
    ["operation start user_id", "post", () => `/api-operation-lifecycle/start?id=${mine.operation}&user_id=${theirs.profile}`, () => ({}), "user_id"]
  ]
  it.each(cases)("%s", async (_name, method, path, body, field) => {
    const res = method === "post" ? await a.post(path(), body()) : await a.patch(path(), body())
    expectDetail(res, field, "FK_CONSTRAINT")
  })

  it("wrote nothing: tenant A still has its one job, part and operation, unchanged", async () => {
    expect((await a.get("/api-batches")).body.data.pagination.total).toBe(1)
    expect((await a.get(`/api-batches?id=${mine.batch}`)).body.data.batch).toMatchObject({ status: "draft", operation_ids: [], operator_id: null })
    expect((await a.get("/api-issues")).body.data.pagination.total).toBe(1)
    expect((await a.get("/api-substeps")).body.data.pagination.total).toBe(1)
    expect((await a.get("/api-time-entries")).body.data.pagination.total).toBe(1)
    expect((await a.get(`/api-operation-quantities?id=${mine.quantity}`)).body.data.operation_quantity).toMatchObject({ good: 1, scrap: 0, scrap_reason_id: null, user_id: null, issue_id: null })
    expect((await a.get(`/api-assignments?id=${mine.assignment}`)).body.data.assignment.assigned_by).toBeNull()
    expect((await a.get("/api-operation-quantities")).body.data.pagination.total).toBe(1)
    expect((await a.get("/api-assignments")).body.data.pagination.total).toBe(1)
    expect((await a.get(`/api-templates/items?template_id=${mine.template}`)).body.data.pagination.total).toBe(1)
    expect((await a.get("/api-downtime")).body.data.pagination.total).toBe(1)
    expect((await a.get("/api-parts-images")).body.data.pagination.total).toBe(1)
    const jobs = (await a.get("/api-jobs")).body.data
    expect(jobs.pagination.total).toBe(1)
    expect(jobs.jobs[0].current_cell_id).toBeNull()
    const parts = (await a.get("/api-parts")).body.data
    expect(parts.parts.map((p: any) => [p.id, p.parent_part_id, p.current_cell_id])).toEqual([[mine.part, null, null]])
    const ops = (await a.get("/api-operations")).body.data
    expect(ops.operations.map((o: any) => [o.id, o.cell_id, o.assigned_operator_id, o.status])).toEqual([[mine.operation, null, null, "not_started"]])
  })

  it("lists never show another tenant's records", async () => {
    for (const path of RESOURCES) {
      const res = await a.get(path)
      const rows = Object.values(res.body.data).find(Array.isArray) as Array<{ id: string }>
      expect(rows.length).toBeGreaterThan(0)
      expect(rows.filter((r) => Object.values(theirs).includes(r.id))).toEqual([])
    }
  })
})
