// Composes the handlers of every endpoint into the HTTP application and the Node server.
import { createServer, type IncomingMessage, type ServerResponse, STATUS_CODES } from "node:http"
import type { Duplex } from "node:stream"
// by path: the package index also loads the HTTP client (undici), which the server never uses
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import { PartImages, shortHmacKey, Storage, type Tenants } from "@mes/domain"
import { partImageHandlersOf } from "./handlers/api-part-images.ts"
import { localDiskStorage, STORAGE_PATH, StorageOptionsConfig } from "./storage/local-disk.ts"
import { BASE_PATH } from "./contract/api.ts"
import { RPC_PATH } from "./rpc/group.ts"
import { rpcHttpHandler } from "./rpc/server.ts"
import { adminHandlers } from "./handlers/api-admin.ts"
import { batchHandlers } from "./handlers/api-batches.ts"
import { cellHandlers } from "./handlers/api-cells.ts"
import { resourceHandlersOf } from "./handlers/api-resources.ts"
import { dashboardHandlers } from "./handlers/api-dashboard.ts"
import { lifecycleHandlers } from "./handlers/api-lifecycle.ts"
import { issueHandlers } from "./handlers/api-issues.ts"
import { jobHandlers } from "./handlers/api-jobs.ts"
import { operationHandlers } from "./handlers/api-operations.ts"
import { partHandlers } from "./handlers/api-parts.ts"
import { profileHandlers } from "./handlers/api-profiles.ts"
import { substepHandlers } from "./handlers/api-substeps.ts"
import { shopFloorHandlers } from "./handlers/api-shop-floor.ts"
import { webhookHandlers } from "./handlers/api-webhooks.ts"
import { errorEnvelope } from "./errors.ts"
import { type AnswerAsTheApi, answerAsTheApi, fail, routes, type ServerOptions, ServerOptionsConfig } from "./server.ts"

export const allHandlers = Effect.gen(function*() {
  return {
    ...(yield* jobHandlers),
    ...(yield* partHandlers),
    ...(yield* operationHandlers),
    ...(yield* cellHandlers),
    ...(yield* resourceHandlersOf),
    ...(yield* profileHandlers),
    ...(yield* substepHandlers),
    ...(yield* issueHandlers),
    ...(yield* lifecycleHandlers),
    ...(yield* batchHandlers),
    ...(yield* webhookHandlers),
    ...(yield* dashboardHandlers),
    ...(yield* shopFloorHandlers),
    ...(yield* adminHandlers)
  }
})

/** The API's routes with the settings they use: the environment's (MES_*), overridden by `options`. */
const apiRoutes = (options?: Partial<ServerOptions>) =>
  Effect.gen(function*() {
    const config = { ...(yield* ServerOptionsConfig), ...options }
    // an embedding service's own `jwtSecret` is held to what MES_JWT_SECRET is
    const short = config.jwtSecret === undefined ? undefined : shortHmacKey("jwtSecret", config.jwtSecret)
    if (short !== undefined) return yield* Effect.die(new Error(short))
    // uploaded files: a local directory behind signed URLs this server answers (MES_STORAGE_DIR)
    const files = localDiskStorage(yield* StorageOptionsConfig, BASE_PATH)
    const handlers = {
      ...(yield* allHandlers),
      ...(yield* partImageHandlersOf(files).pipe(Effect.provide(PartImages.layer), Effect.provideService(Storage, files.storage)))
    }
    // Effect RPC of the domain's use cases (JSON over POST), API keys as for REST
    const rpc = yield* rpcHttpHandler(config)
    return {
      config,
      api: routes(handlers, config, [
        // a failure is answered in the envelope; an upload over a slow link may take longer than MES_REQUEST_TIMEOUT
        // (Node's own request timeouts bound it), and the RPC endpoint answers its failures itself, as RPC errors
        { path: `${BASE_PATH}${STORAGE_PATH}*`, handler: answerAsTheApi(Duration.infinity)(files.serve) },
        { path: `${BASE_PATH}${RPC_PATH}`, methods: ["POST"], handler: rpc }
      ])
    }
  })

