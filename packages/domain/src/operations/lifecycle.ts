// Operation state machine, spec 3.2, laid out like the spec table. Effects name what else the use
// case does in the same transaction: open or close time entries (spec 2.8), set completion to 100.
import type { Machine, Transition } from "../lifecycle.ts"
import type { OperationStatus as OperationStatusSchema } from "./schema.ts"

export type OperationState = typeof OperationStatusSchema.Type
export type OperationAction = "start" | "pause" | "resume" | "complete"

export const OPEN_TIME_ENTRY = "open_time_entry"
export const CLOSE_TIME_ENTRIES = "close_time_entries"
export const COMPLETE_PERCENTAGE = "complete_percentage"

export const operationMachine: Machine<OperationState, OperationAction> = [
  // from                              action      to             also
  { from: ["not_started", "on_hold"], action: "start", to: "in_progress", stamps: { started_at: "first", paused_at: "clear" }, effects: [OPEN_TIME_ENTRY], event: "operation.started" },
  { from: ["in_progress"], action: "pause", to: "on_hold", stamps: { paused_at: "now" }, effects: [CLOSE_TIME_ENTRIES], event: "operation.paused" },
  { from: ["on_hold"], action: "resume", to: "in_progress", stamps: { resumed_at: "now", paused_at: "clear" }, effects: [OPEN_TIME_ENTRY], event: "operation.resumed" },
  { from: ["in_progress"], action: "complete", to: "completed", stamps: { completed_at: "now" }, effects: [COMPLETE_PERCENTAGE, CLOSE_TIME_ENTRIES], event: "operation.completed" }
]

/** PATCH status `completed` is allowed from any state and sets completed_at (spec 3.2). */
export const completeFromAnyState: Transition<OperationState, OperationAction> = {
  from: ["not_started", "in_progress", "on_hold", "completed"],
  action: "complete",
  to: "completed",
  stamps: { completed_at: "first" },
  effects: [COMPLETE_PERCENTAGE, CLOSE_TIME_ENTRIES],
  event: "operation.completed"
}
