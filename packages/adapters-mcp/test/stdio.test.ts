// The stdio transport `mes mcp` serves on, driven line by line through streams: every line that is not a message is
// answered as JSON-RPC 2.0 asks, and the server goes on serving after it.
import { PassThrough } from "node:stream"
import { afterEach, describe, expect, it } from "vitest"
import { createMcpServer } from "../src/server.ts"
import { LineTransport } from "../src/stdio.ts"

const INITIALIZE = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1.0.0" } } }

const running: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of running.splice(0)) await close()
})

/** A server on a LineTransport over two streams; `next()` is the next line it writes, parsed. */
const serve = async (maxLineBytes?: number) => {
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  // every REST call answers after 100 ms: a tool call is a request still in flight for that long
  const server = createMcpServer(() => new Promise((resolve) => setTimeout(() => resolve({ status: 200, body: { success: true, data: { jobs: [], pagination: { total: 0, limit: 50, offset: 0 } } } }), 100)))
  const transport = new LineTransport(stdin, stdout, maxLineBytes)
  let isClosed = false
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve)).then(() => (isClosed = true))
  await server.connect(transport)
  running.push(() => server.close())
  const lines: Array<string> = []
  let buffered = ""
  let wake: (() => void) | undefined
  stdout.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8")
    const parts = buffered.split("\n")
    buffered = parts.pop()!
    lines.push(...parts)
    wake?.()
  })
  const next = async (): Promise<any> => {
    while (lines.length === 0) await new Promise<void>((resolve) => (wake = resolve))
    return JSON.parse(lines.shift()!)
  }
  /** what has been written and not read yet, after the server has had its turn */
  const unread = async (ms = 20) => {
    await new Promise((resolve) => setTimeout(resolve, ms))
    return lines.length
  }
  return { write: (text: string | Buffer) => stdin.write(text), end: () => stdin.end(), next, unread, closed, isClosed: () => isClosed }
}

