// Load benchmark of the HTTP API: scenarios × databases, each against a fresh server process.
//
//   pnpm bench                                   # create+list × pglite+postgres, 10 s each, 1 round
//   pnpm bench --db pglite --scenario list --duration 5 --connections 10
//   pnpm bench --rounds 3 --wait-idle 60 --label skeleton   # → bench/results/<date>-skeleton.json
//   pnpm bench --scenario lifecycle --rounds 3 --wait-idle 60 --label lifecycle
//   pnpm bench --scenario webhooks --rounds 3 --wait-idle 60 --webhook-poll default,50ms --label webhooks
//
// Options: --db pglite|postgres|all
//   --scenario create|list|lifecycle|webhook-throughput|webhook-lag|webhooks|all (default create,list;
//     webhooks = both webhook scenarios; all = every scenario)
//   --duration 10  --warmup 2  --connections 10  --rounds 1 (db order alternates A B / B A)
//   --seed 200  --lifecycle-rate 600  --wait-idle 0
//   --webhooks 4  --webhook-events 2500  --webhook-rates 50,200  --webhook-poll default[,50ms]
//   --database-url <admin url, loopback only>  --pglite-dir memory|temp  --pg-pool 10
//   --out <file> | --label <name> | --no-write
//
// For every (round, db, scenario) it
//   1. (postgres) creates a fresh database mes_bench_<ts>_<rand> on the loopback server,
//   2. spawns `node --import tsx --conditions=development bench/server.ts` (a separate process, so the
//      load generator and the server do not share an event loop) and waits for its ready line,
//   3. seeds --seed jobs (5 parts × 4 operations each) through the API, then runs ANALYZE (after seeding,
//      never on empty tables: see /work/shared/STACK.md §11). lifecycle also creates 5 operators and seeds
//      enough jobs for (warm-up + duration) × --lifecycle-rate cycles, each operation used once,
//   4. checks one request (lifecycle: one whole cycle) by hand, runs a short warm-up, then measures with autocannon,
//   5. (lifecycle) verifies a sample of completed operations through the API and all of them in SQL,
//   6. stops the server process (quit on stdin, SIGKILL by pid after 10 s) and drops the database.
// Everything is bounded: fixed durations, fixed seed counts, per-step timeouts and a global watchdog.
// The webhook scenarios run the dispatcher inside the server (WebhookDispatcher.layerConfig, as `mes serve`) and
// a receiver in this process (bench/receiver.ts) that checks both signatures of every delivery:
//   webhook-throughput: --webhook-events job.created events go straight into the outbox (SQL) while the
//     dispatcher is stopped; then it starts, and deliveries/s = all deliveries ÷ (last arrival − start);
//   webhook-lag: POST /api-jobs (1 × 1 × 1) at each --webhook-rates events/s, open loop, for --duration s after
//     --warmup s; lag = arrival − the event's `timestamp`, p50/p99/max; once per --webhook-poll value.
//   Both require every delivery to arrive once and be recorded `succeeded` after one attempt.
// Exit code 1 when any response was non-2xx, any request errored or timed out, (lifecycle) the
// operations ran out or a verification failed, or (webhooks) a delivery was missing, duplicated, malformed or failed.
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import os from "node:os"
import { dirname, join, relative, resolve } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import autocannon from "autocannon"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Db } from "@mes/adapters-pg"
import { type Receiver, startReceiver } from "./receiver.ts"

const here = dirname(fileURLToPath(import.meta.url))
const root = resolve(here, "..")

// ---------------------------------------------------------------------------------------------
// options

const { values: opt } = parseArgs({
  options: {
    db: { type: "string", default: "pglite,postgres" }, // pglite | postgres | pglite,postgres
    scenario: { type: "string", default: "create,list" }, // create | list | create,list
    duration: { type: "string", default: "10" }, // measured seconds per run
    warmup: { type: "string", default: "2" }, // unmeasured seconds before each run
    connections: { type: "string", default: "10" },
    seed: { type: "string", default: "200" }, // jobs seeded before every run (list needs ≥ 100)
    "lifecycle-rate": { type: "string", default: "600" }, // lifecycle: cycles/s the seed is sized for (never run out)
    webhooks: { type: "string", default: "4" }, // webhook scenarios: webhooks registered, each subscribed to job.created
    "webhook-events": { type: "string", default: "2500" }, // webhook-throughput: events in the burst
    "webhook-rates": { type: "string", default: "50,200" }, // webhook-lag: events/s
    "webhook-poll": { type: "string", default: "default" }, // webhook-lag: MES_WEBHOOK_POLL_INTERVAL values (default = unset)
    rounds: { type: "string", default: "1" }, // repetitions; db order alternates (A B, B A, …)
    "database-url": { type: "string" }, // admin URL; default DATABASE_URL or postgres://postgres@127.0.0.1:5432/test
    "pglite-dir": { type: "string", default: "memory" }, // memory | temp
    "pg-pool": { type: "string", default: "10" }, // server's pool size on postgres
    out: { type: "string" }, // results JSON path (default bench/results/<date>-run.json)
    label: { type: "string", default: "run" },
    "wait-idle": { type: "string", default: "0" }, // wait up to N s for the machine to go idle before measuring
    "no-write": { type: "boolean", default: false },
    help: { type: "boolean", default: false }
  }
})

if (opt.help) {
  const lines = readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n")
  console.log(lines.slice(0, lines.findIndex((l) => !l.startsWith("//"))).join("\n"))
  process.exit(0)
}

const list = <T extends string>(raw: string, allowed: ReadonlyArray<T>, what: string): Array<T> => {
  const items = raw === "all" ? [...allowed] : raw.split(",").map((s) => s.trim()).filter((s) => s !== "")
  for (const item of items) if (!allowed.includes(item as T)) throw new Error(`unknown ${what} "${item}" (${allowed.join("|")}|all)`)
  return items as Array<T>
}
const int = (name: string, raw: string, min: number, max: number) => {
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer in [${min}, ${max}], got ${raw}`)
  return n
}

type DbKind = "pglite" | "postgres"
type Scenario = "create" | "list" | "lifecycle" | WebhookScenario
type WebhookScenario = "webhook-throughput" | "webhook-lag"
const isWebhook = (s: Scenario): s is WebhookScenario => s === "webhook-throughput" || s === "webhook-lag"
const dbs = list<DbKind>(opt.db!, ["pglite", "postgres"], "db")
// `webhooks` stands for both webhook scenarios
const scenarios = [...new Set(list<Scenario>(
  opt.scenario!.split(",").flatMap((s) => (s.trim() === "webhooks" ? ["webhook-throughput", "webhook-lag"] : [s])).join(","),
  ["create", "list", "lifecycle", "webhook-throughput", "webhook-lag"],
  "scenario"
))]
const duration = int("duration", opt.duration!, 1, 600)
const warmup = int("warmup", opt.warmup!, 0, 60)
const connections = int("connections", opt.connections!, 1, 1000)
const seedJobs = int("seed", opt.seed!, 0, 100_000)
const rounds = int("rounds", opt.rounds!, 1, 50)
const pgPool = int("pg-pool", opt["pg-pool"]!, 1, 90)
const waitIdle = int("wait-idle", opt["wait-idle"]!, 0, 600)
const lifecycleRate = int("lifecycle-rate", opt["lifecycle-rate"]!, 1, 100_000)
const webhookCount = int("webhooks", opt.webhooks!, 1, 50)
const webhookEvents = int("webhook-events", opt["webhook-events"]!, 1, 200_000)
const webhookRates = opt["webhook-rates"]!.split(",").map((r) => int("webhook-rates", r.trim(), 1, 5_000))
const webhookPolls = opt["webhook-poll"]!.split(",").map((p) => p.trim()).filter((p) => p !== "")
for (const p of webhookPolls) {
  if (p !== "default" && !/^\d+(ms|s)$/.test(p)) throw new Error(`--webhook-poll takes default or values like 50ms, 1s; got ${p}`)
}
if (scenarios.includes("list") && seedJobs < 200) throw new Error("--seed must be ≥ 200 for the list scenario")
const adminUrl = opt["database-url"] ?? (process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test")
{
  const host = new URL(adminUrl).hostname
  if (!["127.0.0.1", "localhost", "[::1]", "::1"].includes(host)) throw new Error(`refusing non-loopback database host ${host}`)
}

const PARTS = 5
const OPS = 4
const LIST_LIMIT = 100
/** lifecycle: the four requests of one cycle, in order; `user_id` goes with start and resume */
const STEPS = ["start", "pause", "resume", "complete"] as const
type Step = (typeof STEPS)[number]
const OPERATORS = 5
const VERIFY_SAMPLE = 20

/**
 * lifecycle: jobs to seed so that no run runs out of fresh operations — (warm-up + duration) × --lifecycle-rate
 * cycles, plus the hand-made check and up to 2 cycles per connection left unfinished when each phase stops.
 */
const lifecycleJobs = () =>
  Math.max(seedJobs, Math.ceil((Math.ceil((warmup + duration) * lifecycleRate) + 2 * connections + 1) / (PARTS * OPS)))
const jobsFor = (scenario: Scenario) => (scenario === "lifecycle" ? lifecycleJobs() : seedJobs)

// ---------------------------------------------------------------------------------------------
// helpers

const log = (...parts: ReadonlyArray<unknown>) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}]`, ...parts)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const withTimeout = <A>(what: string, ms: number, p: Promise<A>): Promise<A> =>
  new Promise<A>((res, rej) => {
    const t = setTimeout(() => rej(new Error(`${what}: timed out after ${ms} ms`)), ms)
    p.then((a) => (clearTimeout(t), res(a)), (e) => (clearTimeout(t), rej(e)))
  })
