// The Effect RPC endpoint of `mes serve` (/functions/v1/rpc) through the RPC client: the domain's use cases as the
// key's tenant, typed answers, and the domain's errors as tagged schema errors end to end (issue 13 item 2b).
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { FetchHttpClient } from "effect/http"
import { RpcClient, RpcSerialization } from "effect/rpc"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { testDatabaseKind } from "@mes/adapters-pg"
import { capturingLogs, type Harness, nestedJob, retryWhile, startServer, startServerThroughProxy } from "../../adapters-http/test/harness.ts"
import type { TcpProxy } from "../../adapters-http/test/tcp-proxy.ts"
import {
  BadRequest,
  Forbidden,
  InternalError,
  InvalidStateTransition,
  makeMesRpcClient,
  MesRpcClient,
  type MesRpcClientShape,
  MesRpcs,
  NotFound,
  ServiceUnavailable,
  Unauthorized,
  ValidationFailed
} from "../src/index.ts"

let h: Harness
let key = ""
let otherKey = ""
beforeAll(async () => {
  h = await startServer({ env: { MES_MAX_BODY_BYTES: "100000" } })
  ;({ key } = await h.as("RPC"))
  ;({ key: otherKey } = await h.as("RPC other"))
})
afterAll(() => h.close())

const UNKNOWN = "00000000-0000-4000-8000-000000000000"

const withClient = <A, E>(apiKey: string, f: (rpc: MesRpcClientShape) => Effect.Effect<A, E>, baseUrl = h.url) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(makeMesRpcClient({ baseUrl, apiKey }), f)))

