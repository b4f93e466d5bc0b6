// Every MCP tool through the SDK's real Client (in-memory transport) against a real REST server, with its
// effect checked over REST; errors as isError results; unknown tools as protocol errors; tenants apart.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client as restClient, type Harness, startServer } from "../../adapters-http/test/harness.ts"
import { createMcpServer, type McpOptions, restBackend } from "../src/index.ts"

let h: Harness
let rest: ReturnType<typeof restClient>
let key: string
let otherKey: string
const open: Array<Client> = []

const connect = async (apiKey: string, options: McpOptions = {}) => {
  const server = createMcpServer(restBackend(h.url, apiKey), options)
  const [a, b] = InMemoryTransport.createLinkedPair()
  await server.connect(a)
  const client = new Client({ name: "test", version: "1.0.0" })
  await client.connect(b)
  open.push(client)
  return client
}

beforeAll(async () => {
  h = await startServer()
  const t = await h.as("MCP")
  key = t.key
  rest = t.api
  otherKey = (await h.tenant("MCP other")).key
})
afterAll(async () => {
  for (const c of open) await c.close()
  await h.close()
})

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => {
  const r = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: Array<{ type: string; text: string }>; structuredContent?: any }
  return { ...r, text: r.content[0]!.text }
}

describe("tools/list", () => {
  it("lists every tool of spec 4.14 plus resume_operation, each with annotations and described fields", async () => {
    const client = await connect(key)
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual([
      "add_substep", "complete_job", "complete_operation", "complete_substep", "create_job", "create_ncr",
      "fetch_issues", "fetch_jobs", "fetch_ncrs", "fetch_parts", "fetch_tasks", "get_dashboard_stats", "pause_operation", "resume_job",
      "resume_operation", "start_job", "start_operation", "stop_job", "update_job", "update_operation"
    ])
    for (const t of tools) {
      expect(t.annotations, t.name).toMatchObject({ title: expect.any(String), readOnlyHint: expect.any(Boolean), destructiveHint: false, idempotentHint: expect.any(Boolean), openWorldHint: false })
      expect(t.inputSchema.type).toBe("object")
      for (const [field, schema] of Object.entries(t.inputSchema.properties ?? {})) {
        expect((schema as { description?: string }).description, `${t.name}.${field}`).toEqual(expect.any(String))
      }
    }
    const create = tools.find((t) => t.name === "create_job")!
    expect(create.inputSchema.required).toEqual(expect.arrayContaining(["job_number", "parts"]))
    expect(Object.keys(create.inputSchema.properties!)).toEqual(expect.arrayContaining(["job_number", "customer", "due_date", "priority", "notes", "parts"]))
    expect(tools.find((t) => t.name === "update_job")!.inputSchema.required).toEqual(["id"])
  })

  it("--read-only exposes only the read tools; toolsets select a subset", async () => {
    const readOnly = await connect(key, { readOnly: true })
    expect((await readOnly.listTools()).tools.map((t) => t.name).sort()).toEqual(["fetch_issues", "fetch_jobs", "fetch_ncrs", "fetch_parts", "fetch_tasks", "get_dashboard_stats"])
    const quality = await connect(key, { toolsets: ["quality"] })
    expect((await quality.listTools()).tools.map((t) => t.name).sort()).toEqual(["create_ncr", "fetch_issues", "fetch_ncrs"])
    const refused = await call(readOnly, "start_job", { id: "7c0b9a52-3c8e-4f7e-9a53-0d8f6f1f2b11" }).catch((e: Error) => e)
    expect(refused).toBeInstanceOf(Error)
  })
})