const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

/** The nested create payload: 1 job × 5 parts × 4 operations. */
const job = (jobNumber: string) => ({
  job_number: jobNumber,
  customer: "Bench Customer",
  parts: Array.from({ length: PARTS }, (_, i) => ({
    part_number: `P-${i + 1}`,
    quantity: 2,
    operations: Array.from({ length: OPS }, (_, j) => ({ operation_name: `Op ${j + 1}`, sequence: j + 1 }))
  }))
})

/** Fraction (0..1) of all cores busy over the next `ms`: other work on the machine skews results. */
const cpuBusy = async (ms = 1000) => {
  const snap = () => os.cpus().reduce((a, c) => {
    const t = c.times
    return { busy: a.busy + t.user + t.nice + t.sys + t.irq, total: a.total + t.user + t.nice + t.sys + t.irq + t.idle }
  }, { busy: 0, total: 0 })
  const a = snap()
  await sleep(ms)
  const b = snap()
  return b.total === a.total ? 0 : Math.round((b.busy - a.busy) / (b.total - a.total) * 100) / 100
}
/** Waits (at most `seconds`) until the machine is below 20 % busy; returns the last reading. */
const settle = async (seconds: number) => {
  const until = Date.now() + seconds * 1000
  let busy = await cpuBusy()
  while (busy > 0.2 && Date.now() < until) busy = await cpuBusy()
  return busy
}

// --- admin connection (postgres only): create / drop a fresh database

const admin = <A>(f: (sql: SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(
    Effect.gen(function*() {
      return yield* f(yield* SqlClient)
    }).pipe(Effect.provide(Db.postgres(adminUrl, { maxConnections: 1 })), Effect.scoped) as Effect.Effect<A, unknown>
  )
const createDatabase = async () => {
  const name = `mes_bench_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  await admin((sql) => sql.unsafe(`CREATE DATABASE ${name}`).raw)
  const u = new URL(adminUrl)
  u.pathname = `/${name}`
  return { name, url: u.toString() }
}
const dropDatabase = (name: string) => admin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).raw)
const postgresVersion = () =>
  admin((sql) => sql.unsafe<{ version: string }>("SELECT version() AS version")).then((r) => r[0]!.version, (e) => `unavailable: ${String(e)}`)

// --- the server process

interface Server {
  readonly child: ChildProcess
  readonly url: string
  readonly key: string
  readonly tenant: string
  readonly command: (cmd: string) => Promise<Record<string, unknown>>
  readonly stop: () => Promise<void>
  readonly stderrTail: () => string
}

const live = new Set<ChildProcess>()

const startServer = async (db: DbKind, pgUrl?: string, extraEnv: Record<string, string> = {}): Promise<Server> => {
  const args = ["--import", "tsx", "--conditions=development", join(here, "server.ts"), "--db", db]
  if (db === "postgres") args.push("--url", pgUrl!, "--max-connections", String(pgPool))
  else args.push("--data-dir", opt["pglite-dir"]!)
  // process.execPath is the node binary itself, so child.pid is the server (no npx/tsx wrapper in between)
  const child = spawn(process.execPath, args, {
    cwd: root,
    // the dispatcher's settings come only from the runner (webhook scenarios), never from the caller's shell
    env: {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("MES_WEBHOOK_"))),
      MES_LOG_REQUESTS: "false",
      ...extraEnv
    },
    stdio: ["pipe", "pipe", "pipe"]
  })
  live.add(child)
  child.on("exit", () => live.delete(child))
  let stderr = ""
  child.stderr!.on("data", (d) => {
    stderr = (stderr + String(d)).slice(-4000)
  })
  const waiting: Array<(msg: Record<string, unknown>) => void> = []
  let onReady: ((msg: Record<string, unknown>) => void) | undefined
  createInterface({ input: child.stdout! }).on("line", (line) => {
    if (!line.startsWith("{")) return // Effect's own log lines ("Listening on …")
    const msg = JSON.parse(line) as Record<string, unknown>
    if (msg.ready === true) onReady?.(msg)
    else waiting.shift()?.(msg)
  })
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)))
  const ready = await withTimeout(
    "server start",
    120_000,
    Promise.race([
      new Promise<Record<string, unknown>>((r) => (onReady = r)),
      exited.then((code) => {
        throw new Error(`server exited with ${code} before ready:\n${stderr}`)
      })
    ])
  )
  const command = (cmd: string) =>
    withTimeout(`server command ${cmd}`, 120_000, new Promise<Record<string, unknown>>((r) => {
      waiting.push(r)
      child.stdin!.write(cmd + "\n")
    })).then((msg) => {
      if (msg.error !== undefined) throw new Error(`server command ${cmd} failed: ${String(msg.error)}`)
      return msg
    })
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.stdin!.end("quit\n")
    const code = await Promise.race([exited, sleep(10_000).then(() => "timeout" as const)])
    if (code === "timeout" && child.pid !== undefined) {
      log(`server pid ${child.pid} did not exit after quit; SIGKILL`)
      process.kill(child.pid, "SIGKILL")
      await withTimeout("server kill", 10_000, exited)
    }
  }
  return { child, url: String(ready.url), key: String(ready.key), tenant: String(ready.tenant), command, stop, stderrTail: () => stderr }
}

// --- direct HTTP (seeding and shape checks)

const http = async (server: Server, method: string, path: string, body?: unknown) => {
  const res = await fetch(server.url + path, {
    method,
    headers: { "content-type": "application/json", authorization: `Bearer ${server.key}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000)
  })
  const text = await res.text()
  return { status: res.status, text, json: () => JSON.parse(text) as any }
}

/** Seeds `n` jobs; with `collect`, returns their operation ids as [job][part][operation]. */
const seed = async (server: Server, n: number, collect = false) => {
  const ops: Array<Array<Array<string>>> = []
  let next = 0
  const worker = async () => {
    while (next < n) {
      const i = next++
      const r = await http(server, "POST", "/api-jobs", job(`SEED-${String(i).padStart(6, "0")}`))
      if (r.status !== 201) throw new Error(`seed POST /api-jobs answered ${r.status}: ${r.text.slice(0, 500)}`)
      if (collect) {
        const parts = r.json().data?.parts
        const ids = Array.isArray(parts) ? parts.map((p: any) => (p.operations ?? []).map((o: any) => String(o.operation_id))) : []
        if (ids.length !== PARTS || ids.some((p: Array<string>) => p.length !== OPS)) {
          throw new Error(`seed reply has no ${PARTS} × ${OPS} operation ids: ${r.text.slice(0, 500)}`)
        }
        ops[i] = ids
      }
    }
  }
  await Promise.all(Array.from({ length: 4 }, worker))
  return ops
}

// --- lifecycle: operations handed out once each, and the checks of a finished cycle

interface Cycle {
  readonly op: string
  readonly user: string
}
/** Every operation is taken once, by one connection, which walks it through all 4 steps: no 409 by construction. */
interface OpQueue {
  readonly items: ReadonlyArray<Cycle>
  next: number
}
/**
 * Operation order: the 1st operation of every part of every job, then the 2nd, … Consecutive cycles (which run
 * concurrently on different connections) belong to different jobs and parts, so they do not queue on one part
 * row (the roll-up locks it). Operators are assigned round-robin.
 */
const opQueue = (ops: ReadonlyArray<ReadonlyArray<ReadonlyArray<string>>>, operators: ReadonlyArray<string>): OpQueue => {
  const items: Array<Cycle> = []
  for (let o = 0; o < OPS; o++) {
    for (let p = 0; p < PARTS; p++) {
      for (const j of ops) items.push({ op: j[p]![o]!, user: operators[items.length % operators.length]! })
    }
  }
  return { items, next: 0 }
}
const pathOf = (step: Step, c: Cycle) =>
  `/api-operation-lifecycle/${step}?id=${c.op}${step === "start" || step === "resume" ? `&user_id=${c.user}` : ""}`
/** What each step answers in data (spec 4.5). */
const EXPECT: Record<Step, { new_status: string; time_entry_ended: boolean }> = {
  start: { new_status: "in_progress", time_entry_ended: false },
  pause: { new_status: "on_hold", time_entry_ended: true },
  resume: { new_status: "in_progress", time_entry_ended: false },
  complete: { new_status: "completed", time_entry_ended: true }
}

