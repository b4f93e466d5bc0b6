import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { CrudStore } from "../crud.ts"
import type { Conflict } from "../errors.ts"
import type { Operation } from "../operations/schema.ts"
import type { TimeEntry } from "./schema.ts"

/**
 * What a write by hand needs besides its values: the references to check (`checkedReferences`), and the statuses of
 * an operation on which the write may not leave an entry open (DECISIONS: time entries).
 */
export interface EntryPlan {
  readonly refs: ReadonlyArray<{ readonly i: number; readonly tbl: string; readonly id: string }>
  readonly closedTo: ReadonlyArray<string>
}

/**
 * What a write by hand did, as one statement: the operation locked, then the checks, the entry written and
 * actual_time set (ARCHITECTURE: the domain plans, the adapter executes once).
 */
export interface EntryWrite {
  /** The entry's tenant (a correction or delete; undefined when no tenant has it), the caller's for a create. */
  readonly owner: string | undefined
  /** The entry as written; undefined when refused (or gone before the lock). */
  readonly entry: TimeEntry | undefined
  /** The entry's operation (undefined when the entry is not the tenant's). */
  readonly operationId: string | undefined
  /** The operation's status after its lock; undefined when it is not the tenant's. */
  readonly status: string | undefined
  /** The write leaves the entry open: an entry with no end_time, or a correction that clears it. */
  readonly opens: boolean
  /** end_time before start_time, with the correction's values over the entry's. */
  readonly backwards: boolean
  /** The plan's references (`i`) that are not records of the tenant. */
  readonly missingRefs: ReadonlyArray<number>
}

export interface OpenEntry {
  readonly operation_id: string
  readonly user_id: string
  readonly batch_id?: string
}

export class TimeEntryStore extends Context.Service<TimeEntryStore, Pick<CrudStore<TimeEntry>, "list" | "read"> & {
  /** A new entry by hand (`row`: its id and values). */
  readonly create: (tenantId: string, row: Readonly<Record<string, unknown>>, plan: EntryPlan) => Effect.Effect<EntryWrite, Conflict>
  /** A correction: `changes` over the entry's values. */
  readonly correct: (tenantId: string, id: string, changes: Readonly<Record<string, unknown>>, plan: EntryPlan) => Effect.Effect<EntryWrite, Conflict>
  /** A delete, with actual_time set again; the entry's tenant (undefined when no tenant has it). */
  readonly remove: (tenantId: string, id: string) => Effect.Effect<string | undefined, Conflict>
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
