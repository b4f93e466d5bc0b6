// A stateful model test of the lifecycles (spec 3.1-3.3; DECISIONS "States"; docs/DECISIONS.md "Time entries",
// "Part roll-up", "Batches"). fast-check draws sequences of job, operation and batch moves (lifecycle endpoints
// and PATCH status) and runs them against a real server. After every step the server must agree with a small
// model: each answer's HTTP status, error code and statuses; every job, operation, part and batch status; the
// timestamps a move sets or clears; the open time entries; and, for the operations, completed_at and 100 %
// exactly when completed, actual_time = the sum of the ended entries. Some steps send two moves at once: the two
// answers and the state after them must be those of one of the two orders. Time entries made by hand (open or
// ended) are steps too. Seeded (MES_MODEL_SEED, default 1).
import { isDeepStrictEqual } from "node:util"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, type Harness, nestedJob, startServer } from "./harness.ts"

const SEED = Number(process.env.MES_MODEL_SEED ?? 1)
const RUNS = Number(process.env.MES_MODEL_RUNS ?? 40)
/** Time for the runs (and shrinking a failure): grows with MES_MODEL_RUNS, so a long run is not cut short. */
const LIMIT_MS = Math.max(90_000, RUNS * 1_500)
const PARTS = 2
const OPS_PER_PART = 2
const OPS = PARTS * OPS_PER_PART
const USERS = 2

type Status = "not_started" | "in_progress" | "on_hold" | "completed"
type BatchStatus = "draft" | "ready" | "in_progress" | "completed" | "cancelled"
type OpAction = "start" | "pause" | "resume" | "complete"
type JobAction = "start" | "stop" | "resume" | "complete"

/** A record with a status and the two timestamps a move may set or clear (started_at, paused_at). */
interface Stamped {
  readonly status: Status
  readonly started: boolean
  readonly paused: boolean
}

interface Model {
  readonly job: Stamped
  readonly ops: ReadonlyArray<Stamped>
  readonly parts: ReadonlyArray<Status>
  /** Open time entries as "operation:user", sorted. */
  readonly open: ReadonlyArray<string>
  readonly batches: ReadonlyArray<{ readonly status: BatchStatus; readonly ops: ReadonlyArray<number> }>
}

type Move =
  | { readonly k: "op"; readonly op: number; readonly action: OpAction; readonly user: number | undefined; readonly allowed?: number }
  | { readonly k: "opPatch"; readonly op: number; readonly status: Status | "paused" }
  | { readonly k: "job"; readonly action: JobAction; readonly allowed?: number }
  | { readonly k: "jobPatch"; readonly status: Status }
  | { readonly k: "batchStart"; readonly batch: number; readonly user: number | undefined }
  | { readonly k: "batchStop"; readonly batch: number }
  | { readonly k: "batchPatch"; readonly batch: number; readonly status: "ready" | "cancelled" }
  | { readonly k: "batchAdd"; readonly batch: number; readonly ops: ReadonlyArray<number> }
  /** POST /api-time-entries for the operator, started an hour ago; `ended`: with an end_time (now). */
  | { readonly k: "entry"; readonly op: number; readonly user: number; readonly ended: boolean }
type Step = Move | { readonly k: "batchCreate"; readonly ops: ReadonlyArray<number> } | { readonly k: "pair"; readonly a: Move; readonly b: Move }

/** What the server should answer: the HTTP status, and the error code or the move's statuses. */
interface Answer {
  readonly status: number
  readonly code?: string
  readonly previous?: string
  readonly next?: string
  readonly ended?: boolean
}

// ---------------------------------------------------------------------------------------------
// the model: spec 3 as the tables say it, with the effects DECISIONS gives them

const fresh: Model = {
  job: { status: "not_started", started: false, paused: false },
  ops: Array.from({ length: OPS }, () => ({ status: "not_started" as const, started: false, paused: false })),
  parts: Array.from({ length: PARTS }, () => "not_started" as const),
  open: [],
  batches: []
}

