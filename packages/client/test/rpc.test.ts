// The Effect RPC endpoint of `mes serve` (/functions/v1/rpc) through the RPC client: the domain's use cases as the
// key's tenant, with the REST API's errors as typed MesRpcError values (issue 13 item 2b).
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Harness, nestedJob, startServer } from "../../adapters-http/test/harness.ts"
import { makeMesRpcClient, MesRpcError } from "../src/index.ts"

let h: Harness
let key = ""
let otherKey = ""
beforeAll(async () => {
  h = await startServer()
  ;({ key } = await h.as("RPC"))
  ;({ key: otherKey } = await h.as("RPC other"))
})
afterAll(() => h.close())

const withClient = <A, E>(apiKey: string, f: (rpc: Effect.Success<ReturnType<typeof makeMesRpcClient>>) => Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(makeMesRpcClient({ baseUrl: h.url, apiKey }), f)))

describe("Effect RPC at /functions/v1/rpc", () => {
  it("creates a job, runs an operation's lifecycle and reads the job back, as the key's tenant", async () => {
    const result = await withClient(key, (rpc) => Effect.gen(function*() {
      const created = (yield* rpc.CreateJob({ job: nestedJob("RPC-1", 1, 1) })) as any
      const operationId = created.parts[0].operations[0].operation_id as string
      const started = (yield* rpc.MoveOperation({ id: operationId, action: "start" })) as any
      const completed = (yield* rpc.MoveOperation({ id: operationId, action: "complete" })) as any
      const job = (yield* rpc.GetJob({ id: created.job_id })) as any
      const list = (yield* rpc.ListJobs({ query: { job_number: "RPC" } })) as any
      return { started, completed, job, list }
    }))
    expect(result.started).toMatchObject({ previous_status: "not_started", new_status: "in_progress" })
    expect(result.completed).toMatchObject({ new_status: "completed" })
    expect(result.job).toMatchObject({ job_number: "RPC-1", parts: [{ status: "completed" }] })
    expect(result.list.jobs.map((j: any) => j.job_number)).toEqual(["RPC-1"])
    // the REST API sees the same job
    const rest = await fetch(`${h.url}/api-jobs?job_number=RPC-1`, { headers: { authorization: `Bearer ${key}` } })
    expect(((await rest.json()) as any).data.pagination.total).toBe(1)
  })

  it("fails with MesRpcError carrying the REST API's code, status and details", async () => {
    const errors = await withClient(key, (rpc) => Effect.gen(function*() {
      const notFound = yield* Effect.flip(rpc.GetJob({ id: "00000000-0000-4000-8000-000000000000" }))
      const invalid = yield* Effect.flip(rpc.CreateJob({ job: { job_number: "RPC-BAD", parts: [{ part_number: "P", quantity: 0 }] } }))
      const created = (yield* rpc.CreateJob({ job: nestedJob("RPC-2") })) as any
      const twice = yield* Effect.flip(rpc.MoveJob({ id: created.job_id, action: "complete" }).pipe(Effect.andThen(rpc.MoveJob({ id: created.job_id, action: "stop" }))))
      return { notFound, invalid, twice, jobId: created.job_id as string }
    }))
    expect(errors.notFound).toBeInstanceOf(MesRpcError)
    expect(errors.notFound).toMatchObject({ code: "NOT_FOUND", statusCode: 404 })
    expect(errors.invalid).toMatchObject({ code: "VALIDATION_ERROR", statusCode: 422 })
    expect((errors.invalid as MesRpcError).details?.map((d) => d.field)).toEqual(expect.arrayContaining(["parts[0].quantity"]))
    expect(errors.twice).toMatchObject({ code: "INVALID_STATE_TRANSITION", statusCode: 409 })
    // another tenant's key sees the job as another tenant's
    const foreign = await withClient(otherKey, (rpc) => Effect.flip(rpc.GetJob({ id: errors.jobId })))
    expect(foreign).toMatchObject({ code: "FORBIDDEN", statusCode: 403 })
  })

  it("refuses a missing or unknown key, and other methods than POST", async () => {
    const bad = await withClient("svc_live_unknown", (rpc) => Effect.flip(rpc.ListJobs({ query: {} })))
    expect(bad).toMatchObject({ code: "UNAUTHORIZED", statusCode: 401 })
    expect((await fetch(`${h.url}/rpc`)).status).toBe(405)
  })
})

describe("Effect RPC in cloud mode", () => {
  it("counts every call against the plan's daily limit like a REST request: past it, 429 RATE_LIMIT_EXCEEDED", async () => {
    const cloud = await startServer({ env: { MES_DEPLOYMENT: "cloud" } })
    try {
      const { key: freeKey } = await cloud.as("RPC free plan")
      const outcome = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const rpc = yield* makeMesRpcClient({ baseUrl: cloud.url, apiKey: freeKey })
        // the free plan admits 100 requests a day: 100 calls pass, the 101st is refused
        for (let i = 0; i < 100; i++) yield* rpc.ListJobs({ query: { limit: "1" } })
        return yield* Effect.flip(rpc.ListJobs({ query: { limit: "1" } }))
      })))
      expect(outcome).toMatchObject({ code: "RATE_LIMIT_EXCEEDED", statusCode: 429 })
      // REST shares the same count
      const rest = await fetch(`${cloud.url}/api-jobs`, { headers: { authorization: `Bearer ${freeKey}` } })
      expect(rest.status).toBe(429)
    } finally {
      await cloud.close()
    }
  })
})
