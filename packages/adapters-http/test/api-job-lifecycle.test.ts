// /api-job-lifecycle (spec 3.1, 4.4): every row of the table, its timestamps, refusals naming the
// statuses, and one winner among parallel movers.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, expectError, type Harness, nestedJob, startServer } from "./harness.ts"

let h: Harness
let api: ReturnType<typeof client>
let other: ReturnType<typeof client>
let n = 0

beforeAll(async () => {
  h = await startServer()
  api = (await h.as("A")).api
  other = (await h.as("B")).api
})
afterAll(() => h.close())

const newJob = async () => (await api.post("/api-jobs", nestedJob(`LJ-${++n}`))).body.data.job_id as string
const act = (action: string, id: string, as = api) => as.post(`/api-job-lifecycle/${action}?id=${id}`)

describe("job lifecycle", () => {
  it("start from not_started: in_progress, started_at set, response shape of spec 4.4", async () => {
    const id = await newJob()
    const res = await act("start", id)
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({ operation: "start", previous_status: "not_started", new_status: "in_progress" })
    expect(res.body.data.job).toMatchObject({ id, status: "in_progress", completed_at: null })
    expect(typeof res.body.data.job.job_number).toBe("string")
    expect(res.body.data.job.started_at).not.toBeNull()
  })

  it("stop sets paused_at; resume sets resumed_at and clears paused_at; start again keeps the first started_at", async () => {
    const id = await newJob()
    const started = (await act("start", id)).body.data.job
    const stopped = await act("stop", id)
    expect(stopped.body.data).toMatchObject({ operation: "stop", previous_status: "in_progress", new_status: "on_hold" })
    expect(stopped.body.data.job.paused_at).not.toBeNull()
    const resumed = await act("resume", id)
    expect(resumed.body.data).toMatchObject({ previous_status: "on_hold", new_status: "in_progress" })
    expect(resumed.body.data.job.paused_at).toBeNull()
    expect(resumed.body.data.job.resumed_at).not.toBeNull()
    await act("stop", id)
    const restarted = await act("start", id)
    expect(restarted.body.data).toMatchObject({ previous_status: "on_hold", new_status: "in_progress" })
    expect(restarted.body.data.job.started_at).toBe(started.started_at)
    expect(restarted.body.data.job.paused_at).toBeNull()
  })

  it("complete sets completed_at and actual_duration in minutes", async () => {
    const id = await newJob()
    await act("start", id)
    await h.sql("UPDATE jobs SET started_at = now() - interval '90 minutes' WHERE id = $1", [id])
    const res = await act("complete", id)
    expect(res.body.data).toMatchObject({ operation: "complete", previous_status: "in_progress", new_status: "completed" })
    const job = (await api.get(`/api-jobs?id=${id}`)).body.data.job
    expect(job.completed_at).not.toBeNull()
    expect(job.actual_duration).toBeGreaterThanOrEqual(90)
    expect(job.actual_duration).toBeLessThan(91)
  })

  const refused: Array<[string, string, Array<string>]> = [
    ["stop", "not_started", ["in_progress"]],
    ["complete", "not_started", ["in_progress"]],
    ["resume", "not_started", ["on_hold"]],
    ["resume", "in_progress", ["on_hold"]],
    ["start", "in_progress", ["not_started", "on_hold"]],
    ["complete", "on_hold", ["in_progress"]],
    ["start", "completed", ["not_started", "on_hold"]],
    ["stop", "completed", ["in_progress"]]
  ]
  it.each(refused)("%s from %s is 409 INVALID_STATE_TRANSITION naming the statuses", async (action, from, required) => {
    const id = await newJob()
    const path: Record<string, Array<string>> = {
      not_started: [],
      in_progress: ["start"],
      on_hold: ["start", "stop"],
      completed: ["start", "complete"]
    }
    for (const step of path[from]!) expect((await act(step, id)).status).toBe(200)
    const res = await act(action, id)
    expectError(res, 409, "INVALID_STATE_TRANSITION")
    expect(res.body.error.message).toContain(`'${from}'`)
    for (const r of required) expect(res.body.error.message).toContain(`'${r}'`)
    expect((await api.get(`/api-jobs?id=${id}`)).body.data.job.status).toBe(from)
  })

  it("20 parallel starts: exactly one 200 and nineteen 409", async () => {
    const id = await newJob()
    const all = await Promise.all(Array.from({ length: 20 }, () => act("start", id)))
    expect(all.filter((r) => r.status === 200)).toHaveLength(1)
    expect(all.filter((r) => r.status === 409)).toHaveLength(19)
  })

  it("404 unknown, 403 another tenant's, 400 malformed id, 422 missing id, 405 GET", async () => {
    const id = await newJob()
    expectError(await act("start", "00000000-0000-4000-8000-000000000000"), 404, "NOT_FOUND")
    expectError(await act("start", id, other), 403, "FORBIDDEN")
    expectError(await act("start", "x"), 400, "BAD_REQUEST")
    expectError(await api.post("/api-job-lifecycle/start"), 422, "VALIDATION_ERROR")
    expectError(await api.get(`/api-job-lifecycle/start?id=${id}`), 405, "METHOD_NOT_ALLOWED")
    expectError(await api.post(`/api-job-lifecycle/explode?id=${id}`), 404, "NOT_FOUND")
    expect((await api.get(`/api-jobs?id=${id}`)).body.data.job.status).toBe("not_started")
  })

  it("a soft-deleted job cannot be moved (404)", async () => {
    const id = await newJob()
    await api.delete(`/api-jobs?id=${id}`)
    expectError(await act("start", id), 404, "NOT_FOUND")
  })
})
