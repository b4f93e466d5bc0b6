// Every MCP tool through the SDK's real Client (in-memory transport) against a real REST server, with its
// effect checked over REST; errors as isError results; unknown tools as protocol errors; tenants apart.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client as restClient, type Harness, startServer } from "../../adapters-http/test/harness.ts"
import { createMcpServer, type McpOptions, restBackend } from "../src/index.ts"
import { callTool, everyTool } from "./scenario.ts"

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

const call = callTool

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
  it("create, fetch, move and update jobs and operations; raise an NCR; add and tick a substep; the dashboard", async () => {
    await everyTool(await connect(key), rest)
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