/** The REST API as router routes (mount into your own HttpRouter, or serve with `HttpServerLive`). */
export const ApiRoutes = (options?: Partial<ServerOptions>) => Layer.unwrap(Effect.map(apiRoutes(options), ({ api }) => api))

/**
 * A Node server that holds any request parsed before the application's handler is attached and hands
 * it over once it is: Node drops a request nobody listens for, leaving its connection unanswered.
 */
export const gatedServer = () => {
  const server = createServer()
  // requests Node refuses before any handler sees them (headers too large, malformed request lines) are
  // answered in the error envelope too, not with Node's bare status line
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || err.code === "ECONNRESET") return void socket.destroy()
    const status = err.code === "HPE_HEADER_OVERFLOW" ? 431 : err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400
    const code = status === 431 ? "REQUEST_HEADER_FIELDS_TOO_LARGE" : status === 408 ? "REQUEST_TIMEOUT" : "BAD_REQUEST"
    const message = status === 431 ? "Request headers (or the URL) are too large" : status === 408 ? "The request was not received in time" : "Malformed HTTP request"
    const body = JSON.stringify(errorEnvelope(status, code, message))
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
    )
  })
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
export const HttpServerLive = (
  listen: { readonly port: number; readonly host?: string },
  options?: Partial<ServerOptions>,
  /**
   * More routes beside the API's (e.g. the MCP endpoint), registered on the same router with the services the
   * API's routes have; `self` answers a web Request with this server's routes, in process, and `answer` applies
   * the API's rules for what fails a request (this server's MES_REQUEST_TIMEOUT, the database's 503s, 500s).
   */
  extraRoutes?: (self: WebHandler, answer: AnswerAsTheApi) => Layer.Layer<never, never, HttpRouter.HttpRouter | Tenants>
) =>
  Layer.unwrap(Effect.gen(function*() {
    const { api, config } = yield* apiRoutes(options)
    let inProcess: WebHandler = () => Promise.reject(new Error("the server is not started yet"))
    const router = yield* HttpRouter.toHttpEffect(extraRoutes === undefined ? api : Layer.merge(api, extraRoutes((request) => inProcess(request), answerAsTheApi(config.requestTimeout))))
    // what the router refuses itself (a path it cannot decode) is answered in the envelope too
    const app = router.pipe(Effect.catchTag("HttpServerError", (e) =>
      e.reason._tag === "RouteNotFound" ? Effect.succeed(fail(404, "NOT_FOUND", "No such endpoint"))
      : e.reason._tag === "RequestParseError" ? Effect.succeed(fail(400, "BAD_REQUEST", "Malformed request"))
      : Effect.fail(e)))
    const context = requestContext(yield* Effect.context<never>())
    inProcess = (request) =>
      Effect.runPromiseWith(context)(app.pipe(
        Effect.provideService(HttpServerRequest.HttpServerRequest, HttpServerRequest.fromWeb(request)),
        Effect.map((response) => HttpServerResponse.toWeb(response)),
        Effect.scoped
      ) as Effect.Effect<Response, unknown>)
    // each request's fiber starts from the context the serving fiber has
    const serve = HttpServer.serveEffect(app)
    return Layer.effectDiscard(Effect.updateContext(serve, requestContext<Effect.Services<typeof serve>>)).pipe(
      Layer.provideMerge(NodeHttpServer.layer(gatedServer, {
        port: listen.port,
        host: listen.host ?? "0.0.0.0",
        gracefulShutdownTimeout: config.shutdownTimeout
      }))
    )
  }))

/**
 * The services a request starts with, from `context`, allowing 16 services added on top before a copy. Effect keeps
 * the services a fiber adds as overlays on a shared map and copies the whole map into a new one at the ninth; a
 * request adds about eleven (the server's request, the router's, the tenant, ...), so with the default of eight
 * every request copied the server's ≈ 80 services once (≈ 9 % of what a create allocated).
 */
const requestContext = <R>(context: Context.Context<R>): Context.Context<R> =>
  Context.makeUnsafe<R>(new Map(context.mapUnsafe), { maxDepth: 16 })

/** A web-standard request handler. */
export type WebHandler = (request: Request) => Promise<Response>