interface CycleCheck {
  op: string
  entries: number
  sumMinutes: number
  actualTime: number
  /** actual_time === the sum of the entries' duration_minutes, bit for bit */
  exact: boolean
  problems: Array<string>
}
/** A finished cycle, through the API: 2 ended entries of its operator, status completed, actual_time = Σ durations. */
const verifyCycle = async (server: Server, c: Cycle): Promise<CycleCheck> => {
  const problems: Array<string> = []
  const te = await http(server, "GET", `/api-time-entries?operation_id=${c.op}&sort=start_time&order=asc`)
  const op = await http(server, "GET", `/api-operations?id=${c.op}`)
  if (te.status !== 200) problems.push(`GET /api-time-entries answered ${te.status}: ${te.text.slice(0, 300)}`)
  if (op.status !== 200) problems.push(`GET /api-operations answered ${op.status}: ${op.text.slice(0, 300)}`)
  const entries: Array<any> = te.status === 200 ? te.json().data?.time_entries ?? [] : []
  const operation = op.status === 200 ? op.json().data?.operation : undefined
  if (entries.length !== 2) problems.push(`${entries.length} time entries, expected 2`)
  for (const e of entries) {
    if (e.end_time === null || e.end_time === undefined) problems.push(`entry ${e.id} is not ended`)
    if (typeof e.duration_minutes !== "number" || e.duration_minutes < 0) problems.push(`entry ${e.id} duration_minutes ${e.duration_minutes}`)
    if (e.user_id !== c.user) problems.push(`entry ${e.id} user_id ${e.user_id}, expected ${c.user}`)
  }
  const sumMinutes = entries.reduce((a, e) => a + (typeof e.duration_minutes === "number" ? e.duration_minutes : NaN), 0)
  const actualTime = Number(operation?.actual_time)
  if (operation !== undefined && operation.status !== "completed") problems.push(`status ${operation.status}, expected completed`)
  if (!(Math.abs(actualTime - sumMinutes) <= 1e-9 * Math.max(1, Math.abs(sumMinutes)))) {
    problems.push(`actual_time ${actualTime} ≠ Σ duration_minutes ${sumMinutes}`)
  }
  return { op: c.op, entries: entries.length, sumMinutes, actualTime, exact: actualTime === sumMinutes, problems }
}
/** Evenly spaced sample of `k` items (first and last included). */
const sampleOf = <A>(xs: ReadonlyArray<A>, k: number): Array<A> =>
  xs.length <= k ? [...xs] : Array.from({ length: k }, (_, i) => xs[Math.round(i * (xs.length - 1) / (k - 1))]!)
const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.ceil(p / 100 * sorted.length) - 1)]!

// --- one measured run

interface Sample {
  status: number
  body: string
  /** lifecycle: which of the 4 requests answered */
  step?: Step
}
/** lifecycle: what one autocannon phase (warm-up or measured) did with its operations */
interface LifecyclePhase {
  readonly queue: OpQueue
  /** cycles begun: operations taken from the queue */
  taken: number
  /** cycles whose complete answered 2xx */
  readonly completed: Array<Cycle>
  readonly steps: Record<Step, { ok: number; non2xx: number; latencies: Array<number> }>
  /** ms after the phase began when the queue ran out (then the phase is stopped) */
  exhaustedAtMs?: number
  /** GET /health sent by a connection that found the queue empty, until the stop took effect */
  idleRequests: number
}
const lifecyclePhase = (queue: OpQueue): LifecyclePhase => ({
  queue,
  taken: 0,
  completed: [],
  steps: Object.fromEntries(STEPS.map((s) => [s, { ok: 0, non2xx: 0, latencies: [] }])) as unknown as LifecyclePhase["steps"],
  idleRequests: 0
})
interface RunResult {
  round: number
  db: DbKind
  scenario: Scenario
  reqPerSec: number
  reqPerSecStddev: number
  latencyMs: { p50: number; p90: number; p99: number; max: number; avg: number }
  requests: number
  ok2xx: number
  non2xx: number
  errors: number
  timeouts: number
  statusCodes: Record<string, number>
  non2xxSamples: ReadonlyArray<Sample>
  throughputBytesPerSec: number
  warmup: { requests: number; non2xx: number; errors: number }
  check: Record<string, unknown>
  rowsAfter: Record<string, unknown>
  setupMs: { start: number; seed: number; analyze: number }
  /** Machine CPU busy fraction in the second before measuring (server idle): foreign load. */
  cpuBusyBefore: number
  lifecycle?: LifecycleResult
}
interface LifecycleResult {
  /** measured cycles (complete answered 2xx) per second of the measured phase */
  cyclesPerSec: number
  cycles: number
  /** measured cycles begun (some are cut off when the phase stops) */
  cyclesStarted: number
  perStep: Record<Step, { ok: number; non2xx: number; p50: number | null; p99: number | null; avg: number | null }>
  operations: { seeded: number; check: number; warmup: number; measured: number; left: number }
  warmupCycles: number
  exhausted: boolean
  exhaustedAtMs?: number
  idleRequests: number
  /** a sample of the measured cycles, checked through the API */
  verify: { sampled: number; passed: number; exactActualTime: number; failures: ReadonlyArray<CycleCheck> }
  /** all completed operations, checked in SQL by the server (`lifecycle` command) */
  invariants: Record<string, unknown>
  /** anything that makes the run invalid (the run then exits 1) */
  problems: Array<string>
}

let jobCounter = 0
const runId = Date.now().toString(36)

const cannon = (server: Server, scenario: Scenario, seconds: number, samples: Array<Sample>, lc?: LifecyclePhase) =>
  new Promise<autocannon.Result>((res, rej) => {
    const base = new URL(server.url)
    const headers = { "content-type": "application/json", authorization: `Bearer ${server.key}` }
    const onResponse = (status: number, body: string, step?: Step) => {
      // up to 3 distinct bodies per status, 10 in all
      if (status >= 200 && status < 300 || samples.length >= 10) return
      const text = String(body).slice(0, 1000)
      if (samples.filter((x) => x.status === status).length < 3 && !samples.some((x) => x.status === status && x.body === text)) {
        samples.push({ status, body: text, ...(step === undefined ? {} : { step }) })
      }
    }
    let instance: autocannon.Instance | undefined
    const t0 = Date.now()
    // lifecycle: which step the response being recorded belongs to (onResponse runs just before the "response" event)
    let lastStep: Step | undefined
    // lifecycle: one request per step, run in order by each connection. autocannon gives every connection its
    // own context, reset when the sequence wraps around, so step 0 takes a fresh operation into it and steps 1-3
    // use that operation. The operation is never handed to another connection.
    const lifecycleRequest = (phase: LifecyclePhase, step: Step, i: number): autocannon.Request => ({
      method: "POST",
      path: `${base.pathname}/api-operation-lifecycle/${step}`,
      headers,
      setupRequest: (req, context) => {
        if (i === 0) {
          const cycle = phase.queue.items[phase.queue.next]
          if (cycle === undefined) {
            // out of fresh operations: stop this phase (autocannon stops at its next 1 s tick) and send a no-op
            // meanwhile; the run is reported as exhausted and fails
            if (phase.exhaustedAtMs === undefined) {
              phase.exhaustedAtMs = Date.now() - t0
              setImmediate(() => instance?.stop())
            }
            context.cycle = undefined
            return { ...req, method: "GET", path: `${base.pathname}/health` }
          }
          phase.queue.next++
          phase.taken++
          context.cycle = cycle
        }
        const cycle = context.cycle as Cycle | undefined
        // no operation in this sequence (exhausted): returning nothing restarts the sequence at step 0
        if (cycle === undefined) return undefined
        return { ...req, path: base.pathname + pathOf(step, cycle) }
      },
      onResponse: (status, body, context) => {
        const cycle = context.cycle as Cycle | undefined
        if (cycle === undefined) {
          phase.idleRequests++
          lastStep = undefined
          return
        }
        lastStep = step
        const s = phase.steps[step]
        if (status >= 200 && status < 300) {
          s.ok++
          if (step === "complete") phase.completed.push(cycle)
        } else {
          s.non2xx++
        }
        onResponse(status, body, step)
      }
    })
    const requests: Array<autocannon.Request> = scenario === "lifecycle"
      ? STEPS.map((step, i) => lifecycleRequest(lc!, step, i))
      : scenario === "create"
      ? [{
        method: "POST",
        path: `${base.pathname}/api-jobs`,
        headers,
        // a fresh body per request: unique job_number (run id + global counter)
        setupRequest: (req: autocannon.Request) => ({ ...req, body: JSON.stringify(job(`B-${runId}-${++jobCounter}`)) }),
        onResponse: (status, body) => onResponse(status, body)
      }]
      : [{ method: "GET", path: `${base.pathname}/api-jobs?limit=${LIST_LIMIT}`, headers, onResponse: (status, body) => onResponse(status, body) }]
    const running = autocannon({
      url: base.origin,
      connections,
      pipelining: 1,
      duration: seconds,
      timeout: 10,
      requests
    }, (err: unknown, result: autocannon.Result) => (err ? rej(err) : res(result)))
    instance = running
    if (lc !== undefined) {
      running.on("response", (_client, _status, _bytes, ms) => {
        if (lastStep !== undefined) lc.steps[lastStep].latencies.push(ms)
        lastStep = undefined
      })
    }
    // bounded even if autocannon misbehaves
    const guard = setTimeout(() => running.stop(), (seconds + 30) * 1000)
    running.on("done", () => clearTimeout(guard))
  })

