// Every MCP tool through the SDK's real Client (in-memory transport) against a real REST server, with its
// effect checked over REST; errors as isError results; unknown tools as protocol errors; tenants apart.
import { PassThrough } from "node:stream"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client as restClient, type Harness, startServer } from "../../adapters-http/test/harness.ts"
import { createMcpServer, type McpOptions, restBackend } from "../src/index.ts"
import { LineTransport } from "../src/stdio.ts"
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
    // once "MCP error -32602: " (the client's) and not twice (the server's McpError put its own on the wire too)
    await expect(client.callTool({ name: "launch_rockets", arguments: {} })).rejects.toThrow(/^MCP error -32602: Unknown tool: launch_rockets$/)
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

describe("arguments the input schema refuses", () => {
  const JOB = { parts: [{ part_number: "P", quantity: 1, operations: [{ operation_name: "Cut", sequence: 1 }] }] }

  it("an argument a tool does not name is BAD_REQUEST and nothing is done; REST's aliases of its arguments are taken", async () => {
    const client = await connect(key)
    const job = await call(client, "create_job", { job_number: "MCP-ARGS", ...JOB })
    const id = job.structuredContent.job.id
    const start = await call(client, "start_job", { id, foo: 1 })
    expect([start.isError, start.text]).toEqual([true, "BAD_REQUEST: unknown argument foo: start_job takes id"])
    expect((await rest.get(`/api-jobs?id=${id}`)).body.data.job.status).toBe("not_started")
    // the schema leaves `completed` out (complete_substep ticks a step): it made a step that was ticked already
    const operation = (await call(client, "fetch_tasks", { job_id: id })).structuredContent.operations[0].id
    const substep = await call(client, "add_substep", { operation_id: operation, description: "Deburr", sequence: 1, completed: true })
    expect([substep.isError, substep.text]).toEqual([true, "BAD_REQUEST: unknown argument completed: add_substep takes operation_id, description, sequence"])
    expect((await rest.get(`/api-substeps?operation_id=${operation}`)).body.data.substeps).toEqual([])
    const unknown = await call(client, "fetch_jobs", { zzz: "1", yyy: 2 })
    expect(unknown.text).toMatch(/^BAD_REQUEST: unknown arguments zzz, yyy: fetch_jobs takes status, customer, /)
    // customer_name is REST's alias of customer (DECISIONS), not in the schema
    const aliased = await call(client, "create_job", { job_number: "MCP-ALIAS", customer_name: "Acme", ...JOB })
    expect([aliased.isError, aliased.structuredContent?.job.customer]).toEqual([undefined, "Acme"])
  })

  it("an array or object where a tool takes neither is BAD_REQUEST (a filter or an id made text of it); numbers for text are their text", async () => {
    const client = await connect(key)
    const job = await call(client, "create_job", { job_number: "MCP-TYPES", customer: "Types Inc", priority: 3, ...JOB })
    const id = job.structuredContent.job.id
    // ["Types Inc"] found the job as "Types Inc", {"a":1} searched for "[object Object]", a list of statuses became one
    for (
      const [args, message] of [
        [{ customer: ["Types Inc"] }, "argument customer must be string, not an array"],
        [{ job_number: { a: 1 } }, "argument job_number must be string, not an object"],
        [{ status: ["completed", "not_started"] }, "argument status must be string, not an array"]
      ] as const
    ) {
      const r = await call(client, "fetch_jobs", args)
      expect([JSON.stringify(args), r.isError, r.text]).toEqual([JSON.stringify(args), true, `BAD_REQUEST: ${message}`])
    }
    const start = await call(client, "start_job", { id: [id] })
    expect([start.isError, start.text]).toEqual([true, "BAD_REQUEST: argument id must be string, not an array"])
    expect((await rest.get(`/api-jobs?id=${id}`)).body.data.job.status).toBe("not_started")
    const found = await call(client, "fetch_jobs", { customer: "Types Inc", priority: 3, limit: 5 })
    expect([found.isError, found.structuredContent.total, found.structuredContent.limit]).toEqual([undefined, 1, 5])
  })

  it("fetch_jobs's limit is an integer 1-1000 as REST takes it; 2 and \"2\" both page by 2, what REST refuses is its error", async () => {
    const client = await connect(key)
    const { tools } = await client.listTools()
    const properties = tools.find((t) => t.name === "fetch_jobs")!.inputSchema.properties as Record<string, Record<string, unknown>>
    expect(properties.limit).toMatchObject({ type: "integer", minimum: 1, maximum: 1000 })
    expect(properties.offset).toMatchObject({ type: "integer", minimum: 0 })
    expect(properties.priority).toMatchObject({ type: "integer" })
    expect(JSON.stringify(properties)).not.toContain("[Ee][+-]?")
    for (const n of [1, 2, 3]) await call(client, "create_job", { job_number: `MCP-PAGE-${n}`, ...JOB })
    for (const limit of [2, "2"]) {
      const r = await call(client, "fetch_jobs", { limit })
      expect([r.isError, r.structuredContent.limit, r.structuredContent.jobs.length <= 2, r.structuredContent.total >= 3], JSON.stringify(limit)).toEqual([undefined, 2, true, true])
    }
    for (const limit of [2.5, "abc", "1e2"]) {
      const r = await call(client, "fetch_jobs", { limit })
      expect([r.isError, r.text], JSON.stringify(limit)).toEqual([true, "BAD_REQUEST: query parameter limit must be an integer"])
    }
    const over = await call(client, "fetch_jobs", { limit: 1001 })
    expect(over.isError).toBe(true)
    expect(over.text).toMatch(/^VALIDATION_ERROR: /)
    expect(JSON.parse(over.text.split("\n")[1]!)).toEqual([expect.objectContaining({ field: "limit", constraint: "MAX_VALUE", value: 1001 })])
  })

  it("a number JSON reads as Infinity (1e400) and text with an unpaired surrogate get REST's answer, not a changed value", async () => {
    const client = await connect(key)
    const job = (await call(client, "create_job", { job_number: "MCP-INF", priority: 7, ...JOB })).structuredContent.job
    // JSON.stringify wrote Infinity as null, which PATCH takes for "the default": the priority became 0
    const byRest = await rest.patch(`/api-jobs?id=${job.id}`, undefined, { raw: '{"priority":1e400}' })
    expect(byRest.body.error.details).toEqual([expect.objectContaining({ field: "priority", constraint: "MAX_VALUE" })])
    for (const [priority, constraint] of [[Infinity, "MAX_VALUE"], [-Infinity, "MIN_VALUE"]] as const) {
      const r = await call(client, "update_job", { id: job.id, priority })
      expect([r.isError, r.text.split("\n")[0]]).toEqual([true, "VALIDATION_ERROR: Validation failed for job: 1 error"])
      expect(JSON.parse(r.text.split("\n")[1]!)).toEqual([expect.objectContaining({ field: "priority", constraint })])
    }
    const bySame = await call(client, "update_job", { id: job.id, priority: Infinity })
    expect(JSON.parse(bySame.text.split("\n")[1]!)).toEqual(byRest.body.error.details)
    const nested = await call(client, "create_job", { job_number: "MCP-INF-2", parts: [{ part_number: "P", quantity: 1, operations: [{ operation_name: "Cut", sequence: 1, estimated_time_minutes: Infinity }] }] })
    expect(JSON.parse(nested.text.split("\n")[1]!)).toEqual([expect.objectContaining({ field: "parts[0].operations[0].estimated_time_minutes", constraint: "MAX_VALUE" })])
    // a URL carries an unpaired surrogate as U+FFFD, which was searched for; in a body JSON's escape keeps it
    const search = await call(client, "fetch_jobs", { search: "MCP-INF\ud800" })
    expect([search.isError, search.text]).toEqual([true, "BAD_REQUEST: query parameter search contains a NUL character or an unpaired surrogate"])
    const customer = await call(client, "update_job", { id: job.id, customer: "Acme\udc00" })
    expect(JSON.parse(customer.text.split("\n")[1]!)).toEqual([expect.objectContaining({ field: "customer", constraint: "PATTERN_MISMATCH" })])
    expect((await rest.get(`/api-jobs?id=${job.id}`)).body.data.job).toMatchObject({ priority: 7, customer: null })
    expect((await rest.get("/api-jobs?job_number=MCP-INF-2")).body.data.jobs).toEqual([])
  })

  it("over stdio, a tools/call line with 1e400 is REST's MAX_VALUE, and the job keeps its priority", async () => {
    const job = (await rest.post("/api-jobs", { job_number: "MCP-INF-STDIO", priority: 7, ...JOB })).body.data.job
    const stdin = new PassThrough()
    const stdout = new PassThrough()
    const server = createMcpServer(restBackend(h.url, key))
    await server.connect(new LineTransport(stdin, stdout))
    try {
      const line = new Promise<any>((resolve) => {
        let buffered = ""
        stdout.on("data", (chunk: Buffer) => {
          buffered += chunk.toString("utf8")
          if (buffered.includes("\n")) resolve(JSON.parse(buffered.slice(0, buffered.indexOf("\n"))))
        })
      })
      stdin.write(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"update_job","arguments":{"id":"${job.id}","priority":1e400}}}\n`)
      const answer = await line
      expect(answer.result.isError).toBe(true)
      const [message, details] = (answer.result.content[0].text as string).split("\n")
      expect([message, JSON.parse(details!)]).toEqual(["VALIDATION_ERROR: Validation failed for job: 1 error", [expect.objectContaining({ field: "priority", constraint: "MAX_VALUE" })]])
      expect((await rest.get(`/api-jobs?id=${job.id}`)).body.data.job.priority).toBe(7)
    } finally {
      await server.close()
    }
  })

  it("update_operation takes REST's instructions alias of notes, which PATCH takes", async () => {
    const client = await connect(key)
    const job = await call(client, "create_job", { job_number: "MCP-INSTR", ...JOB })
    const operation = (await call(client, "fetch_tasks", { job_id: job.structuredContent.job.id })).structuredContent.operations[0].id
    const r = await call(client, "update_operation", { id: operation, instructions: "use the jig" })
    expect([r.isError, r.structuredContent?.operation.notes]).toEqual([undefined, "use the jig"])
    expect((await rest.get(`/api-operations?id=${operation}`)).body.data.operation.notes).toBe("use the jig")
  })

  it("create_ncr's schema requires severity, which REST requires of an NCR", async () => {
    const { tools } = await (await connect(key)).listTools()
    expect(tools.find((t) => t.name === "create_ncr")!.inputSchema.required).toEqual(["operation_id", "title", "description", "severity"])
  })
})

describe("a record too large for one tool result", () => {
  it("a job with 6 MB of notes is started, and the result says so in under the SDK stdio client's 10 MiB line: its long text cut", async () => {
    const created = await rest.post("/api-jobs", { job_number: "MCP-LARGE", notes: "x".repeat(6_000_000), parts: [{ part_number: "P", quantity: 1, operations: [{ operation_name: "Cut", sequence: 1 }] }] })
    expect(created.status).toBe(201)
    const id = created.body.data.job.id
    const client = await connect(key)
    const raw = (await client.callTool({ name: "start_job", arguments: { id } })) as unknown as {
      content: Array<{ text: string }>
      structuredContent: { job: { id: string; status: string; notes: string } }
    }
    // the line the stdio transport writes: it was 12 MB, and the SDK's stdio client closed the connection on it
    expect(JSON.stringify({ jsonrpc: "2.0", id: 1, result: raw }).length).toBeLessThan(10 * 1024 * 1024)
    const text = raw.content[0]!.text
    expect(text.split("\n")[0]).toMatch(/^Job MCP-LARGE started: status in_progress \(the record is \d+ bytes of JSON, over the 3 MiB a tool result carries: text longer than 1000 characters is cut\)$/)
    const job = raw.structuredContent.job
    expect([job.id, job.status, job.notes]).toEqual([id, "in_progress", `${"x".repeat(200)}… (6000000 characters: read the whole record through the REST API)`])
    expect((await rest.get(`/api-jobs?id=${id}`)).body.data.job.status).toBe("in_progress")
  })
})
