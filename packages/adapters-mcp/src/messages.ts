// JSON that is not a JSON-RPC 2.0 message, answered as JSON-RPC 2.0 asks (-32600 Invalid Request, under the
// message's id when it has one) and with what is wrong, in the client's terms. Both transports use it: stdio, where
// the SDK's own transport answered nothing (a client that sent a request with a bad field waited for ever), and
// Streamable HTTP, where the SDK answered every such body -32700 "Parse error: Invalid JSON-RPC message".
import { ErrorCode, type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js"

/** What makes JSON that the SDK's schema refused not a JSON-RPC 2.0 message. */
const whyNotAMessage = (value: unknown): string => {
  if (typeof value !== "object" || value === null) return `a message is a JSON object, not ${value === null ? "null" : `a ${typeof value}`}`
  if (Array.isArray(value)) return "a message is a JSON object, not an array"
  const m = value as Record<string, unknown>
  if (m.jsonrpc !== "2.0") return 'jsonrpc must be "2.0"'
  if ("id" in m && typeof m.id !== "string" && typeof m.id !== "number" && !(m.id === null && "error" in m)) return "id must be a string or a number"
  if ("method" in m) {
    if (typeof m.method !== "string") return "method must be a string"
    if ("params" in m && (typeof m.params !== "object" || m.params === null || Array.isArray(m.params))) return "params must be an object"
  } else if (!("id" in m) || !("result" in m || "error" in m)) {
    return "a message has a method (a request or notification) or an id with a result or an error (a response)"
  }
  return "it is not a JSON-RPC 2.0 request, notification or response the MCP schema accepts"
}

/** A JSON-RPC error answer; id null is JSON-RPC's own for a request whose id cannot be read. */
export interface ErrorAnswer {
  readonly jsonrpc: "2.0"
  readonly id: string | number | null
  readonly error: { readonly code: number; readonly message: string }
}

export const errorAnswer = (id: string | number | null, code: number, message: string): ErrorAnswer => ({ jsonrpc: "2.0", id, error: { code, message } })

const typeName = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "an array" : `a ${typeof v}`)

/**
 * What makes a tools/call request's params not the tool and arguments it names: the SDK refused them with -32603
 * Internal error and its validator's output as the message, for the client's mistake.
 */
const badCallParams = (params: Record<string, unknown>): string | undefined => {
  if (params.name === undefined) return "tools/call name is required"
  if (typeof params.name !== "string") return `tools/call name must be a string, not ${typeName(params.name)}`
  const args = params.arguments
  if (args !== undefined && (typeof args !== "object" || args === null || Array.isArray(args))) {
    return `tools/call arguments must be an object, not ${typeName(args)}`
  }
  return undefined
}

/** `value` as a message, or the Invalid Request (Invalid params for a tools/call's) that answers it. */
export const messageOf = (value: unknown): { readonly message: JSONRPCMessage } | { readonly refused: ErrorAnswer } => {
  const parsed = JSONRPCMessageSchema.safeParse(value)
  if (parsed.success) {
    const m = parsed.data
    if (!("method" in m && m.method === "tools/call" && "id" in m)) return { message: m }
    const bad = badCallParams((m.params ?? {}) as Record<string, unknown>)
    return bad === undefined ? { message: m } : { refused: errorAnswer(m.id, ErrorCode.InvalidParams, `Invalid params: ${bad}`) }
  }
  const id = typeof value === "object" && value !== null && "id" in value ? value.id : null
  return { refused: errorAnswer(typeof id === "string" || typeof id === "number" ? id : null, ErrorCode.InvalidRequest, `Invalid Request: ${whyNotAMessage(value)}`) }
}

/**
 * The error that answers a whole HTTP body (a message or a batch of them), or undefined when every message in it
 * is one: an empty body is a Parse error, an empty batch and JSON that is not a message are Invalid Requests (the
 * first such message's). The SDK accepted `[]` with 202 and answered nothing, and answered the rest -32700.
 */
export const refusalOf = (body: unknown): ErrorAnswer | undefined => {
  if (body === undefined) return errorAnswer(null, ErrorCode.ParseError, "Parse error: the body is empty")
  if (Array.isArray(body) && body.length === 0) return errorAnswer(null, ErrorCode.InvalidRequest, "Invalid Request: an empty batch")
  for (const value of Array.isArray(body) ? body : [body]) {
    const read = messageOf(value)
    if ("refused" in read) return read.refused
  }
  return undefined
}