describe("LineTransport (the stdio transport of mes mcp)", () => {
  it("answers a line that is not JSON with -32700 and id null, and goes on serving", async () => {
    const s = await serve()
    s.write("this is not json\n")
    expect(await s.next()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700, message: expect.stringMatching(/^Parse error: the line is not JSON/) } })
    // a line that is not UTF-8 (a Windows-1252 "ü"), which a lenient read would pass on as U+FFFD
    s.write(Buffer.from(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"create_job","arguments":{"job_number":"Müller"}}}\n`, "latin1"))
    expect(await s.next()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error: the line is not UTF-8" } })
    s.write(JSON.stringify(INITIALIZE) + "\n")
    expect(await s.next()).toMatchObject({ id: 1, result: { serverInfo: { name: "mes" } } })
  })

  it("answers JSON that is not a message with -32600, under the request's id when it has one", async () => {
    const s = await serve()
    s.write(`{"jsonrpc":"2.0","id":7,"method":42}\n`)
    expect(await s.next()).toEqual({ jsonrpc: "2.0", id: 7, error: { code: -32600, message: "Invalid Request: method must be a string" } })
    s.write(`{"jsonrpc":"2.0","id":"seven","method":"ping","params":"x"}\n`)
    expect(await s.next()).toMatchObject({ id: "seven", error: { code: -32600, message: "Invalid Request: params must be an object" } })
    s.write(`{"jsonrpc":"1.0","id":6,"method":"ping"}\n`)
    expect(await s.next()).toMatchObject({ id: 6, error: { code: -32600, message: 'Invalid Request: jsonrpc must be "2.0"' } })
    // an array (a JSON-RPC batch, which MCP no longer has), a number, an id that is not one, a response without one
    s.write(`[]\n42\n{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}\n{"jsonrpc":"2.0","result":{}}\n`)
    const messages = []
    for (let i = 0; i < 4; i++) {
      const answer = await s.next()
      expect(answer).toMatchObject({ id: null, error: { code: -32600 } })
      messages.push(answer.error.message)
    }
    expect(messages).toEqual([
      "Invalid Request: a message is a JSON object, not an array",
      "Invalid Request: a message is a JSON object, not a number",
      "Invalid Request: id must be a string or a number",
      "Invalid Request: a message has a method (a request or notification) or an id with a result or an error (a response)"
    ])
    s.write(`{"jsonrpc":"2.0","id":8,"method":"ping"}\n`)
    expect(await s.next()).toEqual({ jsonrpc: "2.0", id: 8, result: {} })
  })

  it("answers a tools/call whose name or arguments are not a tool's with -32602 saying which, not -32603 with the validator's output", async () => {
    const s = await serve()
    const call = (id: number, params: unknown) => s.write(JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params }) + "\n")
    call(1, { name: "start_job", arguments: [1, 2] })
    call(2, { name: "start_job", arguments: "x" })
    call(3, { name: "start_job", arguments: null })
    call(4, { name: 42, arguments: {} })
    call(5, { arguments: {} })
    const answers = []
    for (let i = 0; i < 5; i++) answers.push(await s.next())
    const invalid = (id: number, why: string) => ({ jsonrpc: "2.0", id, error: { code: -32602, message: `Invalid params: tools/call ${why}` } })
    expect(answers).toEqual([
      invalid(1, "arguments must be an object, not an array"),
      invalid(2, "arguments must be an object, not a string"),
      invalid(3, "arguments must be an object, not null"),
      invalid(4, "name must be a string, not a number"),
      invalid(5, "name is required")
    ])
    s.write(`{"jsonrpc":"2.0","id":6,"method":"ping"}\n`)
    expect(await s.next()).toEqual({ jsonrpc: "2.0", id: 6, result: {} })
  })

  it("reads a message split across chunks, a CRLF line end and several messages in one chunk; blank lines are skipped", async () => {
    const s = await serve()
    const text = JSON.stringify(INITIALIZE)
    s.write(text.slice(0, 10))
    s.write(text.slice(10) + "\r\n\n   \n")
    expect(await s.next()).toMatchObject({ id: 1, result: { protocolVersion: "2025-06-18" } })
    s.write(`{"jsonrpc":"2.0","id":2,"method":"ping"}\n{"jsonrpc":"2.0","id":3,"method":"ping"}\n`)
    expect((await s.next()).id).toBe(2)
    expect((await s.next()).id).toBe(3)
    expect(await s.unread()).toBe(0)
  })

  it("answers a line over the limit as soon as it is over, drops the rest of it, and serves the next line", async () => {
    const s = await serve(64)
    s.write(`{"jsonrpc":"2.0","id":4,"method":"ping",`)
    expect(await s.unread()).toBe(0)
    s.write(`"params":{"padding":"${"x".repeat(40)}`)
    expect(await s.next()).toMatchObject({ id: null, error: { code: -32700, message: "Parse error: a line is longer than 64 bytes" } })
    s.write("x".repeat(100_000))
    s.write(`"}}\n{"jsonrpc":"2.0","id":5,"method":"ping"}\n`)
    expect(await s.next()).toEqual({ jsonrpc: "2.0", id: 5, result: {} })
    // over the limit within one chunk, newline included
    s.write(`${"y".repeat(65)}\n{"jsonrpc":"2.0","id":6,"method":"ping"}\n`)
    expect((await s.next()).error.code).toBe(-32700)
    expect((await s.next()).id).toBe(6)
    expect(await s.unread()).toBe(0)
  })

  it("when stdin ends, reads a last line without a newline and closes once every request read is answered", async () => {
    const s = await serve()
    s.write(JSON.stringify(INITIALIZE) + "\n")
    expect((await s.next()).id).toBe(1)
    s.write(`{"jsonrpc":"2.0","method":"notifications/initialized"}\n`)
    s.write(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fetch_jobs","arguments":{}}}\n`)
    s.write(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
    s.end()
    expect(await s.next()).toEqual({ jsonrpc: "2.0", id: 3, result: {} })
    // the tool call's REST call is still running: not closed yet
    expect(await s.unread()).toBe(0)
    expect(s.isClosed()).toBe(false)
    expect(await s.next()).toMatchObject({ id: 2, result: { structuredContent: { jobs: [] } } })
    await s.closed
  })

  it("when stdin ends with no request in flight (or only a cancelled one), closes at once", async () => {
    const s = await serve()
    s.write(JSON.stringify(INITIALIZE) + "\n")
    expect((await s.next()).id).toBe(1)
    s.write(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fetch_jobs","arguments":{}}}\n`)
    s.write(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}\n`)
    s.end()
    await s.closed
    // nor is it answered after its REST call
    expect(await s.unread(200)).toBe(0)
  })
})
