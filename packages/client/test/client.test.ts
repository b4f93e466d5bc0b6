// Both REST clients against a real server: the envelope unwrapped, errors typed by code (issue 13 item 2a).
import * as Effect from "effect/Effect"
import { HttpClientError } from "effect/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort, type Harness, nestedJob, startServer } from "../../adapters-http/test/harness.ts"
import {
  Conflict,
  createMesClient,
  InvalidStateTransition,
  makeMesRpcClient,
  MesApiError,
  MesClientLive,
  NotFound,
  Unauthorized,
  ValidationFailed
} from "../src/index.ts"

let h: Harness
let key = ""
let base = ""
beforeAll(async () => {
  h = await startServer()
  ;({ key } = await h.as("Client"))
  base = new URL(h.url).origin
})
afterAll(() => h.close())

const UNKNOWN = "00000000-0000-4000-8000-000000000000"

describe("the Effect client (HttpApiClient over the API definition)", () => {
  it("creates, lists and reads jobs and runs an operation's lifecycle, answering data", async () => {
    const result = await Effect.runPromise(Effect.gen(function*() {
      const mes = yield* MesClientLive({ baseUrl: base, apiKey: key })
      const created = yield* mes.jobs.create({ payload: nestedJob("FX-CLIENT-1", 1, 2) })
      yield* mes.jobs.create({ payload: nestedJob("FX-CLIENT-2") })
      // ints and booleans of the query are sent as the strings the server reads
      const list = yield* mes.jobs.list({ query: { job_number: "FX-CLIENT", sort: "job_number", order: "desc", limit: 1, offset: 1 } })
      const operationId = (created as any).parts[0].operations[0].operation_id as string
      const started = yield* mes.operationLifecycle.start({ query: { id: operationId } })
      yield* mes.timeEntries.create({ payload: { operation_id: operationId, start_time: new Date().toISOString() } })
      const open = yield* mes.timeEntries.list({ query: { operation_id: operationId, active: true } })
      const closed = yield* mes.timeEntries.list({ query: { operation_id: operationId, active: false } })
      const read = yield* mes.jobs.list({ query: { id: (created as any).job_id } })
      return { created, list, started, open, closed, read }
    }))
    expect((result.created as any).job_number).toBe("FX-CLIENT-1")
    expect((result.list as any).jobs.map((j: any) => j.job_number)).toEqual(["FX-CLIENT-1"])
    expect((result.list as any).pagination).toEqual({ limit: 1, offset: 1, total: 2 })
    expect(result.started).toMatchObject({ previous_status: "not_started", new_status: "in_progress" })
    expect(result.started.operation.status).toBe("in_progress")
    expect((result.open as any).time_entries).toHaveLength(1)
    expect((result.closed as any).time_entries).toHaveLength(0)
    expect((result.read as any).job.parts[0].operations).toHaveLength(2)
  })

  it("fails with tagged errors by code, the envelope's details included", async () => {
    const errors = await Effect.runPromise(Effect.gen(function*() {
      const mes = yield* MesClientLive({ baseUrl: base, apiKey: key })
      // a typed catch by tag: the error channel names NotFound
      const caught = yield* mes.jobs.list({ query: { id: UNKNOWN } }).pipe(
        Effect.as("found"),
        Effect.catchTag("NotFound", (e) => Effect.succeed(`${e.code} ${e.statusCode}`))
      )
      const notFound = yield* Effect.flip(mes.jobs.list({ query: { id: UNKNOWN } }))
      // refused by the server (a cell of no tenant), not by the client's own encoding
      const invalid = yield* Effect.flip(mes.jobs.create({ payload: nestedJob("FX-BAD", 1, 1, { current_cell_id: UNKNOWN }) }))
      const conflict = yield* Effect.flip(mes.jobs.create({ payload: nestedJob("FX-CLIENT-1") }))
      const created = yield* mes.jobs.create({ payload: nestedJob("FX-CLIENT-3") })
      const move = yield* Effect.flip(mes.jobLifecycle.stop({ query: { id: (created as any).job_id } }))
      const wrongKey = yield* Effect.flip((yield* MesClientLive({ baseUrl: base, apiKey: "svc_live_nope" })).jobs.list({ query: {} }))
      return { caught, notFound, invalid, conflict, move, wrongKey }
    }))
    expect(errors.caught).toBe("NOT_FOUND 404")
    expect(errors.notFound).toBeInstanceOf(NotFound)
    expect(errors.notFound).toMatchObject({ _tag: "NotFound", code: "NOT_FOUND", statusCode: 404, message: expect.stringContaining(UNKNOWN) })
    expect(errors.invalid).toBeInstanceOf(ValidationFailed)
    expect(errors.invalid).toMatchObject({ code: "VALIDATION_ERROR", statusCode: 422, details: [expect.objectContaining({ field: "current_cell_id", constraint: "FK_CONSTRAINT" })] })
    expect(errors.conflict).toBeInstanceOf(Conflict)
    expect(errors.move).toBeInstanceOf(InvalidStateTransition)
    expect(errors.move).toMatchObject({ code: "INVALID_STATE_TRANSITION", statusCode: 409 })
    expect(errors.wrongKey).toBeInstanceOf(Unauthorized)
  })
})