describe("Effect RPC at /functions/v1/rpc", () => {
  it("creates a job, runs an operation's lifecycle, records time and an issue, as the key's tenant (typed answers)", async () => {
    // the client as a service of an Effect program
    const program = Effect.gen(function*() {
      const rpc = yield* MesRpcClient
      const created = yield* rpc.CreateJob({ job: nestedJob("RPC-1", 1, 2) })
      const operationId = created.parts[0]!.operations[0]!.operation_id
      const moves = []
      for (const action of ["start", "pause", "resume", "complete"] as const) moves.push(yield* rpc.MoveOperation({ id: operationId, action }))
      const entry = yield* rpc.CreateTimeEntry({ entry: { operation_id: operationId, start_time: "2026-01-05T08:00:00Z", end_time: "2026-01-05T09:30:00Z" } })
      const issue = yield* rpc.CreateIssue({ issue: { operation_id: operationId, title: "Burr on edge", description: "Deburr before the next step" } })
      const job = yield* rpc.GetJob({ id: created.job_id })
      const list = yield* rpc.ListJobs({ query: { job_number: "RPC", limit: 10 } })
      yield* rpc.MoveJob({ id: created.job_id, action: "start" })
      const moved = yield* rpc.MoveJob({ id: created.job_id, action: "complete" })
      return { created, moves, entry, issue, job, list, moved }
    })
    const result = await Effect.runPromise(program.pipe(Effect.provide(MesRpcClient.layer({ baseUrl: h.url, apiKey: key }))))
    expect(result.created.job_number).toBe("RPC-1")
    expect(result.moves.map((m) => [m.previous_status, m.new_status])).toEqual([
      ["not_started", "in_progress"],
      ["in_progress", "on_hold"],
      ["on_hold", "in_progress"],
      ["in_progress", "completed"]
    ])
    expect(result.moves[3]!.operation.part.job.job_number).toBe("RPC-1")
    expect(result.entry).toMatchObject({ duration_minutes: 90, end_time: expect.any(String) })
    expect(result.issue).toMatchObject({ title: "Burr on edge", status: "open" })
    expect(result.job.job_number).toBe("RPC-1")
    expect(result.job.parts[0]!.operations.map((o) => o.status)).toEqual(["completed", "not_started"])
    expect(result.list.jobs.map((j) => j.job_number)).toEqual(["RPC-1"])
    expect(result.list.pagination).toEqual({ limit: 10, offset: 0, total: 1 })
    expect(result.moved).toMatchObject({ operation: "complete", new_status: "completed", job: { status: "completed" } })
    // the REST API sees the same job and issue
    const rest = await fetch(`${h.url}/api-issues?operation_id=${result.issue.operation_id}`, { headers: { authorization: `Bearer ${key}` } })
    expect(((await rest.json()) as any).data.issues.map((i: any) => i.id)).toEqual([result.issue.id])
  })

  it("fails with the domain's errors as tagged errors carrying the REST API's code, status and details", async () => {
    const errors = await withClient(key, (rpc) => Effect.gen(function*() {
      // a typed catch by tag
      const caught = yield* rpc.GetJob({ id: UNKNOWN }).pipe(
        Effect.as("found"),
        Effect.catchTag("NotFound", (e) => Effect.succeed(`${e.code} ${e.statusCode}`))
      )
      const notFound = yield* Effect.flip(rpc.GetJob({ id: UNKNOWN }))
      const invalid = yield* Effect.flip(rpc.CreateJob({ job: { job_number: "RPC-BAD", parts: [{ part_number: "P", quantity: 0, operations: [] }] } }))
      const created = yield* rpc.CreateJob({ job: nestedJob("RPC-2") })
      const early = yield* Effect.flip(rpc.MoveJob({ id: created.job_id, action: "complete" }))
      const badUser = yield* Effect.flip(rpc.MoveOperation({ id: created.parts[0]!.operations[0]!.operation_id, action: "start", user_id: "nope" }))
      return { caught, notFound, invalid, early, badUser, jobId: created.job_id }
    }))
    expect(errors.caught).toBe("NOT_FOUND 404")
    expect(errors.notFound).toBeInstanceOf(NotFound)
    expect(errors.notFound).toMatchObject({ _tag: "NotFound", code: "NOT_FOUND", statusCode: 404 })
    expect(errors.invalid).toBeInstanceOf(ValidationFailed)
    expect(errors.invalid).toMatchObject({ code: "VALIDATION_ERROR", statusCode: 422 })
    expect((errors.invalid as ValidationFailed).details?.map((d) => d.field)).toEqual(expect.arrayContaining(["parts[0].quantity"]))
    expect(errors.early).toBeInstanceOf(InvalidStateTransition)
    expect(errors.early).toMatchObject({ code: "INVALID_STATE_TRANSITION", statusCode: 409, message: "Cannot complete job: status is 'not_started', must be 'in_progress'" })
    expect(errors.badUser).toMatchObject({ _tag: "BadRequest", code: "BAD_REQUEST", statusCode: 400 })
    // another tenant's key sees the job as another tenant's
    const foreign = await withClient(otherKey, (rpc) => Effect.flip(rpc.GetJob({ id: errors.jobId })))
    expect(foreign).toBeInstanceOf(Forbidden)
    expect(foreign).toMatchObject({ code: "FORBIDDEN", statusCode: 403 })
  })

  it("refuses an unknown key, a call without any key, and other methods than POST", async () => {
    const bad = await withClient("svc_live_unknown", (rpc) => Effect.flip(rpc.ListJobs({ query: {} })))
    expect(bad).toBeInstanceOf(Unauthorized)
    expect(bad).toMatchObject({ code: "UNAUTHORIZED", statusCode: 401 })
    // a client of the group with no credentials at all
    const anonymous = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const rpc = yield* RpcClient.make(MesRpcs)
      return yield* Effect.flip(rpc.GetJob({ id: UNKNOWN }))
    })).pipe(Effect.provide(RpcClient.layerProtocolHttp({ url: `${h.url}/rpc` }).pipe(
      Layer.provide([FetchHttpClient.layer, RpcSerialization.layerJson])
    ))))
    expect(anonymous).toBeInstanceOf(Unauthorized)
    expect((await fetch(`${h.url}/rpc`)).status).toBe(405)
  })
})

