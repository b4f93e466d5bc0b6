// The HTTP server: routes every endpoint of the API definition to its handler, with the spec's
// request pipeline: 400 malformed body/query → 401 auth → handler (403/404/409/422) → envelope.
import { createHash } from "node:crypto"
import { IncomingMessage, ServerResponse } from "node:http"
import type { Socket } from "node:net"
import * as Config from "effect/Config"
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import { HttpApiScalar, OpenApi } from "effect/http-api"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import {
  CurrentTenant,
  decodeListQuery,
  durationConfig,
  type DomainError,
  encodeJson,
  EXPORT_ENTITIES,
  integerConfig,
  isUuid,
  jsonText,
  type ListSpec,
  Idempotency,
  type KeptReply,
  MAX_INPUT_DEPTH,
  nestsDeeperThan,
  type Plan,
  PreconditionFailed,
  RateLimits,
  type RateLimitInfo,
  Readiness,
  type ReferenceTable,
  secretConfig,
  Tenants,
  Tx,
  utf8Text
} from "@mes/domain"
import { authenticator, credentialsOf } from "./auth.ts"
import { bodyBuffers } from "./body-buffers.ts"
import { Api, BASE_PATH, endpoints, listSpecs } from "./contract/api.ts"
import { errorEnvelope, fromDomainError } from "./errors.ts"
import { CommitSignal } from "./webhooks/commit-signal.ts"
import { requestServices } from "./request-services.ts"
import { answerUnavailable } from "./unavailable.ts"

export interface ApiRequest {
  readonly query: Readonly<Record<string, string>>
  readonly body: unknown
}

export interface ApiReply {
  readonly status: number
  readonly data: unknown
  /** A response of its own (a download, a stream) instead of `data` in the envelope. */
  readonly response?: HttpServerResponse.HttpServerResponse
  /**
   * What a read's ETag covers when `data` also holds what is made anew on every read (a part image's signed URL),
   * so that If-Match can name it; such a read is never 304 (the copy a client holds has an older URL). Default: `data`.
   */
  readonly version?: unknown
}

/** A resource whose PATCH honours If-Match: its table, and its read of one record (GET ?id=). */
interface Versioned<R> {
  readonly table: ReferenceTable
  readonly read: Handler<R>
}

/** A handler for one endpoint of the definition; runs with the caller's tenant. */
export type Handler<R> = (request: ApiRequest) => Effect.Effect<ApiReply, DomainError, R | CurrentTenant>
export type Handlers<R> = Readonly<Record<string, Handler<R>>>

export const ok = (data: unknown, status = 200): ApiReply => ({ status, data })

/** A handler's answer that is not `data` in the envelope (the export's stream, the reset's own failure envelope). */
export const raw = (response: HttpServerResponse.HttpServerResponse): ApiReply => ({ status: response.status, data: undefined, response })

/**
 * How an endpoint authenticates (spec 5): an API key (default); the monthly task's cron secret or service key
 * (spec 4.13); a signed-in user's session token, admins only (spec 4.11); or either of key and admin session.
 * `accessOf` names the endpoints that do not take an API key alone (the OpenAPI document says the same).
 */
export { type Access, accessOf } from "./contract/openapi.ts"
import { type Access, accessOf } from "./contract/openapi.ts"

export interface ServerOptions {
  /** Largest accepted request body in bytes (413 above it). */
  readonly maxBodyBytes: number
  /** One structured log line per request. */
  readonly logRequests: boolean
  /** No request waits longer for its answer: past it, 503 SERVICE_UNAVAILABLE (MES_REQUEST_TIMEOUT). */
  readonly requestTimeout: Duration.Duration
  /** On SIGTERM, in-flight requests get this long to finish before they are cut (MES_SHUTDOWN_TIMEOUT). */
  readonly shutdownTimeout: Duration.Duration
  /** `x-cron-secret` of the monthly reset task (CRON_SECRET); unset: only the service key works. */
  readonly cronSecret: string | undefined
  /** `Authorization: Bearer` of service-level callers such as the monthly reset task (SERVICE_ROLE_KEY). */
  readonly serviceRoleKey: string | undefined
  /** HS256 secret of user session tokens (MES_JWT_SECRET); unset: no session token is valid. */
  readonly jwtSecret: string | undefined
}

