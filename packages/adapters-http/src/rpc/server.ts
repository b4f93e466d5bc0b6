// The RPC group's server (issue 13 item 2b): each call authenticated with an API key (MesRpcAuth), run as the
// key's tenant by the same domain services the REST handlers use; each domain error becomes its tagged schema
// twin (rpc/errors.ts: same tag, plus the REST API's code, status and details). Served at /functions/v1/rpc
// (JSON over HTTP POST) by `mes serve`. A call the database cannot serve now, or one past MES_REQUEST_TIMEOUT, fails
// with ServiceUnavailable, as REST answers 503 (unavailable.ts), not with a defect; any other defect is logged and
// fails with InternalError, as REST answers 500, without the defect's text. A body REST would refuse before anything
// else (too large, not JSON, nested too deep) is refused the same way, with REST's 413 or 400 envelope. A payload of
// the wrong shape is decoded here, in the call (group.ts `Payloads`), and fails with BadRequest, not as a defect.
import * as Cause from "effect/Cause"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import * as Layer from "effect/Layer"
import { RpcSerialization, RpcServer } from "effect/rpc"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { BadRequest, CurrentTenant, type DomainError, encodeJson, isUuid, Issues, Jobs, Operations, RateLimits, Tenants, TimeEntries } from "@mes/domain"
import { credentialsOf } from "../auth.ts"
import { fromDomainError } from "../errors.ts"
import { answerUnavailable } from "../unavailable.ts"
import { fail, readJsonBody } from "../server.ts"
import { fromEnvelope, InternalError, MesRpcAuth, MesRpcs, Payloads, ServiceUnavailable, Unauthorized } from "./group.ts"

/** The domain error as the REST API states it (one mapping, errors.ts), tagged like the domain's. */
const toRpcError = (e: DomainError) => fromEnvelope(fromDomainError(e).error)

/**
 * A value as the REST API would write it (JSON text built by the database included), as plain data. The value is
 * not read again, so a list page's slabs go back once it is copied (DECISIONS: "A list page's bytes").
 */
const plain = (value: unknown): unknown => JSON.parse(new TextDecoder().decode(encodeJson(value, undefined, true)))

/** Each call: the key's tenant, counted against its plan's daily limit like a REST request (cloud mode). */
const AuthLive = (requestTimeout: Duration.Duration) =>
  Layer.effect(MesRpcAuth, Effect.gen(function*() {
    const tenants = yield* Tenants
    const rateLimits = Option.getOrElse(yield* Effect.serviceOption(RateLimits), () => RateLimits.unlimited)
    const unauthorized = new Unauthorized({ message: "Invalid or missing API key" })
    const internalError = new InternalError({ message: "Internal server error" })
    return MesRpcAuth.of((effect, { headers, rpc }) => {
      const c = credentialsOf(headers as unknown as Readonly<Record<string, string | undefined>>)
      const key = c.bearer ?? c.apiKey
      if (key === undefined) return Effect.fail(unauthorized)
      return tenants.authenticate(key).pipe(
        Effect.mapError(() => unauthorized),
        Effect.tap((k) => rateLimits.admit({ id: k.tenantId, plan: k.plan }).pipe(Effect.mapError(toRpcError))),
        Effect.flatMap((k) => Effect.provideService(effect, CurrentTenant, { id: k.tenantId, plan: k.plan, via: "api_key" })),
        // where REST answers 503, the call (its authentication and its handler) fails with ServiceUnavailable
        (call) =>
          answerUnavailable(call, {
            requestTimeout,
            labels: ["RPC", rpc._tag],
            unavailable: (why) => Effect.fail(new ServiceUnavailable({ message: why.message })),
            // a defect (a bug) is REST's 500: logged here, and the caller learns nothing of it but that it happened
            otherwise: (cause) =>
              cause.reasons.some(Cause.isFailReason)
                ? Effect.failCause(cause)
                : Effect.andThen(Effect.logError("unhandled error", "RPC", rpc._tag, cause), Effect.fail(internalError))
          })
      )
    })
  }))

/** `effect`, once each id given is a UUID (else BadRequest, as REST answers 400 for `?id=`). */
const uuids = <A, R>(ids: Readonly<Record<string, string | undefined>>, effect: Effect.Effect<A, DomainError, R>): Effect.Effect<A, DomainError, R> => {
  const bad = Object.entries(ids).find(([, id]) => id !== undefined && !isUuid(id))
  return bad === undefined ? effect : Effect.fail(new BadRequest({ message: `${bad[0]} must be a UUID` }))
}

/** The call's payload decoded by its schema; a wrong one is BadRequest, naming where it is wrong. */
const decodePayload = <K extends keyof typeof Payloads>(tag: K, payload: unknown): Effect.Effect<(typeof Payloads)[K]["Type"], DomainError> =>
  (Schema.decodeUnknownEffect(Payloads[tag]) as (u: unknown) => Effect.Effect<(typeof Payloads)[K]["Type"], Schema.SchemaError>)(payload).pipe(
    Effect.mapError((e) => new BadRequest({ message: `Invalid ${tag} payload: ${e.message.replace(/\s*\n\s*/g, " ")}` }))
  )

