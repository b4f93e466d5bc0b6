// Output and error reporting shared by the commands: one JSON object (--json) or a readable line
// on stdout; every failure becomes a CliError.UserError, which Command.run prints on stderr and
// turns into exit code 1.
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { CliError, Flag } from "effect/cli"
import { decodeInput } from "@mes/domain"

export const jsonFlag = Flag.Boolean("json").pipe(
  Flag.withDescription("Print one JSON object on stdout instead of a readable line"),
  Flag.withDefault(false)
)

/** Prints `value` as JSON with --json, else the readable text. */
export const output = (json: boolean, value: object, text: string) => Console.log(json ? JSON.stringify(value) : text)

/**
 * A setting Effect's Config refused, said as the CLI's own settings say it: `MES_DEPLOYMENT: expected one of
 * self-hosted, cloud; got 'x'` for its `Expected "self-hosted" | "cloud" at ["MES_DEPLOYMENT"]`.
 */
const configMessage = (message: string): string => {
  const m = /^Expected (.+) at \["([A-Za-z0-9_]+)"\]$/.exec(message)
  if (m === null) return `Invalid environment: ${message}`
  const [, expected, name] = m as unknown as [string, string, string]
  const choices = expected.split(" | ")
  const wanted = choices.every((c) => /^"[^"]*"$/.test(c)) ? `one of ${choices.map((c) => c.slice(1, -1)).join(", ")}` : expected.replace(/^an? string representing /, "")
  return `${name}: expected ${wanted}; got '${process.env[name] ?? ""}'`
}

export const userError = (message: string, cause?: unknown) =>
  new CliError.UserError({ cause: cause ?? message, userMessage: message })

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Fails with a readable error unless `value` is a UUID (ids are UUIDs; the database would reject others). */
export const requireUuid = (flag: string, value: string) =>
  UUID.test(value) ? Effect.succeed(value.toLowerCase()) : Effect.fail(userError(`--${flag} must be a UUID, got '${value}'`))

const GENERIC = new Set(["", "An error has occurred", "An error occurred", "Query failed"])

/**
 * The most characters of one message `describe` repeats: some quote the input (csv-parse's "value is …" quoted a
 * 3 MB field whole).
 */
const MAX_MESSAGE_CHARS = 1000

const bounded = (message: string) =>
  message.length <= MAX_MESSAGE_CHARS ? message : `${message.slice(0, MAX_MESSAGE_CHARS)}… (${message.length} characters)`

/** A one-line description of any failure: the message, followed by the messages of its causes. */
export const describe = (u: unknown): string => {
  const parts: Array<string> = []
  const seen = new Set<unknown>()
  let current: unknown = u
  while (current !== undefined && current !== null && !seen.has(current) && parts.length < 5) {
    seen.add(current)
    if (typeof current === "string") {
      parts.push(current)
      break
    }
    if (typeof current !== "object") {
      parts.push(String(current))
      break
    }
    const o = current as { message?: unknown; _tag?: unknown; reason?: unknown; cause?: unknown }
    if (o._tag === "ConfigError") {
      const cause = o.cause as { message?: unknown } | undefined
      parts.push(configMessage(String(cause?.message ?? o.message).replace(/\s+/g, " ")))
      break
    }
    // the driver names its class ("PgConnection: Failed to connect"); a cause the text so far already ends with is
    // not said twice ('Unsupported connection URL protocol: "mysql:": Unsupported connection URL protocol: …')
    const message = typeof o.message === "string" ? o.message.replace(/^PgConnection: /, "") : ""
    if (!GENERIC.has(message) && !parts.some((p) => p.endsWith(message))) parts.push(message)
    else if (parts.length === 0 && typeof o._tag === "string") parts.push(o._tag)
    // SqlError keeps the driver's error under reason.cause
    const reason = o.reason as { cause?: unknown } | undefined
    current = reason !== undefined && typeof reason === "object" && reason.cause !== undefined ? reason.cause : o.cause
  }
  const unique = parts.filter((p, i) => p !== "" && parts.indexOf(p) === i)
  return unique.length === 0 ? "unexpected error" : unique.map(bounded).join(": ")
}

const DATABASE_REFUSALS = new Set(["ConnectionError", "AuthenticationError", "AuthorizationError"])

/**
 * DATABASE_URL as the message names it, when `error` is the database refusing the connection (unreachable, no
 * such database or role, TLS refused; any failure while connecting): the setting to fix, its password hidden.
 */
const databaseOf = (error: unknown): string | undefined => {
  const reason = (error as { reason?: { _tag?: unknown; operation?: unknown } } | undefined)?.reason
  const url = process.env.DATABASE_URL
  const refused = typeof reason?._tag === "string" && (DATABASE_REFUSALS.has(reason._tag) || reason.operation === "connect")
  if (url === undefined || url === "" || !refused) return undefined
  const shown = withoutPassword(url)
  return shown === undefined ? "DATABASE_URL" : `DATABASE_URL ${shown}`
}

/** A database URL as it may be shown or written down: its password `***`; undefined when it is not a URL. */
export const withoutPassword = (url: string): string | undefined => {
  if (!URL.canParse(url)) return undefined
  const shown = new URL(url)
  if (shown.password !== "") shown.password = "***"
  if (shown.searchParams.has("password")) shown.searchParams.set("password", "***")
  return shown.toString()
}

/**
 * A flag's value checked by the domain's schema of the field it fills, so the CLI takes what the REST API takes:
 * `--name: name must have a length of at most 255` where the REST API answers 422.
 */
export const checkFlag = <S extends Schema.Top & { readonly DecodingServices: never }>(flag: string, field: string, schema: S, value: unknown) =>
  decodeInput(Schema.Struct({ [field]: schema }), field)({ [field]: value }).pipe(
    Effect.mapError((e) => userError(`--${flag}: ${e.details.map((d) => d.message).join("; ")}`))
  )

/** Every failure and defect of a handler as a UserError with a readable message; interruption passes through. */
export const reportErrors = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, CliError.UserError, R> =>
  Effect.catchCause(self, (cause) => {
    if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
    const error = Cause.squash(cause)
    if (error instanceof CliError.UserError) return Effect.fail(error)
    const database = databaseOf(error)
    return Effect.fail(userError(database === undefined ? describe(error) : `${database}: ${describe(error)}`, error))
  })