describe("every tool, with its effect checked over REST", () => {
  it("create, fetch, move and update jobs and operations; raise an NCR; add and tick a substep", async () => {
    const client = await connect(key)
    const profile = (await rest.post("/api-profiles", { display_name: "Olga" })).body.data.profile.id

    const created = await call(client, "create_job", {
      job_number: "MCP-1",
      customer: "Acme",
      due_date: "2026-12-01",
      priority: 2,
      notes: "rush",
      parts: [{ part_number: "P-1", quantity: 3, operations: [{ operation_name: "Cut", sequence: 1 }, { operation_name: "Bend", sequence: 2 }] }]
    })
    expect(created.isError, created.text).toBeFalsy()
    expect(created.text.split("\n")[0]).toBe("Job MCP-1 created with 1 part(s)")
    const jobId = created.structuredContent.job.id
    expect((await rest.get(`/api-jobs?id=${jobId}`)).body.data.job.job_number).toBe("MCP-1")

    const jobs = await call(client, "fetch_jobs", { job_number: "MCP", limit: 1 })
    expect(jobs.structuredContent).toMatchObject({ total: 1, limit: 1, offset: 0, jobs: [{ id: jobId, job_number: "MCP-1", status: "not_started", parts: 1 }] })
    expect(jobs.text).toMatch(/^1 of 1 job/)
    const parts = await call(client, "fetch_parts", { job_id: jobId })
    expect(parts.structuredContent.parts[0]).toMatchObject({ part_number: "P-1", quantity: 3 })
    const tasks = await call(client, "fetch_tasks", { job_id: jobId, limit: 1 })
    expect(tasks.structuredContent).toMatchObject({ total: 2, next_offset: 1 })
    expect(tasks.text).toContain("next page: offset=1")
    const [cut] = tasks.structuredContent.operations

    expect((await call(client, "update_job", { id: jobId, notes: "very rush", priority: 5 })).isError).toBeFalsy()
    expect((await rest.get(`/api-jobs?id=${jobId}`)).body.data.job).toMatchObject({ notes: "very rush", priority: 5 })

    for (const [tool, status] of [["start_job", "in_progress"], ["stop_job", "on_hold"], ["resume_job", "in_progress"]] as const) {
      const r = await call(client, tool, { id: jobId })
      expect(r.isError, r.text).toBeFalsy()
      expect((await rest.get(`/api-jobs?id=${jobId}`)).body.data.job.status).toBe(status)
    }

    expect((await call(client, "start_operation", { id: cut.id, user_id: profile })).isError).toBeFalsy()
    expect((await rest.get(`/api-time-entries?operation_id=${cut.id}`)).body.data.time_entries).toHaveLength(1)
    expect((await call(client, "pause_operation", { id: cut.id })).isError).toBeFalsy()
    expect((await call(client, "resume_operation", { id: cut.id, user_id: profile })).isError).toBeFalsy()
    expect((await call(client, "update_operation", { id: cut.id, completion_percentage: 50, notes: "half" })).isError).toBeFalsy()
    expect((await rest.get(`/api-operations?id=${cut.id}`)).body.data.operation).toMatchObject({ completion_percentage: 50, notes: "half", status: "in_progress" })
    expect((await call(client, "complete_operation", { id: cut.id })).isError).toBeFalsy()
    expect((await rest.get(`/api-operations?id=${cut.id}`)).body.data.operation.status).toBe("completed")

    const ncr = await call(client, "create_ncr", { operation_id: cut.id, title: "Burr on edge", description: "Sharp burr", severity: "high", ncr_category: "process" })
    expect(ncr.isError, ncr.text).toBeFalsy()
    expect(ncr.text).toMatch(/^NCR NCR-\d{4}-\d{5} raised: Burr on edge/)
    expect((await call(client, "fetch_ncrs", {})).structuredContent.issues.map((i: { title: string }) => i.title)).toEqual(["Burr on edge"])
    expect((await call(client, "fetch_issues", { severity: "high" })).structuredContent.total).toBe(1)

    const step = await call(client, "add_substep", { operation_id: cut.id, description: "Deburr", sequence: 1 })
    expect(step.isError, step.text).toBeFalsy()
    expect((await call(client, "complete_substep", { id: step.structuredContent.substep.id })).isError).toBeFalsy()
    expect((await rest.get(`/api-substeps?id=${step.structuredContent.substep.id}`)).body.data.substep.completed).toBe(true)

    const dashboard = await call(client, "get_dashboard_stats")
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

    expect((await call(client, "complete_job", { id: jobId })).isError).toBeFalsy()
    expect((await rest.get(`/api-jobs?id=${jobId}`)).body.data.job.status).toBe("completed")
  })

  it("a bad state, an unknown id and invalid arguments are isError with the spec's code; an unknown tool is a protocol error", async () => {
    const client = await connect(key)
    const job = await call(client, "create_job", { job_number: "MCP-ERR", parts: [{ part_number: "P", quantity: 1, operations: [{ operation_name: "Cut", sequence: 1 }] }] })
    const bad = await call(client, "complete_job", { id: job.structuredContent.job.id })
    expect(bad.isError).toBe(true)
    expect(bad.text).toMatch(/^INVALID_STATE_TRANSITION: /)
    const missing = await call(client, "start_job", { id: "7c0b9a52-3c8e-4f7e-9a53-0d8f6f1f2b11" })
    expect(missing.isError).toBe(true)
    expect(missing.text).toMatch(/^NOT_FOUND: /)
    const invalid = await call(client, "create_job", { job_number: "" })
    expect(invalid.isError).toBe(true)
    expect(invalid.text).toMatch(/^VALIDATION_ERROR: /)
    expect(invalid.text).toContain("job_number")
    await expect(client.callTool({ name: "launch_rockets", arguments: {} })).rejects.toThrow(/Unknown tool/)
    // the server still answers
    expect((await call(client, "fetch_jobs", {})).isError).toBeFalsy()
  })

  it("a key of another tenant never sees or changes this tenant's records", async () => {
    const mine = await connect(key)
    const theirs = await connect(otherKey)
    const job = await call(mine, "create_job", { job_number: "MCP-MINE", parts: [{ part_number: "P", quantity: 1, operations: [{ operation_name: "Cut", sequence: 1 }] }] })
    const id = job.structuredContent.job.id
    expect((await call(theirs, "fetch_jobs", { job_number: "MCP-MINE" })).structuredContent.total).toBe(0)
    const start = await call(theirs, "start_job", { id })
    expect(start.isError).toBe(true)
    expect(start.text).toMatch(/^FORBIDDEN: /)
    expect((await rest.get(`/api-jobs?id=${id}`)).body.data.job.status).toBe("not_started")
  })
})
