// The assistant configurations start a working MCP server: the stdio ones run as written (the repository path,
// backend URL and key filled in) under the SDK's client; the HTTP one names the endpoint `mes serve` answers.
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { afterAll, beforeAll, expect, it } from "vitest"
import { type Harness, startServer } from "../../../packages/adapters-http/test/harness.ts"

const repo = fileURLToPath(new URL("../../..", import.meta.url)).replace(/\/$/, "")
const config = (name: string) => JSON.parse(readFileSync(fileURLToPath(new URL(`../${name}`, import.meta.url)), "utf8")).mcpServers.mes
let h: Harness
let key = ""
beforeAll(async () => {
  h = await startServer()
  ;({ key } = await h.as("Assistant"))
})
afterAll(() => h.close())

it.each(["claude_desktop_config.json", "cursor-mcp.json"])("%s starts mes mcp, which lists and calls the tools", async (name) => {
  const c = config(name)
  const args = (c.args as Array<string>).map((a) => a.replace("/path/to/mes", repo).replace("http://127.0.0.1:8787/functions/v1", h.url))
  const client = new Client({ name: "config-check", version: "1.0.0" })
  await client.connect(new StdioClientTransport({ command: c.command === "node" ? process.execPath : c.command, args, env: { ...process.env, ...c.env, MES_API_KEY: key } as Record<string, string> }))
  try {
    const tools = (await client.listTools()).tools.map((t) => t.name)
    expect(tools).toEqual(expect.arrayContaining(["fetch_jobs", "create_job", "start_operation"]))
    const result = await client.callTool({ name: "fetch_jobs", arguments: {} })
    expect(result.isError ?? false).toBe(false)
  } finally {
    await client.close()
  }
})

it("the HTTP configuration names /functions/v1/mcp with a bearer key", () => {
  const c = config("cursor-mcp-http.json")
  expect(new URL(c.url).pathname).toBe("/functions/v1/mcp")
  expect(c.headers.Authorization).toMatch(/^Bearer svc_live_/)
})
