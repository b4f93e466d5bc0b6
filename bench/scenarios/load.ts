// The common run of the request scenarios (create, list, lifecycle): a fresh server, the seed, ANALYZE, one
// check by hand, then an autocannon warm-up and the measured phase. The scenarios supply the seed, the check and
// the requests (scenarios/create.ts, list.ts, lifecycle.ts).
import autocannon from "autocannon"
import { connections, type DbKind, duration, type LoadScenarioName, warmup, waitIdle } from "../lib/options.ts"
import { type Server, withFreshServer } from "../lib/server-process.ts"
import { log, settle } from "../lib/util.ts"
import type { Step } from "./lifecycle-ops.ts"
import type { LifecycleResult } from "./lifecycle-verify.ts"

export interface Sample {
  status: number
  body: string
  /** lifecycle: which of the 4 requests answered */
  step?: Step
}

/** What the requests of one autocannon phase can use. */
export interface PhaseContext {
  /** the server's base URL (…/functions/v1) */
  readonly base: URL
  readonly headers: Record<string, string>
  /** keeps a non-2xx answer as a sample (up to 3 distinct bodies per status, 10 in all) */
  readonly sample: (status: number, body: string, step?: Step) => void
  /** stops the phase (autocannon stops at its next 1 s tick) */
  readonly stop: () => void
  /** Date.now() when the phase began */
  readonly t0: number
}
export interface Phase {
  readonly requests: Array<autocannon.Request>
  /** autocannon's latency of each response, in order */
  readonly onLatency?: (ms: number) => void
}

/** A request scenario: how many jobs it seeds, and the seed itself. */
export interface LoadScenario {
  readonly jobs: number
  /** seeds the server (setupMs.seed); the rest of the run follows from what it returns */
  readonly seed: (srv: Server, round: number) => Promise<LoadRun>
}
export interface LoadRun {
  /** one request (lifecycle: one whole cycle) by hand, after ANALYZE: status and shape → the run's `check` */
  readonly check: () => Promise<Record<string, unknown>>
  /** the requests of the warm-up and of the measured phase */
  readonly phase: (which: "warmup" | "measured", ctx: PhaseContext) => Phase
  /** lifecycle: cycles/s, per-step latencies and the checks of what the measured phase left behind */
  readonly lifecycle?: {
    readonly result: (r: autocannon.Result, rowsAfter: Record<string, unknown>) => Promise<LifecycleResult>
    readonly logLine: (l: LifecycleResult) => string
  }
}

export interface RunResult {
  round: number
  db: DbKind
  scenario: LoadScenarioName
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

const cannon = (server: Server, seconds: number, samples: Array<Sample>, build: (ctx: PhaseContext) => Phase) =>
  new Promise<autocannon.Result>((res, rej) => {
    const base = new URL(server.url)
    const headers = { "content-type": "application/json", authorization: `Bearer ${server.key}` }
    const sample = (status: number, body: string, step?: Step) => {
      // up to 3 distinct bodies per status, 10 in all
      if (status >= 200 && status < 300 || samples.length >= 10) return
      const text = String(body).slice(0, 1000)
      if (samples.filter((x) => x.status === status).length < 3 && !samples.some((x) => x.status === status && x.body === text)) {
        samples.push({ status, body: text, ...(step === undefined ? {} : { step }) })
      }
    }
    let instance: autocannon.Instance | undefined
    const phase = build({ base, headers, sample, stop: () => instance?.stop(), t0: Date.now() })
    const running = autocannon({
      url: base.origin,
      connections,
      pipelining: 1,
      duration: seconds,
      timeout: 10,
      requests: phase.requests
    }, (err: unknown, result: autocannon.Result) => (err ? rej(err) : res(result)))
    instance = running
    const onLatency = phase.onLatency
    if (onLatency !== undefined) running.on("response", (_client, _status, _bytes, ms) => onLatency(ms))
    // bounded even if autocannon misbehaves
    const guard = setTimeout(() => running.stop(), (seconds + 30) * 1000)
    running.on("done", () => clearTimeout(guard))
  })

export const runLoad = (round: number, db: DbKind, scenario: LoadScenarioName, def: LoadScenario): Promise<RunResult> =>
  withFreshServer(db, {}, async ({ server: srv, t0 }) => {
    const t1 = performance.now()
    const run = await def.seed(srv, round)
    const t2 = performance.now()
    await srv.command("analyze")
    const t3 = performance.now()
    const seeded = await srv.command("counts")
    if (Number(seeded.jobs) !== def.jobs) throw new Error(`expected ${def.jobs} seeded jobs, found ${JSON.stringify(seeded)}`)
    const check = await run.check()

    const busyBefore = await settle(waitIdle, "warm-up")
    const samples: Array<Sample> = []
    let warm = { requests: 0, non2xx: 0, errors: 0 }
    if (warmup > 0) {
      const w = await cannon(srv, warmup, samples, (ctx) => run.phase("warmup", ctx))
      warm = { requests: w.requests.total, non2xx: w.non2xx, errors: w.errors + w.timeouts }
    }
    log(`${db}/${scenario} round ${round}: measuring ${duration}s, ${connections} connections`)
    const r = await cannon(srv, duration, samples, (ctx) => run.phase("measured", ctx))
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
      rowsAfter: run.lifecycle !== undefined
        ? Object.fromEntries(Object.entries(rowsAfter).filter(([k]) => k !== "ok"))
        : { jobs: rowsAfter.jobs, parts: rowsAfter.parts, operations: rowsAfter.operations },
      setupMs: { start: Math.round(t1 - t0), seed: Math.round(t2 - t1), analyze: Math.round(t3 - t2) },
      cpuBusyBefore: busyBefore,
      ...(run.lifecycle !== undefined ? { lifecycle: await run.lifecycle.result(r, rowsAfter) } : {})
    }
    log(
      `${db}/${scenario} round ${round}: ${result.reqPerSec.toFixed(1)} req/s, p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms,` +
        ` non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts}`
    )
    if (run.lifecycle !== undefined && result.lifecycle !== undefined) log(`${db}/${scenario} round ${round}: ${run.lifecycle.logLine(result.lifecycle)}`)
    if (samples.length > 0) log(`non-2xx samples:`, JSON.stringify(samples, null, 1))
    return result
  })
