// /api-issues (spec 2.4, 4.7, DECISIONS: numbering, aliases, tenant rules) through a real server.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, expectDetail, expectError, type Harness, nestedJob, type Reply, startServer } from "./harness.ts"

let h: Harness
let api: ReturnType<typeof client>
let apiB: ReturnType<typeof client>
let tenantA: string

const UNKNOWN = "00000000-0000-4000-8000-000000000000"
const YEAR = new Date().getUTCFullYear()

/** Operations of tenant A's jobs ISS-J1 and ISS-J2. */
const ops: { j1p1o1: string; j2p1o1: string } = {} as any
let alice: string
let bob: string
let opB: string
let profileB: string

const createJob = async (as: ReturnType<typeof client>, jobNumber: string, parts: number, opsPerPart: number) => {
  const res = await as.post("/api-jobs", nestedJob(jobNumber, parts, opsPerPart))
  expect(res.status).toBe(201)
  return res.body.data
}

const createProfile = async (as: ReturnType<typeof client>, name: string) => {
  const res = await as.post("/api-profiles", { display_name: name })
  expect(res.status).toBe(201)
  return res.body.data.profile.id as string
}

const issueCount = async (tenantId = tenantA) =>
  (await h.sql("SELECT count(*)::int AS n FROM issues WHERE tenant_id = $1", [tenantId]))[0]!.n as number

const general = (extra: Record<string, unknown> = {}) => ({
  operation_id: ops.j1p1o1,
  title: "Burr on edge",
  description: "Deburring missed on the left edge",
  ...extra
})

const ncr = (extra: Record<string, unknown> = {}) => general({ issue_type: "ncr", severity: "high", ...extra })

const create = async (body: Record<string, unknown>, as = api) => {
  const res = await as.post("/api-issues", body)
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return res.body.data.issue
}

beforeAll(async () => {
  h = await startServer()
  ;({ tenantId: tenantA, api } = await h.as("A"))
  ;({ api: apiB } = await h.as("B"))
  const j1 = await createJob(api, "ISS-J1", 2, 2)
  const j2 = await createJob(api, "ISS-J2", 1, 1)
  ops.j1p1o1 = j1.parts[0].operations[0].operation_id
  ops.j2p1o1 = j2.parts[0].operations[0].operation_id
  alice = await createProfile(api, "Alice")
  bob = await createProfile(api, "Bob")
  opB = (await createJob(apiB, "B-J1", 1, 1)).parts[0].operations[0].operation_id
  profileB = await createProfile(apiB, "Bea of B")
})
afterAll(() => h.close())