describe("Effect RPC: what REST answers 400 or 500", () => {
  /** A body as it is, POSTed to the RPC endpoint with the key. */
  const post = async (body: string) => {
    const res = await fetch(`${h.url}/rpc`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body })
    return { status: res.status, body: (await res.json()) as any }
  }

  it("an id that is not a UUID is BadRequest, as REST's ?id= is 400 (not a database error)", async () => {
    const refused = await withClient(key, (rpc) =>
      Effect.all([
        Effect.flip(rpc.GetJob({ id: "nope" })),
        Effect.flip(rpc.MoveJob({ id: "1; DROP TABLE jobs", action: "start" })),
        Effect.flip(rpc.MoveOperation({ id: "x".repeat(5000), action: "start" }))
      ]))
    for (const e of refused) expect(e).toMatchObject({ _tag: "BadRequest", code: "BAD_REQUEST", statusCode: 400, message: "id must be a UUID" })
  })

  it("a payload of the wrong shape is BadRequest naming where, not a defect of the protocol; none is too", async () => {
    const refused = await withClient(key, (rpc) =>
      Effect.all([
        Effect.flip(rpc.GetJob({ id: 5 as any })),
        Effect.flip(rpc.MoveJob({ id: UNKNOWN, action: "explode" as any })),
        Effect.flip(rpc.MoveOperation({ id: UNKNOWN, action: "start", user_id: ["x".repeat(5000)] as any })),
        Effect.flip(rpc.ListJobs({ query: { limit: { a: 1 } as any } })),
        Effect.flip(rpc.CreateJob({} as any)),
        Effect.flip(rpc.GetJob(undefined as any))
      ]))
    expect(refused.map((e) => ({ _tag: e._tag, statusCode: (e as BadRequest).statusCode, message: e.message }))).toEqual([
      { _tag: "BadRequest", statusCode: 400, message: `Invalid GetJob payload: Expected string at ["id"]` },
      { _tag: "BadRequest", statusCode: 400, message: `Invalid MoveJob payload: Expected "start" | "stop" | "resume" | "complete" at ["action"]` },
      { _tag: "BadRequest", statusCode: 400, message: `Invalid MoveOperation payload: Expected string at ["user_id"]` },
      { _tag: "BadRequest", statusCode: 400, message: `Invalid ListJobs payload: Expected string | number | boolean at ["query"]["limit"]` },
      { _tag: "BadRequest", statusCode: 400, message: `Invalid CreateJob payload: Missing key at ["job"]` },
      { _tag: "BadRequest", statusCode: 400, message: "Invalid GetJob payload: Expected object" }
    ])
    for (const e of refused) expect(e).toBeInstanceOf(BadRequest)
    // the right shapes are answered
    expect(await withClient(key, (rpc) => Effect.flip(rpc.MoveJob({ id: UNKNOWN, action: "start" })))).toBeInstanceOf(NotFound)
  })

  it("a defect in a call is logged and fails with InternalError, telling the caller nothing of it", async () => {
    await h.sql(`CREATE FUNCTION rpc_boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'boom: secret detail'; END $$`)
    await h.sql(`CREATE TRIGGER rpc_boom BEFORE INSERT ON jobs FOR EACH ROW WHEN (NEW.job_number = 'RPC-BOOM') EXECUTE FUNCTION rpc_boom()`)
    const { value: e, logged } = await capturingLogs(() => withClient(key, (rpc) => Effect.flip(rpc.CreateJob({ job: nestedJob("RPC-BOOM") }))))
      .finally(() => h.sql("DROP TRIGGER rpc_boom ON jobs"))
    expect(e).toBeInstanceOf(InternalError)
    expect(e).toMatchObject({ code: "INTERNAL_ERROR", statusCode: 500, message: "Internal server error" })
    expect(JSON.stringify(e)).not.toContain("secret detail")
    expect(logged.find((l) => l.includes("unhandled error RPC CreateJob"))).toContain("secret detail")
    expect((await withClient(key, (rpc) => rpc.CreateJob({ job: nestedJob("RPC-BOOM") }))).job_number).toBe("RPC-BOOM")
  })

  it("a body REST would refuse first is refused the same way: too large 413, not JSON or nested too deep 400", async () => {
    const call = (payload: string) => `{"_tag":"Request","id":"1","tag":"GetJob","payload":${payload},"headers":[]}`
    expect(await post(call(`{"id":"${"x".repeat(100_001)}"}`))).toMatchObject({ status: 413, body: { error: { code: "PAYLOAD_TOO_LARGE" } } })
    expect(await post(call("{not json"))).toMatchObject({ status: 400, body: { error: { code: "BAD_REQUEST", message: "Request body is not valid JSON" } } })
    const deep = `{"id":"${UNKNOWN}","x":${"[".repeat(5000)}${"]".repeat(5000)}}`
    expect(await post(call(deep))).toMatchObject({ status: 400, body: { error: { code: "BAD_REQUEST", message: expect.stringContaining("deeper than") } } })
    // within the bounds the same call is answered
    expect(await post(call(`{"id":"${UNKNOWN}"}`))).toMatchObject({ status: 200, body: [{ _tag: "Exit", exit: { _tag: "Failure" } }] })
  })

  it("a body of more than 100 messages is 413, before any runs; 100 are each answered", async () => {
    // the RPC server runs a body's requests at once: 50,000 in one body took a server from 86 MB to 1.2 GB
    const body = (n: number) =>
      JSON.stringify(Array.from({ length: n }, (_, i) => ({ _tag: "Request", id: String(i), tag: "GetJob", payload: { id: UNKNOWN }, headers: [] })))
    expect(await post(body(101))).toEqual({
      status: 413,
      body: { success: false, error: { code: "PAYLOAD_TOO_LARGE", message: "An RPC body holds at most 100 messages; this one holds 101", statusCode: 413 } }
    })
    const answered = await post(body(100))
    expect(answered.status).toBe(200)
    expect((answered.body as Array<{ requestId: string; exit: { _tag: string } }>).map((m) => [m.requestId, m.exit._tag]).sort())
      .toEqual(Array.from({ length: 100 }, (_, i) => [String(i), "Failure"]).sort())
  })

  it("a body that is not messages of the protocol is 400 in REST's envelope, not the RPC server's TypeError or defect frames", async () => {
    const request = (fields: string) => `{"_tag":"Request","id":"1","tag":"GetJob","payload":{"id":"${UNKNOWN}"}${fields}}`
    for (
      const [body, why] of [
        ["null", "a message must be an object"],
        ["[1,2]", "a message must be an object"],
        [`"GetJob"`, "a message must be an object"],
        [`{"_tag":"Whatever"}`, "_tag must be one of Request, Ack, Interrupt, Ping, Eof"],
        [`[${request(`,"headers":[]`)},{}]`, "_tag must be one of Request, Ack, Interrupt, Ping, Eof"],
        [request(`,"headers":{}`), "a request's headers must be an array of [name, value] pairs"],
        [request(`,"headers":[["a"]]`), "a request's headers must be an array of [name, value] pairs"],
        [request(""), "a request's headers must be an array of [name, value] pairs"],
        [`{"_tag":"Request","id":null,"tag":"GetJob","payload":{}}`, "a request's id must be a string or a number"],
        [`{"_tag":"Request","id":"1","tag":7,"payload":{}}`, "a request's tag must be a string"]
      ] as const
    ) {
      expect(await post(body), body).toEqual({
        status: 400,
        body: { success: false, error: { code: "BAD_REQUEST", message: `Not an RPC request: ${why}`, statusCode: 400 } }
      })
    }
    // the protocol's messages are answered
    expect(await post(request(`,"headers":[["x-a","1"]]`))).toMatchObject({ status: 200, body: [{ _tag: "Exit", exit: { _tag: "Failure" } }] })
  })
})

