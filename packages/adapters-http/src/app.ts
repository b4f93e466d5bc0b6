// Composes the handlers of every endpoint into the HTTP application and the Node server.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
// by path: the package index also loads the HTTP client (undici), which the server never uses
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { HttpRouter, HttpServer } from "effect/http"
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

/**
 * A Node server that holds any request parsed before the application's handler is attached and hands
 * it over once it is: Node drops a request nobody listens for, leaving its connection unanswered.
 */
export const gatedServer = () => {
  const server = createServer()
  let held: Array<[IncomingMessage, ServerResponse]> = []
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    if (server.listenerCount("request") === 1) held.push([req, res])
  })
  server.on("newListener", (event) => {
    if (event !== "request" || held.length === 0) return
    setImmediate(() => {
      const waiting = held
      held = []
      for (const [req, res] of waiting) server.emit("request", req, res)
    })
  })
  return server
}

/**
 * A Node HTTP server with the REST API; port 0 picks a free port (read it from HttpServer.address).
 * Every route is built before the port is opened, so no connection is accepted that nothing would
 * answer. On shutdown the server stops accepting and in-flight requests get `shutdownTimeout`
 * (MES_SHUTDOWN_TIMEOUT) to finish.
 */
export const HttpServerLive = (listen: { readonly port: number; readonly host?: string }, options?: Partial<ServerOptions>) =>
  Layer.unwrap(Effect.gen(function*() {
    const config = { ...(yield* ServerOptionsConfig), ...options }
    const app = yield* HttpRouter.toHttpEffect(routes(yield* allHandlers, config))
    return HttpServer.serve(app).pipe(
      Layer.provideMerge(NodeHttpServer.layer(gatedServer, {
        port: listen.port,
        host: listen.host ?? "0.0.0.0",
        gracefulShutdownTimeout: config.shutdownTimeout
      }))
    )
  }))
