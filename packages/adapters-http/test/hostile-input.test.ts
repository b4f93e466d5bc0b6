// Hostile input (issue 8 items 1 and 3): bodies that are not objects, absurd nesting, strings and numbers
// PostgreSQL cannot store, fields a create may not set. Every one is a 4xx in the spec's envelope and
// nothing is written.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, expectDetail, expectError, type Harness, nestedJob, startServer } from "./harness.ts"

let h: Harness
let api: ReturnType<typeof client>
let partId: string
let cellId: string

const counts = async () => {
  const rows = (await h.sql(
    `SELECT (SELECT count(*) FROM jobs) + (SELECT count(*) FROM parts) + (SELECT count(*) FROM operations)
          + (SELECT count(*) FROM batches) + (SELECT count(*) FROM issues) + (SELECT count(*) FROM outbox) + (SELECT count(*) FROM part_usage) AS n`
  )) as ReadonlyArray<{ n: string }>
  return Number(rows[0]!.n)
}

beforeAll(async () => {
  h = await startServer()
  api = client(h.url, (await h.tenant("Hostile")).key)
  const job = await api.post("/api-jobs", nestedJob("H-1"))
  expect(job.status).toBe(201)
  partId = job.body.data.parts[0].part_id
  const cell = await api.post("/api-cells", { name: "Laser H" })
  expect(cell.status).toBe(201)
  cellId = cell.body.data.cell.id
})
afterAll(() => h.close())

describe("bodies that are not the object an endpoint expects", () => {
  it.each([
    ["null", "null"],
    ["an empty body", ""],
    ["a string", '"job"'],
    ["a number", "42"],
    ["an array", "[1, 2]"],
    ["true", "true"]
  ])("%s is 422 TYPE_MISMATCH on create, PATCH and sync, and nothing is written", async (_, raw) => {
    const before = await counts()
    for (const [method, path] of [
      ["POST", "/api-jobs"],
      ["POST", "/api-parts"],
      ["POST", "/api-operations"],
      ["POST", "/api-batches"],
      ["POST", "/api-issues"],
      ["PUT", "/api-jobs/sync"],
      ["PATCH", `/api-parts?id=${partId}`]
    ] as const) {
      const res = await api.send(method, path, undefined, { raw })
      expect(res.status, `${method} ${path} ${JSON.stringify(raw)}`).toBe(422)
      expectDetail(res, "", "TYPE_MISMATCH")
    }
    expect(await counts()).toBe(before)
  })

  it("20,000 nested arrays are 400 BAD_REQUEST, before authentication too", async () => {
    const raw = "[".repeat(20_000) + "]".repeat(20_000)
    expectError(await api.post("/api-jobs", undefined, { raw }), 400, "BAD_REQUEST")
    expectError(await client(h.url).post("/api-jobs", undefined, { raw }), 400, "BAD_REQUEST")
    const deepMetadata = JSON.stringify({ ...nestedJob("H-DEEP"), metadata: JSON.parse('{"a":'.repeat(100) + "1" + "}".repeat(100)) })
    expectError(await api.post("/api-jobs", undefined, { raw: deepMetadata }), 400, "BAD_REQUEST")
  })

  it("metadata nested 60 levels is accepted", async () => {
    const metadata = JSON.parse('{"a":'.repeat(60) + "1" + "}".repeat(60))
    expect((await api.post("/api-jobs", { ...nestedJob("H-NEST60"), metadata })).status).toBe(201)
  })
})