const opFrom: Record<OpAction, ReadonlyArray<Status>> = { start: ["not_started", "on_hold"], pause: ["in_progress"], resume: ["on_hold"], complete: ["in_progress"] }
const jobFrom: Record<JobAction, ReadonlyArray<Status>> = { start: ["not_started", "on_hold"], stop: ["in_progress"], resume: ["on_hold"], complete: ["in_progress"] }
const target: Record<OpAction | JobAction, Status> = { start: "in_progress", resume: "in_progress", pause: "on_hold", stop: "on_hold", complete: "completed" }

/** The record after a move to `to`: start and resume clear paused_at and set started_at once; pause/stop set paused_at. */
const stamp = (r: Stamped, to: Status): Stamped => ({
  status: to,
  started: r.started || to === "in_progress",
  paused: to === "in_progress" ? false : to === "on_hold" ? true : r.paused
})

/** A PATCH to `to` is the lifecycle move that leads there from the current status (DECISIONS "States"). */
const patchAction = <A extends string>(from: Record<A, ReadonlyArray<Status>>, current: Status, to: Status): A | undefined =>
  (Object.keys(from) as Array<A>)
    .filter((a) => target[a as OpAction] === to && from[a].includes(current))
    .sort((a, b) => from[a].length - from[b].length)[0]

const refused: Answer = { status: 409, code: "INVALID_STATE_TRANSITION" }
const rollUp = (ops: ReadonlyArray<Stamped>): Array<Status> =>
  Array.from({ length: PARTS }, (_, p) => {
    const mine = ops.slice(p * OPS_PER_PART, (p + 1) * OPS_PER_PART)
    return mine.every((o) => o.status === "completed") ? "completed" : mine.some((o) => o.status !== "not_started") ? "in_progress" : "not_started"
  })
const withOps = (m: Model, ops: ReadonlyArray<Stamped>, open: ReadonlyArray<string>): Model => ({ ...m, ops, parts: rollUp(ops), open: [...new Set(open)].sort() })
const closeEntries = (open: ReadonlyArray<string>, ops: ReadonlyArray<number>) => open.filter((e) => !ops.includes(Number(e.split(":")[0])))
/** The batch that holds `op`: a cancelled one holds none (DECISIONS), a create or add-operations takes them from it. */
const batchOf = (m: Model, op: number) => m.batches.findIndex((b) => b.status !== "cancelled" && b.ops.includes(op))
const takenFromCancelled = (batches: Model["batches"], ops: ReadonlyArray<number>) =>
  batches.map((b) => (b.status === "cancelled" ? { ...b, ops: b.ops.filter((op) => !ops.includes(op)) } : b))

