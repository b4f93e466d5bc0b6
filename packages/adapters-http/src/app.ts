// Composes the handlers of every endpoint into the HTTP application and the Node server.
import { createServer } from "node:http"
// by path: the package index also loads the HTTP client (undici), which the server never uses
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { HttpRouter } from "effect/http"
import { batchHandlers } from "./handlers/api-batches.ts"
import { cellHandlers } from "./handlers/api-cells.ts"
import { lifecycleHandlers } from "./handlers/api-lifecycle.ts"
import { issueHandlers } from "./handlers/api-issues.ts"
import { jobHandlers } from "./handlers/api-jobs.ts"
import { operationHandlers } from "./handlers/api-operations.ts"
import { partHandlers } from "./handlers/api-parts.ts"
import { profileHandlers } from "./handlers/api-profiles.ts"
import { substepHandlers } from "./handlers/api-substeps.ts"
import { webhookHandlers } from "./handlers/api-webhooks.ts"
import { routes, type ServerOptions, ServerOptionsConfig } from "./server.ts"

export const allHandlers = Effect.gen(function*() {
  return {
    ...(yield* jobHandlers),
    ...(yield* partHandlers),
    ...(yield* operationHandlers),
    ...(yield* cellHandlers),
    ...(yield* profileHandlers),
    ...(yield* substepHandlers),
    ...(yield* issueHandlers),
    ...(yield* lifecycleHandlers),
    ...(yield* batchHandlers),
    ...(yield* webhookHandlers)
  }
})

/** The REST API as router routes (mount into your own HttpRouter, or serve with `HttpServerLive`). */
export const ApiRoutes = (options?: Partial<ServerOptions>) =>
  Layer.unwrap(Effect.gen(function*() {
    const config = { ...(yield* ServerOptionsConfig), ...options }
    return routes(yield* allHandlers, config)
  }))

/** A Node HTTP server with the REST API; port 0 picks a free port (read it from HttpServer.address). */
export const HttpServerLive = (listen: { readonly port: number; readonly host?: string }, options?: Partial<ServerOptions>) =>
  HttpRouter.serve(ApiRoutes(options), { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: listen.port, host: listen.host ?? "0.0.0.0" }))
  )
