// /api-operation-lifecycle (spec 3.2, 4.5) with time entries (spec 2.8) and the part roll-up.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, expectDetail, expectError, type Harness, nestedJob, startServer } from "./harness.ts"

let h: Harness
let api: ReturnType<typeof client>
let other: ReturnType<typeof client>
let olga: string
let piet: string
let foreignProfile: string
let n = 0

beforeAll(async () => {
  h = await startServer()
  api = (await h.as("A")).api
  other = (await h.as("B")).api
  olga = (await api.post("/api-profiles", { display_name: "Olga" })).body.data.profile.id
  piet = (await api.post("/api-profiles", { display_name: "Piet" })).body.data.profile.id
  foreignProfile = (await other.post("/api-profiles", { display_name: "B person" })).body.data.profile.id
})
afterAll(() => h.close())

/** A job with one part of `ops` operations; returns the operation ids and the part id. */
const newOps = async (ops = 2, estimates: Array<number | null> = []) => {
  const body = nestedJob(`OL-${++n}`, 1, ops)
  body.parts[0]!.operations.forEach((o: any, i) => (o.estimated_time_minutes = estimates[i] ?? null))
  const data = (await api.post("/api-jobs", body)).body.data
  return { part: data.parts[0].part_id as string, ops: data.parts[0].operations.map((o: any) => o.operation_id as string) }
}
const act = (action: string, id: string, user?: string, as = api) =>
  as.post(`/api-operation-lifecycle/${action}?id=${id}${user ? `&user_id=${user}` : ""}`)
const entries = async (opId: string) => (await api.get(`/api-time-entries?operation_id=${opId}&sort=start_time&order=asc`)).body.data.time_entries
/** Moves every open entry of the operation `minutes` into the past (time passing, deterministically). */
const elapse = (opId: string, minutes: number) =>
  h.sql(`UPDATE time_entries SET start_time = start_time - make_interval(mins => $2) WHERE operation_id = $1 AND end_time IS NULL`, [opId, minutes])

