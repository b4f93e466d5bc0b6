// Batch state machine, spec 3.3, laid out like the spec table. Effects name what the use case does
// to the batch's operations and time entries in the same transaction.
import type { Machine, Transition } from "../lifecycle.ts"
import { completeFromAnyState, type OperationAction, type OperationState } from "../operations/lifecycle.ts"
import type { BatchStatus } from "./schema.ts"

export type BatchAction = "start" | "stop" | "ready" | "cancel" | "add-operations"

export const START_OPERATIONS = "start_operations"
export const COMPLETE_OPERATIONS = "complete_operations"

export const batchMachine: Machine<BatchStatus, BatchAction> = [
  // from                    action             to             also
  { from: ["draft", "ready"], action: "start", to: "in_progress", stamps: { started_at: "first" }, effects: [START_OPERATIONS], event: "batch.started" },
  { from: ["in_progress"], action: "stop", to: "completed", stamps: { completed_at: "now" }, effects: [COMPLETE_OPERATIONS], event: "batch.completed" },
  { from: ["draft"], action: "ready", to: "ready", stamps: {} },
  // not in the spec: a batch not yet started can be cancelled (docs/DECISIONS.md)
  { from: ["draft", "ready"], action: "cancel", to: "cancelled", stamps: {} }
]

/** add-operations leaves the status as it is but needs draft or ready (spec 3.3). */
export const addOperationsFrom: ReadonlyArray<BatchStatus> = ["draft", "ready"]

/**
 * What a batch stop does to each of its operations that is not completed yet (COMPLETE_OPERATIONS): completes it as
 * a PATCH to `completed` would; their running time entries end with the batch's shares (spec 3.3).
 */
export const batchStopCompletes: Transition<OperationState, OperationAction> = {
  ...completeFromAnyState,
  from: completeFromAnyState.from.filter((s) => s !== "completed")
}