/** MES_REQUEST_TIMEOUT when unset. */
export const DEFAULT_REQUEST_TIMEOUT = Duration.seconds(30)

export const ServerOptionsConfig = Config.all({
  maxBodyBytes: integerConfig("MES_MAX_BODY_BYTES", 10 * 1024 * 1024, { min: 1 }),
  logRequests: Config.Boolean("MES_LOG_REQUESTS").pipe(Config.withDefault(false)),
  requestTimeout: durationConfig("MES_REQUEST_TIMEOUT", DEFAULT_REQUEST_TIMEOUT, { positive: true }),
  shutdownTimeout: durationConfig("MES_SHUTDOWN_TIMEOUT", Duration.seconds(10)),
  cronSecret: secretConfig("CRON_SECRET"),
  serviceRoleKey: secretConfig("SERVICE_ROLE_KEY"),
  jwtSecret: secretConfig("MES_JWT_SECRET", { hmacKey: true })
})

/** Seconds a client should wait before it retries a 503 (`Retry-After`). */
export const RETRY_AFTER_SECONDS = 5

const CORS_HEADERS = {
  "access-control-allow-origin": "*",
  "access-control-allow-headers": "authorization, x-client-info, apikey, content-type, x-api-key, idempotency-key, if-match, x-cron-secret",
  "access-control-expose-headers":
    "etag, idempotent-replayed, retry-after, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset, ratelimit, ratelimit-policy, content-disposition",
  "access-control-allow-methods": "GET, POST, PUT, PATCH, DELETE, OPTIONS",
  "access-control-max-age": "86400"
}

const bytes = (status: number, body: Uint8Array, headers: Record<string, string> = {}) =>
  HttpServerResponse.uint8Array(body, { status, contentType: "application/json", headers: { ...CORS_HEADERS, ...headers } })

// JSON built by the database (JsonText) is copied into the body as is, never parsed here
const json = (status: number, body: unknown, headers: Record<string, string> = {}) => bytes(status, encodeJson(body), headers)

/** Idempotency-Key: visible ASCII, at most 255 characters (a UUID is the usual choice). */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/

/**
 * The bytes of a success answer (`data` built by the database is copied in, never parsed). `consume`: `data` is
 * not read again, so the memory its database JSON was lent in goes back (a list page's slabs).
 */
const successBytes = (data: unknown, allocate?: (size: number) => Uint8Array, consume = false) =>
  encodeJson({ success: true, data }, allocate, consume)

/** Node's response to `request`, or undefined when the request did not come through Node's server (a web Request). */
const nodeResponseOf = (request: HttpServerRequest.HttpServerRequest) => {
  const response = NodeHttpServerRequest.toServerResponse(request) as ServerResponse | undefined
  return response instanceof ServerResponse ? response : undefined
}

/** A strong validator of one record's representation: the hash of the bytes a read of it answers. */
const etagOf = (body: Uint8Array) => `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`

/**
 * Whether an If-Match or If-None-Match header names `etag`: `*` or a list of entity tags (RFC 9110 13.1), compared
 * strongly for If-Match (a weak tag never matches) and weakly for If-None-Match (`W/` ignored).
 */