describe("operation lifecycle", () => {
  it("start answers spec 4.5's shape and opens a time entry for user_id", async () => {
    const { ops, part } = await newOps()
    const res = await act("start", ops[0], olga)
    expect(res.status).toBe(200)
    const d = res.body.data
    expect(d).toMatchObject({ operation_type: "start", previous_status: "not_started", new_status: "in_progress", time_entry_ended: false })
    expect(d.operation).toMatchObject({ id: ops[0], operation_name: "Op 1", status: "in_progress", estimated_time: null, actual_time: 0, completion_percentage: 0 })
    expect(d.operation.part).toMatchObject({ id: part, part_number: "P-1", job: { job_number: `OL-${n}` } })
    expect(d.operation.started_at).not.toBeNull()
    const [entry] = await entries(ops[0])
    expect(entry).toMatchObject({ operation_id: ops[0], user_id: olga, end_time: null, duration_minutes: null, batch_id: null })
  })

  it("pause ends the active time entries and adds their minutes to actual_time; resume opens a new one", async () => {
    const { ops } = await newOps()
    await act("start", ops[0], olga)
    await elapse(ops[0], 30)
    const paused = await act("pause", ops[0])
    expect(paused.body.data).toMatchObject({ operation_type: "pause", previous_status: "in_progress", new_status: "on_hold", time_entry_ended: true })
    expect(paused.body.data.operation.actual_time).toBeCloseTo(30, 1)
    const op = (await api.get(`/api-operations?id=${ops[0]}`)).body.data.operation
    expect(op.paused_at).not.toBeNull()
    const resumed = await act("resume", ops[0], olga)
    expect(resumed.body.data).toMatchObject({ previous_status: "on_hold", new_status: "in_progress", time_entry_ended: false })
    expect(resumed.body.data.operation.paused_at).toBeNull()
    expect(resumed.body.data.operation.resumed_at).not.toBeNull()
    await elapse(ops[0], 15)
    const done = await act("complete", ops[0])
    expect(done.body.data).toMatchObject({ new_status: "completed", time_entry_ended: true })
    expect(done.body.data.operation.completion_percentage).toBe(100)
    expect(done.body.data.operation.actual_time).toBeCloseTo(45, 1)
    const all = await entries(ops[0])
    expect(all).toHaveLength(2)
    expect(all.map((e: any) => Math.round(e.duration_minutes))).toEqual([30, 15])
    expect(all.every((e: any) => e.end_time !== null)).toBe(true)
  })

  it("two operators on one operation: each gets an entry; all end together; time adds up", async () => {
    const { ops } = await newOps()
    await act("start", ops[0], olga)
    await elapse(ops[0], 10)
    await act("pause", ops[0])
    await act("resume", ops[0], olga)
    // a second operator joins through the manual entry API (the lifecycle allows one start)
    await api.post("/api-time-entries", { operation_id: ops[0], user_id: piet, start_time: new Date().toISOString() })
    await elapse(ops[0], 20)
    const done = await act("complete", ops[0])
    expect(done.body.data.time_entry_ended).toBe(true)
    expect(done.body.data.operation.actual_time).toBeCloseTo(50, 1)
  })

  it("a start or resume without user_id opens no time entry", async () => {
    const { ops } = await newOps()
    await act("start", ops[0])
    expect(await entries(ops[0])).toEqual([])
    const paused = await act("pause", ops[0])
    expect(paused.body.data.time_entry_ended).toBe(false)
  })

  it("at most one open entry per operator per operation", async () => {
    const { ops } = await newOps()
    await act("start", ops[0], olga)
    const dup = await api.post("/api-time-entries", { operation_id: ops[0], user_id: olga, start_time: new Date().toISOString() })
    expectError(dup, 409, "CONFLICT")
    expect(await entries(ops[0])).toHaveLength(1)
  })

  it("the part becomes in_progress with its first started operation and completed with its last", async () => {
    const { ops, part } = await newOps(2)
    const status = async () => (await api.get(`/api-parts?id=${part}`)).body.data.part.status
    expect(await status()).toBe("not_started")
    await act("start", ops[0])
    expect(await status()).toBe("in_progress")
    await act("complete", ops[0])
    expect(await status()).toBe("in_progress")
    await api.patch(`/api-operations?id=${ops[1]}`, { status: "completed" })
    expect(await status()).toBe("completed")
  })

  const refused: Array<[string, Array<string>, string, Array<string>]> = [
    ["pause", [], "not_started", ["in_progress"]],
    ["resume", [], "not_started", ["on_hold"]],
    ["complete", [], "not_started", ["in_progress"]],
    ["start", ["start"], "in_progress", ["not_started", "on_hold"]],
    ["resume", ["start"], "in_progress", ["on_hold"]],
    ["pause", ["start", "pause"], "on_hold", ["in_progress"]],
    ["complete", ["start", "pause"], "on_hold", ["in_progress"]],
    ["start", ["start", "complete"], "completed", ["not_started", "on_hold"]],
    ["pause", ["start", "complete"], "completed", ["in_progress"]]
  ]
  it.each(refused)("%s after %j (%s) is 409 naming current and required", async (action, steps, current, required) => {
    const { ops } = await newOps()
    for (const s of steps) expect((await act(s, ops[0])).status).toBe(200)
    const res = await act(action, ops[0], olga)
    expectError(res, 409, "INVALID_STATE_TRANSITION")
    expect(res.body.error.message).toContain(`'${current}'`)
    for (const r of required) expect(res.body.error.message).toContain(`'${r}'`)
    // the steps ran without a user and the refused action opened nothing for olga
    expect(await entries(ops[0])).toHaveLength(0)
  })

  it("start from on_hold (spec 3.2) works like resume", async () => {
    const { ops } = await newOps()
    await act("start", ops[0])
    await act("pause", ops[0])
    const res = await act("start", ops[0], olga)
    expect(res.body.data).toMatchObject({ previous_status: "on_hold", new_status: "in_progress" })
  })

  it("20 parallel starts by different callers: exactly one 200 and one open entry", async () => {
    const { ops } = await newOps()
    const all = await Promise.all(Array.from({ length: 20 }, (_, i) => act("start", ops[0], i % 2 ? olga : piet)))
    expect(all.filter((r) => r.status === 200)).toHaveLength(1)
    expect(all.filter((r) => r.status === 409)).toHaveLength(19)
    expect(await entries(ops[0])).toHaveLength(1)
  })

  it("user_id of another tenant is 422 FK_CONSTRAINT and nothing moves; a wrong state wins with 409", async () => {
    const { ops } = await newOps()
    expectDetail(await act("start", ops[0], foreignProfile), "user_id", "FK_CONSTRAINT")
    expect((await api.get(`/api-operations?id=${ops[0]}`)).body.data.operation.status).toBe("not_started")
    expect(await entries(ops[0])).toEqual([])
    await act("start", ops[0])
    expectError(await act("start", ops[0], foreignProfile), 409, "INVALID_STATE_TRANSITION")
    expectError(await act("start", ops[0], "nope"), 400, "BAD_REQUEST")
  })

  it("403 for another tenant's operation, 404 unknown", async () => {
    const { ops } = await newOps()
    expectError(await act("start", ops[0], undefined, other), 403, "FORBIDDEN")
    expectError(await act("start", "00000000-0000-4000-8000-000000000000"), 404, "NOT_FOUND")
  })

  it("PATCH status completed from not_started sets completed_at, 100 % and ends open entries", async () => {
    const { ops } = await newOps()
    await act("start", ops[1], olga)
    await elapse(ops[1], 5)
    const res = await api.patch(`/api-operations?id=${ops[1]}`, { status: "completed" })
    expect(res.body.data.operation).toMatchObject({ status: "completed", completion_percentage: 100 })
    expect(res.body.data.operation.completed_at).not.toBeNull()
    expect((await entries(ops[1]))[0].end_time).not.toBeNull()
    const direct = await api.patch(`/api-operations?id=${ops[0]}`, { status: "completed" })
    expect(direct.body.data.operation.status).toBe("completed")
  })

  it("PATCH status paused ends the open entries as a pause does; PATCH in_progress opens none", async () => {
    const { ops } = await newOps()
    await act("start", ops[0], olga)
    await elapse(ops[0], 12)
    const paused = await api.patch(`/api-operations?id=${ops[0]}`, { status: "paused" })
    expect(paused.body.data.operation).toMatchObject({ status: "on_hold" })
    expect(paused.body.data.operation.actual_time).toBeCloseTo(12, 1)
    const [ended] = await entries(ops[0])
    expect(ended.end_time).not.toBeNull()
    expect(ended.duration_minutes).toBeCloseTo(12, 1)
    const back = await api.patch(`/api-operations?id=${ops[0]}`, { status: "in_progress" })
    expect(back.body.data.operation).toMatchObject({ status: "in_progress", paused_at: null })
    expect(back.body.data.operation.resumed_at).not.toBeNull()
    expect(await entries(ops[0])).toHaveLength(1)
  })

  it("deleting an operation with time entries is refused (409)", async () => {
    const { ops } = await newOps()
    await act("start", ops[0], olga)
    expectError(await api.delete(`/api-operations?id=${ops[0]}`), 409, "CONFLICT")
  })
})