/** lifecycle: cycles/s, per-step latencies, and the checks of what the measured phase left behind. */
const lifecycleResult = async (
  server: Server,
  r: autocannon.Result,
  queue: OpQueue,
  warm: LifecyclePhase,
  phase: LifecyclePhase,
  rows: Record<string, unknown>
): Promise<LifecycleResult> => {
  const problems: Array<string> = []
  for (const [name, p] of [["warm-up", warm], ["measured", phase]] as const) {
    if (p.exhaustedAtMs !== undefined) {
      problems.push(`${name} phase ran out of operations after ${p.exhaustedAtMs} ms (raise --lifecycle-rate)`)
    }
  }
  const perStep = Object.fromEntries(STEPS.map((step) => {
    const s = phase.steps[step]
    const sorted = [...s.latencies].sort((a, b) => a - b)
    const avg = sorted.length === 0 ? null : Math.round(sorted.reduce((a, x) => a + x, 0) / sorted.length * 100) / 100
    const round2 = (x: number | null) => (x === null ? null : Math.round(x * 100) / 100)
    return [step, { ok: s.ok, non2xx: s.non2xx, p50: round2(percentile(sorted, 50)), p99: round2(percentile(sorted, 99)), avg }]
  })) as LifecycleResult["perStep"]

  // a sample of the measured cycles through the API
  const checks: Array<CycleCheck> = []
  for (const c of sampleOf(phase.completed, VERIFY_SAMPLE)) checks.push(await verifyCycle(server, c))
  const failures = checks.filter((c) => c.problems.length > 0)
  if (phase.completed.length === 0) problems.push("no cycle completed in the measured phase")
  if (failures.length > 0) problems.push(`${failures.length} of ${checks.length} sampled operations do not add up`)

  // all completed operations in SQL; and the completed count against the 2xx completes (1 by hand + both phases;
  // up to one cut-off request per connection and phase may still have completed server-side)
  const invariants = await server.command("lifecycle")
  const answered = 1 + warm.completed.length + phase.completed.length
  const completed = Number(invariants.completed)
  if (completed < answered || completed > answered + 2 * connections) {
    problems.push(`${completed} completed operations in the database, ${answered} completes answered 2xx`)
  }
  if (Number(invariants.two_ended_entries) !== completed) problems.push(`not every completed operation has exactly 2 ended entries: ${JSON.stringify(invariants)}`)
  if (Number(invariants.actual_time_equal) !== completed) problems.push(`actual_time ≠ Σ duration_minutes somewhere: ${JSON.stringify(invariants)}`)
  if (Number(rows.operations) !== queue.items.length) problems.push(`${rows.operations} operations, ${queue.items.length} seeded`)

  return {
    cyclesPerSec: Math.round(phase.completed.length / r.duration * 10) / 10,
    cycles: phase.completed.length,
    cyclesStarted: phase.taken,
    perStep,
    operations: {
      seeded: queue.items.length,
      check: 1,
      warmup: warm.taken,
      measured: phase.taken,
      left: queue.items.length - queue.next
    },
    warmupCycles: warm.completed.length,
    exhausted: phase.exhaustedAtMs !== undefined || warm.exhaustedAtMs !== undefined,
    ...(phase.exhaustedAtMs === undefined ? {} : { exhaustedAtMs: phase.exhaustedAtMs }),
    idleRequests: warm.idleRequests + phase.idleRequests,
    verify: {
      sampled: checks.length,
      passed: checks.length - failures.length,
      exactActualTime: checks.filter((c) => c.exact).length,
      failures: failures.slice(0, 3)
    },
    invariants: Object.fromEntries(Object.entries(invariants).filter(([k]) => k !== "ok")),
    problems
  }
}

const runOne = async (round: number, db: DbKind, scenario: Scenario): Promise<RunResult> => {
  let database: { name: string; url: string } | undefined
  let server: Server | undefined
  try {
    const t0 = performance.now()
    if (db === "postgres") database = await createDatabase()
    server = await startServer(db, database?.url)
    const srv = server
    const t1 = performance.now()
    const jobs = jobsFor(scenario)
    const operators: Array<string> = []
    if (scenario === "lifecycle") {
      for (let i = 1; i <= OPERATORS; i++) {
        const r = await http(srv, "POST", "/api-profiles", { display_name: `Op ${i}` })
        const id = r.status === 201 ? r.json().data?.profile?.id : undefined
        if (typeof id !== "string") throw new Error(`POST /api-profiles answered ${r.status}: ${r.text.slice(0, 500)}`)
        operators.push(id)
      }
    }
    const seededOps = await seed(srv, jobs, scenario === "lifecycle")
    const t2 = performance.now()
    await srv.command("analyze")
    const t3 = performance.now()
    const seeded = await srv.command("counts")
    if (Number(seeded.jobs) !== jobs) throw new Error(`expected ${jobs} seeded jobs, found ${JSON.stringify(seeded)}`)
    const queue = opQueue(seededOps, operators)

    // one request by hand: status and shape
    let check: Record<string, unknown>
    if (scenario === "lifecycle") {
      // one whole cycle by hand, with the shape of every answer, then its time entries
      const cycle = queue.items[queue.next++]!
      const steps: Array<Record<string, unknown>> = []
      for (const step of STEPS) {
        const r = await http(srv, "POST", pathOf(step, cycle))
        if (r.status !== 200) throw new Error(`POST ${pathOf(step, cycle)} answered ${r.status}: ${r.text.slice(0, 500)}`)
        const d = r.json().data
        const want = EXPECT[step]
        if (d?.operation_type !== step || d.new_status !== want.new_status || d.time_entry_ended !== want.time_entry_ended || d.operation?.id !== cycle.op) {
          throw new Error(`${step} answered ${r.text.slice(0, 500)}, expected ${JSON.stringify({ operation_type: step, ...want })}`)
        }
        steps.push({ step, status: r.status, previous_status: d.previous_status, new_status: d.new_status, time_entry_ended: d.time_entry_ended, responseBytes: Buffer.byteLength(r.text) })
      }
      const verified = await verifyCycle(srv, cycle)
      if (verified.problems.length > 0) throw new Error(`the checked cycle does not add up: ${JSON.stringify(verified)}`)
      check = { operators: operators.length, operationsQueued: queue.items.length, steps, verify: verified }
    } else if (scenario === "list") {
      const r = await http(server, "GET", `/api-jobs?limit=${LIST_LIMIT}`)
      if (r.status !== 200) throw new Error(`GET /api-jobs?limit=${LIST_LIMIT} answered ${r.status}: ${r.text.slice(0, 500)}`)
      const jobs = r.json().data?.jobs
      if (!Array.isArray(jobs)) throw new Error(`list reply has no data.jobs: ${r.text.slice(0, 500)}`)
      const parts = jobs.map((j: any) => (Array.isArray(j.parts) ? j.parts.length : null))
      check = {
        status: r.status,
        jobs: jobs.length,
        partsPerJob: [...new Set(parts)],
        opsPerPart: [...new Set(jobs.flatMap((j: any) => (j.parts ?? []).map((p: any) => (Array.isArray(p.operations) ? p.operations.length : null))))],
        responseBytes: Buffer.byteLength(r.text),
        pagination: r.json().data?.pagination
      }
      if (jobs.length !== LIST_LIMIT) throw new Error(`list returned ${jobs.length} jobs, expected ${LIST_LIMIT}`)
    } else {
      const r = await http(server, "POST", "/api-jobs", job(`CHECK-${runId}-${round}`))
      if (r.status !== 201) throw new Error(`POST /api-jobs answered ${r.status}: ${r.text.slice(0, 500)}`)
      const parts = r.json().data?.parts
      check = {
        status: r.status,
        parts: Array.isArray(parts) ? parts.length : null,
        opsPerPart: Array.isArray(parts) ? [...new Set(parts.map((p: any) => p.operations?.length))] : null,
        requestBytes: Buffer.byteLength(JSON.stringify(job("B-xxxxxxxx-000000"))),
        responseBytes: Buffer.byteLength(r.text)
      }
    }

    // the server is idle here, so this is everyone else's load on the machine
    const busyBefore = await settle(waitIdle)
    if (busyBefore > 0.2) log(`warning: machine ${Math.round(busyBefore * 100)}% busy before warm-up (other processes)`)
    const samples: Array<Sample> = []
    let warm = { requests: 0, non2xx: 0, errors: 0 }
    const warmPhase = lifecyclePhase(queue)
    const phase = lifecyclePhase(queue)
    if (warmup > 0) {
      const w = await cannon(srv, scenario, warmup, samples, warmPhase)
      warm = { requests: w.requests.total, non2xx: w.non2xx, errors: w.errors + w.timeouts }
    }
    log(`${db}/${scenario} round ${round}: measuring ${duration}s, ${connections} connections`)
    const r = await cannon(srv, scenario, duration, samples, phase)
    const rowsAfter = await srv.command("counts")
    const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([k, v]) => [k, (v as { count: number }).count]))
    const result: RunResult = {
      round,
      db,
      scenario,
      reqPerSec: r.requests.average,
      reqPerSecStddev: r.requests.stddev,
      latencyMs: { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max, avg: r.latency.average },
      requests: r.requests.total,
      ok2xx: r["2xx"],
      non2xx: r.non2xx,
      errors: r.errors,
      timeouts: r.timeouts,
      statusCodes,
      non2xxSamples: samples,
      throughputBytesPerSec: r.throughput.average,
      warmup: warm,
      check,
      rowsAfter: scenario === "lifecycle"
        ? Object.fromEntries(Object.entries(rowsAfter).filter(([k]) => k !== "ok"))
        : { jobs: rowsAfter.jobs, parts: rowsAfter.parts, operations: rowsAfter.operations },
      setupMs: { start: Math.round(t1 - t0), seed: Math.round(t2 - t1), analyze: Math.round(t3 - t2) },
      cpuBusyBefore: busyBefore,
      ...(scenario === "lifecycle" ? { lifecycle: await lifecycleResult(srv, r, queue, warmPhase, phase, rowsAfter) } : {})
    }
    log(
      `${db}/${scenario} round ${round}: ${result.reqPerSec.toFixed(1)} req/s, p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms,` +
        ` non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts}`
    )
    if (result.lifecycle !== undefined) {
      const l = result.lifecycle
      log(
        `${db}/${scenario} round ${round}: ${l.cyclesPerSec.toFixed(1)} cycles/s (${l.cycles} cycles), verified ${l.verify.passed}/${l.verify.sampled},` +
          ` operations left ${l.operations.left}` + (l.problems.length > 0 ? `, PROBLEMS: ${l.problems.join("; ")}` : "")
      )
    }
    if (samples.length > 0) log(`non-2xx samples:`, JSON.stringify(samples, null, 1))
    return result
  } catch (e) {
    if (server !== undefined) log(`server stderr (tail):\n${server.stderrTail()}`)
    throw e
  } finally {
    if (server !== undefined) await server.stop().catch((e) => log(`stop failed: ${String(e)}`))
    if (database !== undefined) await dropDatabase(database.name).catch((e) => log(`drop ${database!.name} failed: ${String(e)}`))
  }
}