describe("strings PostgreSQL cannot store are 422 with the field's path", () => {
  it.each([
    ["a NUL character", "A\u0000B"],
    ["a lone high surrogate", "x\ud800"],
    ["a lone low surrogate", "\udc00y"]
  ])("%s in job_number, a nested part's notes and a metadata key", async (_, bad) => {
    const before = await counts()
    const body = nestedJob(bad)
    ;(body.parts[0] as Record<string, unknown>).notes = bad
    ;(body as Record<string, unknown>).metadata = { [bad]: 1, ok: [bad] }
    const res = await api.post("/api-jobs", body)
    expect(res.status).toBe(422)
    expectDetail(res, "job_number", "PATTERN_MISMATCH")
    expectDetail(res, "parts[0].notes", "PATTERN_MISMATCH")
    expectDetail(res, "metadata.ok[0]", "PATTERN_MISMATCH")
    expect(res.body.error.details.some((d: { field: string }) => d.field.startsWith("metadata.") && d.field !== "metadata.ok[0]")).toBe(true)
    expect(await counts()).toBe(before)
  })

  it("a surrogate pair (an emoji) is stored as it was sent", async () => {
    const res = await api.post("/api-jobs", { ...nestedJob("H-EMOJI"), customer: "Acme \ud83d\ude80" })
    expect(res.status).toBe(201)
    const read = await api.get(`/api-jobs?id=${res.body.data.job.id}`)
    expect(read.body.data.job.customer).toBe("Acme 🚀")
  })

  it("in PATCH, sync, issues and batches too", async () => {
    const before = await counts()
    expectDetail(await api.patch(`/api-parts?id=${partId}`, { notes: "a\u0000" }), "notes", "PATTERN_MISMATCH")
    expectDetail(
      await api.put("/api-jobs/sync", { external_id: "E\u0000", external_source: "erp", job_number: "S-1" }),
      "external_id",
      "PATTERN_MISMATCH"
    )
    expectDetail(await api.post("/api-batches", { batch_number: "B\ud800", cell_id: cellId }), "batch_number", "PATTERN_MISMATCH")
    expectDetail(
      await api.post("/api-issues", { operation_id: partId, title: "t\u0000", description: "d", severity: "low" }),
      "title",
      "PATTERN_MISMATCH"
    )
    expect(await counts()).toBe(before)
  })

  // ncr_number is looked up before the body is validated (a taken number is 409 whatever else is wrong)
  it("an ncr_number that cannot be stored is 422 in POST and PATCH /api-issues, not looked up", async () => {
    const operationId = String((await api.get(`/api-operations?part_id=${partId}`)).body.data.operations[0].id)
    const issue = await api.post("/api-issues", { operation_id: operationId, title: "t", description: "d", severity: "low" })
    expect(issue.status).toBe(201)
    const before = await counts()
    for (const bad of ["N\u0000", "N\ud800"]) {
      const body = { operation_id: operationId, issue_type: "ncr", title: "t", description: "d", severity: "low", ncr_number: bad }
      expectDetail(await api.post("/api-issues", body), "ncr_number", "PATTERN_MISMATCH")
      expectDetail(await api.patch(`/api-issues?id=${issue.body.data.issue.id}`, { ncr_number: bad }), "ncr_number", "PATTERN_MISMATCH")
    }
    expect(await counts()).toBe(before)
  })

  // a bulk looks up records sent before by their external keys, and notes its sources, before each record is validated
  it("bulk sync: a record whose external key cannot be stored is refused on its own, the others sync", async () => {
    for (const [i, bad] of ["N\u0000", "N\ud800", "\udc00"].entries()) {
      const jobs = await api.post("/api-jobs/bulk-sync", {
        items: [
          { external_id: `HB-${i}`, external_source: bad, job_number: `HB-${i}-A` },
          { external_id: bad, external_source: "erp-h", job_number: `HB-${i}-B` },
          { external_id: `HB-${i}`, external_source: "erp-h", job_number: `HB-${i}-C` }
        ]
      })
      expect(jobs.status).toBe(200)
      expect(jobs.body.data).toMatchObject({ total: 3, created: 1, errors: 2 })
      expect(jobs.body.data.results.map((r: { action: string }) => r.action)).toEqual(["error", "error", "created"])
      const cells = await api.post("/api-cells/bulk-sync", { cells: [{ external_id: `HC-${i}`, external_source: bad, name: `HC-${i}` }] })
      expect(cells.status).toBe(200)
      expect(cells.body.data).toMatchObject({ total: 1, errors: 1 })
      // the ERP diff reads each record's row before syncing it, by the same keys
      for (const path of ["/api-erp-sync/diff", "/api-erp-sync/sync"]) {
        const erp = await api.post(path, { cells: [{ external_id: bad, external_source: "erp-h", name: `HE-${i}` }], jobs: [{ external_id: `HE-${i}`, external_source: bad, job_number: `HE-${i}` }] })
        expect(erp.status).toBe(200)
        expect(erp.body.data).toMatchObject({ total: 2, errors: 2 })
      }
    }
    const status = await api.get("/api-erp-sync/status")
    expect(status.status).toBe(200)
    expect(JSON.stringify(status.body)).toContain("erp-h")
  })

  it("a NUL in a query parameter is 400 BAD_REQUEST", async () => {
    expectError(await api.get("/api-jobs?search=a%00b"), 400, "BAD_REQUEST")
    expectError(await api.get("/api-parts?material=%00"), 400, "BAD_REQUEST")
  })
})

