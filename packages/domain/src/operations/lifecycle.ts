// Operation state machine, spec 3.2, laid out like the spec table. Time entries are effects
// applied by the use case (spec 2.8).
import type { Machine } from "../lifecycle.ts"
import type { OperationStatus as OperationStatusSchema } from "./schema.ts"

export type OperationState = typeof OperationStatusSchema.Type
export type OperationAction = "start" | "pause" | "resume" | "complete"

export const operationMachine: Machine<OperationState, OperationAction> = [
  // from                              action      to             also
  { from: ["not_started", "on_hold"], action: "start", to: "in_progress", stamps: { started_at: "first", paused_at: "clear" } },
  { from: ["in_progress"], action: "pause", to: "on_hold", stamps: { paused_at: "now" } },
  { from: ["on_hold"], action: "resume", to: "in_progress", stamps: { resumed_at: "now", paused_at: "clear" } },
  { from: ["in_progress"], action: "complete", to: "completed", stamps: { completed_at: "now" }, effects: ["complete_percentage"] }
]

/** PATCH status `completed` is allowed from any state and sets completed_at (spec 3.2). */
export const completeFromAnyState = {
  from: ["not_started", "in_progress", "on_hold", "completed"],
  stamps: { completed_at: "first" },
  effects: ["complete_percentage"]
} as const