// ---------------------------------------------------------------------------------------------
// webhook scenarios: the dispatcher inside the server delivering to a receiver in this process

/** One webhook run: a scenario with its poll interval (and, for lag, its event rate). */
interface Case {
  readonly scenario: Scenario
  /** MES_WEBHOOK_POLL_INTERVAL for the server, "default" = unset (the dispatcher's 250 ms) */
  readonly poll?: string
  /** webhook-lag: events per second */
  readonly rate?: number
}
const cases: ReadonlyArray<Case> = scenarios.flatMap((scenario): Array<Case> =>
  scenario === "webhook-lag"
    ? webhookPolls.flatMap((poll) => webhookRates.map((rate) => ({ scenario, poll, rate })))
    : scenario === "webhook-throughput"
    ? [{ scenario, poll: "default" }]
    : [{ scenario }]
)
const pollEnv = (poll: string | undefined): Record<string, string> =>
  poll === undefined || poll === "default" ? {} : { MES_WEBHOOK_POLL_INTERVAL: poll }

/** The small nested create of the webhook scenarios: 1 job × 1 part × 1 operation (one job.created, one part.created). */
const smallJob = (jobNumber: string) => ({
  job_number: jobNumber,
  customer: "Bench Customer",
  parts: [{ part_number: "P-1", quantity: 2, operations: [{ operation_name: "Op 1", sequence: 1 }] }]
})

interface Stats {
  n: number
  min: number | null
  p50: number | null
  p90: number | null
  p99: number | null
  max: number | null
  avg: number | null
}
const stats = (xs: ReadonlyArray<number>): Stats => {
  const s = [...xs].sort((a, b) => a - b)
  const r1 = (x: number | null) => (x === null ? null : Math.round(x * 10) / 10)
  return {
    n: s.length,
    min: r1(s[0] ?? null),
    p50: r1(percentile(s, 50)),
    p90: r1(percentile(s, 90)),
    p99: r1(percentile(s, 99)),
    max: r1(s[s.length - 1] ?? null),
    avg: r1(s.length === 0 ? null : s.reduce((a, x) => a + x, 0) / s.length)
  }
}

interface WebhookRun {
  round: number
  db: DbKind
  scenario: WebhookScenario
  poll: string
  webhooks: number
  /** webhook-throughput */
  throughput?: {
    events: number
    expected: number
    /** expected ÷ (last arrival − dispatcher start) */
    deliveriesPerSec: number
    /** expected ÷ (last delivery recorded succeeded − dispatcher start), from webhook_deliveries.updated_at */
    recordedPerSec: number
    /** between the 10th and the 90th percentile of arrivals (no start-up, no tail) */
    steadyPerSec: number
    firstArrivalMs: number
    lastArrivalMs: number
    lastRecordedMs: number
    outboxInsertMs: number
    /** arrivals in each 500 ms after the dispatcher started */
    arrivalsPer500Ms: Array<number>
  }
  /** webhook-lag */
  lag?: {
    rate: number
    /** creates sent in the measured phase, and how many answered 201 */
    sent: number
    created: number
    achievedPerSec: number
    /** sends that left more than 5 ms after their slot (the API or the event loop fell behind) */
    late: number
    expected: number
    /** arrival − event timestamp, ms, over the measured deliveries */
    lagMs: Stats
    /** the same, only the first delivery (of the webhooks) of each event */
    firstLagMs: Stats
    apiMs: Stats
    apiNon201: number
    apiSamples: Array<string>
    check: { lagMs: Array<number> }
    warmup: { sent: number; created: number }
    /** from the start of the measured phase, per second: deliveries of measured events that arrived, and their p50 lag */
    perSecond: Array<{ arrived: number; lagP50Ms: number | null }>
  }
  receiver: {
    deliveries: number
    distinct: number
    duplicates: number
    signaturesOk: number
    problems: number
    problemSamples: Array<string>
    strays: number
    bodyBytes: Stats
  }
  server: Record<string, unknown>
  dispatcherEnv: Record<string, unknown>
  setupMs: { start: number; seed: number; analyze: number }
  cpuBusyBefore: number
  /** anything that makes the run invalid (the run then exits 1) */
  problems: Array<string>
}

/** Registers `count` webhooks at the receiver (/hook/<i>), each subscribed to job.created, and keeps their secrets. */
const registerWebhooks = async (srv: Server, receiver: Receiver, count: number) => {
  const ids: Array<string> = []
  for (let i = 0; i < count; i++) {
    const r = await http(srv, "POST", "/api-webhooks", { url: `http://127.0.0.1:${receiver.port}/hook/${i}`, events: ["job.created"] })
    const d = r.status === 201 ? r.json().data : undefined
    if (typeof d?.webhook?.id !== "string" || typeof d?.secret !== "string" || d.secret === "") {
      throw new Error(`POST /api-webhooks answered ${r.status}: ${r.text.slice(0, 500)}`)
    }
    receiver.secrets[i] = d.secret
    ids.push(d.webhook.id)
  }
  return ids
}

/**
 * Waits until `expected` deliveries have arrived: at most `ms`, and only until nothing arrived for 2 s while the
 * server has nothing left to send (then some are missing). The server is asked only after such a pause, so
 * polling it does not compete with the dispatcher.
 */
const arrived = async (srv: Server, receiver: Receiver, expected: number, ms: number) => {
  const until = Date.now() + ms
  let seen = -1
  let quietSince = Date.now()
  while (Date.now() < until) {
    if (await receiver.waitFor(expected, 500)) return true
    if (receiver.deliveries.length !== seen) {
      seen = receiver.deliveries.length
      quietSince = Date.now()
    } else if (Date.now() - quietSince >= 2_000) {
      const st = await srv.command("webhooks")
      if (Number(st.pending) === 0 && Number(st.outbox_undispatched) === 0 && receiver.deliveries.length === seen) return false
      quietSince = Date.now()
    }
  }
  return receiver.deliveries.length >= expected
}

/** Polls the server until no delivery is pending (or `ms` passed); returns the last status. */
const drained = async (srv: Server, expected: number, ms: number): Promise<Record<string, unknown>> => {
  const until = Date.now() + ms
  for (;;) {
    const st = await srv.command("webhooks")
    const done = Number(st.pending) === 0 && Number(st.deliveries) >= expected && Number(st.outbox_undispatched) === 0
    if (done || Date.now() > until) return { ...st, drained: done }
    await sleep(200)
  }
}

/** The checks common to both webhook scenarios: every delivery arrived once, well-formed, and succeeded in SQL. */
const webhookProblems = (receiver: Receiver, st: Record<string, unknown>, expected: number) => {
  const problems: Array<string> = []
  const distinct = new Set(receiver.deliveries.map((d) => d.deliveryId)).size
  if (receiver.deliveries.length !== expected) problems.push(`received ${receiver.deliveries.length} deliveries, expected ${expected}`)
  if (distinct !== receiver.deliveries.length) problems.push(`${receiver.deliveries.length - distinct} duplicate deliveries`)
  if (receiver.problems > 0) problems.push(`${receiver.problems} malformed deliveries: ${receiver.problemSamples.join(" | ")}`)
  if (receiver.strays > 0) problems.push(`${receiver.strays} stray requests at the receiver`)
  if (st.drained !== true) problems.push(`not drained: ${Number(st.pending)} pending, ${Number(st.outbox_undispatched)} outbox rows undispatched`)
  if (Number(st.deliveries) !== expected || Number(st.succeeded) !== expected) {
    problems.push(`webhook_deliveries: ${Number(st.deliveries)} rows, ${Number(st.succeeded)} succeeded, expected ${expected}`)
  }
  if (Number(st.failed) > 0 || Number(st.logs_not_succeeded) > 0) {
    problems.push(`${Number(st.failed)} failed deliveries, ${Number(st.logs_not_succeeded)} unsuccessful attempts: ${JSON.stringify(st.error_samples)}`)
  }
  if (Number(st.not_one_attempt) > 0) problems.push(`${Number(st.not_one_attempt)} deliveries took more than one attempt`)
  return { problems, distinct }
}