describe("the Promise client", () => {
  it("answers data and rejects with MesApiError", async () => {
    const mes = createMesClient({ baseUrl: `${h.url}`, apiKey: key })
    try {
      const created = await mes.jobs.create({ payload: nestedJob("PR-CLIENT-1") })
      expect((created as any).job_number).toBe("PR-CLIENT-1")
      const read = await mes.jobs.list({ query: { id: (created as any).job_id } })
      expect((read as any).job.parts).toHaveLength(1)
      const listed = await mes.jobs.list({ query: { job_number: "PR-CLIENT", limit: 5 } })
      expect((listed as any).jobs.map((j: any) => j.job_number)).toEqual(["PR-CLIENT-1"])
      const cell = await mes.cells.create({ payload: { name: "Client laser" } })
      expect((cell as any).cell.name).toBe("Client laser")
      const operationId = (created as any).parts[0].operations[0].operation_id as string
      expect(await mes.operationLifecycle.start({ query: { id: operationId } })).toMatchObject({ new_status: "in_progress" })

      const error = await mes.jobs.list({ query: { id: UNKNOWN } }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(MesApiError)
      expect(error).toMatchObject({ code: "NOT_FOUND", statusCode: 404, message: expect.stringContaining(UNKNOWN) })
      expect(await mes.cells.create({ payload: { name: "Client laser" } }).catch((e: unknown) => e)).toMatchObject({ code: "CONFLICT", statusCode: 409 })
      expect(await mes.operationLifecycle.start({ query: { id: operationId } }).catch((e: unknown) => e))
        .toMatchObject({ code: "INVALID_STATE_TRANSITION", statusCode: 409 })
      const invalid = await mes.operations.create({ payload: { part_id: UNKNOWN, operation_name: "Cut" } as any }).catch((e: unknown) => e)
      expect(invalid).toBeInstanceOf(MesApiError)
      expect(invalid).toMatchObject({ code: "VALIDATION_ERROR", statusCode: 422, details: [expect.objectContaining({ field: "part_id", constraint: "FK_CONSTRAINT" })] })
    } finally {
      await mes.close()
    }
    const stranger = createMesClient({ baseUrl: base, apiKey: "svc_live_nope" })
    try {
      expect(await stranger.jobs.list({ query: {} }).catch((e: unknown) => e)).toMatchObject({ name: "MesApiError", code: "UNAUTHORIZED", statusCode: 401 })
    } finally {
      await stranger.close()
    }
  })
})

describe("a server that does not answer", () => {
  it("the REST clients fail with an HttpClientError that says why, and the RPC client carries it (connect ECONNREFUSED …), not only 'Transport error'", async () => {
    // a port nothing listens on
    const closed = await freePort()
    const baseUrl = `http://127.0.0.1:${closed}`
    const mes = createMesClient({ baseUrl, apiKey: key })
    try {
      const error = await mes.jobs.list({ query: {} }).catch((e: unknown) => e)
      expect(HttpClientError.isHttpClientError(error)).toBe(true)
      expect((error as Error).message).toBe(`Transport: connect ECONNREFUSED 127.0.0.1:${closed} (GET ${baseUrl}/functions/v1/api-jobs)`)
    } finally {
      await mes.close()
    }
    const failure = await Effect.runPromise(
      MesClientLive({ baseUrl, apiKey: key }).pipe(Effect.flatMap((client) => Effect.flip(client.jobs.list({ query: {} }))))
    )
    expect(failure.message).toContain(`connect ECONNREFUSED 127.0.0.1:${closed}`)
    // the RPC client's RpcClientError carries the same transport error (effect/rpc's own message says "HttpError: ")
    const rpcFailure = await Effect.runPromise(
      Effect.scoped(Effect.flatMap(makeMesRpcClient({ baseUrl, apiKey: key }), (client) => Effect.flip(client.ListJobs({ query: {} }))))
    )
    expect(rpcFailure._tag).toBe("RpcClientError")
    expect((rpcFailure as unknown as { reason: { cause?: { message?: string } } }).reason.cause?.message).toBe(
      `Transport: connect ECONNREFUSED 127.0.0.1:${closed} (POST ${baseUrl}/functions/v1/rpc/)`
    )
  })
})
