// The REST API as the MCP tools see it: one call shape for both backends. Over HTTP (`mes mcp --backend-url`)
// every REST rule applies and the tenant is the key's; in process, the same routes answer without a socket.
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
  const url = new URL(baseUrl.replace(/\/$/, "") + r.path)
  for (const [k, v] of Object.entries(r.query ?? {})) url.searchParams.set(k, v)
  const response = await send(new Request(url, {
    method: r.method,
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    ...(r.body === undefined ? {} : { body: JSON.stringify(r.body) })
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
