// @mes/client: typed clients of the mes REST API (issue 13), both derived from the API definition (`Api`):
// - `makeMesClient` for Effect users: HttpApiClient over the definition, each method answering the envelope's
//   `data`, each error one of the definition's error classes (BadRequestError, NotFoundError, ValidationError
//   with its details, …), by HTTP status;
// - `createMesClient` for plain TypeScript: the same methods returning Promises, rejecting with `MesApiError`
//   (`code`, `statusCode`, `message`, `details`).
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { RpcClient, RpcSerialization } from "effect/rpc"
import { MesRpcs } from "@mes/adapters-http/rpc"

export { MesRpcError, MesRpcs } from "@mes/adapters-http/rpc"
import { Api } from "@mes/adapters-http/contract"

// the definition itself and its error classes (NotFoundError, ValidationError, …), to catch by class
export * from "@mes/adapters-http/contract"

export interface MesClientOptions {
  /** The API's base URL, e.g. http://127.0.0.1:8787 (the paths carry /functions/v1). */
  readonly baseUrl: string
  /** An API key of the tenant (svc_live_… or svc_test_…). */
  readonly apiKey: string
}

type RawClient = Effect.Success<ReturnType<typeof rawClient>>

/** The envelope's `data`: what every success answer of the API carries (a download answers as it is). */
type Data<R> = R extends { readonly success: true; readonly data: infer D } ? D : R

/** A client whose methods answer `data` instead of the envelope. */
export type MesClient = {
  readonly [G in keyof RawClient]: {
    // the definition's create and sync payloads are typed loosely (Codec<unknown>), which leaves their methods
    // asking for `unknown` services; none is needed at run time
    readonly [E in keyof RawClient[G]]: RawClient[G][E] extends (...args: infer A) => Effect.Effect<infer R, infer Err, infer _Req>
      ? (...args: A) => Effect.Effect<Data<R>, Err>
      : never
  }
}

const rawClient = (o: MesClientOptions) =>
  HttpApiClient.make(Api, {
    baseUrl: o.baseUrl.replace(/\/functions\/v1\/?$/, ""),
    transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(o.apiKey))
  })

const unwrap = (raw: RawClient): MesClient =>
  Object.fromEntries(Object.entries(raw as unknown as Record<string, Record<string, (...a: Array<unknown>) => Effect.Effect<any>>>).map(([group, methods]) => [
    group,
    Object.fromEntries(Object.entries(methods).map(([name, method]) => [
      name,
      (...args: Array<unknown>) => Effect.map(method(...args), (r: any) => (r !== null && typeof r === "object" && r.success === true && "data" in r ? r.data : r))
    ]))
  ])) as unknown as MesClient

/** The Effect client (needs an HttpClient: `FetchHttpClient.layer` works everywhere fetch does). */
export const makeMesClient = (o: MesClientOptions): Effect.Effect<MesClient, never, HttpClient.HttpClient> => Effect.map(rawClient(o), unwrap)

/** The Effect client with `fetch` as its HTTP client. */
export const MesClientLive = (o: MesClientOptions) => Effect.provide(makeMesClient(o), FetchHttpClient.layer)

/** An error answer of the API (its envelope), for Promise callers. */
export class MesApiError extends Error {
  readonly code: string
  readonly statusCode: number
  readonly details: ReadonlyArray<{ readonly field: string; readonly constraint: string; readonly message: string }> | undefined
  constructor(e: { readonly code: string; readonly statusCode: number; readonly message: string; readonly details?: ReadonlyArray<any> | undefined }) {
    super(e.message)
    this.name = "MesApiError"
    this.code = e.code
    this.statusCode = e.statusCode
    this.details = e.details
  }
}

/** A client whose methods answer Promises of `data` and reject with MesApiError. */
export type MesPromiseClient = {
  readonly [G in keyof MesClient]: {
    readonly [E in keyof MesClient[G]]: MesClient[G][E] extends (...args: infer A) => Effect.Effect<infer R, any, any> ? (...args: A) => Promise<R> : never
  }
}

/** The error envelope inside whatever the Effect client failed with (a declared error, or one it could not decode). */
const apiErrorOf = (e: unknown): MesApiError | undefined => {
  const error = (e as { error?: { code?: unknown } } | null)?.error
  return error !== undefined && typeof error.code === "string" ? new MesApiError(error as any) : undefined
}

/** The Promise client: `await client.jobs.list({ query: { limit: 10 } })`; `close()` when done. */
export const createMesClient = (o: MesClientOptions): MesPromiseClient & { readonly close: () => Promise<void> } => {
  const runtime = ManagedRuntime.make(FetchHttpClient.layer as Layer.Layer<HttpClient.HttpClient>)
  const client = runtime.runSync(makeMesClient(o))
  const wrapped = Object.fromEntries(Object.entries(client as unknown as Record<string, Record<string, (...a: Array<unknown>) => Effect.Effect<any, any, any>>>).map(([group, methods]) => [
    group,
    Object.fromEntries(Object.entries(methods).map(([name, method]) => [
      name,
      (...args: Array<unknown>) =>
        runtime.runPromise(method(...args).pipe(Effect.mapError((e) => apiErrorOf(e) ?? e))) as Promise<unknown>
    ]))
  ]))
  return { ...(wrapped as unknown as MesPromiseClient), close: () => runtime.dispose() }
}

export type { RawClient as MesRawClient }

/**
 * The Effect RPC client of `/functions/v1/rpc` (the domain's use cases: CreateJob, GetJob, ListJobs, MoveJob,
 * MoveOperation, CreateTimeEntry, CreateIssue), failing with `MesRpcError` (the REST API's code, status, details).
 * Scoped: the client lives as long as the scope it is made in.
 */
export const makeMesRpcClient = (o: MesClientOptions) =>
  RpcClient.make(MesRpcs).pipe(
    Effect.provide(
      Layer.mergeAll(
        RpcClient.layerProtocolHttp({
          url: `${o.baseUrl.replace(/\/functions\/v1\/?$/, "").replace(/\/$/, "")}/functions/v1/rpc`,
          transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(o.apiKey))
        }),
        RpcSerialization.layerJson
      ).pipe(Layer.provide(FetchHttpClient.layer), Layer.provideMerge(RpcSerialization.layerJson))
    )
  )
