// `mes serve [--port N] [--host H]`: migrates, then serves the REST API until SIGINT/SIGTERM.
import { Config, Console, Effect, Layer, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { HttpServer } from "effect/http"
import { BASE_PATH, CommitSignal, HttpServerLive, UrlGuardLive, WebhookDispatcher } from "@mes/adapters-http"
import { Tenants } from "@mes/domain"
import { AppLive, DatabaseConfig, withLayer } from "../app.ts"
import { reportErrors, userError } from "../output.ts"
import { markSignalAsShutdown } from "../signals.ts"

export const DEFAULT_PORT = 8787
export const DEFAULT_HOST = "0.0.0.0"

/** The URL clients use: a wildcard bind address is shown as the loopback address. */
export const publicUrl = (address: Parameters<typeof HttpServer.formatAddress>[0]): string => {
  const url = new URL(HttpServer.formatAddress(address))
  if (url.hostname === "0.0.0.0") url.hostname = "127.0.0.1"
  else if (url.hostname === "[::]") url.hostname = "[::1]"
  return `${url.origin}${BASE_PATH}`
}

/**
 * The server, the webhook dispatcher (MES_WEBHOOK_*), domain, stores and database as one layer
 * (exposes HttpServer and the services).
 */
export const ServeLive = (listen: { readonly port: number; readonly host: string }) =>
  Layer.mergeAll(HttpServerLive(listen), WebhookDispatcher.layerConfig.pipe(Layer.provide(UrlGuardLive))).pipe(
    // one signal shared by the API and the dispatcher: a committed write wakes delivery at once
    Layer.provide(CommitSignal.layer),
    Layer.provideMerge(AppLive())
  )

export const serve = Command.make("serve", {
  port: Flag.Int("port").pipe(Flag.withDescription(`Port (default: PORT, else ${DEFAULT_PORT}; 0 picks a free port)`), Flag.optional),
  host: Flag.String("host").pipe(Flag.withDescription("Interface to bind"), Flag.withDefault(DEFAULT_HOST))
}, ({ host, port }) =>
  Effect.gen(function*() {
    const envPort = yield* Config.String("PORT").pipe(Config.option, Config.map(Option.filter((p) => p.trim() !== "")))
    const [source, listenPort] = Option.isSome(port)
      ? ["--port", port.value] as const
      : Option.isSome(envPort)
      ? ["PORT", /^\d+$/.test(envPort.value.trim()) ? Number(envPort.value.trim()) : NaN] as const
      : ["--port", DEFAULT_PORT] as const
    if (!Number.isInteger(listenPort) || listenPort < 0 || listenPort > 65535) {
      return yield* userError(`${source} must be a port number 0-65535 (0 picks a free port), got '${Option.isSome(port) ? port.value : Option.getOrElse(envPort, () => "")}'`)
    }
    yield* withLayer(
      Effect.gen(function*() {
        const server = yield* HttpServer.HttpServer
        markSignalAsShutdown()
        yield* Console.log(`mes listening on ${publicUrl(server.address)}`)
        // A fresh embedded database gets a first tenant so the service is usable at once; on
        // PostgreSQL keys are never printed to logs: use `mes tenant create`.
        const db = yield* DatabaseConfig
        if (Option.isNone(db.url)) {
          const first = yield* (yield* Tenants).bootstrap("default")
          if (first !== undefined) {
            yield* Console.log(`first start: created tenant "default" (${first.tenant.id}); its API key: ${first.apiKey}`)
          }
        }
        return yield* Effect.never
      }).pipe(Effect.onInterrupt(() => Console.error("mes shutting down"))),
      ServeLive({ port: listenPort, host })
    )
  }).pipe(reportErrors)).pipe(Command.withDescription("Run the HTTP API server (migrates the database first)"))
