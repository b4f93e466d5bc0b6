// What `mes mcp` runs, loaded only when it does: the MCP server on stdio over a REST backend, either a remote
// server or the API's routes in process (a web handler over the database of the environment).
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { HttpRouter, HttpServer } from "effect/http"
import { ApiRoutes, BASE_PATH } from "@mes/adapters-http"
import { createMcpServer, LineTransport, type McpOptions, restBackend } from "@mes/adapters-mcp"
import { AppLive, compileWasmOnOneThread, lockDataDir } from "./app.ts"
import { markSignalAsShutdown } from "./signals.ts"

export const runMcp = (o: { readonly apiKey: string; readonly backendUrl: string | undefined; readonly options: McpOptions }) =>
  Effect.scoped(Effect.gen(function*() {
    // stdout carries the protocol: anything else printed goes to stderr
    console.log = console.error
    markSignalAsShutdown()
    let backend
    if (o.backendUrl !== undefined) {
      backend = restBackend(o.backendUrl, o.apiKey)
    } else {
      yield* lockDataDir
      yield* compileWasmOnOneThread
      const { dispose, handler } = HttpRouter.toWebHandler(
        ApiRoutes().pipe(Layer.provideMerge(AppLive()), Layer.provide(HttpServer.layerServices)),
        { disableLogger: true }
      )
      yield* Effect.addFinalizer(() => Effect.promise(() => dispose()))
      backend = restBackend(`http://mes.local${BASE_PATH}`, o.apiKey, (request) => handler(request))
    }
    const server = createMcpServer(backend, o.options)
    const transport = new LineTransport()
    // set before connect, which chains the server's own: the transport closes once stdin has ended and every
    // request read from it is answered (or a signal interrupts)
    const closed = new Promise<void>((resolve) => (transport.onclose = resolve))
    yield* Effect.promise(() => server.connect(transport))
    yield* Effect.promise(() => closed)
    yield* Effect.promise(() => server.close())
  }))
