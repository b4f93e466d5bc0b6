// mes inside another Node service without writing Effect (examples/embed-node): the REST API as a web-standard
// request handler over the database of the environment (DATABASE_URL, else embedded PGlite in MES_DATA_DIR).
import * as Layer from "effect/Layer"
import { HttpRouter, HttpServer } from "effect/http"
import { ApiRoutes } from "@mes/adapters-http"
import { AppLive } from "./app.ts"

export interface MesHandler {
  /** Answers a request whose path starts with /functions/v1 (strip your own mount prefix first). */
  readonly handler: (request: Request) => Promise<Response>
  /** Closes the database; call it when your service stops. */
  readonly dispose: () => Promise<void>
}

/** The REST API as `(Request) => Promise<Response>`; migrations run on the first request's start-up. */
export const createMesHandler = (): MesHandler => {
  const { dispose, handler } = HttpRouter.toWebHandler(
    ApiRoutes().pipe(Layer.provideMerge(AppLive()), Layer.provide(HttpServer.layerServices)),
    { disableLogger: true }
  )
  return { handler: (request) => handler(request), dispose }
}