/** The answer to a move and the model after it. */
const apply = (m: Model, s: Move): { answer: Answer; next: Model } => {
  switch (s.k) {
    case "op":
    case "opPatch": {
      const current = m.ops[s.op]!.status
      const to = s.k === "op" ? target[s.action] : s.status === "paused" ? "on_hold" : s.status
      // PATCH completed is allowed from any state (spec 3.2); other PATCH targets are the lifecycle move there
      const action: OpAction | undefined = s.k === "op"
        ? (opFrom[s.action].includes(current) ? s.action : undefined)
        : to === "completed" ? "complete" : patchAction(opFrom, current, to)
      if (action === undefined) return { answer: refused, next: m }
      const ops = m.ops.map((o, i) => (i === s.op ? stamp(o, to) : o))
      const closes = to !== "in_progress"
      const user = s.k === "op" ? s.user : undefined
      const open = closes ? closeEntries(m.open, [s.op]) : user === undefined ? m.open : [...m.open, `${s.op}:${user}`]
      const ended = closes && m.open.length !== open.length
      return {
        answer: s.k === "op" ? { status: 200, previous: current, next: to, ended } : { status: 200 },
        next: withOps(m, ops, open)
      }
    }
    case "job":
    case "jobPatch": {
      const current = m.job.status
      const to = s.k === "job" ? target[s.action] : s.status
      const ok = s.k === "job" ? jobFrom[s.action].includes(current) : patchAction(jobFrom, current, to) !== undefined
      if (!ok) return { answer: refused, next: m }
      return { answer: s.k === "job" ? { status: 200, previous: current, next: to } : { status: 200 }, next: { ...m, job: stamp(m.job, to) } }
    }
    case "entry": {
      // an ended entry only adds minutes; an open one is refused on an operation on hold or completed, and for an
      // operator who has one open there already (DECISIONS "Time entries")
      if (s.ended) return { answer: { status: 201 }, next: m }
      const key = `${s.op}:${s.user}`
      const status = m.ops[s.op]!.status
      if (status === "on_hold" || status === "completed" || m.open.includes(key)) return { answer: { status: 409, code: "CONFLICT" }, next: m }
      return { answer: { status: 201 }, next: withOps(m, m.ops, [...m.open, key]) }
    }
    default: {
      const b = m.batches[s.batch]!
      const setBatch = (status: BatchStatus, ops = b.ops) => m.batches.map((x, i) => (i === s.batch ? { status, ops } : x))
      const answer = (to: BatchStatus): Answer => ({ status: 200, previous: b.status, next: to })
      switch (s.k) {
        case "batchStart": {
          if (b.status !== "draft" && b.status !== "ready") return { answer: refused, next: m }
          // its operations that may start do; the operator gets an entry on each that is not completed
          const ops = m.ops.map((o, i) => (b.ops.includes(i) && opFrom.start.includes(o.status) ? stamp(o, "in_progress") : o))
          const opened = s.user === undefined ? [] : b.ops.filter((i) => ops[i]!.status !== "completed").map((i) => `${i}:${s.user}`)
          return { answer: answer("in_progress"), next: { ...withOps(m, ops, [...m.open, ...opened]), batches: setBatch("in_progress") } }
        }
        case "batchStop": {
          if (b.status !== "in_progress") return { answer: refused, next: m }
          const ops = m.ops.map((o, i) => (b.ops.includes(i) && o.status !== "completed" ? stamp(o, "completed") : o))
          return { answer: answer("completed"), next: { ...withOps(m, ops, closeEntries(m.open, b.ops)), batches: setBatch("completed") } }
        }
        case "batchPatch": {
          const ok = s.status === "ready" ? b.status === "draft" : b.status === "draft" || b.status === "ready"
          return ok ? { answer: { status: 200 }, next: { ...m, batches: setBatch(s.status) } } : { answer: refused, next: m }
        }
        case "batchAdd": {
          if (s.ops.some((op) => batchOf(m, op) >= 0)) return { answer: { status: 409 }, next: m }
          if (b.status !== "draft" && b.status !== "ready") return { answer: refused, next: m }
          return { answer: { status: 200 }, next: { ...m, batches: takenFromCancelled(setBatch(b.status, [...b.ops, ...s.ops]), s.ops) } }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// the server

let h: Harness
let api: ReturnType<typeof client>
let users: Array<string>
let cell: string
let runs = 0
/** How often each kind of step got each status (MES_MODEL_VERBOSE prints it; the test checks the spread). */
const seen = new Map<string, number>()
const count = (what: string) => seen.set(what, (seen.get(what) ?? 0) + 1)
const countMove = (s: Move, status: number) =>
  count(`${s.k}${"action" in s ? ` ${s.action}` : ""}${"status" in s ? ` ${s.status}` : ""}${"ended" in s ? (s.ended ? " ended" : " open") : ""} ${status}`)

/** One run's records: the job, its operations in model order, and its batches in creation order. */
interface Run {
  readonly job: string
  readonly ops: ReadonlyArray<string>
  readonly batches: Array<string>
}

beforeAll(async () => {
  h = await startServer()
  api = (await h.as("Model")).api
  users = []
  for (let u = 0; u < USERS; u++) users.push((await api.post("/api-profiles", { display_name: `Operator ${u}` })).body.data.profile.id)
  cell = (await api.post("/api-cells", { name: "Saw" })).body.data.cell.id
})
afterAll(() => h?.close())

const request = (r: Run, s: Move) => {
  const user = (u: number | undefined) => (u === undefined ? "" : `&user_id=${users[u]}`)
  switch (s.k) {
    case "op": return api.post(`/api-operation-lifecycle/${s.action}?id=${r.ops[s.op]}${user(s.user)}`)
    case "opPatch": return api.patch(`/api-operations?id=${r.ops[s.op]}`, { status: s.status })
    case "job": return api.post(`/api-job-lifecycle/${s.action}?id=${r.job}`)
    case "jobPatch": return api.patch(`/api-jobs?id=${r.job}`, { status: s.status })
    case "batchStart": return api.post(`/api-batch-lifecycle/start?id=${r.batches[s.batch]}`, s.user === undefined ? {} : { operator_id: users[s.user] })
    case "batchStop": return api.post(`/api-batch-lifecycle/stop?id=${r.batches[s.batch]}`)
    case "batchPatch": return api.patch(`/api-batches?id=${r.batches[s.batch]}`, { status: s.status })
    case "batchAdd": return api.post(`/api-batch-lifecycle/add-operations?id=${r.batches[s.batch]}`, { operation_ids: s.ops.map((i) => r.ops[i]) })
    case "entry": return api.post("/api-time-entries", {
      operation_id: r.ops[s.op],
      user_id: users[s.user],
      start_time: new Date(Date.now() - 3_600_000).toISOString(),
      ...(s.ended ? { end_time: new Date().toISOString() } : {})
    })
  }
}

/** What the server answered, in the terms of `Answer` (only what the expectation names). */
const answerOf = (res: Awaited<ReturnType<typeof request>>, expected: Answer): Answer => {
  const d = res.body?.data
  return {
    status: res.status,
    ...(expected.code !== undefined ? { code: res.body?.error?.code } : {}),
    ...(expected.previous !== undefined ? { previous: d?.previous_status, next: d?.new_status } : {}),
    ...(expected.ended !== undefined ? { ended: d?.time_entry_ended } : {})
  }
}

const stamped = (r: { status: Status; started_at: string | null; paused_at: string | null }): Stamped => ({
  status: r.status,
  started: r.started_at !== null,
  paused: r.paused_at !== null
})

/** The server's state in the model's terms; also checks what holds in every state (completion, actual_time). */
const observe = async (r: Run): Promise<Model> => {
  const [ops, parts, job, batches, ...entries] = await Promise.all([
    api.get(`/api-operations?job_id=${r.job}&limit=100`),
    api.get(`/api-parts?job_id=${r.job}&limit=100`),
    api.get(`/api-jobs?id=${r.job}`),
    Promise.all(r.batches.map((b) => api.get(`/api-batches?id=${b}`))),
    ...r.ops.map((o) => api.get(`/api-time-entries?operation_id=${o}&limit=1000`))
  ])
  const byId = new Map<string, any>(ops.body.data.operations.map((o: any) => [o.id, o]))
  const open: Array<string> = []
  r.ops.forEach((id, i) => {
    const o = byId.get(id)!
    const list: Array<any> = entries[i]!.body.data.time_entries
    for (const e of list) if (e.end_time === null) open.push(`${i}:${users.indexOf(e.user_id)}`)
    const what = `operation ${i}: ${JSON.stringify(o)}`
    expect(o.completed_at !== null, what).toBe(o.status === "completed")
    if (o.status === "completed") expect(o.completion_percentage, what).toBe(100)
    if (list.length > 0) {
      const ended = list.filter((e) => e.end_time !== null).reduce((sum, e) => sum + Number(e.duration_minutes), 0)
      expect(Number(o.actual_time), `${what}: actual_time is the sum of its ended entries`).toBeCloseTo(ended, 6)
    }
  })
  const partOf = new Map<string, Status>(parts.body.data.parts.map((p: any) => [p.id, p.status]))
  return {
    job: stamped(job.body.data.job),
    ops: r.ops.map((id) => stamped(byId.get(id))),
    parts: Array.from({ length: PARTS }, (_, p) => partOf.get(byId.get(r.ops[p * OPS_PER_PART]!)!.part_id)!),
    open: open.sort(),
    batches: batches.map((b) => ({
      status: b.body.data.batch.status,
      ops: b.body.data.batch.operation_ids.map((id: string) => r.ops.indexOf(id))
    }))
  }
}

const newRun = async (): Promise<Run> => {
  const created = (await api.post("/api-jobs", nestedJob(`M-${++runs}`, PARTS, OPS_PER_PART))).body.data
  return {
    job: created.job_id,
    ops: created.parts.flatMap((p: any) => p.operations.map((o: any) => o.operation_id)),
    batches: []
  }
}

// ---------------------------------------------------------------------------------------------
// the steps

const opIndex = fc.integer({ min: 0, max: OPS - 1 })
// mostly the first batch, so its moves meet every status it passes through
const batchIndex = fc.oneof({ arbitrary: fc.constant(0), weight: 3 }, { arbitrary: fc.integer({ min: 1, max: 2 }), weight: 1 })
const user = fc.option(fc.integer({ min: 0, max: USERS - 1 }), { nil: undefined })
/** Present: the move is the allowed action of this index (modulo) in the state it meets, so runs go deep. */
const allowed = fc.nat(3)
const someOps = fc.subarray([...Array(OPS).keys()], { minLength: 1, maxLength: 2 })
const move: fc.Arbitrary<Move> = fc.oneof(
  { arbitrary: fc.record({ k: fc.constant("op" as const), op: opIndex, action: fc.constantFrom<OpAction>("start", "pause", "resume", "complete"), user, allowed }, { requiredKeys: ["k", "op", "action", "user"] }), weight: 8 },
  { arbitrary: fc.record({ k: fc.constant("opPatch" as const), op: opIndex, status: fc.constantFrom<Status | "paused">("not_started", "in_progress", "on_hold", "paused", "completed") }), weight: 3 },
  { arbitrary: fc.record({ k: fc.constant("job" as const), action: fc.constantFrom<JobAction>("start", "stop", "resume", "complete"), allowed }, { requiredKeys: ["k", "action"] }), weight: 3 },
  { arbitrary: fc.record({ k: fc.constant("jobPatch" as const), status: fc.constantFrom<Status>("not_started", "in_progress", "on_hold", "completed") }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant("batchStart" as const), batch: batchIndex, user }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant("batchStop" as const), batch: batchIndex }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant("batchPatch" as const), batch: batchIndex, status: fc.constantFrom("ready" as const, "cancelled" as const) }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant("batchAdd" as const), batch: batchIndex, ops: someOps }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant("entry" as const), op: opIndex, user: fc.integer({ min: 0, max: USERS - 1 }), ended: fc.boolean() }), weight: 2 }
)
const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: move, weight: 10 },
  { arbitrary: fc.record({ k: fc.constant("batchCreate" as const), ops: someOps }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant("pair" as const), a: move, b: move }), weight: 3 }
)