const receiverSummary = (receiver: Receiver, distinct: number): WebhookRun["receiver"] => ({
  deliveries: receiver.deliveries.length,
  distinct,
  duplicates: receiver.deliveries.length - distinct,
  signaturesOk: receiver.signaturesOk,
  problems: receiver.problems,
  problemSamples: receiver.problemSamples,
  strays: receiver.strays,
  bodyBytes: stats(receiver.deliveries.map((d) => d.bytes))
})

/**
 * Sends `n` small nested creates at `rate` per second, open loop: create i leaves at t0 + i/rate whether or
 * not earlier ones have answered (at most 256 in flight; past that it waits, and the send counts as late).
 */
const produce = async (srv: Server, rate: number, n: number, prefix: string, out: { api: Array<number>; non201: number; samples: Array<string>; late: number; created: number }) => {
  const inFlight = new Set<Promise<void>>()
  const t0 = performance.now()
  for (let i = 0; i < n; i++) {
    const due = t0 + i * 1000 / rate
    const wait = due - performance.now()
    if (wait > 0) await sleep(wait)
    while (inFlight.size >= 256) await Promise.race(inFlight)
    if (performance.now() - due > 5) out.late++
    const started = performance.now()
    const p = http(srv, "POST", "/api-jobs", smallJob(`${prefix}-${runId}-${String(i).padStart(6, "0")}`)).then(
      (r) => {
        out.api.push(performance.now() - started)
        if (r.status === 201) out.created++
        else {
          out.non201++
          if (out.samples.length < 3) out.samples.push(`${r.status}: ${r.text.slice(0, 300)}`)
        }
      },
      (e) => {
        out.non201++
        if (out.samples.length < 3) out.samples.push(`error: ${String(e)}`)
      }
    ).finally(() => inFlight.delete(p))
    inFlight.add(p)
  }
  await Promise.all(inFlight)
  return (performance.now() - t0) / 1000
}

const runWebhooks = async (round: number, db: DbKind, c: Case): Promise<WebhookRun> => {
  const scenario = c.scenario as WebhookScenario
  const poll = c.poll ?? "default"
  let database: { name: string; url: string } | undefined
  let server: Server | undefined
  let receiver: Receiver | undefined
  try {
    const t0 = performance.now()
    if (db === "postgres") database = await createDatabase()
    server = await startServer(db, database?.url, pollEnv(poll))
    const srv = server
    const t1 = performance.now()
    // the same seed as the other scenarios, then ANALYZE (never on empty tables). No webhook exists yet, so the
    // seed's events are marked dispatched: a dispatcher would have fanned them out to nobody.
    await seed(srv, seedJobs)
    await srv.command("outbox done")
    const t2 = performance.now()
    receiver = await startReceiver(srv.tenant)
    const rcv = receiver
    await registerWebhooks(srv, rcv, webhookCount)

    if (scenario === "webhook-throughput") {
      // a real job.created payload to copy, then the burst straight into the outbox while the dispatcher is stopped
      const r = await http(srv, "POST", "/api-jobs", smallJob(`WH-TEMPLATE-${runId}`))
      if (r.status !== 201) throw new Error(`POST /api-jobs answered ${r.status}: ${r.text.slice(0, 500)}`)
      const burst = await srv.command(`outbox ${webhookEvents}`)
      const events = Number(burst.job_created_undispatched)
      const expected = events * webhookCount
      await srv.command("analyze")
      const t3 = performance.now()
      const busyBefore = await settle(waitIdle)
      if (busyBefore > 0.2) log(`warning: machine ${Math.round(busyBefore * 100)}% busy before measuring (other processes)`)
      log(`${db}/${scenario} round ${round}: ${events} events × ${webhookCount} webhooks = ${expected} deliveries, starting the dispatcher`)
      const started = await srv.command("dispatcher start")
      const startedAt = Number(started.started_at_ms)
      const all = await arrived(srv, rcv, expected, 180_000)
      if (!all) log(`${db}/${scenario}: only ${rcv.deliveries.length} of ${expected} deliveries arrived`)
      const st = await drained(srv, expected, 60_000)
      await sleep(500) // anything still arriving (a duplicate) is counted
      await srv.command("dispatcher stop")
      const { problems, distinct } = webhookProblems(rcv, st, expected)
      const arrivals = rcv.deliveries.map((d) => d.arrivalMs).sort((a, b) => a - b)
      const last = arrivals[arrivals.length - 1] ?? NaN
      const a10 = arrivals[Math.floor(arrivals.length * 0.1)] ?? NaN
      const a90 = arrivals[Math.floor(arrivals.length * 0.9)] ?? NaN
      const perSec = (n: number, ms: number) => Math.round(n / (ms / 1000) * 10) / 10
      const result: WebhookRun = {
        round,
        db,
        scenario,
        poll,
        webhooks: webhookCount,
        throughput: {
          events,
          expected,
          deliveriesPerSec: perSec(rcv.deliveries.length, last - startedAt),
          recordedPerSec: perSec(Number(st.succeeded), Number(st.last_succeeded_ms) - startedAt),
          steadyPerSec: perSec(Math.floor(arrivals.length * 0.9) - Math.floor(arrivals.length * 0.1), a90 - a10),
          firstArrivalMs: (arrivals[0] ?? NaN) - startedAt,
          lastArrivalMs: last - startedAt,
          lastRecordedMs: Math.round(Number(st.last_succeeded_ms) - startedAt),
          outboxInsertMs: Number(burst.ms),
          arrivalsPer500Ms: arrivals.reduce((acc: Array<number>, a) => {
            const i = Math.max(0, Math.floor((a - startedAt) / 500))
            while (acc.length <= i) acc.push(0)
            acc[i]!++
            return acc
          }, [])
        },
        receiver: receiverSummary(rcv, distinct),
        server: Object.fromEntries(Object.entries(st).filter(([k]) => k !== "ok")),
        dispatcherEnv: started.env as Record<string, unknown>,
        setupMs: { start: Math.round(t1 - t0), seed: Math.round(t2 - t1), analyze: Math.round(t3 - t2) },
        cpuBusyBefore: busyBefore,
        problems
      }
      const tp = result.throughput!
      log(
        `${db}/${scenario} round ${round}: ${tp.deliveriesPerSec} deliveries/s (received), ${tp.recordedPerSec}/s (recorded), steady ${tp.steadyPerSec}/s,` +
          ` first after ${tp.firstArrivalMs} ms, signatures ok ${rcv.signaturesOk}/${rcv.deliveries.length}` +
          (problems.length > 0 ? `, PROBLEMS: ${problems.join("; ")}` : "")
      )
      return result
    }

    // webhook-lag: the dispatcher runs from the start; events come from POST /api-jobs at a fixed rate
    const rate = c.rate!
    await srv.command("analyze")
    const t3 = performance.now()
    const started = await srv.command("dispatcher start")
    // one event by hand, end to end: all webhooks get it, well-formed
    const check = await http(srv, "POST", "/api-jobs", smallJob(`LC-${runId}-${round}`))
    if (check.status !== 201) throw new Error(`POST /api-jobs answered ${check.status}: ${check.text.slice(0, 500)}`)
    if (!(await rcv.waitFor(webhookCount, 10_000))) throw new Error(`the check event reached ${rcv.deliveries.length} of ${webhookCount} webhooks within 10 s`)
    if (rcv.problems > 0) throw new Error(`the check event's deliveries are malformed: ${rcv.problemSamples.join(" | ")}`)
    const checkLag = rcv.deliveries.map((d) => d.arrivalMs - d.eventMs)
    const busyBefore = await settle(waitIdle)
    if (busyBefore > 0.2) log(`warning: machine ${Math.round(busyBefore * 100)}% busy before warm-up (other processes)`)
    const warm = { api: [] as Array<number>, non201: 0, samples: [] as Array<string>, late: 0, created: 0 }
    const meas = { api: [] as Array<number>, non201: 0, samples: [] as Array<string>, late: 0, created: 0 }
    const warmN = Math.round(warmup * rate)
    const measN = Math.round(duration * rate)
    if (warmN > 0) await produce(srv, rate, warmN, "LW", warm)
    log(`${db}/${scenario} round ${round}: ${rate} events/s for ${duration}s, ${webhookCount} webhooks, poll ${poll}`)
    const measureStart = Date.now()
    const seconds = await produce(srv, rate, measN, "LM", meas)
    const expected = (1 + warm.created + meas.created) * webhookCount
    const all = await arrived(srv, rcv, expected, 60_000)
    if (!all) log(`${db}/${scenario}: only ${rcv.deliveries.length} of ${expected} deliveries arrived`)
    const st = await drained(srv, expected, 30_000)
    await sleep(500)
    await srv.command("dispatcher stop")
    const { problems, distinct } = webhookProblems(rcv, st, expected)
    if (warm.non201 + meas.non201 > 0) problems.push(`${warm.non201 + meas.non201} creates not answered 201: ${[...warm.samples, ...meas.samples].join(" | ")}`)
    const measured = rcv.deliveries.filter((d) => d.jobNumber.startsWith(`LM-${runId}-`))
    const first = new Map<string, number>()
    for (const d of measured) first.set(d.jobNumber, Math.min(first.get(d.jobNumber) ?? Infinity, d.arrivalMs - d.eventMs))
    const lagMs = stats(measured.map((d) => d.arrivalMs - d.eventMs))
    if (lagMs.min !== null && lagMs.min < 0) problems.push(`negative lag ${lagMs.min} ms (clock?)`)
    const result: WebhookRun = {
      round,
      db,
      scenario,
      poll,
      webhooks: webhookCount,
      lag: {
        rate,
        sent: measN,
        created: meas.created,
        achievedPerSec: Math.round(measN / seconds * 10) / 10,
        late: meas.late,
        expected: meas.created * webhookCount,
        lagMs,
        firstLagMs: stats([...first.values()]),
        apiMs: stats(meas.api),
        apiNon201: meas.non201,
        apiSamples: meas.samples,
        check: { lagMs: checkLag },
        warmup: { sent: warmN, created: warm.created },
        perSecond: (() => {
          const buckets: Array<Array<number>> = []
          for (const d of measured) {
            const i = Math.max(0, Math.floor((d.arrivalMs - measureStart) / 1000))
            while (buckets.length <= i) buckets.push([])
            buckets[i]!.push(d.arrivalMs - d.eventMs)
          }
          return buckets.map((b) => ({ arrived: b.length, lagP50Ms: percentile([...b].sort((x, y) => x - y), 50) }))
        })()
      },
      receiver: receiverSummary(rcv, distinct),
      server: Object.fromEntries(Object.entries(st).filter(([k]) => k !== "ok")),
      dispatcherEnv: started.env as Record<string, unknown>,
      setupMs: { start: Math.round(t1 - t0), seed: Math.round(t2 - t1), analyze: Math.round(t3 - t2) },
      cpuBusyBefore: busyBefore,
      problems
    }
    if (measured.length !== meas.created * webhookCount) problems.push(`${measured.length} measured deliveries, expected ${meas.created * webhookCount}`)
    log(
      `${db}/${scenario} round ${round}: ${rate}/s (achieved ${result.lag!.achievedPerSec}/s, late ${meas.late}), lag p50 ${lagMs.p50} ms, p99 ${lagMs.p99} ms,` +
        ` max ${lagMs.max} ms (p50 in the 1st / last second ${result.lag!.perSecond[0]?.lagP50Ms} / ${result.lag!.perSecond[Math.min(duration, result.lag!.perSecond.length) - 1]?.lagP50Ms} ms);` +
        ` API p50 ${result.lag!.apiMs.p50} ms; signatures ok ${rcv.signaturesOk}/${rcv.deliveries.length}` +
        (problems.length > 0 ? `, PROBLEMS: ${problems.join("; ")}` : "")
    )
    return result
  } catch (e) {
    if (server !== undefined) log(`server stderr (tail):\n${server.stderrTail()}`)
    throw e
  } finally {
    if (server !== undefined) await server.stop().catch((e) => log(`stop failed: ${String(e)}`))
    if (receiver !== undefined) await receiver.close().catch((e) => log(`receiver close failed: ${String(e)}`))
    if (database !== undefined) await dropDatabase(database.name).catch((e) => log(`drop ${database!.name} failed: ${String(e)}`))
  }
}