describe("odd content types, duplicate keys and paths", () => {
  it("a form-encoded body is 400; JSON sent as text/plain is read as JSON; the last of duplicate keys wins", async () => {
    expectError(await api.post("/api-cells", undefined, { raw: "name=Saw&active=true", headers: { "content-type": "application/x-www-form-urlencoded" } }), 400, "BAD_REQUEST")
    const plain = await api.post("/api-cells", undefined, { raw: JSON.stringify({ name: "Plain cell" }), headers: { "content-type": "text/plain" } })
    expect(plain.status).toBe(201)
    const dup = await api.post("/api-cells", undefined, { raw: '{"name":"First","name":"Second"}' })
    expect(dup.status).toBe(201)
    expect(dup.body.data.cell.name).toBe("Second")
  })

  it("a NUL or a bad escape in the path is a 404 in the envelope", async () => {
    expectError(await api.get("/api-jobs%00"), 404, "NOT_FOUND")
    expectError(await api.get("/api-jobs%E0%A4%A"), 404, "NOT_FOUND")
  })
})

describe("huge arrays", () => {
  it("a job create with more than 1,000 parts or 10,000 operations is 422 MAX_LENGTH, and nothing is written", async () => {
    const before = await counts()
    expectDetail(await api.post("/api-jobs", nestedJob("H-HUGE-P", 1001, 1)), "parts", "MAX_LENGTH")
    expectDetail(await api.post("/api-jobs", nestedJob("H-HUGE-O", 11, 1000)), "parts", "MAX_LENGTH")
    const sync = await api.put("/api-jobs/sync", {
      external_id: "E-HUGE", external_source: "erp", job_number: "H-HUGE-S",
      parts: Array.from({ length: 1001 }, (_, i) => ({ external_id: `P${i}`, part_number: `P${i}`, quantity: 1 }))
    })
    expectDetail(sync, "parts", "MAX_LENGTH")
    expect(await counts()).toBe(before)
  })
})

describe("numbers beyond what a column holds", () => {
  it("integers beyond PostgreSQL integer are 422 MAX_VALUE in bodies and queries", async () => {
    const before = await counts()
    const body = nestedJob("H-BIG", 1, 1, { priority: 2 ** 31 })
    ;(body.parts[0] as Record<string, unknown>).quantity = 3_000_000_000
    const res = await api.post("/api-jobs", body)
    expectDetail(res, "priority", "MAX_VALUE")
    expectDetail(res, "parts[0].quantity", "MAX_VALUE")
    expectDetail(await api.post("/api-cells", { name: "Big", sequence: -(2 ** 31) - 1 }), "sequence", "MIN_VALUE")
    expect(await counts()).toBe(before)
    expectDetail(await api.get("/api-jobs?priority=99999999999"), "priority", "MAX_VALUE")
    expectDetail(await api.get("/api-jobs?offset=99999999999999"), "offset", "MAX_VALUE")
  })

  it("the largest integer a column holds is accepted", async () => {
    expect((await api.post("/api-jobs", nestedJob("H-MAX", 1, 1, { priority: 2 ** 31 - 1 }))).status).toBe(201)
  })

  it("a number beyond a double's range (1e400, read as Infinity) in metadata is 422 at its path, not stored as null", async () => {
    const before = await counts()
    const job = JSON.stringify(nestedJob("H-INF", 1, 1, { metadata: { ok: 1.5e308, x: "1e400" } }))
      .replace('"x":"1e400"', '"x":1e400,"deep":[{"y":-1e400}]')
      .replace('"part_number"', '"metadata":{"z":1e999},"part_number"')
    const res = await api.send("POST", "/api-jobs", undefined, { raw: job })
    expect(res.status).toBe(422)
    expect(res.body.error.details.map((d: any) => [d.field, d.constraint, d.value])).toEqual(expect.arrayContaining([
      ["metadata.x", "MAX_VALUE", null],
      ["metadata.deep[0].y", "MIN_VALUE", null],
      ["parts[0].metadata.z", "MAX_VALUE", null]
    ]))
    expect(res.body.error.details).toHaveLength(3)
    expectDetail(await api.send("PATCH", `/api-parts?id=${partId}`, undefined, { raw: '{"metadata":{"x":1e400}}' }), "metadata.x", "MAX_VALUE")
    expectDetail(await api.send("POST", "/api-batches", undefined, { raw: `{"batch_number":"H-INF","cell_id":"${cellId}","nesting_metadata":{"x":1e400}}` }), "nesting_metadata.x", "MAX_VALUE")
    // a typed number field says it once, as before; a field of another type keeps its own detail alone
    const typed = await api.send("POST", "/api-batches", undefined, { raw: `{"batch_number":"H-INF","cell_id":"${cellId}","thickness_mm":1e400,"notes":1e400}` })
    expect(typed.body.error.details.map((d: any) => [d.field, d.constraint]).sort()).toEqual([["notes", "TYPE_MISMATCH"], ["thickness_mm", "MAX_VALUE"]])
    expect(await counts()).toBe(before)
    // the largest double is stored as it was sent
    const big = await api.send("PATCH", `/api-parts?id=${partId}`, undefined, { raw: '{"metadata":{"x":1.7976931348623157e308}}' })
    expect(big.body.data.part.metadata).toEqual({ x: 1.7976931348623157e308 })
  })
})