describe("Effect RPC in cloud mode", () => {
  it("counts every call against the plan's daily limit like a REST request: past it, RateLimited (429)", async () => {
    const cloud = await startServer({ env: { MES_DEPLOYMENT: "cloud" } })
    try {
      const { key: freeKey } = await cloud.as("RPC free plan")
      const outcome = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const rpc = yield* makeMesRpcClient({ baseUrl: cloud.url, apiKey: freeKey })
        // the free plan admits 100 requests a day: 100 calls pass, the 101st is refused
        for (let i = 0; i < 100; i++) yield* rpc.ListJobs({ query: { limit: 1 } })
        return yield* Effect.flip(rpc.ListJobs({ query: { limit: 1 } }))
      })))
      expect(outcome).toMatchObject({ _tag: "RateLimited", code: "RATE_LIMIT_EXCEEDED", statusCode: 429, rateLimitInfo: { remaining: 0 } })
      // REST shares the same count
      const rest = await fetch(`${cloud.url}/api-jobs`, { headers: { authorization: `Bearer ${freeKey}` } })
      expect(rest.status).toBe(429)
    } finally {
      await cloud.close()
    }
  })
})

describe.skipIf(testDatabaseKind() !== "postgres")("Effect RPC while the database cannot serve (PostgreSQL through a TCP proxy)", () => {
  let proxy: TcpProxy
  let s: Harness
  let close: () => Promise<void>
  beforeAll(async () => {
    // a connection attempt outlives the request: a call waiting for one is cut by MES_REQUEST_TIMEOUT
    ;({ proxy, h: s, close } = await startServerThroughProxy({ env: { MES_REQUEST_TIMEOUT: "800ms", MES_DB_CONNECT_TIMEOUT: "2s" } }))
  })
  afterAll(() => close?.())

  const getJob = (apiKey: string) => withClient(apiKey, (rpc) => Effect.flip(rpc.GetJob({ id: UNKNOWN })), s.url)
  /** Once the database is back, the call is answered again (NotFound for the unknown id). */
  const servedAgain = async (apiKey: string) => {
    const back = await retryWhile(() => getJob(apiKey), (e) => e._tag === "ServiceUnavailable", 80)
    expect(back).toBeInstanceOf(NotFound)
  }

  it("a call is ServiceUnavailable (503, REST's message), not a defect, while the database refuses connections: in the handler (warm key) and in authenticating the key (cold)", async () => {
    const { key: warm } = await s.as("RPC warm key")
    const { key: cold } = await s.as("RPC cold key")
    expect(await getJob(warm)).toBeInstanceOf(NotFound) // the key is in the auth cache now
    proxy.cut()
    try {
      for (const apiKey of [warm, cold]) {
        const e = await getJob(apiKey)
        expect(e).toBeInstanceOf(ServiceUnavailable)
        expect(e).toMatchObject({ code: "SERVICE_UNAVAILABLE", statusCode: 503, message: "The database is unreachable; retry later" })
      }
    } finally {
      proxy.restore()
    }
    await servedAgain(cold)
  })

  it("a call past MES_REQUEST_TIMEOUT is ServiceUnavailable, while the network swallows every packet", async () => {
    const { key } = await s.as("RPC timeout")
    expect(await getJob(key)).toBeInstanceOf(NotFound)
    proxy.blackHole()
    const messages: Array<string> = []
    try {
      // the first call may fail at once on a dropped pooled connection; the next ones wait for a connection
      for (let i = 0; i < 3; i++) {
        const e = await getJob(key)
        expect(e).toBeInstanceOf(ServiceUnavailable)
        messages.push(e.message)
      }
    } finally {
      proxy.restore()
    }
    expect(messages).toContain("The request did not finish within 800ms; retry later")
    await servedAgain(key)
  })
})