describe("/api-time-entries", () => {
  it("creates, lists with filters, reads, corrects and deletes entries; actual_time follows", async () => {
    const { ops } = await newOps()
    const start = new Date(Date.now() - 60 * 60_000).toISOString()
    const end = new Date(Date.now() - 20 * 60_000).toISOString()
    const created = await api.post("/api-time-entries", { operation_id: ops[0], user_id: olga, start_time: start, end_time: end })
    expect(created.status).toBe(201)
    const entry = created.body.data.time_entry
    expect(entry.duration_minutes).toBeCloseTo(40, 3)
    const actual = async () => (await api.get(`/api-operations?id=${ops[0]}`)).body.data.operation.actual_time
    expect(await actual()).toBeCloseTo(40, 3)

    expect((await api.get(`/api-time-entries?id=${entry.id}`)).body.data.time_entry.id).toBe(entry.id)
    expect((await api.get(`/api-time-entries?user_id=${olga}&operation_id=${ops[0]}`)).body.data.time_entries).toHaveLength(1)
    expect((await api.get(`/api-time-entries?operation_id=${ops[0]}&active=true`)).body.data.time_entries).toHaveLength(0)
    expect((await api.get(`/api-time-entries?operation_id=${ops[0]}&active=false`)).body.data.time_entries).toHaveLength(1)

    const corrected = await api.patch(`/api-time-entries?id=${entry.id}`, { end_time: new Date(Date.parse(start) + 25 * 60_000).toISOString() })
    expect(corrected.status).toBe(200)
    expect(corrected.body.data.time_entry.duration_minutes).toBeCloseTo(25, 3)
    expect(await actual()).toBeCloseTo(25, 3)

    expect((await api.delete(`/api-time-entries?id=${entry.id}`)).body.data).toEqual({ id: entry.id, deleted: true })
    expect(await actual()).toBe(0)
  })

  it("refuses an end before the start, and references outside the tenant", async () => {
    const { ops } = await newOps()
    const now = Date.now()
    expectDetail(await api.post("/api-time-entries", {
      operation_id: ops[0],
      start_time: new Date(now).toISOString(),
      end_time: new Date(now - 1000).toISOString()
    }), "end_time", "MIN_VALUE")
    expectDetail(await api.post("/api-time-entries", { operation_id: ops[0], user_id: foreignProfile, start_time: new Date().toISOString() }), "user_id", "FK_CONSTRAINT")
    const theirs = (await other.post("/api-jobs", nestedJob(`B-${++n}`))).body.data.parts[0].operations[0].operation_id
    expectDetail(await api.post("/api-time-entries", { operation_id: theirs, start_time: new Date().toISOString() }), "operation_id", "FK_CONSTRAINT")
    expectDetail(await api.post("/api-time-entries", { operation_id: ops[0], start_time: "yesterday" }), "start_time", "DATE_FORMAT")
  })

  it("takes times of years 0001 to 9999 and answers them in the API's form; an instant outside them is 422 with the range", async () => {
    const { ops } = await newOps()
    const first = await api.post("/api-time-entries", { operation_id: ops[0], start_time: "0001-01-01 00:00:00Z", end_time: "0001-01-01T02:00:00+01:00" })
    expect(first.status, JSON.stringify(first.body)).toBe(201)
    expect(first.body.data.time_entry).toMatchObject({ start_time: "0001-01-01T00:00:00.000Z", end_time: "0001-01-01T01:00:00.000Z", duration_minutes: 60 })
    const last = await api.post("/api-time-entries", { operation_id: ops[0], start_time: "9999-12-31T18:00:00-05:00", end_time: "9999-12-31T23:59:59.999Z" })
    expect(last.body.data.time_entry).toMatchObject({ start_time: "9999-12-31T23:00:00.000Z", end_time: "9999-12-31T23:59:59.999Z" })
    expect((await entries(ops[0])).map((e: any) => e.start_time)).toEqual(["0001-01-01T00:00:00.000Z", "9999-12-31T23:00:00.000Z"])
    const range = "must be between 0001-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z"
    for (const [field, value, constraint] of [
      ["start_time", "0001-01-01T00:00:00+01:00", "MIN_VALUE"],
      ["start_time", "0000-06-01T00:00:00Z", "MIN_VALUE"],
      ["end_time", "9999-12-31T23:00:00-05:00", "MAX_VALUE"],
      ["end_time", "+010000-01-01T00:00:00Z", "MAX_VALUE"]
    ]) {
      const res = await api.post("/api-time-entries", { operation_id: ops[0], start_time: "2024-01-01T00:00:00Z", [field]: value })
      expectDetail(res, field, constraint)
      expect(res.body.error.details[0]).toMatchObject({ value, message: `${field} ${range}` })
    }
    expect(await entries(ops[0])).toHaveLength(2)
  })

  it("an open entry is refused (409) on an operation on hold or completed, before its references; an ended one is not", async () => {
    const { ops } = await newOps(3)
    await act("start", ops[0], olga)
    await act("complete", ops[0])
    await act("start", ops[1])
    await act("pause", ops[1])
    const hourAgo = new Date(Date.now() - 60 * 60_000).toISOString()
    for (const [op, status] of [[ops[0], "completed"], [ops[1], "on_hold"]] as const) {
      const refused = await api.post("/api-time-entries", { operation_id: op, user_id: piet, start_time: hourAgo })
      expectError(refused, 409, "CONFLICT")
      expect(refused.body.error.message).toContain(status)
      // the state wins over a reference outside the tenant (409 before 422)
      expectError(await api.post("/api-time-entries", { operation_id: op, user_id: foreignProfile, start_time: hourAgo }), 409, "CONFLICT")
      expect((await api.post("/api-time-entries", { operation_id: op, user_id: piet, start_time: hourAgo, end_time: new Date().toISOString() })).status).toBe(201)
    }
    // reopening an ended entry by PATCH is the same; correcting its times is not
    const ended = (await entries(ops[0])).find((e: any) => e.user_id === olga)
    expectError(await api.patch(`/api-time-entries?id=${ended.id}`, { end_time: null }), 409, "CONFLICT")
    expect((await api.get(`/api-time-entries?id=${ended.id}`)).body.data.time_entry.end_time).not.toBeNull()
    expect((await api.patch(`/api-time-entries?id=${ended.id}`, { start_time: hourAgo })).status).toBe(200)
    expect((await entries(ops[0])).filter((e: any) => e.end_time === null)).toEqual([])
    const actual = (await api.get(`/api-operations?id=${ops[0]}`)).body.data.operation.actual_time
    expect(actual).toBeCloseTo((await entries(ops[0])).reduce((sum: number, e: any) => sum + e.duration_minutes, 0), 6)
    // not started or in progress: an open entry is fine (a resume or start with the operator keeps it, a pause ends it)
    expect((await api.post("/api-time-entries", { operation_id: ops[2], user_id: piet, start_time: hourAgo })).status).toBe(201)
  })

  it("a write by hand answers 404/403, then 409, then 422 (references before times); a refusal changes nothing", async () => {
    const { ops } = await newOps()
    const start = "2026-11-02T08:00:00Z"
    const entry = (await api.post("/api-time-entries", { operation_id: ops[0], user_id: olga, start_time: start, end_time: "2026-11-02T08:30:00Z" }))
      .body.data.time_entry
    const state = async () => ({
      entries: await entries(ops[0]),
      actual: (await api.get(`/api-operations?id=${ops[0]}`)).body.data.operation.actual_time
    })
    const before = await state()
    expect(before.actual).toBeCloseTo(30, 6)

    // the owner before the body: an unknown entry is 404, another tenant's 403, whatever the body says
    expectError(await api.patch("/api-time-entries?id=00000000-0000-4000-8000-000000000000", { start_time: "yesterday" }), 404, "NOT_FOUND")
    expectError(await other.patch(`/api-time-entries?id=${entry.id}`, { start_time: "yesterday" }), 403, "FORBIDDEN")
    expectError(await api.delete("/api-time-entries?id=00000000-0000-4000-8000-000000000000"), 404, "NOT_FOUND")
    expectDetail(await api.patch(`/api-time-entries?id=${entry.id}`, { start_time: "yesterday" }), "start_time", "DATE_FORMAT")

    // end before start, against the entry's stored time when the body gives only the other
    expectDetail(await api.patch(`/api-time-entries?id=${entry.id}`, { end_time: "2026-11-02T07:59:59Z" }), "end_time", "MIN_VALUE")
    expectDetail(await api.patch(`/api-time-entries?id=${entry.id}`, { start_time: "2026-11-02T08:31:00Z" }), "end_time", "MIN_VALUE")
    // a reference outside the tenant and an end before the start: both details, the reference first
    const both = await api.patch(`/api-time-entries?id=${entry.id}`, { user_id: foreignProfile, end_time: "2026-11-02T07:00:00Z" })
    expectError(both, 422, "VALIDATION_ERROR")
    expect(both.body.error.details.map((d: any) => [d.field, d.constraint])).toEqual([["user_id", "FK_CONSTRAINT"], ["end_time", "MIN_VALUE"]])
    // finer than a millisecond, as PostgreSQL keeps times (this was a 500: the table's check refused what the API let through)
    expectDetail(
      await api.post("/api-time-entries", { operation_id: ops[0], start_time: "2026-11-02T09:00:00.0005Z", end_time: "2026-11-02T09:00:00.0001Z" }),
      "end_time",
      "MIN_VALUE"
    )
    expectDetail(await api.patch(`/api-time-entries?id=${entry.id}`, { start_time: "2026-11-02T08:00:00.0005Z", end_time: "2026-11-02T08:00:00.0001Z" }), "end_time", "MIN_VALUE")
    expect(await state()).toEqual(before)

    // the operation completed: reopening is 409 even with a foreign user_id (409 before 422)
    await act("start", ops[0])
    await act("complete", ops[0])
    const completed = await state()
    expectError(await api.patch(`/api-time-entries?id=${entry.id}`, { end_time: null, user_id: foreignProfile }), 409, "CONFLICT")
    expect(await state()).toEqual(completed)

    // a correction and a delete set actual_time from the entries that are left
    const second = (await api.post("/api-time-entries", { operation_id: ops[0], start_time: "2026-11-02T10:00:00Z", end_time: "2026-11-02T10:15:00Z" }))
      .body.data.time_entry
    expect((await state()).actual).toBeCloseTo(45, 6)
    expect((await api.patch(`/api-time-entries?id=${entry.id}`, { start_time: "2026-11-02T08:20:00Z" })).body.data.time_entry.duration_minutes)
      .toBeCloseTo(10, 6)
    expect((await state()).actual).toBeCloseTo(25, 6)
    expect((await api.delete(`/api-time-entries?id=${second.id}`)).status).toBe(200)
    expect((await state()).actual).toBeCloseTo(10, 6)
    expectError(await api.delete(`/api-time-entries?id=${second.id}`), 404, "NOT_FOUND")
  })

  it("another tenant's entry is 403", async () => {
    const { ops } = await newOps()
    const entry = (await api.post("/api-time-entries", { operation_id: ops[0], start_time: new Date().toISOString() })).body.data.time_entry
    expectError(await other.get(`/api-time-entries?id=${entry.id}`), 403, "FORBIDDEN")
    expectError(await other.patch(`/api-time-entries?id=${entry.id}`, { end_time: new Date().toISOString() }), 403, "FORBIDDEN")
    expectError(await other.delete(`/api-time-entries?id=${entry.id}`), 403, "FORBIDDEN")
  })
})