const HandlersLive = MesRpcs.toLayer(Effect.gen(function*() {
  const jobs = yield* Jobs
  const operations = yield* Operations
  const timeEntries = yield* TimeEntries
  const issues = yield* Issues
  /**
   * The handler of `tag`: its payload decoded, then `f`; the answer is the REST `data` as JSON, which the group's
   * success schema checks and encodes.
   */
  const handle = <K extends keyof typeof Payloads, T>(tag: K, f: (p: (typeof Payloads)[K]["Type"]) => Effect.Effect<unknown, DomainError, CurrentTenant>) =>
  (payload: unknown) =>
    Effect.flatMap(decodePayload(tag, payload), f).pipe(Effect.map((a) => plain(a) as T), Effect.mapError(toRpcError))
  return MesRpcs.of({
    CreateJob: handle("CreateJob", ({ job }) => jobs.create(job)),
    GetJob: handle("GetJob", ({ id }) => uuids({ id }, jobs.get(id))),
    ListJobs: handle("ListJobs", ({ query }) =>
      Effect.map(
        jobs.list(Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)]))),
        (page) => ({ jobs: page.rows, pagination: { limit: page.limit, offset: page.offset, total: page.total } })
      )),
    MoveJob: handle("MoveJob", ({ action, id }) =>
      uuids(
        { id },
        Effect.map(jobs.transition(id, action), (r) => ({ job: r.job, operation: r.action, previous_status: r.previous_status, new_status: r.new_status }))
      )),
    MoveOperation: handle("MoveOperation", ({ action, id, user_id }) => uuids({ id, user_id }, operations.transition(id, action, user_id?.toLowerCase()))),
    CreateTimeEntry: handle("CreateTimeEntry", ({ entry }) => timeEntries.create(entry)),
    CreateIssue: handle("CreateIssue", ({ issue }) => issues.create(issue))
  })
}))

const FRAME_TAGS = new Set(["Request", "Ack", "Interrupt", "Ping", "Eof"])

/**
 * The most messages one body carries. The RPC server runs a body's requests at once: one body of 50,000 small
 * requests (5.8 MB, within the body limit) took a server from 86 MB to 1.2 GB. The client sends one request per
 * body; a batching Effect client sets `maxSize` to at most this.
 */
export const MAX_RPC_MESSAGES = 100

/**
 * Why `body` is not what an RPC client sends (one message of the protocol, or an array of them), or undefined when
 * it is: the RPC server would answer such a body with a TypeError of its own (`null`, `headers` missing or not an
 * array of pairs) or a defect frame per element, none of them an answer a caller can act on.
 */
const notRpcMessages = (body: unknown): string | undefined => {
  const messages: ReadonlyArray<unknown> = Array.isArray(body) ? body : [body]
  for (const m of messages) {
    if (typeof m !== "object" || m === null || Array.isArray(m)) return "a message must be an object"
    const { _tag, headers, id, tag } = m as Record<string, unknown>
    if (typeof _tag !== "string" || !FRAME_TAGS.has(_tag)) return `_tag must be one of ${[...FRAME_TAGS].join(", ")}`
    if (_tag !== "Request") continue
    if (typeof id !== "string" && typeof id !== "number") return "a request's id must be a string or a number"
    if (typeof tag !== "string") return "a request's tag must be a string"
    const pair = (h: unknown) => Array.isArray(h) && h.length === 2 && typeof h[0] === "string" && typeof h[1] === "string"
    if (!(Array.isArray(headers) && headers.every(pair))) {
      return "a request's headers must be an array of [name, value] pairs"
    }
  }
  return undefined
}

/** The HTTP handler of the RPC endpoint (to register as a route); needs the domain services. */
export const rpcHttpHandler = (options: { readonly requestTimeout: Duration.Duration; readonly maxBodyBytes: number }) =>
  RpcServer.toHttpEffect(MesRpcs).pipe(
    Effect.provide(Layer.mergeAll(HandlersLive, AuthLive(options.requestTimeout), RpcSerialization.layerJson)),
    // the body is read (and kept for the RPC server) with REST's bounds first, and must be messages of the protocol
    Effect.map((rpc) =>
      Effect.flatMap(Effect.service(HttpServerRequest.HttpServerRequest), (request) =>
        Effect.flatMap(readJsonBody(request, options.maxBodyBytes, options.requestTimeout), (read) => {
          if (HttpServerResponse.isHttpServerResponse(read)) return Effect.succeed(read)
          if (Array.isArray(read.body) && read.body.length > MAX_RPC_MESSAGES) {
            return Effect.succeed(fail(413, "PAYLOAD_TOO_LARGE", `An RPC body holds at most ${MAX_RPC_MESSAGES} messages; this one holds ${read.body.length}`))
          }
          const why = notRpcMessages(read.body)
          return why === undefined ? rpc : Effect.succeed(fail(400, "BAD_REQUEST", `Not an RPC request: ${why}`))
        })))
  )
