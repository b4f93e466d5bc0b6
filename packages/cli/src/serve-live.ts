// What `mes serve` runs, loaded only when it does: the HTTP server and the webhook dispatcher over
// the domain, the stores and the database of the environment.
import { setFlagsFromString } from "node:v8"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { HttpServer } from "effect/http"
import { type AnswerAsTheApi, BASE_PATH, CommitSignal, HttpServerLive, UrlGuardLive, type WebHandler, WebhookDispatcher } from "@mes/adapters-http"
import { mcpHttpRoutes, restBackend } from "@mes/adapters-mcp/http"
import { PlannerStatistics } from "@mes/adapters-pg"
import { MonthlyResetSchedule, Tenants } from "@mes/domain"
import { AppLive, compileWasmOnOneThread, DatabaseConfig, withLayer } from "./app.ts"
import { userError } from "./output.ts"
import { markSignalAsShutdown } from "./signals.ts"

/** The URL clients use: a wildcard bind address is shown as the loopback address. */
export const publicUrl = (address: Parameters<typeof HttpServer.formatAddress>[0]): string => {
  const url = new URL(HttpServer.formatAddress(address))
  if (url.hostname === "0.0.0.0") url.hostname = "127.0.0.1"
  else if (url.hostname === "[::]") url.hostname = "[::1]"
  return `${url.origin}${BASE_PATH}`
}

/** The MCP tools over Streamable HTTP at /functions/v1/mcp, each request in its key's tenant, on this server's routes. */
const mcpAt = (self: WebHandler, answer: AnswerAsTheApi) =>
  mcpHttpRoutes(`${BASE_PATH}/mcp`, (key) => restBackend(`http://mes.local${BASE_PATH}`, key, self), {}, answer)

/**
 * The server, the webhook dispatcher (MES_WEBHOOK_*), the monthly reset's schedule (MES_MONTHLY_RESET),
 * first planner statistics of a fresh database,
 * domain, stores and database as one layer (exposes HttpServer and the services).
 */
export const ServeLive = (listen: { readonly port: number; readonly host: string }) =>
  Layer.mergeAll(
    HttpServerLive(listen, {}, mcpAt),
    WebhookDispatcher.layerConfig.pipe(Layer.provide(UrlGuardLive)),
    PlannerStatistics.layer,
    MonthlyResetSchedule
  ).pipe(
    // one signal shared by the API and the dispatcher: a committed write wakes delivery at once
    Layer.provide(CommitSignal.layer),
    Layer.provideMerge(AppLive())
  )

/**
 * How far V8 lets the JavaScript heap grow past what a full collection left, in percent (MES_HEAP_GROWING_PERCENT,
 * default 100, at most 1000; 0 or less leaves V8's own factor, up to 300 % under throughput). DECISIONS: "A list page's bytes".
 */
export const HeapGrowingPercent = Config.Int("MES_HEAP_GROWING_PERCENT").pipe(Config.withDefault(100))

/**
 * The V8 flag for `percent` (none for 0). Set at run time: Node refuses `--heap-growing-percent` in NODE_OPTIONS, and
 * V8 reads it each time a full collection sets the next limit.
 */
export const heapGrowingFlag = (percent: number): string | undefined =>
  percent <= 0 ? undefined : `--heap-growing-percent=${Math.min(percent, 1000)}`

/** Serves until interrupted (SIGINT/SIGTERM); a fresh embedded database gets a first tenant. */
export const runServer = (listen: { readonly port: number; readonly host: string }, json = false) =>
  Effect.andThen(compileWasmOnOneThread, withLayer(
    Effect.gen(function*() {
      const flag = heapGrowingFlag(yield* HeapGrowingPercent)
      if (flag !== undefined) setFlagsFromString(flag)
      const server = yield* HttpServer.HttpServer
      markSignalAsShutdown()
      const url = publicUrl(server.address)
      yield* Console.log(json ? JSON.stringify({ listening: url }) : `mes listening on ${url}`)
      // A fresh embedded database gets a first tenant so the service is usable at once; on
      // PostgreSQL keys are never printed to logs: use `mes tenant create`.
      const db = yield* DatabaseConfig
      if (Option.isNone(db.url)) {
        const first = yield* (yield* Tenants).bootstrap("default")
        if (first !== undefined) {
          yield* Console.log(json
            ? JSON.stringify({ first_start: true, tenant_id: first.tenant.id, api_key: first.apiKey })
            : `first start: created tenant "default" (${first.tenant.id}); its API key: ${first.apiKey}`)
        }
      }
      return yield* Effect.never
    }).pipe(Effect.onInterrupt(() => Console.error("mes shutting down"))),
    ServeLive(listen)
  ).pipe(Effect.catchCause((cause) => {
    const why = cannotListen(listen, Cause.squash(cause))
    return why === undefined ? Effect.failCause(cause) : Effect.fail(userError(why))
  })))

/** What a listen's error code means for the one who chose --port and --host. */
const LISTEN_ERRORS: Record<string, (listen: { readonly port: number; readonly host: string }) => string> = {
  EADDRINUSE: (l) => `port ${l.port} is in use by another process: stop it, or choose another --port (0 picks a free one)`,
  EACCES: (l) => `this user may not listen on port ${l.port} (ports below 1024 need privileges): choose another --port`,
  EADDRNOTAVAIL: (l) => `--host ${l.host} is not an address of this machine: use 127.0.0.1, 0.0.0.0 (every interface) or one of its own`,
  ENOTFOUND: (l) => `--host ${l.host} is not an address or a name this machine can resolve: use 127.0.0.1, 0.0.0.0 (every interface) or one of its own`,
  EAI_AGAIN: (l) => `--host ${l.host} could not be resolved now (the name service did not answer): use an address, or try again`
}

/**
 * Why the server could not listen on `listen`, in the terms of the flags (Node's "listen EADDRINUSE: address
 * already in use" said as the port that is taken), with Node's own words after; undefined for any other failure.
 */
const cannotListen = (listen: { readonly port: number; readonly host: string }, error: unknown): string | undefined => {
  if (typeof error !== "object" || error === null || (error as { _tag?: unknown })._tag !== "ServeError") return undefined
  const cause = (error as { cause?: unknown }).cause as NodeJS.ErrnoException | undefined
  const explain = cause?.code === undefined ? undefined : LISTEN_ERRORS[cause.code]
  return explain === undefined ? undefined : `cannot listen on ${listen.host}:${listen.port}: ${explain(listen)} (${cause!.message})`
}