/** The action an `allowed` index picks from those the current status permits (none: the drawn action, refused). */
const pick = <A extends string>(from: Record<A, ReadonlyArray<Status>>, current: Status, drawn: A, index: number | undefined): A => {
  const ok = (Object.keys(from) as Array<A>).filter((a) => from[a].includes(current))
  return index === undefined || ok.length === 0 ? drawn : ok[index % ok.length]!
}
const concrete = (m: Model, s: Move): Move =>
  s.k === "op" ? { k: "op", op: s.op, user: s.user, action: pick(opFrom, m.ops[s.op]!.status, s.action, s.allowed) }
  : s.k === "job" ? { k: "job", action: pick(jobFrom, m.job.status, s.action, s.allowed) }
  : s

/** A move that names a batch not created yet is left out (the model has nothing to say about it). */
const applies = (m: Model, s: Move) => !("batch" in s) || s.batch < m.batches.length

const runSteps = async (steps: ReadonlyArray<Step>) => {
  const r = await newRun()
  let m = fresh
  const log: Array<string> = []
  for (const drawn of steps) {
    const s: Step = drawn.k === "pair" ? { k: "pair", a: concrete(m, drawn.a), b: concrete(m, drawn.b) } : drawn.k === "batchCreate" ? drawn : concrete(m, drawn)
    log.push(JSON.stringify(s))
    const where = () => `after ${log.join("\n  ")}`
    if (s.k === "batchCreate") {
      const taken = s.ops.some((op) => batchOf(m, op) >= 0)
      const res = await api.post("/api-batches", { batch_number: `MB-${runs}-${r.batches.length}`, cell_id: cell, operation_ids: s.ops.map((i) => r.ops[i]) })
      expect(res.status, `${where()}: ${JSON.stringify(res.body)}`).toBe(taken ? 409 : 201)
      if (!taken) {
        r.batches.push(res.body.data.batch.id)
        m = { ...m, batches: [...takenFromCancelled(m.batches, s.ops), { status: "draft", ops: s.ops }] }
      }
    } else if (s.k === "pair") {
      if (!applies(m, s.a) || !applies(m, s.b)) continue
      const [resA, resB] = await Promise.all([request(r, s.a), request(r, s.b)])
      // either order will do, as long as both answers and the state come from the same one
      const ab = apply(m, s.a)
      const abB = apply(ab.next, s.b)
      const ba = apply(m, s.b)
      const baA = apply(ba.next, s.a)
      const state = await observe(r)
      const candidates = [
        { answers: [ab.answer, abB.answer], state: abB.next },
        { answers: [baA.answer, ba.answer], state: baA.next }
      ]
      const observed = candidates.map((c) => ({ answers: [answerOf(resA, c.answers[0]!), answerOf(resB, c.answers[1]!)], state }))
      const match = candidates.findIndex((c, i) => isDeepStrictEqual(c, observed[i]))
      if (match < 0) {
        expect(observed[0], `${where()}: neither order (a then b, b then a: ${JSON.stringify(candidates[1])}); bodies ${JSON.stringify([resA.body, resB.body])}`).toEqual(candidates[0])
      }
      countMove(s.a, resA.status)
      countMove(s.b, resB.status)
      count(`pair ${s.a.k}+${s.b.k} ${resA.status}/${resB.status}${isDeepStrictEqual(candidates[0], candidates[1]) ? "" : ` order ${match}`}`)
      m = candidates[match]!.state
    } else {
      if (!applies(m, s)) continue
      const res = await request(r, s)
      const { answer, next } = apply(m, s)
      expect(answerOf(res, answer), `${where()}: ${JSON.stringify(res.body)}`).toEqual(answer)
      countMove(s, res.status)
      m = next
      expect(await observe(r), where()).toEqual(m)
    }
  }
}

describe("lifecycles against a model (seed MES_MODEL_SEED)", () => {
  it("every answer and every state after job, operation and batch moves, one at a time and two at once", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 8, maxLength: 30, size: "max" }), runSteps),
      { seed: SEED, numRuns: RUNS, endOnFailure: false, interruptAfterTimeLimit: LIMIT_MS, markInterruptAsFailure: false }
    )
    if (process.env.MES_MODEL_VERBOSE) console.log([...seen].sort().map(([k, n]) => `${n}\t${k}`).join("\n"))
    // the steps reach both answers of every move, and pairs where the order decides
    for (const k of ["op start", "op pause", "op resume", "op complete", "job start", "batchStart", "batchStop"]) {
      expect([...seen.keys()].filter((s) => s.startsWith(k)).map((s) => s.split(" ").at(-1)), k).toEqual(expect.arrayContaining(["200", "409"]))
    }
    expect([...seen.keys()].filter((s) => s.startsWith("entry open")).map((s) => s.split(" ").at(-1)), "entry open").toEqual(expect.arrayContaining(["201", "409"]))
    expect([...seen.keys()].some((s) => s.includes(" order ")), "a pair whose two orders end apart").toBe(true)
  }, LIMIT_MS + 30_000)
})