describe("fields a create may not set (issue 8 item 3)", () => {
  it("an operation create with status is 422 ENUM_CONSTRAINT, valid status or not", async () => {
    for (const status of ["done", "completed"]) {
      const res = await api.post("/api-operations", { part_id: partId, operation_name: "Bend", status })
      expect(res.status).toBe(422)
      expectDetail(res, "status", "ENUM_CONSTRAINT")
    }
  })

  it("a batch create with status paused is 422 ENUM_CONSTRAINT", async () => {
    expectDetail(await api.post("/api-batches", { batch_number: "B-H1", cell_id: cellId, status: "paused" }), "status", "ENUM_CONSTRAINT")
  })

  it("record fields a create does not take are refused together with the other problems", async () => {
    const res = await api.post("/api-operations", { part_id: partId, operation_name: "", actual_time: 5, completed_at: "2026-01-01" })
    expectDetail(res, "actual_time", "ENUM_CONSTRAINT")
    expectDetail(res, "completed_at", "ENUM_CONSTRAINT")
    expectDetail(res, "operation_name", "MIN_LENGTH")
    expectDetail(await api.post("/api-issues", { operation_id: partId, title: "t", description: "d", severity: "low", created_at: "2026-01-01" }), "created_at", "ENUM_CONSTRAINT")
  })

  it("unknown enum values on create are 422 ENUM_CONSTRAINT for parts, issues and nested parts", async () => {
    expectDetail(await api.post("/api-parts", { job_id: partId, part_number: "P", quantity: 1, status: "bogus" }), "status", "ENUM_CONSTRAINT")
    expectDetail(await api.post("/api-issues", { operation_id: partId, title: "t", description: "d", severity: "huge" }), "severity", "ENUM_CONSTRAINT")
    const body = nestedJob("H-ENUM")
    ;(body.parts[0] as Record<string, unknown>).status = "broken"
    expectDetail(await api.post("/api-jobs", body), "parts[0].status", "ENUM_CONSTRAINT")
  })

  it("unknown keys that are no field of the record are still ignored (DECISIONS)", async () => {
    expect((await api.post("/api-operations", { part_id: partId, operation_name: "Deburr", erp_row_hash: "x" })).status).toBe(201)
  })
})

describe("found by the generative test (contract-fuzz.test.ts)", () => {
  it("PATCH priority null sets the default 0 instead of failing the NOT NULL column", async () => {
    const job = await api.post("/api-jobs", nestedJob("H-PRIO", 1, 1, { priority: 5 }))
    const res = await api.patch(`/api-jobs?id=${job.body.data.job.id}`, { priority: null })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.data.job.priority).toBe(0)
    const synced = await api.put("/api-jobs/sync", { external_id: "E-PRIO", external_source: "erp", job_number: "H-PRIO-S", priority: null })
    expect(synced.status, JSON.stringify(synced.body)).toBe(201)
  })

  it("an operation without sequence on a part whose operations use the largest sequence is 409, not an overflow", async () => {
    const job = await api.post("/api-jobs", nestedJob("H-SEQ"))
    const part = job.body.data.parts[0]
    await h.sql("UPDATE operations SET sequence = 2147483647 WHERE part_id = $1", [part.part_id])
    const res = await api.post("/api-operations", { part_id: part.part_id, operation_name: "Next" })
    expectError(res, 409, "CONFLICT")
    expect((await api.post("/api-operations", { part_id: part.part_id, operation_name: "Next", sequence: 2 })).status).toBe(201)
  })

  it("adding an operation that is already in the batch is 409, not a unique violation", async () => {
    const job = await api.post("/api-jobs", nestedJob("H-BATCH", 1, 2))
    const ops = (await api.get(`/api-operations?job_id=${job.body.data.job.id}`)).body.data.operations.map((o: { id: string }) => o.id)
    const batch = await api.post("/api-batches", { batch_number: "B-H-DUP", cell_id: cellId, operation_ids: [ops[0]] })
    expect(batch.status).toBe(201)
    expectError(await api.post(`/api-batch-lifecycle/add-operations?id=${batch.body.data.batch.id}`, { operation_ids: [ops[0]] }), 409, "CONFLICT")
    const after = await api.get(`/api-batches?id=${batch.body.data.batch.id}`)
    expect(after.body.data.batch.operation_ids).toEqual([ops[0]])
  })
})
