// lifecycle: each connection walks its own operations through start → pause → resume → complete, 4 POSTs per
// operation ("cycle"); every operation is used once. The checks of the finished cycles are in lifecycle-verify.ts.
import type autocannon from "autocannon"
import { connections, duration, lifecycleRate, seedJobs, warmup } from "../lib/options.ts"
import { http, type Server } from "../lib/server-process.ts"
import { OPS, PARTS, seed, seedOperators } from "../lib/seed.ts"
import { type Cycle, type LifecyclePhase, lifecyclePhase, opQueue, pathOf, type Step, STEPS } from "./lifecycle-ops.ts"
import { lifecycleResult, verifyCycle } from "./lifecycle-verify.ts"
import type { LoadScenario, PhaseContext } from "./load.ts"

export const OPERATORS = 5

/**
 * lifecycle: jobs to seed so that no run runs out of fresh operations — (warm-up + duration) × --lifecycle-rate
 * cycles, plus the hand-made check and up to 2 cycles per connection left unfinished when each phase stops.
 */
export const lifecycleJobs = () =>
  Math.max(seedJobs, Math.ceil((Math.ceil((warmup + duration) * lifecycleRate) + 2 * connections + 1) / (PARTS * OPS)))

/** What each step answers in data (spec 4.5). */
const EXPECT: Record<Step, { new_status: string; time_entry_ended: boolean }> = {
  start: { new_status: "in_progress", time_entry_ended: false },
  pause: { new_status: "on_hold", time_entry_ended: true },
  resume: { new_status: "in_progress", time_entry_ended: false },
  complete: { new_status: "completed", time_entry_ended: true }
}

/**
 * One request per step, run in order by each connection. autocannon gives every connection its own context, reset
 * when the sequence wraps around, so step 0 takes a fresh operation into it and steps 1-3 use that operation.
 * The operation is never handed to another connection.
 */
const phaseRequests = (phase: LifecyclePhase, { base, headers, sample, stop, t0 }: PhaseContext) => {
  // which step the response being recorded belongs to (onResponse runs just before autocannon's "response" event)
  let lastStep: Step | undefined
  const request = (step: Step, i: number): autocannon.Request => ({
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
            setImmediate(stop)
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
      sample(status, body, step)
    }
  })
  return {
    requests: STEPS.map(request),
    onLatency: (ms: number) => {
      if (lastStep !== undefined) phase.steps[lastStep].latencies.push(ms)
      lastStep = undefined
    }
  }
}

/** One whole cycle by hand, with the shape of every answer, then its time entries. */
const checkCycle = async (srv: Server, cycle: Cycle) => {
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
  return { steps, verify: verified }
}

export const lifecycle: LoadScenario = {
  jobs: lifecycleJobs(),
  seed: async (srv) => {
    const operators = await seedOperators(srv, OPERATORS)
    const queue = opQueue(await seed(srv, lifecycle.jobs, true), operators)
    const phases = { warmup: lifecyclePhase(queue), measured: lifecyclePhase(queue) }
    return {
      check: async () => {
        const { steps, verify } = await checkCycle(srv, queue.items[queue.next++]!)
        return { operators: operators.length, operationsQueued: queue.items.length, steps, verify }
      },
      phase: (which, ctx) => phaseRequests(phases[which], ctx),
      lifecycle: {
        result: (r, rowsAfter) => lifecycleResult(srv, r, queue, phases.warmup, phases.measured, rowsAfter),
        logLine: (l) =>
          `${l.cyclesPerSec.toFixed(1)} cycles/s (${l.cycles} cycles), verified ${l.verify.passed}/${l.verify.sampled},` +
          ` operations left ${l.operations.left}` + (l.problems.length > 0 ? `, PROBLEMS: ${l.problems.join("; ")}` : "")
      }
    }
  }
}
