// The MCP tools over Streamable HTTP (stateless, JSON answers) at one path of an HTTP server, for `mes serve` at
// /functions/v1/mcp. Every request carries an API key like the REST API (`Authorization: Bearer` or `X-API-Key`);
// a refused key is 401 in the error envelope, and each request's tools act in that key's tenant. What fails a
// request is answered by the API's rules: a database that cannot check the key is 503 with Retry-After, not 401.
import { STATUS_CODES } from "node:http"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { addPath, type AnswerAsTheApi, answerAsTheApi, credentialOf, fail, readJsonBody } from "@mes/adapters-http"
import { Tenants } from "@mes/domain"
import type { RestBackend } from "./backend.ts"
import type { McpOptions } from "./server.ts"

export { restBackend } from "./backend.ts"

// the SDK (and zod under it) load on the first MCP request: a server nobody asks for tools never holds them
let sdk: Promise<{
  readonly server: typeof import("./server.ts")
  readonly transport: typeof import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js")
  readonly messages: typeof import("./messages.ts")
}> | undefined
const loadSdk = () =>
  sdk ??= Promise.all([import("./server.ts"), import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"), import("./messages.ts")])
    .then(([server, transport, messages]) => ({ server, transport, messages }))

/** JSON-RPC's Invalid params (the SDK's ErrorCode.InvalidParams, without loading the SDK for it). */
const INVALID_PARAMS = -32602

/** The largest MCP request body (the SDK's own limit when it reads the body itself). */
const MAX_MCP_BODY_BYTES = 4 * 1024 * 1024

/**
 * The MCP endpoint at `path`; `backendFor` gives the REST backend of a request's key. `answer`: the API's rules
 * for what fails a request and its timeout (`HttpServerLive` hands its own to extra routes; default:
 * MES_REQUEST_TIMEOUT's default).
 */
export const mcpHttpRoutes = (
  path: `/${string}`,
  backendFor: (apiKey: string) => RestBackend,
  options: McpOptions = {},
  answer: AnswerAsTheApi = answerAsTheApi()
): Layer.Layer<never, never, HttpRouter.HttpRouter | Tenants> =>
  HttpRouter.use(Effect.fnUntraced(function*(router) {
    const tenants = yield* Tenants
    /** The request whose body was read: its key checked, then its messages answered by a server of the key's tools. */
    const served = (request: HttpServerRequest.HttpServerRequest, body: unknown) =>
      Effect.gen(function*() {
        const key = credentialOf(request.headers)
        // only a refused key is 401; the database failing to answer is a defect that `answer` turns into a 503
        const known = key === undefined ? false : yield* tenants.authenticate(key).pipe(Effect.as(true), Effect.catchTag("Unauthorized", () => Effect.succeed(false)))
        if (!known) return fail(401, "UNAUTHORIZED", "Invalid or missing API key")
        const { server: mcp, transport: http, messages } = yield* Effect.promise(loadSdk)
        // a body that is not messages is answered as JSON-RPC 2.0 asks, saying why, as on stdio
        const refused = messages.refusalOf(body)
        // a request that is a message but names no tool or arguments is answered as a request (200), the rest 400
        if (refused !== undefined) return HttpServerResponse.jsonUnsafe(refused, { status: refused.error.code === INVALID_PARAMS ? 200 : 400 })
        const web = yield* HttpServerRequest.toWeb(request)
        const server = mcp.createMcpServer(backendFor(key!), options)
        const transport = new http.WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true } as ConstructorParameters<typeof http.WebStandardStreamableHTTPServerTransport>[0])
        yield* Effect.promise(() => server.connect(transport))
        const response = yield* Effect.promise(() => transport.handleRequest(web, { parsedBody: body })).pipe(Effect.ensuring(Effect.promise(() => server.close())))
        // the SDK's Response has no status text: Node wrote an empty reason phrase ("HTTP/1.1 200 ")
        const answered = HttpServerResponse.fromWeb(response)
        return HttpServerResponse.setStatus(answered, answered.status, answered.statusText || STATUS_CODES[answered.status])
      }).pipe(Effect.catch(() => Effect.succeed(fail(400, "BAD_REQUEST", "Malformed MCP request"))), (route) => answer(route))
    // the body is read first, as REST reads it: with REST's rules (one that is not UTF-8 would reach the tools with
    // U+FFFD in place of its bytes), within the SDK's own 4 MB, before the key is looked at (400 before 401), and
    // outside the request's timeout, which a large body over a slow link may outlast (one that stalls is 408)
    const handle = Effect.flatMap(Effect.service(HttpServerRequest.HttpServerRequest), (request) =>
      Effect.flatMap(readJsonBody(request, MAX_MCP_BODY_BYTES, answer.requestTimeout), (read) =>
        HttpServerResponse.isHttpServerResponse(read) ? Effect.succeed(read) : served(request, read.body)))
    // stateless: no stream for GET to open and no session for DELETE to end, so both are 405 as the MCP spec
    // allows (a GET answered 200 and closed at once had the SDK's client open it again every second)
    yield* addPath(router, path, { POST: handle })
  }))
