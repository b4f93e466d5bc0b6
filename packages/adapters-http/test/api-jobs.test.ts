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
