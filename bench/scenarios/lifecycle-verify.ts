// lifecycle: the checks of finished cycles (a sample through the API, all of them in SQL) and the run's result:
// cycles/s, per-step latencies, what became of the operations, and anything that makes the run invalid.
import type autocannon from "autocannon"
import { connections } from "../lib/options.ts"
import { http, type Server } from "../lib/server-process.ts"
import { percentile, roundTo, sampleOf } from "../lib/util.ts"
import { type Cycle, type LifecyclePhase, type OpQueue, type Step, STEPS } from "./lifecycle-ops.ts"

export const VERIFY_SAMPLE = 20

export interface CycleCheck {
  op: string
  entries: number
  sumMinutes: number
  actualTime: number
  /** actual_time === the sum of the entries' duration_minutes, bit for bit */
  exact: boolean
  problems: Array<string>
}
/** A finished cycle, through the API: 2 ended entries of its operator, status completed, actual_time = Σ durations. */
export const verifyCycle = async (server: Server, c: Cycle): Promise<CycleCheck> => {
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

export interface LifecycleResult {
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

/** cycles/s, per-step latencies, and the checks of what the measured phase left behind. */
export const lifecycleResult = async (
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
    const avg = roundTo(sorted.length === 0 ? null : sorted.reduce((a, x) => a + x, 0) / sorted.length, 2)
    return [step, { ok: s.ok, non2xx: s.non2xx, p50: roundTo(percentile(sorted, 50), 2), p99: roundTo(percentile(sorted, 99), 2), avg }]
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