const namesTag = (header: string, etag: string, comparison: "strong" | "weak") =>
  header.split(",").map((t) => t.trim()).some((t) => t === "*" || (comparison === "weak" ? t.replace(/^W\//, "") : t) === etag)

/**
 * The table of each group's records, for the If-Match of its PATCH (locked, then read again with its GET ?id=):
 * every exported entity's, and the others. Every group with a PATCH must be named here, else the server does not
 * start (`routes`), so no PATCH answers an ETag and ignores If-Match.
 */
const versionedTables: Readonly<Record<string, ReferenceTable>> = {
  ...Object.fromEntries(
    Object.entries(EXPORT_ENTITIES).map(([entity, table]) => [entity.replace(/_(\w)/g, (_, c: string) => c.toUpperCase()), table])
  ),
  scrapReasons: "scrap_reasons",
  quantities: "operation_quantities",
  assignments: "assignments",
  templates: "substep_templates",
  templateItems: "substep_template_items",
  downtime: "downtime",
  partImages: "part_images"
}

/** What makes two requests "the same" for an Idempotency-Key: method, path with query, and body. */
const fingerprintOf = (method: string, url: string, body: string) =>
  createHash("sha256").update(`${method} ${url}\n`).update(body).digest("base64url")

/** An error answer in the spec's envelope. */
export const fail = (status: number, code: string, message: string, headers?: Record<string, string>) =>
  json(status, errorEnvelope(status, code, message), headers)

const unavailable = (message: string) =>
  fail(503, "SERVICE_UNAVAILABLE", message, { "retry-after": String(RETRY_AFTER_SECONDS) })

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const
type Method = (typeof METHODS)[number]

/**
 * `path` answered by `handlers` for their methods and 405 METHOD_NOT_ALLOWED (spec 7.2, with Allow) for every
 * other: every path the server knows refuses a method it does not serve, never 404.
 */
export const addPath = <E, R>(
  router: HttpRouter.HttpRouter,
  path: `/${string}`,
  handlers: Partial<Record<Method, Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>>>
): Effect.Effect<void, never, HttpRouter.Request.From<"Requires", Exclude<R, HttpRouter.Provided>> | HttpRouter.Request.From<"Error", E>> => {
  const allow = [...Object.keys(handlers), "OPTIONS"].join(", ")
  return Effect.forEach(METHODS, (method) =>
    router.add(method, path, handlers[method] ?? Effect.succeed(
      fail(405, "METHOD_NOT_ALLOWED", `Method ${method} is not allowed; this endpoint supports ${allow}`, { allow })
    )), { discard: true })
}

/**
 * A route answered by the API's rules for what fails it (`answerAsTheApi`), and the time those rules give a request
 * (`requestTimeout`, also how long a route waits for the next byte of a body, `readJsonBody`).
 */
export type AnswerAsTheApi = (<E, R>(
  route: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, R | HttpServerRequest.HttpServerRequest>) & {
  readonly requestTimeout: Duration.Duration
}

/**
 * The API's rules for what fails a request, for every route (the API's own, and one mounted beside them such as
 * the MCP endpoint): past `requestTimeout` it is interrupted and answered 503 SERVICE_UNAVAILABLE with Retry-After,
 * and so is a request the database cannot serve now (`databaseUnavailable`); any other failure or defect is logged
 * and answered 500 INTERNAL_ERROR in the envelope.
 */
const answeredAsTheApi = <E, R>(
  route: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  requestTimeout: Duration.Duration,
  /** The request as its log lines name it. */
  request: { readonly method: string; readonly url: string }
) =>
  answerUnavailable(route, {
    requestTimeout,
    labels: [request.method, request.url],
    unavailable: (why) => Effect.succeed(unavailable(why.message)),
    otherwise: (cause) =>
      Effect.logError("unhandled error", request.method, request.url, cause).pipe(
        Effect.as(fail(500, "INTERNAL_ERROR", "Internal server error"))
      )
  })

const SIGNATURE_PARAMETER = /([?&]signature=)[^&]*/

/**
 * `answeredAsTheApi` for a route of its own, with `requestTimeout` (MES_REQUEST_TIMEOUT's default if not given). Its
 * URL is logged without a `signature` (a signed storage URL's would let a reader of the log use it); the API's own
 * routes carry none, so their URLs are not rewritten.
 */
export const answerAsTheApi = (requestTimeout: Duration.Duration = DEFAULT_REQUEST_TIMEOUT): AnswerAsTheApi => {
  const answer = <E, R>(route: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
    Effect.flatMap(Effect.service(HttpServerRequest.HttpServerRequest), (request) =>
      answeredAsTheApi(route, requestTimeout, { method: request.method, url: request.url.replace(SIGNATURE_PARAMETER, "$1redacted") }))
  return Object.assign(answer, { requestTimeout })
}

/** U+FFFD, which decoding puts in place of escapes that are not UTF-8, and its own escapes (a client's to send). */
const REPLACEMENT = "\uFFFD"
const SPELT_REPLACEMENT = /%EF%BF%BD/i

/**
 * The query's parameters; the first one given more than once (`?id=A&id=B`): no parameter of the API takes
 * several values, and taking one of them silently would read, change or delete another record than meant; and
 * the first one whose percent-escapes are not UTF-8 (`?customer=M%FCller`, an ERP's Windows-1252), which the
 * URL's rules decode to U+FFFD and which would filter by text nobody sent.
 */
const queryOf = (url: string): { readonly query: Record<string, string>; readonly repeated?: string; readonly notUtf8?: string } => {
  const i = url.indexOf("?")
  const query: Record<string, string> = {}
  if (i === -1) return { query }
  const raw = url.slice(i + 1)
  for (const [k, v] of new URLSearchParams(raw)) {
    if (Object.hasOwn(query, k)) return { query, repeated: k }
    query[k] = v
  }
  const replaced = (pairs: Iterable<[string, string]>) => {
    for (const [k, v] of pairs) if (k.includes(REPLACEMENT) || v.includes(REPLACEMENT)) return k
    return undefined
  }
  if (replaced(Object.entries(query)) === undefined) return { query }
  // rare, so only then is each pair decoded again: U+FFFD sent as its escapes is kept, one the decoding made is refused
  for (const pair of raw.split("&")) {
    const name = SPELT_REPLACEMENT.test(pair) ? undefined : replaced(new URLSearchParams(pair))
    if (name !== undefined) return { query, notUtf8: name }
  }
  return { query }
}

/** spec 8 (cloud): the plan's daily limit on every response, as X-RateLimit-* and the IETF RateLimit fields. */
const limitHeaders = (l: RateLimitInfo): Record<string, string> => ({
  "x-ratelimit-limit": String(l.limit),
  "x-ratelimit-remaining": String(l.remaining),
  "x-ratelimit-reset": String(Math.floor(Date.parse(l.resetAt) / 1000)),
  "ratelimit-policy": `"daily";q=${l.limit};w=86400`,
  "ratelimit": `"daily";r=${l.remaining};t=${l.retryAfter}`
})

/** The credential of spec 5.2: `Authorization: Bearer <key>` or `X-API-Key: <key>`. */
export const credentialOf = (headers: Readonly<Record<string, string | undefined>>): string | undefined => {
  const c = credentialsOf(headers)
  return c.bearer ?? c.apiKey
}

/**
 * Succeeds once `socket` has read nothing for `quiet` (its byte count, checked four times in that span and at least
 * once a second; Node's HTTP parser reads the socket's handle itself, so the socket emits no data events).
 */
const quietFor = (socket: Socket, quiet: Duration.Duration) =>
  Effect.callback<void>((resume) => {
    const quietMs = Duration.toMillis(quiet)
    let bytes = socket.bytesRead
    let since = Date.now()
    const check = setInterval(() => {
      if (socket.bytesRead !== bytes) {
        bytes = socket.bytesRead
        since = Date.now()
      } else if (Date.now() - since >= quietMs) {
        clearInterval(check)
        resume(Effect.void)
      }
    }, Math.min(1_000, Math.max(10, quietMs / 4)))
    return Effect.sync(() => clearInterval(check))
  })

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)/i
/** what a client may name UTF-8 (or ASCII, a subset of it) */
const UTF8_NAMES = new Set(["utf-8", "utf8", "us-ascii", "ascii"])

/**
 * A request's JSON body (`body` undefined when empty) and its text, or the answer to one the API refuses before
 * anything else, authentication included: larger than `maxBodyBytes` (413), no byte of it for `timeout` while it
 * is still due (408, and the connection is closed), compressed or declared in a charset other than UTF-8 (415),
 * not UTF-8 or not JSON (400; spec 7.4) or nested deeper than MAX_INPUT_DEPTH (400). The request keeps its body: a
 * handler that reads it again gets the same bytes.
 */
export const readJsonBody = (request: HttpServerRequest.HttpServerRequest, maxBodyBytes: number, timeout: Duration.Duration = DEFAULT_REQUEST_TIMEOUT) =>
  Effect.gen(function*() {
    const tooLarge = () => fail(413, "PAYLOAD_TOO_LARGE", `Request body exceeds ${maxBodyBytes} bytes`)
    const length = Number(request.headers["content-length"] ?? "0")
    if (length > maxBodyBytes) return tooLarge()
    // a compressed or non-UTF-8 body is refused as such, not parsed as garbage or stored with U+FFFD in place of
    // what its bytes meant (an ERP's Windows-1252 "Müller")
    const encoding = request.headers["content-encoding"]?.trim().toLowerCase()
    if (encoding !== undefined && encoding !== "" && encoding !== "identity") {
      return fail(415, "UNSUPPORTED_MEDIA_TYPE", `Content-Encoding ${encoding} is not supported: send the body uncompressed`)
    }
    const charset = CHARSET.exec(request.headers["content-type"] ?? "")?.[1]?.toLowerCase()
    if (charset !== undefined && !UTF8_NAMES.has(charset)) {
      return fail(415, "UNSUPPORTED_MEDIA_TYPE", `Request bodies are JSON in UTF-8, not ${charset}`)
    }
    const readAll = request.arrayBuffer.pipe(
      Effect.provideService(HttpIncomingMessage.MaxBodySize, maxBodyBytes as any),
      Effect.map(Option.some),
      Effect.catch(() => Effect.succeed(Option.none<ArrayBuffer>()))
    )
    // A body still arriving is read for as long as its bytes keep coming, and given up once none came for `timeout`:
    // a client that declared more than it sends held its connection and this fiber until Node's own limit, 5
    // minutes. The read goes on in a fiber of its own, which giving up leaves alone: interrupting it destroyed the
    // socket, and the 408 with it; it ends when the connection closes after the answer. A body received whole
    // (nearly every one by now) is read without that.
    const source = NodeHttpServerRequest.toIncomingMessage(request) as IncomingMessage | undefined
    const read = !(source instanceof IncomingMessage) || source.complete
      ? yield* Effect.map(readAll, Option.some)
      : yield* Effect.flatMap(Effect.forkDetach(readAll), (fiber) =>
        Effect.raceFirst(Effect.map(Fiber.join(fiber), Option.some), Effect.as(quietFor(source.socket, timeout), Option.none())))
    if (Option.isNone(read)) {
      return HttpServerResponse.setHeader(
        fail(408, "REQUEST_TIMEOUT", `No byte of the request body came for ${Duration.format(timeout)}`),
        "connection",
        "close"
      )
    }
    const bytes = read.value
    if (Option.isNone(bytes)) return tooLarge()
    // a byte order mark is dropped, as JSON's RFC allows a parser to
    const text = utf8Text(bytes.value)
    if (text === undefined) return fail(400, "BAD_REQUEST", "Request body is not valid UTF-8: JSON is sent in UTF-8")
    if (text.trim() === "") return { body: undefined as unknown, text: "" }
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      return fail(400, "BAD_REQUEST", "Request body is not valid JSON")
    }
    return nestsDeeperThan(body, MAX_INPUT_DEPTH)
      ? fail(400, "BAD_REQUEST", `Request body nests arrays and objects deeper than ${MAX_INPUT_DEPTH} levels`)
      : { body, text }
  })

/** Routes of the API definition plus OpenAPI, the docs page, CORS preflight, 404 and 405. */
export const routes = <R>(
  handlers: Handlers<R>,
  options: ServerOptions,
  /** Routes outside the API definition that answer on their own (the signed storage URLs), by path pattern. */
  raw: ReadonlyArray<{
    readonly path: `/${string}`
    /** Default: every method (the route answers the others itself). */
    readonly methods?: ReadonlyArray<Method>
    readonly handler: Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest | Scope.Scope>
  }> = []
) =>
  HttpRouter.use(Effect.fnUntraced(function*(router) {
    const authenticate = authenticator(yield* Tenants, options)
    const rateLimits = Option.getOrElse(yield* Effect.serviceOption(RateLimits), () => RateLimits.unlimited)
    const commitSignal = yield* Effect.serviceOption(CommitSignal)
    const idempotency = yield* Effect.serviceOption(Idempotency)
    // CurrentTenant is provided per request after authentication, not by the layer
    const withServices = requestServices((yield* Effect.context<Exclude<R, CurrentTenant>>()) as Context.Context<R>)
    const all = endpoints()
    const missing = all.filter((e) => handlers[`${e.group}.${e.name}`] === undefined)
    if (missing.length > 0) {
      return yield* Effect.die(new Error(`no handler for ${missing.map((e) => `${e.group}.${e.name}`).join(", ")}`))
    }
    const unversioned = all.filter((e) => e.method === "PATCH" && (versionedTables[e.group] === undefined || handlers[`${e.group}.list`] === undefined))
    if (unversioned.length > 0) {
      return yield* Effect.die(new Error(`no table or read for the If-Match of ${unversioned.map((e) => `${e.group}.${e.name}`).join(", ")}`))
    }

    /** spec 7.4: a malformed query is 400 before authentication; range and enum checks stay 422 after it. */
    const malformedQuery = (query: Record<string, string>, spec: ListSpec<any, string> | undefined) => {
      if (query.id !== undefined && query.id !== "") {
        return isUuid(query.id) ? Effect.succeed(undefined) : Effect.succeed("query parameter id must be a UUID")
      }
      if (spec === undefined) return Effect.succeed(undefined)
      return decodeListQuery(spec, query).pipe(
        Effect.as(undefined),
        Effect.catchTag("BadRequest", (e) => Effect.succeed(e.message)),
        Effect.catchTag("ValidationFailed", () => Effect.succeed(undefined))
      )
    }

    const tx = yield* Effect.serviceOption(Tx)
    const buffers = bodyBuffers()

    /** PATCH with If-Match: lock the record, compare its current ETag, then write, in one transaction. */
    const guarded = (write: Effect.Effect<ApiReply, DomainError, R | CurrentTenant>, id: string, ifMatch: string, versioned: Versioned<R>) =>
      Option.isNone(tx) ? write : tx.value.transaction(Effect.gen(function*() {
        yield* tx.value.lockRows(versioned.table, [id])
        const current = yield* versioned.read({ query: { id }, body: undefined })
        if (!namesTag(ifMatch, etagOf(successBytes(current.version ?? current.data)), "strong")) {
          return yield* new PreconditionFailed({ message: "The record changed since the version named in If-Match; read it again (GET ?id=) for its current ETag" })
        }
        return yield* write
      }))

    const serve = (
      handler: Handler<R>,
      access: Access,
      withBody: boolean,
      spec: ListSpec<any, string> | undefined,
      versioned?: Versioned<R>,
      /** A write here may change what a tenant's webhooks subscribe to (the dispatcher asks again). */
      webhooksChanged = false
    ) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const nodeResponse = nodeResponseOf(request)
        const started = options.logRequests ? Date.now() : 0
        let body: unknown = undefined
        let bodyText = ""
        if (withBody) {
          const read = yield* readJsonBody(request, options.maxBodyBytes, options.requestTimeout)
          if (HttpServerResponse.isHttpServerResponse(read)) return read
          body = read.body
          bodyText = read.text
        }
        const { query, repeated, notUtf8 } = queryOf(request.url)
        if (repeated !== undefined) return fail(400, "BAD_REQUEST", `query parameter ${repeated} is given more than once`)
        if (notUtf8 !== undefined) return fail(400, "BAD_REQUEST", `query parameter ${notUtf8} is not UTF-8 once percent-decoded: percent-encode its UTF-8 bytes`)
        const malformed = yield* malformedQuery(query, spec)
        if (malformed !== undefined) return fail(400, "BAD_REQUEST", malformed)
        const idempotencyKey = withBody ? request.headers["idempotency-key"] : undefined
        if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
          return fail(400, "BAD_REQUEST", "Idempotency-Key must be 1 to 255 visible ASCII characters")
        }
        let limit: RateLimitInfo | undefined
        let tenantId = ""
        let version: unknown = undefined
        const response = yield* authenticate(access, credentialsOf(request.headers)).pipe(
          Effect.flatMap((caller) => Effect.gen(function*() {
            tenantId = caller.id
            if (caller.via !== "service") limit = yield* rateLimits.admit({ id: caller.id, plan: caller.plan as Plan })
            const ifMatch = request.headers["if-match"]
            const run = versioned !== undefined && ifMatch !== undefined && query.id !== undefined
              ? guarded(handler({ query, body }), query.id, ifMatch, versioned)
              : handler({ query, body })
            const write = Effect.map(run, (reply): KeptReply | ApiReply => {
              version = reply.version
              return reply.response !== undefined ? reply : { status: reply.status, body: successBytes(reply.data, nodeResponse && buffers.take, true) }
            })
            // keys are a tenant's: a service-level caller's (the monthly task) is ignored, as there is no tenant to keep it for
            const once = idempotencyKey === undefined || caller.via === "service" || Option.isNone(idempotency)
              ? Effect.map(write, (reply) => ({ replayed: false, reply }))
              : idempotency.value.once(caller.id, idempotencyKey, fingerprintOf(request.method, request.url, bodyText), write as Effect.Effect<KeptReply, DomainError, R | CurrentTenant>)
            return yield* once.pipe(Effect.provideService(CurrentTenant, caller))
          })),
          Effect.tap(({ replayed }) =>
            !replayed && (withBody || request.method === "DELETE") && Option.isSome(commitSignal)
              ? commitSignal.value.notify({ tenantId, webhooksChanged })
              : Effect.void
          ),
          Effect.map(({ replayed, reply }) => {
            if ("response" in reply && reply.response !== undefined) return reply.response
            const body = (reply as KeptReply).body
            if (nodeResponse !== undefined) buffers.giveBackAfter(nodeResponse, body)
            // a read of one record carries its version for a later If-Match, and answers 304 without the record
            // when If-None-Match names that version (a client's cached copy is current)
            const etag = request.method === "GET" && query.id !== undefined && reply.status === 200
              ? etagOf(version === undefined ? body : successBytes(version))
              : undefined
            const cached = request.headers["if-none-match"]
            if (etag !== undefined && version === undefined && cached !== undefined && namesTag(cached, etag, "weak")) {
              return HttpServerResponse.empty({ status: 304, headers: { ...CORS_HEADERS, etag } })
            }
            return bytes(reply.status, body, {
              ...(replayed ? { "idempotent-replayed": "true" } : {}),
              ...(etag !== undefined ? { etag } : {})
            })
          }),
          Effect.catch((e: DomainError) => {
            const envelope = fromDomainError(e)
            if (e._tag === "RateLimited") limit = e.info
            return Effect.succeed(json(envelope.error.statusCode, envelope, e._tag === "RateLimited" ? { "retry-after": String(e.info.retryAfter) } : {}))
          }),
          (answering) => answeredAsTheApi(answering, options.requestTimeout, request),
          withServices
        )
        const answered = limit === undefined ? response : HttpServerResponse.setHeaders(response, limitHeaders(limit))
        if (options.logRequests) {
          yield* Effect.logInfo("request").pipe(Effect.annotateLogs({
            method: request.method,
            url: request.url,
            status: response.status,
            ms: Date.now() - started
          }))
        }
        return answered
      })

    const byPath = new Map<`/${string}`, Partial<Record<Method, ReturnType<typeof serve>>>>()
    for (const e of all) {
      const withBody = e.method === "POST" || e.method === "PUT" || e.method === "PATCH"
      const table = versionedTables[e.group]
      const read = handlers[`${e.group}.list`]
      const versioned = e.method === "PATCH" && table !== undefined && read !== undefined ? { table, read } : undefined
      const path = e.path as `/${string}`
      byPath.set(path, {
        ...byPath.get(path),
        [e.method]: serve(handlers[`${e.group}.${e.name}`]!, accessOf[`${e.group}.${e.name}`] ?? "key", withBody, listSpecs[`${e.group}.${e.name}`], versioned, e.group === "webhooks")
      })
    }
    for (const [path, methods] of byPath) yield* addPath(router, path, methods)
    // built on first request: a server that only answers API calls never pays for them
    let openapi: string | undefined
    yield* addPath(router, `${BASE_PATH}/openapi.json`, { GET: Effect.sync(() => json(200, jsonText(openapi ??= JSON.stringify(OpenApi.fromApi(Api))))) })
    yield* addPath(router, `${BASE_PATH}/docs`, {
      GET: Effect.promise(docsPage).pipe(Effect.map((html) => HttpServerResponse.text(html, { contentType: "text/html; charset=utf-8" })))
    })
    // live: the process answers (never touches the database)
    yield* addPath(router, `${BASE_PATH}/health`, { GET: Effect.succeed(json(200, { success: true, data: { status: "ok" } })) })
    // ready: the database answers and holds every migration of this build
    const readiness = yield* Effect.serviceOption(Readiness)
    yield* addPath(router, `${BASE_PATH}/ready`, {
      GET: Option.isNone(readiness)
        ? Effect.succeed(json(200, { success: true, data: { status: "ready" } }))
        : Effect.map(readiness.value.check, (report) =>
          report.database !== "ok"
            ? unavailable("Not ready: the database is unreachable")
            : report.migrations !== "ok"
            ? unavailable("Not ready: database migrations are pending (run `mes migrate`)")
            : json(200, { success: true, data: { status: "ready", ...report } }))
    })
    for (const r of raw) {
      const methods: Partial<Record<Method, typeof r.handler>> = {}
      for (const method of r.methods ?? METHODS) methods[method] = r.handler
      yield* addPath(router, r.path, methods)
    }
    yield* router.add("OPTIONS", "*", Effect.succeed(json(200, { success: true, data: {} })))
    const notFound = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      return fail(404, "NOT_FOUND", `No endpoint ${request.method} ${request.url.split("?")[0]}`)
    })
    for (const method of METHODS) yield* router.add(method, "*", notFound)
  }))

let docsHtml: Promise<string> | undefined

/**
 * The offline API reference page (Scalar, served inline with no CDN), rendered by Effect's
 * HttpApiScalar once, on the first request: its bundle is 3 MB of JavaScript.
 */
const docsPage = () =>
  docsHtml ??= (async () => {
    const { dispose, handler } = HttpRouter.toWebHandler(
      HttpApiScalar.layer(Api, { path: "/docs", scalar: { withDefaultFonts: false } }).pipe(Layer.provide(HttpServer.layerServices)),
      { disableLogger: true }
    )
    try {
      return await (await handler(new Request("http://docs/docs"))).text()
    } finally {
      await dispose()
    }
  })().catch((cause: unknown) => {
    // not kept: the next request tries again rather than failing until the server restarts
    docsHtml = undefined
    throw cause
  })