// ---------------------------------------------------------------------------------------------
// main

const killAll = () => {
  for (const child of live) if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, "SIGKILL")
}
// per run: its phases plus 300 s of setup and checks; webhook runs may also wait up to 240 s for deliveries
const budgetMs = rounds * dbs.length * cases.reduce((a, c) => a + duration + warmup + waitIdle + 300 + (isWebhook(c.scenario) ? 240 : 0), 0) * 1000
const watchdog = setTimeout(() => {
  log(`watchdog: exceeded ${budgetMs / 1000}s, killing the server and exiting`)
  killAll()
  process.exit(2)
}, budgetMs)
watchdog.unref()
process.on("SIGINT", () => {
  killAll()
  process.exit(130)
})

const git = (...args: Array<string>) => {
  try {
    return execFileSync("git", args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim()
  } catch {
    return undefined
  }
}
const packageVersion = (from: string, name: string) => {
  try {
    // the entry point, then up to the package's own package.json (some packages do not export it)
    let dir = dirname(createRequire(join(root, from, "package.json")).resolve(name))
    for (let i = 0; i < 6; i++, dir = dirname(dir)) {
      try {
        const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string; version: string }
        if (pkg.name === name) return pkg.version
      } catch {
        // keep walking up
      }
    }
    return undefined
  } catch {
    return undefined
  }
}

/**
 * A fingerprint of the code under test: the contents of every file (tracked or untracked, not ignored) under
 * packages/, bench/*.ts and the lockfile. Others edit the same working tree, and every run starts a fresh server
 * from it, so a change in the middle of a recording is flagged. Commits alone do not change it.
 */
const treeState = () => {
  const files = git("ls-files", "--cached", "--others", "--exclude-standard", "--", "packages", "bench/*.ts", "pnpm-lock.yaml")
  if (files === undefined) return undefined
  const hash = createHash("sha256")
  for (const file of [...new Set(files.split("\n").filter((f) => f !== ""))].sort()) {
    hash.update(file + "\0")
    try {
      hash.update(readFileSync(join(root, file)))
    } catch {
      hash.update("(missing)")
    }
    hash.update("\0")
  }
  return hash.digest("hex").slice(0, 12)
}

