// What `mes mcp` runs, loaded only when it does: the MCP server on stdio over a REST backend, either a remote
// server or the API's routes in process (a web handler over the database of the environment).
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { HttpRouter, HttpServer } from "effect/http"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { ApiRoutes, BASE_PATH } from "@mes/adapters-http"
import { createMcpServer, type McpOptions, restBackend } from "@mes/adapters-mcp"
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
    const transport = new StdioServerTransport()
    yield* Effect.promise(() => server.connect(transport))
    // until the client closes stdin (or a signal interrupts)
    yield* Effect.callback<void>((resume) => {
      transport.onclose = () => resume(Effect.void)
      process.stdin.once("end", () => resume(Effect.void))
    })
    yield* Effect.promise(() => server.close())
  }))
