// The REST API as the MCP tools see it: one call shape for both backends. Over HTTP (`mes mcp --backend-url`)
// every REST rule applies and the tenant is the key's; in process, the same routes answer without a socket.
import { hasUnpairedSurrogate, unstorableParameter } from "@mes/domain"

export interface RestRequest {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  /** Below /functions/v1, e.g. `/api-jobs`. */
  readonly path: string
  readonly query?: Readonly<Record<string, string>>
  readonly body?: unknown
}

export interface RestReply {
  readonly status: number
  /** The parsed envelope (spec 4.0 / 7.1). */
  readonly body: any
}

export type RestBackend = (request: RestRequest) => Promise<RestReply>

/** A number JSON reads as ±Infinity (`1e400`) as it came: JSON.stringify writes null, which a body takes for "the default". */
const withInfinities = (value: unknown): string => {
  if (typeof value === "number" && !Number.isFinite(value) && !Number.isNaN(value)) return value > 0 ? "1e400" : "-1e400"
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : withInfinities(v))).join(",")}]`
  if (value === null || typeof value !== "object") return JSON.stringify(value)
  return `{${Object.entries(value).filter(([, v]) => v !== undefined).map(([k, v]) => `${JSON.stringify(k)}:${withInfinities(v)}`).join(",")}}`
}

/**
 * A body as REST reads what the MCP client sent: `priority: 1e400` is REST's MAX_VALUE detail, where JSON.stringify's
 * null reset the priority to its default. Text with an unpaired surrogate goes as JSON's escape, which REST refuses.
 */
const bodyJson = (body: unknown): string => {
  let infinite = false
  const json = JSON.stringify(body, (_, v) => {
    if (typeof v === "number" && !Number.isFinite(v) && !Number.isNaN(v)) infinite = true
    return v
  })
  return infinite ? withInfinities(body) : json
}

/** A query parameter a URL cannot carry (an unpaired surrogate became U+FFFD, and was searched for): REST's 400. */
const unsendable = (query: Readonly<Record<string, string>>): RestReply | undefined => {
  const name = Object.keys(query).find((k) => hasUnpairedSurrogate(query[k]!))
  return name === undefined ? undefined : { status: 400, body: { success: false, error: { code: "BAD_REQUEST", message: unstorableParameter(name).message } } }
}

/**
 * Calls the REST API at `baseUrl` (ending in /functions/v1) with an API key. `send` defaults to `fetch`; give a
 * web-standard handler (`(Request) => Promise<Response>`) to call the routes in process.
 */
export const restBackend = (
  baseUrl: string,
  apiKey: string,
  send: (request: Request) => Promise<Response> = (request) => fetch(request)
): RestBackend =>
async (r) => {
  const refused = unsendable(r.query ?? {})
  if (refused !== undefined) return refused
  const url = new URL(baseUrl.replace(/\/$/, "") + r.path)
  for (const [k, v] of Object.entries(r.query ?? {})) url.searchParams.set(k, v)
  const response = await send(new Request(url, {
    method: r.method,
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    ...(r.body === undefined ? {} : { body: bodyJson(r.body) })
  }))
  const text = await response.text()
  let body: unknown = null
  try {
    body = JSON.parse(text)
  } catch {
    body = { success: false, error: { code: "BAD_GATEWAY", message: `the backend answered ${response.status} without JSON` } }
  }
  return { status: response.status, body }
}
