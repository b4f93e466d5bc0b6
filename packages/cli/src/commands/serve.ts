// `mes serve [--port N] [--host H] [--json]`: migrates, then serves the REST API until SIGINT/SIGTERM.
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Command, Flag } from "effect/cli"
import { jsonFlag, reportErrors, userError } from "../output.ts"

export const DEFAULT_PORT = 8787
export const DEFAULT_HOST = "0.0.0.0"

export const serve = Command.make("serve", {
  port: Flag.Int("port").pipe(Flag.withDescription(`Port (default: PORT, else ${DEFAULT_PORT}; 0 picks a free port)`), Flag.optional),
  host: Flag.String("host").pipe(Flag.withDescription("Interface to bind"), Flag.withDefault(DEFAULT_HOST)),
  json: jsonFlag.pipe(Flag.withDescription("Print what the server announces (its address; a first tenant's key) as one JSON object per line"))
}, ({ host, json, port }) =>
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
    // Node binds an empty host to every interface, IPv6 too: what `--host "$HOST"` with HOST unset would do unseen
    if (host.trim() === "") {
      return yield* userError(`--host must not be empty: ${DEFAULT_HOST} (every interface, the default), 127.0.0.1 (this machine only) or one of its addresses`)
    }
    yield* Effect.flatMap(Effect.promise(() => import("../serve-live.ts")), (live) => live.runServer({ port: listenPort, host }, json))
  }).pipe(reportErrors)).pipe(Command.withDescription("Run the HTTP API server (migrates the database first)"), Command.withExamples([{ command: "mes serve", description: "on the embedded database, port 8787" }, { command: "DATABASE_URL=postgres://mes@db/mes mes serve --port 8080 --json", description: "on PostgreSQL; the listening address as JSON" }]))
