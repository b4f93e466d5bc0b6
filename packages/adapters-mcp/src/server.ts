// The MCP tool server on @modelcontextprotocol/sdk: tools/list from the catalog, tools/call as one REST call.
// A REST error becomes a tool result with isError (the spec's code and message); an unknown tool is a
// protocol error; nothing a call does stops the server.
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { CallToolRequestSchema, type CallToolResult, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import { networkFailure } from "@mes/domain"
import type { RestBackend } from "./backend.ts"
import { allTools, type Toolset, type ToolSpec } from "./tools.ts"

export interface McpOptions {
  /** Expose only the tools that change nothing. */
  readonly readOnly?: boolean
  /** Expose only these toolsets (default: all). */
  readonly toolsets?: ReadonlyArray<Toolset>
}

/** The tools a server with these options exposes. */
export const selectTools = (options: McpOptions = {}): ReadonlyArray<ToolSpec> =>
  allTools().filter((t) => (options.readOnly !== true || t.readOnly) && (options.toolsets === undefined || options.toolsets.includes(t.toolset)))

const text = (s: string): CallToolResult["content"] => [{ type: "text", text: s }]

/** One tool call against the backend, as an MCP result. */
export const callTool = async (tool: ToolSpec, backend: RestBackend, args: Record<string, unknown>): Promise<CallToolResult> => {
  try {
    const reply = await backend(tool.request(args))
    if (reply.status >= 400 || reply.body?.success !== true) {
      const error = reply.body?.error ?? { code: "UNKNOWN", message: `HTTP ${reply.status}` }
      const details = Array.isArray(error.details) && error.details.length > 0 ? `\n${JSON.stringify(error.details)}` : ""
      return { isError: true, content: text(`${error.code}: ${error.message}${details}`) }
    }
    const { message, value } = tool.result(reply.body.data, args)
    return { content: text(`${message}\n${JSON.stringify(value)}`), structuredContent: value }
  } catch (e) {
    // what failed, not fetch's bare "fetch failed"
    return { isError: true, content: text(`BACKEND_UNAVAILABLE: ${networkFailure(e)}`) }
  }
}

/**
 * An MCP server over a REST backend (`restBackend`): connect it to a transport (stdio, Streamable HTTP, or an
 * in-memory pair in tests). An embedding service can mount it beside its own.
 */
export const createMcpServer = (backend: RestBackend, options: McpOptions = {}): Server => {
  const tools = selectTools(options)
  const byName = new Map(tools.map((t) => [t.name, t]))
  const server = new Server({ name: "mes", version: "0.1.0" }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema as { type: "object" },
      outputSchema: t.outputSchema as { type: "object" },
      annotations: { title: t.title, readOnlyHint: t.readOnly, destructiveHint: t.destructive, idempotentHint: t.idempotent, openWorldHint: false }
    }))
  }))
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = byName.get(request.params.name)
    if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`)
    const args = request.params.arguments
    return callTool(tool, backend, args !== null && typeof args === "object" && !Array.isArray(args) ? args : {})
  })
  return server
}
