// Job state machine, spec 3.1, laid out like the spec table.
import type { Machine } from "../lifecycle.ts"
import type { JobStatus } from "./schema.ts"

export type JobAction = "start" | "stop" | "complete" | "resume"

export const jobMachine: Machine<JobStatus, JobAction> = [
  // from                          action      to             also
  { from: ["not_started", "on_hold"], action: "start", to: "in_progress", stamps: { started_at: "first", paused_at: "clear" }, event: "job.started" },
  { from: ["in_progress"], action: "stop", to: "on_hold", stamps: { paused_at: "now" }, event: "job.stopped" },
  { from: ["in_progress"], action: "complete", to: "completed", stamps: { completed_at: "now" }, effects: ["actual_duration"], event: "job.completed" },
  { from: ["on_hold"], action: "resume", to: "in_progress", stamps: { resumed_at: "now", paused_at: "clear" }, event: "job.resumed" }
]

/**
 * The moves that take a new job to each status from `not_started` (spec 3.1), the fewest first: a job created in a
 * status of its own (a create takes `status`, docs/DECISIONS.md) carries their stamps and effects as if they were
 * made at its creation: `in_progress` is started, `on_hold` started and stopped, `completed` started and completed
 * (so its `actual_duration` is 0, and one completed later counts from its creation).
 */
export const jobCreatedMoves: ReadonlyMap<JobStatus, Machine<JobStatus, JobAction>> = (() => {
  const paths = new Map<JobStatus, Machine<JobStatus, JobAction>>([["not_started", []]])
  const queue: Array<JobStatus> = ["not_started"]
  for (let at = queue.shift(); at !== undefined; at = queue.shift()) {
    for (const t of jobMachine) {
      if (!t.from.includes(at) || paths.has(t.to)) continue
      paths.set(t.to, [...paths.get(at)!, t])
      queue.push(t.to)
    }
  }
  return paths
})()
