// The RPC group's server (issue 13 item 2b): each call authenticated with an API key (MesRpcAuth), run as the
// key's tenant by the same domain services the REST handlers use; each domain error becomes its tagged schema
// twin (rpc/errors.ts: same tag, plus the REST API's code, status and details). Served at /functions/v1/rpc
// (JSON over HTTP POST) by `mes serve`. A call the database cannot serve now, or one past MES_REQUEST_TIMEOUT, fails
// with ServiceUnavailable, as REST answers 503 (unavailable.ts), not with a defect; any other defect is logged and
// fails with InternalError, as REST answers 500, without the defect's text. A body REST would refuse before anything
// else (too large, not JSON, nested too deep) is refused the same way, with REST's 413 or 400 envelope.
import * as Cause from "effect/Cause"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import * as Layer from "effect/Layer"
import { RpcSerialization, RpcServer } from "effect/rpc"
import * as Option from "effect/Option"
import { BadRequest, CurrentTenant, type DomainError, encodeJson, isUuid, Issues, Jobs, Operations, RateLimits, Tenants, TimeEntries } from "@mes/domain"
import { credentialsOf } from "../auth.ts"
import { fromDomainError } from "../errors.ts"
import { answerUnavailable } from "../unavailable.ts"
import { readJsonBody } from "../server.ts"
import { fromEnvelope, InternalError, MesRpcAuth, MesRpcs, ServiceUnavailable, Unauthorized } from "./group.ts"

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

const HandlersLive = MesRpcs.toLayer(Effect.gen(function*() {
  const jobs = yield* Jobs
  const operations = yield* Operations
  const timeEntries = yield* TimeEntries
  const issues = yield* Issues
  // the answer is the REST `data` as JSON; the group's success schema checks and encodes it
  const run = <T>(effect: Effect.Effect<unknown, DomainError, CurrentTenant>) =>
    effect.pipe(Effect.map((a) => plain(a) as T), Effect.mapError(toRpcError))
  return MesRpcs.of({
    CreateJob: ({ job }) => run(jobs.create(job)),
    GetJob: ({ id }) => run(uuids({ id }, jobs.get(id))),
    ListJobs: ({ query }) =>
      run(Effect.map(
        jobs.list(Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)]))),
        (page) => ({ jobs: page.rows, pagination: { limit: page.limit, offset: page.offset, total: page.total } })
      )),
    MoveJob: ({ action, id }) =>
      run(uuids(
        { id },
        Effect.map(jobs.transition(id, action), (r) => ({ job: r.job, operation: r.action, previous_status: r.previous_status, new_status: r.new_status }))
      )),
    MoveOperation: ({ action, id, user_id }) => run(uuids({ id, user_id }, operations.transition(id, action, user_id?.toLowerCase()))),
    CreateTimeEntry: ({ entry }) => run(timeEntries.create(entry)),
    CreateIssue: ({ issue }) => run(issues.create(issue))
  })
}))

/** The HTTP handler of the RPC endpoint (to register as a route); needs the domain services. */
export const rpcHttpHandler = (options: { readonly requestTimeout: Duration.Duration; readonly maxBodyBytes: number }) =>
  RpcServer.toHttpEffect(MesRpcs).pipe(
    Effect.provide(Layer.mergeAll(HandlersLive, AuthLive(options.requestTimeout), RpcSerialization.layerJson)),
    // the body is read (and kept for the RPC server) with REST's bounds first
    Effect.map((rpc) =>
      Effect.flatMap(Effect.service(HttpServerRequest.HttpServerRequest), (request) =>
        Effect.flatMap(readJsonBody(request, options.maxBodyBytes), (read) => HttpServerResponse.isHttpServerResponse(read) ? Effect.succeed(read) : rpc)))
  )
