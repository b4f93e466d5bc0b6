// Every tool of the MCP server once, each effect checked over REST: shared by the in-memory test and the tests
// against real processes (stdio, Streamable HTTP). The tenant must be fresh: counts are checked exactly.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { expect } from "vitest"

/** A REST client of the same tenant: `get`/`post` answering `{status, body}`. */
export interface RestOfTenant {
  readonly get: (path: string) => Promise<{ status: number; body: any }>
  readonly post: (path: string, body?: unknown) => Promise<{ status: number; body: any }>
}

export const callTool = async (client: Client, name: string, args: Record<string, unknown> = {}) => {
  const r = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: Array<{ type: string; text: string }>; structuredContent?: any }
  return { ...r, text: r.content[0]!.text }
}

/** Creates job `jobNumber`, moves it and its operations through every tool, and checks each effect over REST. */
export const everyTool = async (client: Client, rest: RestOfTenant, jobNumber = "MCP-1") => {
  const call = (name: string, args: Record<string, unknown> = {}) => callTool(client, name, args)
    const profile = (await rest.post("/api-profiles", { display_name: "Olga" })).body.data.profile.id

    const created = await call("create_job", {
      job_number: jobNumber,
      customer: "Acme",
      // far ahead: the dashboard below counts it as not overdue (2026-12-01 was, from 2026-12-02 on)
      due_date: "2099-12-31",
      priority: 2,
      notes: "rush",
      parts: [{ part_number: "P-1", quantity: 3, operations: [{ operation_name: "Cut", sequence: 1 }, { operation_name: "Bend", sequence: 2 }] }]
    })
    expect(created.isError, created.text).toBeFalsy()
    expect(created.text.split("\n")[0]).toBe(`Job ${jobNumber} created with 1 part(s)`)
    const jobId = created.structuredContent.job.id
    expect((await rest.get(`/api-jobs?id=${jobId}`)).body.data.job.job_number).toBe(jobNumber)

    const jobs = await call("fetch_jobs", { job_number: jobNumber, limit: 1 })
    expect(jobs.structuredContent).toMatchObject({ total: 1, limit: 1, offset: 0, jobs: [{ id: jobId, job_number: jobNumber, status: "not_started", parts: 1 }] })
    expect(jobs.text).toMatch(/^1 of 1 job/)
    const parts = await call("fetch_parts", { job_id: jobId })
    expect(parts.structuredContent.parts[0]).toMatchObject({ part_number: "P-1", quantity: 3 })
    const tasks = await call("fetch_tasks", { job_id: jobId, limit: 1 })
    expect(tasks.structuredContent).toMatchObject({ total: 2, next_offset: 1 })
    expect(tasks.text).toContain("next page: offset=1")
    const [cut] = tasks.structuredContent.operations

    expect((await call("update_job", { id: jobId, notes: "very rush", priority: 5 })).isError).toBeFalsy()
    expect((await rest.get(`/api-jobs?id=${jobId}`)).body.data.job).toMatchObject({ notes: "very rush", priority: 5 })

    for (const [tool, status] of [["start_job", "in_progress"], ["stop_job", "on_hold"], ["resume_job", "in_progress"]] as const) {
      const r = await call(tool, { id: jobId })
      expect(r.isError, r.text).toBeFalsy()
      expect((await rest.get(`/api-jobs?id=${jobId}`)).body.data.job.status).toBe(status)
    }

    expect((await call("start_operation", { id: cut.id, user_id: profile })).isError).toBeFalsy()
    expect((await rest.get(`/api-time-entries?operation_id=${cut.id}`)).body.data.time_entries).toHaveLength(1)
    expect((await call("pause_operation", { id: cut.id })).isError).toBeFalsy()
    expect((await call("resume_operation", { id: cut.id, user_id: profile })).isError).toBeFalsy()
    expect((await call("update_operation", { id: cut.id, completion_percentage: 50, notes: "half" })).isError).toBeFalsy()
    expect((await rest.get(`/api-operations?id=${cut.id}`)).body.data.operation).toMatchObject({ completion_percentage: 50, notes: "half", status: "in_progress" })
    expect((await call("complete_operation", { id: cut.id })).isError).toBeFalsy()
    expect((await rest.get(`/api-operations?id=${cut.id}`)).body.data.operation.status).toBe("completed")

    const ncr = await call("create_ncr", { operation_id: cut.id, title: "Burr on edge", description: "Sharp burr", severity: "high", ncr_category: "process" })
    expect(ncr.isError, ncr.text).toBeFalsy()
    expect(ncr.text).toMatch(/^NCR NCR-\d{4}-\d{5} raised: Burr on edge/)
    expect((await call("fetch_ncrs", {})).structuredContent.issues.map((i: { title: string }) => i.title)).toEqual(["Burr on edge"])
    expect((await call("fetch_issues", { severity: "high" })).structuredContent.total).toBe(1)

    const step = await call("add_substep", { operation_id: cut.id, description: "Deburr", sequence: 1 })
    expect(step.isError, step.text).toBeFalsy()
    expect((await call("complete_substep", { id: step.structuredContent.substep.id })).isError).toBeFalsy()
    expect((await rest.get(`/api-substeps?id=${step.structuredContent.substep.id}`)).body.data.substep.completed).toBe(true)

    const dashboard = await call("get_dashboard_stats")
    expect(dashboard.isError, dashboard.text).toBeFalsy()
    expect(dashboard.structuredContent).toMatchObject({
      jobs_by_status: { in_progress: 1 },
      operations_by_status: { completed: 1, not_started: 1 },
      overdue_jobs: 0,
      open_ncrs_by_severity: { high: 1 },
      open_issues_by_severity: {},
      operations_in_progress_by_cell: []
    })
    expect(dashboard.structuredContent.minutes_logged_today).toBeGreaterThanOrEqual(0)
    expect(dashboard.text.split("\n")[0]).toBe(`1 jobs (0 overdue), 0 operations in progress, ${dashboard.structuredContent.minutes_logged_today} minutes logged today`)

    expect((await call("complete_job", { id: jobId })).isError).toBeFalsy()
    expect((await rest.get(`/api-jobs?id=${jobId}`)).body.data.job.status).toBe("completed")
}
