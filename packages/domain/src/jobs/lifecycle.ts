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
