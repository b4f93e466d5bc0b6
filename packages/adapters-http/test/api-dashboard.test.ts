// GET /api-dashboard-stats (spec 4.14 get_dashboard_stats): counts of the caller's tenant only, in one statement.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Harness, nestedJob, startServer } from "./harness.ts"

let h: Harness
beforeAll(async () => {
  h = await startServer()
})
afterAll(() => h.close())

describe("GET /api-dashboard-stats", () => {
  it("counts jobs, operations, overdue jobs, open issues and NCRs, work per cell and time logged today, per tenant", async () => {
    const { api } = await h.as("Dash")
    const other = (await h.as("Dash other")).api
    const cell = (await api.post("/api-cells", { name: "Laser" })).body.data.cell
    const late = await api.post("/api-jobs", nestedJob("D-LATE", 1, 2, { due_date: "2020-01-01" }))
    await api.post("/api-jobs", nestedJob("D-FUTURE", 1, 1, { due_date: "2999-01-01" }))
    await other.post("/api-jobs", nestedJob("D-OTHER", 1, 1, { due_date: "2020-01-01" }))
    const ops = (await api.get(`/api-operations?job_id=${late.body.data.job.id}`)).body.data.operations
    await api.patch(`/api-operations?id=${ops[0].id}`, { cell_id: cell.id })
    const profile = (await api.post("/api-profiles", { display_name: "Olga" })).body.data.profile.id
    await api.post(`/api-operation-lifecycle/start?id=${ops[0].id}&user_id=${profile}`)
    await api.post("/api-issues", { operation_id: ops[1].id, title: "Dent", description: "d", severity: "low" })
    await api.post("/api-issues", { operation_id: ops[1].id, title: "Crack", description: "d", severity: "critical", issue_type: "ncr" })
    await api.post(`/api-job-lifecycle/start?id=${late.body.data.job.id}`)

    const res = await api.get("/api-dashboard-stats")
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({
      jobs_by_status: { in_progress: 1, not_started: 1 },
      operations_by_status: { in_progress: 1, not_started: 2 },
      overdue_jobs: 1,
      open_issues_by_severity: { low: 1 },
      open_ncrs_by_severity: { critical: 1 },
      operations_in_progress_by_cell: [{ cell_id: cell.id, cell_name: "Laser", operations: 1 }]
    })
    expect(res.body.data.minutes_logged_today).toBeGreaterThanOrEqual(0)
    expect(res.body.data.as_of).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)

    const theirs = (await other.get("/api-dashboard-stats")).body.data
    expect(theirs).toMatchObject({ jobs_by_status: { not_started: 1 }, overdue_jobs: 1, open_issues_by_severity: {}, open_ncrs_by_severity: {}, operations_in_progress_by_cell: [], minutes_logged_today: 0 })
  })
})
