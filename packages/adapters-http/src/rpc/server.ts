// The RPC group's server (issue 13 item 2b): each call authenticated with an API key (MesRpcAuth), run as the
// key's tenant by the same domain services the REST handlers use; each domain error becomes its tagged schema
// twin (rpc/errors.ts: same tag, plus the REST API's code, status and details). Served at /functions/v1/rpc
// (JSON over HTTP POST) by `mes serve`. A call the database cannot serve now, or one past MES_REQUEST_TIMEOUT, fails
// with ServiceUnavailable, as REST answers 503 (unavailable.ts), not with a defect.
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { RpcSerialization, RpcServer } from "effect/rpc"
import * as Option from "effect/Option"
import { BadRequest, CurrentTenant, type DomainError, encodeJson, isUuid, Issues, Jobs, Operations, RateLimits, Tenants, TimeEntries } from "@mes/domain"
import { credentialsOf } from "../auth.ts"
import { fromDomainError } from "../errors.ts"
import { answerUnavailable } from "../unavailable.ts"
import { fromEnvelope, MesRpcAuth, MesRpcs, ServiceUnavailable, Unauthorized } from "./group.ts"

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
            otherwise: Effect.failCause
          })
      )
    })
  }))

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
    GetJob: ({ id }) => run(jobs.get(id)),
    ListJobs: ({ query }) =>
      run(Effect.map(
        jobs.list(Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)]))),
        (page) => ({ jobs: page.rows, pagination: { limit: page.limit, offset: page.offset, total: page.total } })
      )),
    MoveJob: ({ action, id }) =>
      run(Effect.map(jobs.transition(id, action), (r) => ({ job: r.job, operation: r.action, previous_status: r.previous_status, new_status: r.new_status }))),
    MoveOperation: ({ action, id, user_id }) =>
      run(user_id !== undefined && !isUuid(user_id)
        ? Effect.fail(new BadRequest({ message: "user_id must be a UUID" }))
        : operations.transition(id, action, user_id?.toLowerCase())),
    CreateTimeEntry: ({ entry }) => run(timeEntries.create(entry)),
    CreateIssue: ({ issue }) => run(issues.create(issue))
  })
}))

/** The HTTP handler of the RPC endpoint (to register as a route); needs the domain services. */
export const rpcHttpHandler = (options: { readonly requestTimeout: Duration.Duration }) =>
  RpcServer.toHttpEffect(MesRpcs).pipe(
    Effect.provide(Layer.mergeAll(HandlersLive, AuthLive(options.requestTimeout), RpcSerialization.layerJson))
  )