describe("POST /api-issues", () => {
  it("creates a general issue: 201 data.issue with the fields of spec 4.7 and no ncr_number", async () => {
    const res = await api.post("/api-issues", general({ severity: "low", reported_by_id: alice }))
    expect(res.status).toBe(201)
    expect(res.body.success).toBe(true)
    const issue = res.body.data.issue
    expect(issue).toMatchObject({
      tenant_id: tenantA,
      operation_id: ops.j1p1o1,
      ncr_number: null,
      title: "Burr on edge",
      description: "Deburring missed on the left edge",
      severity: "low",
      status: "open",
      issue_type: "general",
      ncr_category: null,
      ncr_disposition: null,
      disposition: null,
      reported_by_id: alice,
      verified_at: null,
      resolved_at: null
    })
    expect(issue.id).toMatch(/^[0-9a-f-]{36}$/)
    expect(issue.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    expect((await api.get(`/api-issues?id=${issue.id}`)).body).toEqual({ success: true, data: { issue } })
  })

  it("creates NCRs with generated numbers NCR-<year>-00001, then -00002, with every NCR field", async () => {
    const { api: n } = await h.as("Numbering")
    const opN = (await createJob(n, "N-1", 1, 1)).parts[0].operations[0].operation_id
    const first = await create({
      operation_id: opN,
      title: "Wrong material",
      description: "S235 used instead of S355",
      issue_type: "ncr",
      severity: "critical",
      ncr_category: "material",
      ncr_disposition: "scrap",
      root_cause: "mixed-up lot",
      corrective_action: "re-label stock",
      preventive_action: "scan lots at issue",
      affected_quantity: 4,
      verification_required: true
    }, n)
    expect(first).toMatchObject({
      ncr_number: `NCR-${YEAR}-00001`,
      issue_type: "ncr",
      severity: "critical",
      status: "open",
      ncr_category: "material",
      ncr_disposition: "scrap",
      disposition: "scrap",
      root_cause: "mixed-up lot",
      corrective_action: "re-label stock",
      preventive_action: "scan lots at issue",
      affected_quantity: 4,
      verification_required: true
    })
    const second = await create({ operation_id: opN, title: "t", description: "d", issue_type: "ncr", severity: "low" }, n)
    expect(second.ncr_number).toBe(`NCR-${YEAR}-00002`)
  })

  it("gives 10 parallel NCR creates 10 distinct numbers, 00001 to 00010 for a fresh tenant", async () => {
    const { tenantId, api: p } = await h.as("Parallel")
    const op = (await createJob(p, "P-1", 1, 1)).parts[0].operations[0].operation_id
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => p.post("/api-issues", { operation_id: op, title: `NCR ${i}`, description: "d", issue_type: "ncr", severity: "medium" }))
    )
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201))
    const numbers = results.map((r) => r.body.data.issue.ncr_number as string).sort()
    expect(numbers).toEqual(Array.from({ length: 10 }, (_, i) => `NCR-${YEAR}-${String(i + 1).padStart(5, "0")}`))
    const counter = await h.sql("SELECT last_value FROM ncr_counters WHERE tenant_id = $1 AND year = $2", [tenantId, YEAR])
    expect(counter).toEqual([{ last_value: 10 }])
  })

  it("keeps a client-supplied ncr_number, 409 for a duplicate (even with other invalid fields), nothing written", async () => {
    const kept = await create(ncr({ ncr_number: "ERP-NCR-7781" }))
    expect(kept.ncr_number).toBe("ERP-NCR-7781")
    const before = await issueCount()
    // a valid body meets the unique key in its statement; a refused one (a bad field, a missing reference, an NCR
    // without severity) looks the number up before it answers 422
    const duplicate = await api.post("/api-issues", ncr({ ncr_number: "ERP-NCR-7781" }))
    expectError(duplicate, 409, "CONFLICT")
    expect(duplicate.body.error.message).toBe("an issue with ncr_number ERP-NCR-7781 already exists")
    expectError(await api.post("/api-issues", ncr({ ncr_number: "ERP-NCR-7781", severity: "urgent", title: "" })), 409, "CONFLICT")
    expectError(await api.post("/api-issues", ncr({ ncr_number: "ERP-NCR-7781", operation_id: "00000000-0000-4000-8000-00000000000b" })), 409, "CONFLICT")
    expectError(await api.post("/api-issues", ncr({ ncr_number: "ERP-NCR-7781", severity: undefined })), 409, "CONFLICT")
    expect(await issueCount()).toBe(before)
    // another tenant may use the same number
    expect((await create({ operation_id: opB, title: "t", description: "d", issue_type: "ncr", severity: "low", ncr_number: "ERP-NCR-7781" }, apiB)).ncr_number)
      .toBe("ERP-NCR-7781")
  })

  it("skips a generated number a client already used", async () => {
    const { api: s } = await h.as("Skip")
    const op = (await createJob(s, "S-1", 1, 1)).parts[0].operations[0].operation_id
    const body = { operation_id: op, title: "t", description: "d", issue_type: "ncr", severity: "low" }
    expect((await create({ ...body, ncr_number: `NCR-${YEAR}-00002` }, s)).ncr_number).toBe(`NCR-${YEAR}-00002`)
    expect((await create(body, s)).ncr_number).toBe(`NCR-${YEAR}-00001`)
    expect((await create(body, s)).ncr_number).toBe(`NCR-${YEAR}-00003`)
  })

  it("keeps a client-supplied ncr_number on a general issue and generates none without one (DECISIONS)", async () => {
    expect((await create(general({ ncr_number: "GEN-REF-1" }))).ncr_number).toBe("GEN-REF-1")
    expect((await create(general({ issue_type: "general" }))).ncr_number).toBeNull()
    expectError(await api.post("/api-issues", general({ ncr_number: "GEN-REF-1" })), 409, "CONFLICT")
  })

  it("answers 422 NOT_NULL when an NCR has no severity; nothing is written and no number is used", async () => {
    const { tenantId, api: v } = await h.as("NoSeverity")
    const op = (await createJob(v, "V-1", 1, 1)).parts[0].operations[0].operation_id
    const body = { operation_id: op, title: "t", description: "d", issue_type: "ncr" }
    const missing = await v.post("/api-issues", body)
    expectDetail(missing, "severity", "NOT_NULL")
    expect(missing.body.error.details).toHaveLength(1)
    expect(missing.body.error.details[0]).toMatchObject({ entityType: "issue", entityIndex: 0 })
    expectDetail(await v.post("/api-issues", { ...body, severity: null }), "severity", "NOT_NULL")
    // reported together with the other problems
    const both = await v.post("/api-issues", { ...body, title: "" })
    expectDetail(both, "severity", "NOT_NULL")
    expectDetail(both, "title", "MIN_LENGTH")
    expect(await issueCount(tenantId)).toBe(0)
    expect(await h.sql("SELECT * FROM ncr_counters WHERE tenant_id = $1", [tenantId])).toEqual([])
    // a general issue needs no severity
    expect((await create({ operation_id: op, title: "t", description: "d" }, v)).severity).toBeNull()
    expect((await create({ ...body, severity: "low" }, v)).ncr_number).toBe(`NCR-${YEAR}-00001`)
  })

  it("accepts `disposition` as the alias of ncr_disposition and answers both", async () => {
    const issue = await create(ncr({ disposition: "rework" }))
    expect(issue).toMatchObject({ ncr_disposition: "rework", disposition: "rework" })
    const stored = await h.sql("SELECT ncr_disposition FROM issues WHERE id = $1", [issue.id])
    expect(stored).toEqual([{ ncr_disposition: "rework" }])
  })

  it("answers 422 with a detail per invalid field (enums, lengths, types, required)", async () => {
    const before = await issueCount()
    const res = await api.post("/api-issues", {
      operation_id: "nope",
      title: "x".repeat(256),
      description: "",
      severity: "urgent",
      status: "done",
      issue_type: "defect",
      ncr_category: "weather",
      disposition: "burn",
      ncr_number: "N".repeat(51),
      affected_quantity: -1,
      verification_required: "yes",
      reported_by_id: "bob"
    })
    const byField = Object.fromEntries(res.body.error.details.map((d: any) => [d.field, d.constraint]))
    expect(byField).toEqual({
      operation_id: "UUID_FORMAT",
      title: "MAX_LENGTH",
      description: "MIN_LENGTH",
      severity: "ENUM_CONSTRAINT",
      status: "ENUM_CONSTRAINT",
      issue_type: "ENUM_CONSTRAINT",
      ncr_category: "ENUM_CONSTRAINT",
      ncr_disposition: "ENUM_CONSTRAINT",
      ncr_number: "MAX_LENGTH",
      affected_quantity: "MIN_VALUE",
      verification_required: "TYPE_MISMATCH",
      reported_by_id: "UUID_FORMAT"
    })
    expectError(res, 422, "VALIDATION_ERROR")
    expect(res.body.error.details.find((d: any) => d.field === "severity")).toMatchObject({ value: "urgent", entityType: "issue" })
    const empty = await api.post("/api-issues", {})
    expectDetail(empty, "operation_id", "NOT_NULL")
    expectDetail(empty, "title", "NOT_NULL")
    expectDetail(empty, "description", "NOT_NULL")
    expectDetail(await api.post("/api-issues", ncr({ ncr_number: "" })), "ncr_number", "MIN_LENGTH")
    expect(await issueCount()).toBe(before)
  })

  it("answers 422 FK_CONSTRAINT for an operation or profile of another tenant or none; nothing written", async () => {
    const before = await issueCount()
    expectDetail(await api.post("/api-issues", general({ operation_id: opB })), "operation_id", "FK_CONSTRAINT")
    expectDetail(await api.post("/api-issues", general({ operation_id: UNKNOWN })), "operation_id", "FK_CONSTRAINT")
    const profiles = await api.post("/api-issues", ncr({ reported_by_id: profileB, assigned_to_id: UNKNOWN, resolved_by_id: profileB, verified_by_id: profileB }))
    for (const f of ["reported_by_id", "assigned_to_id", "resolved_by_id", "verified_by_id"]) expectDetail(profiles, f, "FK_CONSTRAINT")
    expect(await issueCount()).toBe(before)
    // B referencing A's operation and profile
    expectDetail(await apiB.post("/api-issues", general({ reported_by_id: alice, operation_id: opB })), "reported_by_id", "FK_CONSTRAINT")
    expectDetail(await apiB.post("/api-issues", general()), "operation_id", "FK_CONSTRAINT")
  })

  it("stamps verified_at and resolved_at when created verified or resolved", async () => {
    const issue = await create(ncr({ verified_by_id: bob, status: "resolved", resolved_by_id: alice }))
    expect(issue.verified_at).toMatch(/^\d{4}-\d{2}-\d{2}T/)
    expect(issue.resolved_at).toMatch(/^\d{4}-\d{2}-\d{2}T/)
  })

  it("answers 400 for malformed JSON, 401 without a key and 405 for DELETE", async () => {
    expectError(await api.post("/api-issues", undefined, { raw: "{oops" }), 400, "BAD_REQUEST")
    expectError(await client(h.url).post("/api-issues", general()), 401, "UNAUTHORIZED")
    expectError(await api.delete(`/api-issues?id=${UNKNOWN}`), 405, "METHOD_NOT_ALLOWED")
  })
})

