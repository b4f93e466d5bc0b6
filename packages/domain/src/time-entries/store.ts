import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { CrudStore } from "../crud.ts"
import type { Conflict } from "../errors.ts"
import type { Operation } from "../operations/schema.ts"
import type { TimeEntry } from "./schema.ts"

export interface OpenEntry {
  readonly operation_id: string
  readonly user_id: string
  readonly batch_id?: string
}

export class TimeEntryStore extends Context.Service<TimeEntryStore, Pick<CrudStore<TimeEntry>, "insert" | "list" | "read" | "get"> & {
  /** Undefined when no row matched. */
  readonly update: (tenantId: string, id: string, changes: Readonly<Record<string, unknown>>) => Effect.Effect<TimeEntry | undefined, Conflict>
  /** False when no row matched. */
  readonly remove: (tenantId: string, id: string) => Effect.Effect<boolean, Conflict>
  /** Opens entries starting now; an operator's entry already open on an operation is kept (spec 2.8). */
  readonly open: (tenantId: string, entries: ReadonlyArray<OpenEntry>) => Effect.Effect<number>
  /** Ends every open entry of these operations now, with its duration; returns how many ended. */
  readonly closeActive: (tenantId: string, operationIds: ReadonlyArray<string>) => Effect.Effect<number>
  /** A batch's open entries with the whole seconds since they started (tracked time, spec 3.3). */
  readonly openForBatch: (
    tenantId: string,
    batchId: string
  ) => Effect.Effect<ReadonlyArray<{ readonly operation_id: string; readonly elapsed_seconds: number }>>
  /** Ends a batch's open entries now with the given minutes each (its share of the tracked time). */
  readonly closeBatch: (
    tenantId: string,
    batchId: string,
    minutes: ReadonlyArray<{ readonly operation_id: string; readonly minutes: number }>
  ) => Effect.Effect<number>
  /**
   * actual_time = the sum of the operations' ended entries' minutes (spec 3.2: cumulative time).
   * Called whenever entries end or are corrected; returns the updated operations.
   */
  readonly recomputeActualTime: (tenantId: string, operationIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Operation>>
}>()("mes/domain/TimeEntryStore") {}
