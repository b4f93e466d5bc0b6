// @mes/client: typed clients of mes (issue 13), derived from the API definition (`Api`) and the RPC group (`MesRpcs`):
// - `makeMesClient` / `MesClientLive` for Effect users: HttpApiClient over the definition, each method answering the
//   envelope's `data`, each error answer one tagged error by its code (`NotFound`, `ValidationFailed` with its
//   details, `InvalidStateTransition`, … the same tags as the domain's errors);
// - `createMesClient` for plain TypeScript: the same methods returning Promises, rejecting with `MesApiError`
//   (`code`, `statusCode`, `message`, `details`);
// - `makeMesRpcClient` / `MesRpcClient` for Effect services: the domain's use cases over Effect RPC at
//   /functions/v1/rpc, failing with the same tagged errors.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { FetchHttpClient, HttpClient, HttpClientError, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { type RpcClientError, RpcClient, RpcSerialization } from "effect/rpc"
import type * as Scope from "effect/Scope"
import { Api } from "@mes/adapters-http/contract"
import { type ErrorDetail, fromEnvelope, InternalError, isMesError, type MesError, type MesErrorByCode, MesRpcs } from "@mes/adapters-http/rpc"
import { networkFailure } from "@mes/domain"

// the definition (its envelope error classes included) and the RPC group with its tagged errors
export * from "@mes/adapters-http/contract"
export * from "@mes/adapters-http/rpc"

export interface MesClientOptions {
  /** The server's base URL, e.g. http://127.0.0.1:8787 (a trailing /functions/v1 is accepted). */
  readonly baseUrl: string
  /** An API key of the tenant (svc_live_… or svc_test_…), sent as `Authorization: Bearer`. */
  readonly apiKey: string
}

const origin = (baseUrl: string) => baseUrl.replace(/\/+$/, "").replace(/\/functions\/v1$/, "")

/**
 * A request that got no answer says why: "Transport: connect ECONNREFUSED 127.0.0.1:1 (GET http://…)", where fetch's
 * failure said "Transport error (GET http://…)" and kept the cause two levels down. Still an HttpClientError.
 */
const withNetworkCause = (e: HttpClientError.HttpClientError) => {
  const reason = e.reason
  return reason._tag === "TransportError" && reason.description === undefined && reason.cause !== undefined
    ? new HttpClientError.HttpClientError({
      reason: new HttpClientError.TransportError({ request: reason.request, cause: reason.cause, description: networkFailure(reason.cause) })
    })
    : e
}

/** The HTTP client of both clients (REST and RPC): the API key as `Authorization: Bearer`, and transport errors that say why. */
const authenticated = (apiKey: string) => <E, R>(client: HttpClient.HttpClient.With<E, R>): HttpClient.HttpClient.With<E, R> =>
  client.pipe(
    HttpClient.mapRequest(HttpClientRequest.bearerToken(apiKey)),
    HttpClient.transformResponse(Effect.mapError((e: E) => (HttpClientError.isHttpClientError(e) ? withNetworkCause(e) as E : e)))
  )

/** The client HttpApiClient generates from the definition (envelopes and the definition's error classes). */
type RawClient = HttpApiClient.ForApi<typeof Api>

const rawClient = (o: MesClientOptions): Effect.Effect<RawClient, never, HttpClient.HttpClient> =>
  HttpApiClient.make(Api, { baseUrl: origin(o.baseUrl), transformClient: authenticated(o.apiKey) })

/** The envelope's `data`: what every success answer of the API carries (a download answers as it is). */
type Data<R> = R extends { readonly success: true; readonly data: infer D } ? D : R

/** An error answer of the definition (its envelope class) as its tagged error; other failures stay as they are. */
type Tagged<E> = E extends { readonly success: false; readonly error: { readonly code: infer C } }
  ? C extends keyof MesErrorByCode ? MesErrorByCode[C] : InternalError
  : E

/** The decoded answer: the generated methods can also answer the raw response (`responseMode`), which this client does not offer. */
type Decoded<R> = Exclude<R, HttpClientResponse.HttpClientResponse | readonly [unknown, HttpClientResponse.HttpClientResponse]>

/** The request without `responseMode`. */
type Args<A> = A extends [infer Req] ? [request: Omit<Req, "responseMode">]
  : A extends [(infer Req)?] ? [request?: Omit<Req, "responseMode">]
  : A

/** A client whose methods answer `data` instead of the envelope and fail with tagged errors by code. */
export type MesClient = {
  readonly [G in keyof RawClient]: {
    // the definition's create and sync payloads are typed loosely (Codec<unknown>), which leaves their methods
    // asking for `unknown` services; none is needed at run time
    readonly [E in keyof RawClient[G]]: RawClient[G][E] extends (...args: infer A) => Effect.Effect<infer R, infer Err, infer _Req>
      ? (...args: Args<A>) => Effect.Effect<Data<Decoded<R>>, Tagged<Err>>
      : never
  }
}

interface EnvelopeError {
  readonly code: string
  readonly message: string
  readonly details?: ReadonlyArray<ErrorDetail>
}

/** The `error` of an error envelope carried by a failure (a declared error class, or one the client could not decode). */
const envelopeOf = (e: unknown): EnvelopeError | undefined => {
  if (typeof e !== "object" || e === null) return undefined
  const error = (e as { error?: unknown }).error
  return typeof error === "object" && error !== null && typeof (error as { code?: unknown }).code === "string" &&
      typeof (error as { message?: unknown }).message === "string"
    ? (error as EnvelopeError)
    : undefined
}