describe("GET /api-issues", () => {
  let l: ReturnType<typeof client>
  const ids: Record<string, string> = {}
  const titles = (res: Reply) => {
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return res.body.data.issues.map((i: any) => i.title)
  }
  const lo: Record<string, string> = {}
  let carl: string
  let dana: string

  beforeAll(async () => {
    l = client(h.url, (await h.tenant("Lists")).key)
    const j1 = await createJob(l, "L-J1", 2, 1)
    const j2 = await createJob(l, "L-J2", 1, 1)
    lo.job1 = j1.job_id
    lo.job2 = j2.job_id
    lo.part1 = j1.parts[0].part_id
    lo.part2 = j1.parts[1].part_id
    lo.op1 = j1.parts[0].operations[0].operation_id
    lo.op2 = j1.parts[1].operations[0].operation_id
    lo.op3 = j2.parts[0].operations[0].operation_id
    carl = await createProfile(l, "Carl")
    dana = await createProfile(l, "Dana")
    // created in this order: A (oldest) .. E (newest)
    const rows = [
      { title: "A", description: "scratch on the housing", operation_id: lo.op1, severity: "high", reported_by_id: carl },
      { title: "B", description: "porosity", operation_id: lo.op2, severity: "low", issue_type: "ncr", assigned_to_id: dana, ncr_disposition: "rework" },
      { title: "C", description: "Wrong HOUSING drawing", operation_id: lo.op3, severity: "critical", issue_type: "ncr", reported_by_id: dana, assigned_to_id: carl },
      { title: "D", description: "loose fit", operation_id: lo.op1, severity: "medium", status: "in_progress", assigned_to_id: dana },
      { title: "E", description: "no severity", operation_id: lo.op3, reported_by_id: carl }
    ]
    for (const r of rows) ids[r.title] = (await create(r, l)).id
  })

  it("lists newest first with pagination, issues and disposition in each record", async () => {
    const res = await l.get("/api-issues")
    expect(titles(res)).toEqual(["E", "D", "C", "B", "A"])
    expect(res.body.data.pagination).toEqual({ limit: 100, offset: 0, total: 5 })
    expect(res.body.data.issues.find((i: any) => i.title === "B")).toMatchObject({ ncr_disposition: "rework", disposition: "rework" })
    const page = await l.get("/api-issues?limit=2&offset=1")
    expect(titles(page)).toEqual(["D", "C"])
    expect(page.body.data.pagination).toEqual({ limit: 2, offset: 1, total: 5 })
    expect((await l.get("/api-issues?offset=10")).body.data).toEqual({ issues: [], pagination: { limit: 100, offset: 10, total: 5 } })
  })

  it("filters by id, severity, status, issue_type, reported_by, assigned_to and operation_id", async () => {
    const q = (s: string) => l.get(`/api-issues?${s}&sort=created_at&order=asc`).then(titles)
    // `?id=` reads one record (DECISIONS), so the id filter answers data.issue
    expect((await l.get(`/api-issues?id=${ids.C}`)).body.data.issue).toMatchObject({ id: ids.C, title: "C" })
    expect(await q("severity=high")).toEqual(["A"])
    expect(await q("status=in_progress")).toEqual(["D"])
    expect(await q("status=open")).toEqual(["A", "B", "C", "E"])
    expect(await q("issue_type=ncr")).toEqual(["B", "C"])
    expect(await q("issue_type=general")).toEqual(["A", "D", "E"])
    expect(await q(`reported_by=${carl}`)).toEqual(["A", "E"])
    expect(await q(`reported_by=${dana}`)).toEqual(["C"])
    expect(await q(`assigned_to=${dana}`)).toEqual(["B", "D"])
    expect(await q(`assigned_to=${carl}`)).toEqual(["C"])
    expect(await q(`operation_id=${lo.op1}`)).toEqual(["A", "D"])
    expect(await q(`operation_id=${lo.op1}&severity=medium`)).toEqual(["D"])
  })

  it("filters by job_id and part_id through the operation", async () => {
    const q = (s: string) => l.get(`/api-issues?${s}&sort=created_at&order=asc`).then(titles)
    expect(await q(`job_id=${lo.job1}`)).toEqual(["A", "B", "D"])
    expect(await q(`job_id=${lo.job2}`)).toEqual(["C", "E"])
    expect(await q(`part_id=${lo.part1}`)).toEqual(["A", "D"])
    expect(await q(`part_id=${lo.part2}`)).toEqual(["B"])
    expect(await q(`job_id=${lo.job2}&part_id=${lo.part1}`)).toEqual([])
    expect(await q(`job_id=${UNKNOWN}`)).toEqual([])
  })

  it("searches title and description, case-insensitively", async () => {
    const q = (s: string) => l.get(`/api-issues?search=${s}&sort=created_at&order=asc`).then(titles)
    expect(await q("housing")).toEqual(["A", "C"])
    expect(await q("POROS")).toEqual(["B"])
    expect(await q("fit")).toEqual(["D"])
    expect(await q("d")).toEqual(["C", "D"])
    expect(await q("zzz")).toEqual([])
  })

  it("sorts by severity (rank), status (lifecycle), resolved_at and created_at in both orders", async () => {
    const s = (qs: string) => l.get(`/api-issues?${qs}`).then(titles)
    // no severity sorts last in both orders
    expect(await s("sort=severity&order=asc")).toEqual(["B", "D", "A", "C", "E"])
    expect(await s("sort=severity&order=desc")).toEqual(["C", "A", "D", "B", "E"])
    expect((await s("sort=status&order=desc"))[0]).toBe("D")
    expect((await s("sort=status&order=asc")).at(-1)).toBe("D")
    expect(await s("sort=created_at&order=asc")).toEqual(["A", "B", "C", "D", "E"])
    // resolve A then C: resolved_at orders them, unresolved last
    expect((await l.patch(`/api-issues?id=${ids.A}`, { status: "resolved" })).status).toBe(200)
    expect((await l.patch(`/api-issues?id=${ids.C}`, { status: "closed" })).status).toBe(200)
    expect((await s("sort=resolved_at&order=asc")).slice(0, 2)).toEqual(["A", "C"])
    expect((await s("sort=resolved_at&order=desc")).slice(0, 2)).toEqual(["C", "A"])
    expect((await s("sort=status&order=desc")).slice(0, 2)).toEqual(["C", "A"])
  })

  it("refuses bad filters: 422 for unknown enums and sorts, 400 for a malformed uuid or limit", async () => {
    expectDetail(await l.get("/api-issues?severity=urgent"), "severity", "ENUM_CONSTRAINT")
    expectDetail(await l.get("/api-issues?status=done"), "status", "ENUM_CONSTRAINT")
    expectDetail(await l.get("/api-issues?issue_type=defect"), "issue_type", "ENUM_CONSTRAINT")
    expectDetail(await l.get("/api-issues?sort=title"), "sort", "ENUM_CONSTRAINT")
    expectDetail(await l.get("/api-issues?limit=1001"), "limit", "MAX_VALUE")
    expectError(await l.get("/api-issues?job_id=nope"), 400, "BAD_REQUEST")
    expectError(await l.get("/api-issues?reported_by=nope"), 400, "BAD_REQUEST")
    expectError(await l.get("/api-issues?limit=ten"), 400, "BAD_REQUEST")
  })

  it("shows only the caller's issues; another tenant's id is 403, an unknown id 404", async () => {
    expect((await apiB.get(`/api-issues?operation_id=${lo.op1}`)).body.data.issues).toEqual([])
    expect(titles(await apiB.get("/api-issues")).every((t: string) => !["A", "B", "C", "D", "E"].includes(t))).toBe(true)
    expectError(await apiB.get(`/api-issues?id=${ids.A}`), 403, "FORBIDDEN")
    expectError(await l.get(`/api-issues?id=${UNKNOWN}`), 404, "NOT_FOUND")
    expectError(await l.get("/api-issues?id=nope"), 400, "BAD_REQUEST")
  })

  it("hides the issues of a soft-deleted job from lists and reads", async () => {
    const { api: d } = await h.as("SoftDelete")
    const job = await createJob(d, "SD-1", 1, 1)
    const issue = await create({ operation_id: job.parts[0].operations[0].operation_id, title: "gone", description: "d" }, d)
    expect(titles(await d.get("/api-issues"))).toEqual(["gone"])
    expect((await d.delete(`/api-jobs?id=${job.job_id}`)).status).toBe(200)
    expect(titles(await d.get("/api-issues"))).toEqual([])
    expectError(await d.get(`/api-issues?id=${issue.id}`), 404, "NOT_FOUND")
    expectError(await d.patch(`/api-issues?id=${issue.id}`, { status: "closed" }), 404, "NOT_FOUND")
  })
})

