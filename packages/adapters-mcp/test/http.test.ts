// The MCP endpoint over Streamable HTTP, mounted beside the API as `mes serve` mounts it: a key is checked like a
// REST request's, and what fails a request is answered by the API's rules. While the database cannot serve, a key
// it cannot check is 503 SERVICE_UNAVAILABLE with Retry-After (not 401, not a bare 500), a tool call whose REST call
// it cannot serve is an isError result with REST's code, and both are served again once it is back.
import { gzipSync } from "node:zlib"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Duration from "effect/Duration"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { AnswerAsTheApi, WebHandler } from "@mes/adapters-http"
import { testDatabaseKind } from "@mes/adapters-pg"
import { type Harness, nestedJob, rawExchange, retryWhile, stalledPost, startServer, startServerThroughProxy } from "../../adapters-http/test/harness.ts"
import type { TcpProxy } from "../../adapters-http/test/tcp-proxy.ts"
import { mcpHttpRoutes, restBackend } from "../src/http.ts"

const mcpRoutes = (self: WebHandler, answer: AnswerAsTheApi) =>
  mcpHttpRoutes("/functions/v1/mcp", (key) => restBackend("http://mes.local/functions/v1", key, self), {}, answer)

const INITIALIZE = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1.0.0" } } }

/** One MCP request as raw HTTP (the first of a session: initialize). */
const initialize = async (h: Harness, key?: string) => {
  const res = await fetch(`${h.url}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) },
    body: JSON.stringify(INITIALIZE)
  })
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body: (await res.json()) as any }
}

const connect = async (h: Harness, key: string) => {
  const client = new Client({ name: "test", version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }))
  return client
}

describe("MCP over Streamable HTTP beside the API", () => {
  let h: Harness
  beforeAll(async () => {
    h = await startServer({ extraRoutes: mcpRoutes })
  })
  afterAll(() => h.close())

  it("a known key is served in its tenant; a refused key and a request without one are 401 in the envelope", async () => {
    const { key, api } = await h.as("MCP over HTTP")
    const created = await api.post("/api-jobs", nestedJob("MCP-HTTP-1"))
    expect(created.status).toBe(201)
    const client = await connect(h, key)
    try {
      const jobs = await client.callTool({ name: "fetch_jobs", arguments: {} })
      expect(jobs.isError).toBeFalsy()
      expect(JSON.stringify(jobs.structuredContent)).toContain("MCP-HTTP-1")
    } finally {
      await client.close()
    }
    expect(await initialize(h, key)).toMatchObject({ status: 200, body: { result: { serverInfo: { name: "mes" } } } })
    for (const refused of [await initialize(h, "svc_live_not_a_key"), await initialize(h)]) {
      expect(refused).toMatchObject({ status: 401, body: { success: false, error: { code: "UNAUTHORIZED", statusCode: 401 } } })
    }
  })

  it("a body is read with REST's rules: not UTF-8 is 400 and reaches no tool, compressed is 415, over 4 MB is 413", async () => {
    const { key, api } = await h.as("MCP bodies")
    const post = (body: Uint8Array | string, headers: Record<string, string> = {}) =>
      fetch(`${h.url}/mcp`, {
        method: "POST",
        body,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }
      })
    const call = (jobNumber: string) =>
      JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "create_job", arguments: { ...nestedJob(jobNumber), customer: "Müller" } } })
    const latin1 = await post(Buffer.from(call("MCP-ENC-1"), "latin1"))
    expect(latin1.status).toBe(400)
    expect(await latin1.json()).toMatchObject({ success: false, error: { code: "BAD_REQUEST", message: "Request body is not valid UTF-8: JSON is sent in UTF-8" } })
    // as on the REST API, a body that cannot be read is refused before the key is looked at: 400 before 401
    const keyless = await fetch(`${h.url}/mcp`, { method: "POST", body: Buffer.from(call("MCP-ENC-0"), "latin1"), headers: { "content-type": "application/json" } })
    expect([keyless.status, ((await keyless.json()) as any).error.code]).toEqual([400, "BAD_REQUEST"])
    const gzip = await post(gzipSync(call("MCP-ENC-2")), { "content-encoding": "gzip" })
    expect([gzip.status, ((await gzip.json()) as any).error.code]).toEqual([415, "UNSUPPORTED_MEDIA_TYPE"])
    const big = await post(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "ping", params: { pad: "x".repeat(4 * 1024 * 1024) } }))
    expect([big.status, ((await big.json()) as any).error.code]).toEqual([413, "PAYLOAD_TOO_LARGE"])
    // the same call in UTF-8 is served, and only it wrote a job
    const utf8 = await post(call("MCP-ENC-3"))
    expect(utf8.status).toBe(200)
    expect(((await utf8.json()) as any).result.structuredContent.job.customer).toBe("Müller")
    const jobs = await api.get("/api-jobs?limit=10")
    expect(jobs.body.data.jobs.map((j: { job_number: string }) => j.job_number)).toEqual(["MCP-ENC-3"])
  })

  it("JSON that is not a message is an Invalid Request saying why, under its id (as on stdio), an empty batch too; a batch of one request is answered", async () => {
    const { key } = await h.as("MCP batches")
    const post = (body: unknown) =>
      fetch(`${h.url}/mcp`, {
        method: "POST",
        body: body === undefined ? "" : JSON.stringify(body),
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json, text/event-stream" }
      })
    const invalid = (id: string | number | null, why: string) => ({ jsonrpc: "2.0", id, error: { code: -32600, message: `Invalid Request: ${why}` } })
    for (
      const [body, answer] of [
        // the SDK accepted [] with 202 and answered nothing, and answered the others -32700 "Parse error: Invalid JSON-RPC message"
        [[], { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid Request: an empty batch" } }],
        [{}, invalid(null, 'jsonrpc must be "2.0"')],
        [{ jsonrpc: "2.0", id: 7, method: 42 }, invalid(7, "method must be a string")],
        [{ jsonrpc: "2.0", id: "a", method: "ping", params: [1] }, invalid("a", "params must be an object")],
        [[INITIALIZE, { jsonrpc: "2.0", id: 8 }], invalid(8, "a message has a method (a request or notification) or an id with a result or an error (a response)")],
        [undefined, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error: the body is empty" } }]
      ] as const
    ) {
      const res = await post(body)
      expect([JSON.stringify(body), res.status, await res.json()]).toEqual([JSON.stringify(body), 400, answer])
    }
    // a tools/call whose arguments are not an object is a request answered (200) with Invalid params saying why, where
    // the SDK answered -32603 Internal error with its validator's output
    const args = await post({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "start_job", arguments: [1, 2] } })
    expect([args.status, await args.json()]).toEqual([200, { jsonrpc: "2.0", id: 9, error: { code: -32602, message: "Invalid params: tools/call arguments must be an object, not an array" } }])
    const one = await post([INITIALIZE])
    expect([one.status, one.statusText]).toEqual([200, "OK"])
    expect(JSON.stringify(await one.json())).toContain('"serverInfo":{"name":"mes"')
  })

  it("stateless: GET (no stream) and DELETE (no session) are 405 with Allow, so a connected client asks for the stream once, not every second", async () => {
    const { key } = await h.as("MCP GET")
    for (const method of ["GET", "DELETE", "PUT", "PATCH"]) {
      const res = await fetch(`${h.url}/mcp`, { method, headers: { authorization: `Bearer ${key}`, accept: "application/json, text/event-stream" } })
      expect([method, res.status, res.headers.get("allow")]).toEqual([method, 405, "POST, OPTIONS"])
      expect(await res.json()).toMatchObject({ success: false, error: { code: "METHOD_NOT_ALLOWED" } })
    }
    const seen: Array<string> = []
    const client = new Client({ name: "test", version: "1.0.0" })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      fetch: async (url, init) => {
        const res = await fetch(url, init)
        seen.push(`${init?.method ?? "GET"} ${res.status}`)
        return res
      }
    }))
    try {
      // the SDK's client reopens a GET stream that ends after 1 s, and again after each
      await new Promise((resolve) => setTimeout(resolve, 2500))
      expect((await client.callTool({ name: "fetch_jobs", arguments: {} })).isError).toBeFalsy()
    } finally {
      await client.close()
    }
    expect(seen.filter((s) => s.startsWith("GET"))).toEqual(["GET 405"])
  })
})

describe.skipIf(testDatabaseKind() !== "postgres")("MCP over Streamable HTTP while the database cannot serve (PostgreSQL through a TCP proxy)", () => {
  let proxy: TcpProxy
  let h: Harness
  let close: () => Promise<void>
  beforeAll(async () => {
    ;({ proxy, h, close } = await startServerThroughProxy({ env: { MES_DB_CONNECT_TIMEOUT: "1s" }, extraRoutes: mcpRoutes }))
  })
  afterAll(() => close?.())

  it("a key the database cannot check is 503 with Retry-After, not 401; a warm key's tool call is isError SERVICE_UNAVAILABLE; both are served once it is back", async () => {
    const { key: warm } = await h.as("MCP warm key")
    const { key: cold } = await h.as("MCP cold key")
    const client = await connect(h, warm) // the key is in the auth cache now
    try {
      expect((await client.callTool({ name: "fetch_jobs", arguments: {} })).isError).toBeFalsy()
      proxy.cut()
      try {
        const refused = await initialize(h, cold)
        expect(refused).toEqual({
          status: 503,
          retryAfter: "5",
          body: { success: false, error: { code: "SERVICE_UNAVAILABLE", message: "The database is unreachable; retry later", statusCode: 503 } }
        })
        const call = await client.callTool({ name: "fetch_jobs", arguments: {} })
        expect(call).toMatchObject({ isError: true, content: [{ type: "text", text: "SERVICE_UNAVAILABLE: The database is unreachable; retry later" }] })
      } finally {
        proxy.restore()
      }
      const back = await retryWhile(() => initialize(h, cold), (r) => r.status === 503, 80)
      expect(back).toMatchObject({ status: 200, body: { result: { serverInfo: { name: "mes" } } } })
      expect((await client.callTool({ name: "fetch_jobs", arguments: {} })).isError).toBeFalsy()
    } finally {
      await client.close()
    }
  })
})

describe("an MCP body that does not arrive", () => {
  let slow: Harness
  beforeAll(async () => {
    slow = await startServer({ extraRoutes: mcpRoutes, server: { requestTimeout: Duration.seconds(1) } })
  })
  afterAll(() => slow.close())

  it("is 408 once no byte came for the server's MES_REQUEST_TIMEOUT, as on the REST API, not after a default 30 s", async () => {
    const { key } = await slow.as("Slow MCP body")
    const started = Date.now()
    const answer = await rawExchange(new URL(slow.url).port, stalledPost("/functions/v1/mcp", key))
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(answer).toMatch(/^HTTP\/1\.1 408 /)
    expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toMatchObject({ error: { code: "REQUEST_TIMEOUT", message: "No byte of the request body came for 1s" } })
  })
})
