// The MCP tools over Streamable HTTP (stateless, JSON answers) at one path of an HTTP server, for `mes serve` at
// /functions/v1/mcp. Every request carries an API key like the REST API (`Authorization: Bearer` or `X-API-Key`);
// a refused key is 401 in the error envelope, and each request's tools act in that key's tenant.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { credentialOf, fail } from "@mes/adapters-http"
import { Tenants } from "@mes/domain"
import type { RestBackend } from "./backend.ts"
import { createMcpServer, type McpOptions } from "./server.ts"

export const mcpHttpRoutes = (path: `/${string}`, backendFor: (apiKey: string) => RestBackend, options: McpOptions = {}): Layer.Layer<never, never, HttpRouter.HttpRouter | Tenants> =>
  HttpRouter.use(Effect.fnUntraced(function*(router) {
    const tenants = yield* Tenants
    const handle = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const key = credentialOf(request.headers)
      const known = key === undefined ? false : yield* tenants.authenticate(key).pipe(Effect.as(true), Effect.catch(() => Effect.succeed(false)))
      if (!known) return fail(401, "UNAUTHORIZED", "Invalid or missing API key")
      const web = yield* HttpServerRequest.toWeb(request)
      const server = createMcpServer(backendFor(key!), options)
      const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true } as ConstructorParameters<typeof WebStandardStreamableHTTPServerTransport>[0])
      yield* Effect.promise(() => server.connect(transport))
      const response = yield* Effect.promise(() => transport.handleRequest(web)).pipe(Effect.ensuring(Effect.promise(() => server.close())))
      return HttpServerResponse.fromWeb(response)
    }).pipe(Effect.catch(() => Effect.succeed(fail(400, "BAD_REQUEST", "Malformed MCP request"))))
    for (const method of ["GET", "POST", "DELETE"] as const) yield* router.add(method, path, handle)
  }))
