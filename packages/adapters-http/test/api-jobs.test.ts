import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, type Harness, nestedJob, startServer } from "./harness.ts"

let h: Harness
let api: ReturnType<typeof client>

beforeAll(async () => {
  h = await startServer()
  const t = await h.tenant()
  api = client(h.url, t.key)
})
afterAll(() => h.close())

describe("POST /api-jobs", () => {
  it("creates a job with nested parts and operations and answers both response forms", async () => {
    const res = await api.post("/api-jobs", nestedJob("J-1", 2, 3))
    expect(res.status).toBe(201)
    expect(res.body.success).toBe(true)
    const { job, job_id, parts } = res.body.data
    expect(job.id).toBe(job_id)
    expect(job.status).toBe("not_started")
    expect(job.parts).toHaveLength(2)
    expect(job.parts[0].operations.map((o: any) => o.sequence)).toEqual([1, 2, 3])
    expect(parts[1].operations[2]).toEqual({ operation_id: job.parts[1].operations[2].id, operation_name: "Op 3" })
  })
})

describe("a job created in a status of its own (POST /api-jobs, PUT /api-jobs/sync)", () => {
  const created = async (status: string, sync = false) => {
    const body = { ...nestedJob(`ST-${status}-${sync}`), status }
    const res = sync
      ? await api.put("/api-jobs/sync", { job_number: body.job_number, status, external_id: `X-${status}`, external_source: "erp" })
      : await api.post("/api-jobs", body)
    expect(res.status).toBe(201)
    const id = (sync ? res.body.data.id : res.body.data.job_id) as string
    return { id, job: (await api.get(`/api-jobs?id=${id}`)).body.data.job, answered: res.body.data.job }
  }

  it.each([false, true])("carries the stamps of the moves that lead there, at its creation (sync: %s)", async (sync) => {
    const fresh = await created("not_started", sync)
    expect(fresh.job).toMatchObject({ started_at: null, paused_at: null, completed_at: null, actual_duration: null })
    const running = await created("in_progress", sync)
    expect(running.job).toMatchObject({ started_at: running.job.created_at, paused_at: null, completed_at: null })
    if (!sync) expect(running.answered.started_at).toBe(running.job.created_at)
    const held = await created("on_hold", sync)
    expect(held.job).toMatchObject({ started_at: held.job.created_at, paused_at: held.job.created_at, completed_at: null })
    const done = await created("completed", sync)
    expect(done.job).toMatchObject({ started_at: done.job.created_at, completed_at: done.job.created_at, actual_duration: 0 })
    // completed later, its duration counts from its creation
    await h.sql("UPDATE jobs SET started_at = started_at - interval '30 minutes' WHERE id = $1", [running.id])
    const completed = await api.post(`/api-job-lifecycle/complete?id=${running.id}`)
    expect(completed.status).toBe(200)
    expect(completed.body.data.job.actual_duration).toBeGreaterThanOrEqual(30)
  })
})
