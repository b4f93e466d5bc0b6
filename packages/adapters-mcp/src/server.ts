// The MCP tool server on @modelcontextprotocol/sdk: tools/list from the catalog, tools/call as one REST call.
// A REST error becomes a tool result with isError (the spec's code and message); an unknown tool is a
// protocol error; nothing a call does stops the server.
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { CallToolRequestSchema, type CallToolResult, ErrorCode, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { networkFailure } from "@mes/domain"
import type { RestBackend } from "./backend.ts"
import { allTools, type JsonSchema, type Toolset, type ToolSpec } from "./tools.ts"

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

/**
 * The most JSON bytes of a record a tool result carries. A result carries it twice (in the text, where every quote
 * and backslash is escaped again, and as `structuredContent`) on one line, and the SDK's stdio client closes the
 * connection on a line over 10 MiB: a 6 MB job's start went through and its caller saw the connection close.
 */
export const MAX_RESULT_JSON_BYTES = 3 * 1024 * 1024

/** Strings longer than this are cut in a result over the bound. */
const LONG_TEXT = 1000

/** Each string longer than LONG_TEXT cut to its start and what was left out. */
const cutLongText = (value: unknown): unknown => {
  if (typeof value === "string") {
    return value.length <= LONG_TEXT ? value : `${value.slice(0, 200)}… (${value.length} characters: read the whole record through the REST API)`
  }
  if (Array.isArray(value)) return value.map(cutLongText)
  if (value === null || typeof value !== "object") return value
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cutLongText(v)]))
}

/**
 * A result within MAX_RESULT_JSON_BYTES: as it is, or with its long text cut (the message says so), or, if that
 * is not enough, without the record (the message says how large it is). A write it reports has happened either way.
 */
export const bounded = (r: { readonly message: string; readonly value: Record<string, unknown> }) => {
  // the JSON is made once here, and the text carries it
  const json = JSON.stringify(r.value)
  const bytes = Buffer.byteLength(json)
  if (bytes <= MAX_RESULT_JSON_BYTES) return { ...r, json }
  const limit = `over the ${MAX_RESULT_JSON_BYTES / 1024 / 1024} MiB a tool result carries`
  const cut = cutLongText(r.value) as Record<string, unknown>
  const cutJson = JSON.stringify(cut)
  if (Buffer.byteLength(cutJson) <= MAX_RESULT_JSON_BYTES) {
    return { message: `${r.message} (the record is ${bytes} bytes of JSON, ${limit}: text longer than ${LONG_TEXT} characters is cut)`, value: cut, json: cutJson }
  }
  return { message: `${r.message} (the record is ${bytes} bytes of JSON, ${limit}: read it through the REST API)`, value: {}, json: "{}" }
}

/** The JSON types a property's schema admits (its `type`, or its `anyOf` branches'); undefined: any. */
const typesOf = (schema: JsonSchema | undefined): ReadonlyArray<string> | undefined => {
  if (schema === undefined) return undefined
  if (Array.isArray(schema.anyOf)) {
    const branches = (schema.anyOf as Array<JsonSchema>).map(typesOf)
    return branches.some((b) => b === undefined) ? undefined : branches.flatMap((b) => b!)
  }
  return typeof schema.type === "string" ? [schema.type] : Array.isArray(schema.type) ? schema.type : undefined
}

const kindOf = (value: unknown) => (Array.isArray(value) ? "an array" : "an object")

/**
 * What makes `args` something the tool's input schema refuses, where no REST rule would say it: an argument it
 * does not name (nor REST's alias of one), which went on to REST or was dropped without a word, and an array or
 * object where it takes neither, which a filter or an id turned into text. Numbers and booleans where a string is
 * taken are its text, as a query string carries them, and text where an integer is taken (`limit: "5"`) goes as it
 * is; everything else the REST call validates (`limit: 5.5` or `"abc"` is its 400, `1001` its 422).
 */
export const argumentProblem = (tool: ToolSpec, args: Record<string, unknown>): string | undefined => {
  const properties = (tool.inputSchema.properties ?? {}) as Record<string, JsonSchema>
  const unknown = Object.keys(args).filter((k) => !Object.hasOwn(properties, k) && tool.aliases?.includes(k) !== true)
  if (unknown.length > 0 && tool.inputSchema.additionalProperties === false) {
    const names = Object.keys(properties)
    return `unknown argument${unknown.length === 1 ? "" : "s"} ${unknown.join(", ")}: ${tool.name} takes ${names.length === 0 ? "none" : names.join(", ")}`
  }
  for (const [name, value] of Object.entries(args)) {
    if (value === null || typeof value !== "object") continue
    const types = typesOf(properties[name])
    if (types !== undefined && !types.includes(Array.isArray(value) ? "array" : "object")) {
      return `argument ${name} must be ${types.filter((t) => t !== "null").join(" or ")}, not ${kindOf(value)}`
    }
  }
  return undefined
}

/** One tool call against the backend, as an MCP result. */
export const callTool = async (tool: ToolSpec, backend: RestBackend, args: Record<string, unknown>): Promise<CallToolResult> => {
  const problem = argumentProblem(tool, args)
  if (problem !== undefined) return { isError: true, content: text(`BAD_REQUEST: ${problem}`) }
  try {
    const reply = await backend(tool.request(args))
    if (reply.status >= 400 || reply.body?.success !== true) {
      const error = reply.body?.error ?? { code: "UNKNOWN", message: `HTTP ${reply.status}` }
      const details = Array.isArray(error.details) && error.details.length > 0 ? `\n${JSON.stringify(error.details)}` : ""
      return { isError: true, content: text(`${error.code}: ${error.message}${details}`) }
    }
    const { message, value, json } = bounded(tool.result(reply.body.data, args))
    return { content: text(`${message}\n${json}`), structuredContent: value }
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
    // a plain message: McpError's own ("MCP error -32602: …") went on the wire, and the client added its prefix again
    if (tool === undefined) throw Object.assign(new Error(`Unknown tool: ${request.params.name}`), { code: ErrorCode.InvalidParams })
    const args = request.params.arguments
    return callTool(tool, backend, args !== null && typeof args === "object" && !Array.isArray(args) ? args : {})
  })
  return server
}