const toTagged = (e: unknown): unknown => {
  if (isMesError(e)) return e
  const envelope = envelopeOf(e)
  return envelope === undefined ? e : fromEnvelope(envelope)
}

type AnyMethod = (...args: Array<unknown>) => Effect.Effect<unknown, unknown, unknown>

const mapMethods = <Out>(client: unknown, f: (method: AnyMethod) => (...args: Array<unknown>) => unknown): Out =>
  Object.fromEntries(Object.entries(client as Record<string, Record<string, AnyMethod>>).map(([group, methods]) => [
    group,
    Object.fromEntries(Object.entries(methods).map(([name, method]) => [name, f(method)]))
  ])) as Out

const unwrapData = (r: unknown) =>
  r !== null && typeof r === "object" && (r as { success?: unknown }).success === true && "data" in r ? (r as { data: unknown }).data : r

const unwrap = (raw: RawClient): MesClient =>
  mapMethods<MesClient>(raw, (method) => (...args) => method(...args).pipe(Effect.map(unwrapData), Effect.mapError(toTagged)))

/** The Effect client (needs an HttpClient: `FetchHttpClient.layer` works everywhere fetch does). */
export const makeMesClient = (o: MesClientOptions): Effect.Effect<MesClient, never, HttpClient.HttpClient> => Effect.map(rawClient(o), unwrap)

/** The Effect client with `fetch` as its HTTP client. */
export const MesClientLive = (o: MesClientOptions) => Effect.provide(makeMesClient(o), FetchHttpClient.layer)

/** An error answer of the API, for Promise callers. */
export class MesApiError extends Error {
  /** The envelope's code: NOT_FOUND, VALIDATION_ERROR, INVALID_STATE_TRANSITION, … */
  readonly code: string
  /** The HTTP status. */
  readonly statusCode: number
  /** Spec 7.3 details of a VALIDATION_ERROR. */
  readonly details: ReadonlyArray<ErrorDetail> | undefined
  /** Past the plan's daily limit (RATE_LIMIT_EXCEEDED). */
  readonly rateLimitInfo: { readonly remaining: number; readonly resetAt: string; readonly retryAfter: number } | undefined
  constructor(e: MesError) {
    super(e.message, { cause: e })
    this.name = "MesApiError"
    this.code = e.code
    this.statusCode = e.statusCode
    this.details = e.details
    this.rateLimitInfo = e._tag === "RateLimited" ? e.rateLimitInfo : undefined
  }
}

/** A client whose methods answer Promises of `data` and reject with MesApiError. */
export type MesPromiseClient = {
  readonly [G in keyof MesClient]: {
    readonly [E in keyof MesClient[G]]: MesClient[G][E] extends (...args: infer A) => Effect.Effect<infer R, any, any> ? (...args: A) => Promise<R> : never
  }
}

/** The Promise client: `await client.jobs.list({ query: { limit: 10 } })`; `close()` when done. */
export const createMesClient = (o: MesClientOptions): MesPromiseClient & { readonly close: () => Promise<void> } => {
  const runtime = ManagedRuntime.make(FetchHttpClient.layer as Layer.Layer<HttpClient.HttpClient>)
  const client = runtime.runSync(makeMesClient(o))
  const wrapped = mapMethods<MesPromiseClient>(client, (method) => (...args) =>
    runtime.runPromise(method(...args).pipe(Effect.mapError((e) => (isMesError(e) ? new MesApiError(e) : e))) as Effect.Effect<unknown, unknown>))
  return { ...wrapped, close: () => runtime.dispose() }
}

export type { RawClient as MesRawClient }

/** The RPC client of `/functions/v1/rpc`: one method per use case of `MesRpcs`. */
export interface MesRpcClientShape extends RpcClient.FromGroup<typeof MesRpcs, RpcClientError.RpcClientError> {}

/** The RPC protocol (JSON over HTTP POST, with the API key) for `RpcClient.make(MesRpcs)`. */
export const mesRpcProtocol = (o: MesClientOptions): Layer.Layer<RpcClient.Protocol> =>
  RpcClient.layerProtocolHttp({ url: `${origin(o.baseUrl)}/functions/v1/rpc`, transformClient: authenticated(o.apiKey) }).pipe(
    Layer.provide([FetchHttpClient.layer, RpcSerialization.layerJson])
  )

/**
 * The Effect RPC client (the domain's use cases: CreateJob, GetJob, ListJobs, MoveJob, MoveOperation,
 * CreateTimeEntry, CreateIssue), failing with the tagged errors (`NotFound`, `Forbidden`, `ValidationFailed`,
 * `InvalidStateTransition`, `Unauthorized`, …) or an `RpcClientError`. Scoped: it lives as long as its scope.
 */
export const makeMesRpcClient = (o: MesClientOptions): Effect.Effect<MesRpcClientShape, never, Scope.Scope> =>
  RpcClient.make(MesRpcs).pipe(Effect.provide(mesRpcProtocol(o)))

/** The RPC client as a service, for Effect programs: `yield* MesRpcClient`, `MesRpcClient.layer({ baseUrl, apiKey })`. */
export class MesRpcClient extends Context.Service<MesRpcClient, MesRpcClientShape>()("@mes/client/MesRpcClient") {
  static readonly layer = (o: MesClientOptions): Layer.Layer<MesRpcClient> => Layer.effect(MesRpcClient, makeMesRpcClient(o))
}
