// lifecycle, the basics shared by the scenario (lifecycle.ts) and its checks (lifecycle-verify.ts): the 4 steps
// of a cycle, the queue that hands each operation out once, and what each autocannon phase did with it.
import { OPS, PARTS } from "../lib/seed.ts"

/** lifecycle: the four requests of one cycle, in order; `user_id` goes with start and resume */
export const STEPS = ["start", "pause", "resume", "complete"] as const
export type Step = (typeof STEPS)[number]

export interface Cycle {
  readonly op: string
  readonly user: string
}
/** Every operation is taken once, by one connection, which walks it through all 4 steps: no 409 by construction. */
export interface OpQueue {
  readonly items: ReadonlyArray<Cycle>
  next: number
}
/**
 * Operation order: the 1st operation of every part of every job, then the 2nd, … Consecutive cycles (which run
 * concurrently on different connections) belong to different jobs and parts, so they do not queue on one part
 * row (the roll-up locks it). Operators are assigned round-robin.
 */
export const opQueue = (ops: ReadonlyArray<ReadonlyArray<ReadonlyArray<string>>>, operators: ReadonlyArray<string>): OpQueue => {
  const items: Array<Cycle> = []
  for (let o = 0; o < OPS; o++) {
    for (let p = 0; p < PARTS; p++) {
      for (const j of ops) items.push({ op: j[p]![o]!, user: operators[items.length % operators.length]! })
    }
  }
  return { items, next: 0 }
}
export const pathOf = (step: Step, c: Cycle) =>
  `/api-operation-lifecycle/${step}?id=${c.op}${step === "start" || step === "resume" ? `&user_id=${c.user}` : ""}`

/** What one autocannon phase (warm-up or measured) did with its operations. */
export interface LifecyclePhase {
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
export const lifecyclePhase = (queue: OpQueue): LifecyclePhase => ({
  queue,
  taken: 0,
  completed: [],
  steps: Object.fromEntries(STEPS.map((s) => [s, { ok: 0, non2xx: 0, latencies: [] }])) as unknown as LifecyclePhase["steps"],
  idleRequests: 0
})