describe("PATCH /api-issues", () => {
  it("setting verified_by_id sets verified_at; clearing it clears verified_at", async () => {
    const issue = await create(ncr())
    expect(issue.verified_at).toBeNull()
    const res = await api.patch(`/api-issues?id=${issue.id}`, { verified_by_id: bob })
    expect(res.status).toBe(200)
    const verified = res.body.data.issue
    expect(verified.verified_by_id).toBe(bob)
    expect(Date.parse(verified.verified_at)).toBeGreaterThanOrEqual(Date.parse(issue.created_at))
    expect(verified.updated_at >= issue.updated_at).toBe(true)
    const cleared = (await api.patch(`/api-issues?id=${issue.id}`, { verified_by_id: null })).body.data.issue
    expect(cleared).toMatchObject({ verified_by_id: null, verified_at: null })
  })

  it("status resolved sets resolved_at, closed keeps it, reopening clears it", async () => {
    const issue = await create(general())
    const resolved = (await api.patch(`/api-issues?id=${issue.id}`, { status: "resolved", resolution_notes: "deburred", resolved_by_id: alice })).body.data.issue
    expect(resolved).toMatchObject({ status: "resolved", resolution_notes: "deburred", resolved_by_id: alice })
    expect(resolved.resolved_at).toMatch(/^\d{4}-\d{2}-\d{2}T/)
    const closed = (await api.patch(`/api-issues?id=${issue.id}`, { status: "closed" })).body.data.issue
    expect(closed.resolved_at).toBe(resolved.resolved_at)
    const notes = (await api.patch(`/api-issues?id=${issue.id}`, { title: "Burr, left edge" })).body.data.issue
    expect(notes).toMatchObject({ title: "Burr, left edge", status: "closed", resolved_at: resolved.resolved_at })
    const reopened = (await api.patch(`/api-issues?id=${issue.id}`, { status: "in_progress" })).body.data.issue
    expect(reopened).toMatchObject({ status: "in_progress", resolved_at: null })
  })

  it("updates NCR fields, accepting `disposition` and answering both names", async () => {
    const issue = await create(ncr())
    const res = await api.patch(`/api-issues?id=${issue.id}`, {
      disposition: "return_to_supplier",
      ncr_category: "supplier",
      root_cause: "supplier lot",
      corrective_action: "return",
      preventive_action: "incoming inspection",
      affected_quantity: 12,
      verification_required: false,
      severity: "critical",
      assigned_to_id: alice,
      reported_by_id: bob,
      description: "updated"
    })
    expect(res.status).toBe(200)
    expect(res.body.data.issue).toMatchObject({
      ncr_disposition: "return_to_supplier",
      disposition: "return_to_supplier",
      ncr_category: "supplier",
      root_cause: "supplier lot",
      affected_quantity: 12,
      verification_required: false,
      severity: "critical",
      assigned_to_id: alice,
      reported_by_id: bob,
      description: "updated",
      ncr_number: issue.ncr_number
    })
    expect((await api.get(`/api-issues?id=${issue.id}`)).body.data.issue).toEqual(res.body.data.issue)
  })

  it("answers 422 for bad values, fields that cannot be updated and a null severity on an NCR; nothing changes", async () => {
    const issue = await create(ncr())
    expectDetail(await api.patch(`/api-issues?id=${issue.id}`, { status: "done" }), "status", "ENUM_CONSTRAINT")
    expectDetail(await api.patch(`/api-issues?id=${issue.id}`, { disposition: "burn" }), "ncr_disposition", "ENUM_CONSTRAINT")
    expectDetail(await api.patch(`/api-issues?id=${issue.id}`, { severity: "urgent" }), "severity", "ENUM_CONSTRAINT")
    expectDetail(await api.patch(`/api-issues?id=${issue.id}`, { severity: null }), "severity", "NOT_NULL")
    expectDetail(await api.patch(`/api-issues?id=${issue.id}`, { title: "" }), "title", "MIN_LENGTH")
    const fixed = await api.patch(`/api-issues?id=${issue.id}`, { operation_id: ops.j2p1o1, issue_type: "general", id: UNKNOWN, created_at: "2020-01-01", verified_at: "2020-01-01" })
    expect(fixed.body.error.details.map((d: any) => d.field).sort()).toEqual(["created_at", "id", "issue_type", "operation_id", "verified_at"])
    expectDetail(fixed, "operation_id", "ENUM_CONSTRAINT")
    expectDetail(await api.patch(`/api-issues?id=${issue.id}`, { verified_by_id: profileB }), "verified_by_id", "FK_CONSTRAINT")
    expectDetail(await api.patch(`/api-issues?id=${issue.id}`, { assigned_to_id: UNKNOWN }), "assigned_to_id", "FK_CONSTRAINT")
    expect((await api.get(`/api-issues?id=${issue.id}`)).body.data.issue).toEqual(issue)
    // a general issue may drop its severity
    const g = await create(general({ severity: "low" }))
    expect((await api.patch(`/api-issues?id=${g.id}`, { severity: null })).body.data.issue.severity).toBeNull()
  })

  it("changes ncr_number only to a free one: 409 for another issue's number, its own is fine", async () => {
    const a = await create(ncr())
    const b = await create(ncr())
    expectError(await api.patch(`/api-issues?id=${b.id}`, { ncr_number: a.ncr_number }), 409, "CONFLICT")
    expectError(await api.patch(`/api-issues?id=${b.id}`, { ncr_number: a.ncr_number, status: "done" }), 409, "CONFLICT")
    expect((await api.patch(`/api-issues?id=${b.id}`, { ncr_number: b.ncr_number })).status).toBe(200)
    expect((await api.patch(`/api-issues?id=${b.id}`, { ncr_number: "ERP-77" })).body.data.issue.ncr_number).toBe("ERP-77")
    expectDetail(await api.patch(`/api-issues?id=${b.id}`, { ncr_number: null }), "ncr_number", "NOT_NULL")
  })

  it("ncr.verified is written once per new verifier of an NCR, also under concurrent PATCHes, and carries the answer", async () => {
    const verified = async (id: string) =>
      (await h.sql("SELECT data FROM event_log WHERE tenant_id = $1 AND event_type = 'ncr.verified' ORDER BY seq", [tenantA]))
        .map((r) => (typeof r.data === "string" ? JSON.parse(r.data) : r.data))
        .filter((d: any) => d.issue_id === id)
    const issue = await create(ncr())
    const answers = await Promise.all(Array.from({ length: 5 }, () => api.patch(`/api-issues?id=${issue.id}`, { verified_by_id: bob })))
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
    const once = await verified(issue.id)
    expect(once).toHaveLength(1)
    expect(once[0]).toMatchObject({ issue_id: issue.id, issue_type: "ncr", ncr_number: issue.ncr_number, severity: "high" })
    expect(answers.map((r) => r.body.data.issue)).toContainEqual(once[0].issue)
    await api.patch(`/api-issues?id=${issue.id}`, { verified_by_id: bob, status: "in_progress" })
    expect(await verified(issue.id)).toHaveLength(1)
    await api.patch(`/api-issues?id=${issue.id}`, { verified_by_id: alice })
    expect((await verified(issue.id)).map((d: any) => d.issue.verified_by_id)).toEqual([bob, alice])
    // a general issue's verifier is no NCR verification
    const g = await create(general())
    await api.patch(`/api-issues?id=${g.id}`, { verified_by_id: bob })
    expect(await verified(g.id)).toEqual([])
  })

  it("a PATCH that decodes: 409 for a taken number before 422; references and an NCR's severity in one 422; nothing changes", async () => {
    const a = await create(ncr())
    const b = await create(ncr())
    expectError(await api.patch(`/api-issues?id=${b.id}`, { ncr_number: a.ncr_number, assigned_to_id: UNKNOWN }), 409, "CONFLICT")
    const both = await api.patch(`/api-issues?id=${b.id}`, { severity: null, verified_by_id: profileB, title: "renamed" })
    expectError(both, 422, "VALIDATION_ERROR")
    expect(both.body.error.details.map((d: any) => [d.field, d.constraint])).toEqual([["verified_by_id", "FK_CONSTRAINT"], ["severity", "NOT_NULL"]])
    expectError(await apiB.patch(`/api-issues?id=${b.id}`, { severity: null, verified_by_id: profileB }), 403, "FORBIDDEN")
    expect((await api.get(`/api-issues?id=${b.id}`)).body.data.issue).toEqual(b)
    // a general issue refused for a reference only
    const g = await create(general({ severity: "low" }))
    const ref = await api.patch(`/api-issues?id=${g.id}`, { severity: null, verified_by_id: profileB })
    expect(ref.body.error.details.map((d: any) => d.field)).toEqual(["verified_by_id"])
  })

  it("a taken ncr_number with an otherwise refused body is 409 naming the number, on create and PATCH, on every refused path", async () => {
    const a = await create(ncr({ ncr_number: "ERP-TAKEN-1" }))
    const b = await create(ncr())
    const taken = (res: Reply) => {
      expectError(res, 409, "CONFLICT")
      expect(res.body.error.message).toBe("an issue with ncr_number ERP-TAKEN-1 already exists")
    }
    const before = await issueCount()
    // create: a body that does not decode, a missing reference, an NCR without severity (alone and with a missing reference)
    taken(await api.post("/api-issues", ncr({ ncr_number: a.ncr_number, title: "" })))
    taken(await api.post("/api-issues", ncr({ ncr_number: a.ncr_number, assigned_to_id: UNKNOWN })))
    taken(await api.post("/api-issues", ncr({ ncr_number: a.ncr_number, severity: null })))
    taken(await api.post("/api-issues", ncr({ ncr_number: a.ncr_number, severity: null, assigned_to_id: UNKNOWN })))
    expect(await issueCount()).toBe(before)
    // a number that could not be stored is not looked up: the 422 stands
    expectDetail(await api.post("/api-issues", ncr({ ncr_number: "N".repeat(51), title: "" })), "ncr_number", "MAX_LENGTH")
    // PATCH: a body that does not decode, a missing reference, an NCR's severity cleared
    taken(await api.patch(`/api-issues?id=${b.id}`, { ncr_number: a.ncr_number, title: "" }))
    taken(await api.patch(`/api-issues?id=${b.id}`, { ncr_number: a.ncr_number, verified_by_id: profileB }))
    taken(await api.patch(`/api-issues?id=${b.id}`, { ncr_number: a.ncr_number, severity: null }))
    // its own number is not taken: the 422 stands; another tenant's issue is 403 before the 409, an unknown one 404
    expectDetail(await api.patch(`/api-issues?id=${a.id}`, { ncr_number: a.ncr_number, severity: null }), "severity", "NOT_NULL")
    expectError(await apiB.patch(`/api-issues?id=${b.id}`, { ncr_number: a.ncr_number, title: "" }), 403, "FORBIDDEN")
    expectError(await api.patch(`/api-issues?id=${UNKNOWN}`, { ncr_number: a.ncr_number, title: "" }), 404, "NOT_FOUND")
    expect((await api.get(`/api-issues?id=${b.id}`)).body.data.issue).toEqual(b)
  })

  it("answers 403 for another tenant's issue before validating, 404 for an unknown id, 422 without id", async () => {
    const issue = await create(general())
    expectError(await apiB.patch(`/api-issues?id=${issue.id}`, { status: "closed" }), 403, "FORBIDDEN")
    expectError(await apiB.patch(`/api-issues?id=${issue.id}`, { status: "bogus" }), 403, "FORBIDDEN")
    expect((await api.get(`/api-issues?id=${issue.id}`)).body.data.issue.status).toBe("open")
    expectError(await api.patch(`/api-issues?id=${UNKNOWN}`, { status: "closed" }), 404, "NOT_FOUND")
    expectError(await api.patch("/api-issues", { status: "closed" }), 422, "VALIDATION_ERROR")
    expectError(await api.patch("/api-issues?id=nope", { status: "closed" }), 400, "BAD_REQUEST")
  })
})