const main = async () => {
  const started = new Date()
  const treeAtStart = treeState()
  const commitAtStart = git("rev-parse", "HEAD")
  const loadAtStart = os.loadavg().map((x) => Math.round(x * 100) / 100)
  const results: Array<RunResult> = []
  const webhookResults: Array<WebhookRun> = []
  for (let round = 1; round <= rounds; round++) {
    // interleave: A B in odd rounds, B A in even rounds (STACK.md §11: ±15 % noise between runs)
    const order = round % 2 === 1 ? dbs : [...dbs].reverse()
    for (const db of order) {
      for (const c of cases) {
        if (isWebhook(c.scenario)) webhookResults.push(await runWebhooks(round, db, c))
        else results.push(await runOne(round, db, c.scenario))
      }
    }
  }

  const summary = dbs.flatMap((db) =>
    scenarios.filter((s) => !isWebhook(s)).map((scenario) => {
      const rs = results.filter((r) => r.db === db && r.scenario === scenario)
      return {
        db,
        scenario,
        runs: rs.length,
        reqPerSec: Math.round(median(rs.map((r) => r.reqPerSec)) * 10) / 10,
        reqPerSecAll: rs.map((r) => Math.round(r.reqPerSec * 10) / 10),
        p50Ms: median(rs.map((r) => r.latencyMs.p50)),
        p99Ms: median(rs.map((r) => r.latencyMs.p99)),
        requests: rs.reduce((a, r) => a + r.requests, 0),
        non2xx: rs.reduce((a, r) => a + r.non2xx + r.warmup.non2xx, 0),
        errors: rs.reduce((a, r) => a + r.errors + r.timeouts + r.warmup.errors, 0),
        maxCpuBusyBefore: Math.max(...rs.map((r) => r.cpuBusyBefore)),
        ...(scenario === "lifecycle"
          ? {
            lifecycle: {
              cyclesPerSec: Math.round(median(rs.map((r) => r.lifecycle!.cyclesPerSec)) * 10) / 10,
              cyclesPerSecAll: rs.map((r) => r.lifecycle!.cyclesPerSec),
              cycles: rs.reduce((a, r) => a + r.lifecycle!.cycles, 0),
              stepP50Ms: Object.fromEntries(STEPS.map((step) => [step, median(rs.map((r) => r.lifecycle!.perStep[step].p50 ?? NaN))])),
              stepP99Ms: Object.fromEntries(STEPS.map((step) => [step, median(rs.map((r) => r.lifecycle!.perStep[step].p99 ?? NaN))])),
              verified: `${rs.reduce((a, r) => a + r.lifecycle!.verify.passed, 0)}/${rs.reduce((a, r) => a + r.lifecycle!.verify.sampled, 0)}`,
              exhausted: rs.filter((r) => r.lifecycle!.exhausted).length,
              problems: rs.flatMap((r) => r.lifecycle!.problems.map((p) => `round ${r.round}: ${p}`))
            }
          }
          : {})
      }
    })
  )

  const r1 = (x: number) => Math.round(x * 10) / 10
  const webhookSummary = dbs.flatMap((db) =>
    cases.filter((c) => isWebhook(c.scenario)).map((c) => {
      const rs = webhookResults.filter((r) => r.db === db && r.scenario === c.scenario && r.poll === (c.poll ?? "default") && r.lag?.rate === c.rate)
      const tp = rs.flatMap((r) => (r.throughput === undefined ? [] : [r.throughput]))
      const lg = rs.flatMap((r) => (r.lag === undefined ? [] : [r.lag]))
      return {
        db,
        scenario: c.scenario,
        poll: c.poll ?? "default",
        ...(c.rate === undefined ? {} : { rate: c.rate }),
        webhooks: webhookCount,
        runs: rs.length,
        deliveries: rs.reduce((a, r) => a + r.receiver.deliveries, 0),
        signaturesOk: rs.reduce((a, r) => a + r.receiver.signaturesOk, 0),
        failed: rs.reduce((a, r) => a + Number(r.server.failed) + Number(r.server.logs_not_succeeded), 0),
        maxCpuBusyBefore: Math.max(...rs.map((r) => r.cpuBusyBefore)),
        ...(tp.length > 0
          ? {
            throughput: {
              events: tp[0]!.events,
              deliveriesPerSec: r1(median(tp.map((t) => t.deliveriesPerSec))),
              deliveriesPerSecAll: tp.map((t) => t.deliveriesPerSec),
              recordedPerSec: r1(median(tp.map((t) => t.recordedPerSec))),
              steadyPerSec: r1(median(tp.map((t) => t.steadyPerSec))),
              firstArrivalMs: median(tp.map((t) => t.firstArrivalMs))
            }
          }
          : {}),
        ...(lg.length > 0
          ? {
            lag: {
              achievedPerSec: r1(median(lg.map((l) => l.achievedPerSec))),
              p50Ms: median(lg.map((l) => l.lagMs.p50 ?? NaN)),
              p90Ms: median(lg.map((l) => l.lagMs.p90 ?? NaN)),
              p99Ms: median(lg.map((l) => l.lagMs.p99 ?? NaN)),
              maxMs: median(lg.map((l) => l.lagMs.max ?? NaN)),
              p50MsAll: lg.map((l) => l.lagMs.p50),
              p99MsAll: lg.map((l) => l.lagMs.p99),
              firstP50Ms: median(lg.map((l) => l.firstLagMs.p50 ?? NaN)),
              apiP50Ms: median(lg.map((l) => l.apiMs.p50 ?? NaN)),
              apiP99Ms: median(lg.map((l) => l.apiMs.p99 ?? NaN)),
              late: lg.reduce((a, l) => a + l.late, 0)
            }
          }
          : {}),
        problems: rs.flatMap((r) => r.problems.map((p) => `round ${r.round}: ${p}`))
      }
    })
  )

  const commit = git("rev-parse", "HEAD")
  const dirty = git("status", "--porcelain")
  const treeAtEnd = treeState()
  if (treeAtStart !== treeAtEnd) log(`warning: the working tree changed during the run (${treeAtStart} → ${treeAtEnd}); runs may have tested different code`)
  const report = {
    date: started.toISOString(),
    command: `pnpm bench ${process.argv.slice(2).join(" ")}`.trim(),
    settings: {
      dbs,
      scenarios,
      durationSec: duration,
      warmupSec: warmup,
      connections,
      pipelining: 1,
      rounds,
      seedJobs,
      shape: { partsPerJob: PARTS, operationsPerPart: OPS, listLimit: LIST_LIMIT },
      ...(scenarios.includes("lifecycle")
        ? {
          lifecycle: {
            steps: STEPS,
            sizedForCyclesPerSec: lifecycleRate,
            seedJobs: lifecycleJobs(),
            operations: lifecycleJobs() * PARTS * OPS,
            operators: OPERATORS,
            verifySample: VERIFY_SAMPLE
          }
        }
        : {}),
      ...(scenarios.some(isWebhook)
        ? {
          webhooks: {
            webhooks: webhookCount,
            events: ["job.created"],
            create: "1 job × 1 part × 1 operation (job.created + part.created)",
            ...(scenarios.includes("webhook-throughput") ? { throughputEvents: webhookEvents, throughputPoll: "default" } : {}),
            ...(scenarios.includes("webhook-lag") ? { lagRatesPerSec: webhookRates, lagPolls: webhookPolls } : {}),
            pollDefault: "250 millis (MES_WEBHOOK_POLL_INTERVAL unset)",
            concurrencyDefault: 32,
            batchSizeDefault: 100
          }
        }
        : {}),
      pglite: opt["pglite-dir"] === "temp" ? "temp dataDir" : "in memory",
      postgresPool: pgPool,
      waitIdleSec: waitIdle
    },
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      memGiB: Math.round(os.totalmem() / 2 ** 30 * 10) / 10,
      // 1/5/15-minute load averages: anything else busy on the 2 cores skews the numbers
      loadavgAtStart: loadAtStart,
      loadavgAtEnd: os.loadavg().map((x) => Math.round(x * 100) / 100),
      platform: `${os.type()} ${os.release()}`,
      node: process.version,
      postgres: dbs.includes("postgres") ? await postgresVersion() : undefined,
      versions: {
        autocannon: packageVersion("bench", "autocannon"),
        effect: packageVersion("bench", "effect"),
        "@effect/sql-pg": packageVersion("packages/adapters-pg", "@effect/sql-pg"),
        "@electric-sql/pglite": packageVersion("packages/adapters-pg", "@electric-sql/pglite")
      }
    },
    git: {
      commit,
      ...(commitAtStart === commit ? {} : { commitAtStart }),
      dirtyFiles: dirty === undefined ? undefined : dirty.split("\n").filter((l) => l !== "").length,
      treeAtStart,
      treeAtEnd,
      changedDuringRun: treeAtStart !== treeAtEnd
    },
    summary,
    ...(webhookResults.length > 0 ? { webhookSummary } : {}),
    runs: results,
    ...(webhookResults.length > 0 ? { webhookRuns: webhookResults } : {})
  }

  if (summary.length > 0) {
    console.log("")
    console.log("| scenario | db | req/s (median) | p50 ms | p99 ms | non-2xx | errors | runs |")
    console.log("|---|---|---:|---:|---:|---:|---:|---:|")
    for (const s of summary) {
      console.log(`| ${s.scenario} | ${s.db} | ${s.reqPerSec} | ${s.p50Ms} | ${s.p99Ms} | ${s.non2xx} | ${s.errors} | ${s.runs} |`)
    }
  }
  const tps = webhookSummary.filter((s) => s.throughput !== undefined)
  if (tps.length > 0) {
    console.log("")
    console.log("| webhook-throughput | db | webhooks × events | deliveries/s (median) | per round | recorded/s | steady/s | first ms | failed | signatures ok |")
    console.log("|---|---|---|---:|---|---:|---:|---:|---:|---:|")
    for (const s of tps) {
      const t = s.throughput!
      console.log(
        `| poll ${s.poll} | ${s.db} | ${s.webhooks} × ${t.events} | ${t.deliveriesPerSec} | ${t.deliveriesPerSecAll.join(" / ")} | ${t.recordedPerSec} |` +
          ` ${t.steadyPerSec} | ${t.firstArrivalMs} | ${s.failed} | ${s.signaturesOk}/${s.deliveries} |`
      )
    }
  }
  const lags = webhookSummary.filter((s) => s.lag !== undefined)
  if (lags.length > 0) {
    console.log("")
    console.log("| webhook-lag | db | events/s (achieved) | lag p50 ms | p90 | p99 | max | p50 / p99 per round | API p50 / p99 ms | failed | signatures ok |")
    console.log("|---|---|---|---:|---:|---:|---:|---|---|---:|---:|")
    for (const s of lags) {
      const l = s.lag!
      console.log(
        `| poll ${s.poll} | ${s.db} | ${s.rate} (${l.achievedPerSec}) | ${l.p50Ms} | ${l.p90Ms} | ${l.p99Ms} | ${l.maxMs} |` +
          ` ${l.p50MsAll.map((p, i) => `${p} / ${l.p99MsAll[i]}`).join(", ")} | ${l.apiP50Ms} / ${l.apiP99Ms} | ${s.failed} | ${s.signaturesOk}/${s.deliveries} |`
      )
    }
  }
  const cycles = summary.filter((s) => s.lifecycle !== undefined)
  if (cycles.length > 0) {
    console.log("")
    console.log("| lifecycle | db | cycles/s (median) | per round | p50 ms start/pause/resume/complete | verified | exhausted |")
    console.log("|---|---|---:|---|---|---:|---:|")
    for (const s of cycles) {
      const l = s.lifecycle!
      console.log(
        `| lifecycle | ${s.db} | ${l.cyclesPerSec} | ${l.cyclesPerSecAll.join(" / ")} | ${STEPS.map((step) => l.stepP50Ms[step]).join(" / ")} |` +
          ` ${l.verified} | ${l.exhausted} |`
      )
    }
  }

  if (!opt["no-write"]) {
    const out = resolve(opt.out ?? join(here, "results", `${started.toISOString().slice(0, 10)}-${opt.label}.json`))
    mkdirSync(dirname(out), { recursive: true })
    writeFileSync(out, JSON.stringify(report, null, 2) + "\n")
    log(`wrote ${relative(process.cwd(), out)}`)
  }
  const bad = summary.filter((s) => s.non2xx > 0 || s.errors > 0)
  if (bad.length > 0) {
    log(`FAILED: non-2xx responses or errors in ${bad.map((s) => `${s.db}/${s.scenario}`).join(", ")}`)
    process.exitCode = 1
  }
  for (const s of webhookSummary) {
    if (s.problems.length > 0) {
      log(`FAILED: ${s.db}/${s.scenario} poll ${s.poll}${"rate" in s ? ` rate ${s.rate}/s` : ""}: ${s.problems.join("; ")}`)
      process.exitCode = 1
    }
  }
  for (const s of summary) {
    if (s.lifecycle !== undefined && s.lifecycle.problems.length > 0) {
      log(`FAILED: ${s.db}/lifecycle: ${s.lifecycle.problems.join("; ")}`)
      process.exitCode = 1
    }
  }
}

main()
  .catch((e) => {
    log(`failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`)
    killAll()
    process.exitCode = 1
  })
  .finally(() => clearTimeout(watchdog))
