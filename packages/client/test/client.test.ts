// Both clients against a real server: the envelope unwrapped, errors typed by code (issue 13 item 2a).
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Harness, nestedJob, startServer } from "../../adapters-http/test/harness.ts"
import { ConflictError, createMesClient, MesApiError, MesClientLive, NotFoundError, UnauthorizedError, ValidationError } from "../src/index.ts"

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
      const list = yield* mes.jobs.list({ query: { job_number: "FX-CLIENT", limit: 10 } })
      const operationId = (created as any).parts[0].operations[0].operation_id as string
      const started = yield* mes.operationLifecycle.start({ query: { id: operationId } })
      return { created, list, started }
    }))
    expect((result.created as any).job_number).toBe("FX-CLIENT-1")
    expect((result.list as any).jobs.map((j: any) => j.job_number)).toEqual(["FX-CLIENT-1"])
    expect((result.list as any).pagination.total).toBe(1)
    expect(result.started).toMatchObject({ previous_status: "not_started", new_status: "in_progress" })
  })

  it("fails with the definition's error classes, the envelope's details included", async () => {
    const errors = await Effect.runPromise(Effect.gen(function*() {
      const mes = yield* MesClientLive({ baseUrl: base, apiKey: key })
      const notFound = yield* Effect.flip(mes.jobs.list({ query: { id: UNKNOWN } }))
      // refused by the server (a cell of no tenant), not by the client's own encoding
      const invalid = yield* Effect.flip(mes.jobs.create({ payload: nestedJob("FX-BAD", 1, 1, { current_cell_id: UNKNOWN }) }))
      const conflict = yield* Effect.flip(mes.jobs.create({ payload: nestedJob("FX-CLIENT-1") }))
      const wrongKey = yield* Effect.flip((yield* MesClientLive({ baseUrl: base, apiKey: "svc_live_nope" })).jobs.list({ query: {} }))
      return { notFound, invalid, conflict, wrongKey }
    }))
    expect(errors.notFound).toBeInstanceOf(NotFoundError)
    expect(errors.notFound).toMatchObject({ error: { code: "NOT_FOUND", statusCode: 404 } })
    expect(errors.invalid).toBeInstanceOf(ValidationError)
    expect(errors.invalid).toMatchObject({ error: { code: "VALIDATION_ERROR", details: [expect.objectContaining({ field: "current_cell_id", constraint: "FK_CONSTRAINT" })] } })
    expect(errors.conflict).toBeInstanceOf(ConflictError)
    expect(errors.wrongKey).toBeInstanceOf(UnauthorizedError)
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
      const cell = await mes.cells.create({ payload: { name: "Client laser" } })
      expect((cell as any).cell.name).toBe("Client laser")
      const error = await mes.jobs.list({ query: { id: UNKNOWN } }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(MesApiError)
      expect(error).toMatchObject({ code: "NOT_FOUND", statusCode: 404 })
      expect(await mes.cells.create({ payload: { name: "Client laser" } }).catch((e: unknown) => e)).toMatchObject({ code: "CONFLICT", statusCode: 409 })
      const invalid = await mes.operations.create({ payload: { part_id: UNKNOWN, operation_name: "Cut" } as any }).catch((e: unknown) => e)
      expect(invalid).toBeInstanceOf(MesApiError)
      expect(invalid).toMatchObject({ code: "VALIDATION_ERROR", statusCode: 422, details: [expect.objectContaining({ field: "part_id", constraint: "FK_CONSTRAINT" })] })
    } finally {
      await mes.close()
    }
  })
})
