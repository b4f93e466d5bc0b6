import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { CrudStore } from "../crud.ts"
import type { Conflict } from "../errors.ts"
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

export class TimeEntryStore extends Context.Service<TimeEntryStore, Pick<CrudStore<TimeEntry>, "list" | "read"> & {
  /** A new entry by hand (`row`: its id and values). */
  readonly create: (tenantId: string, row: Readonly<Record<string, unknown>>, plan: EntryPlan) => Effect.Effect<EntryWrite, Conflict>
  /** A correction: `changes` over the entry's values. */
  readonly correct: (tenantId: string, id: string, changes: Readonly<Record<string, unknown>>, plan: EntryPlan) => Effect.Effect<EntryWrite, Conflict>
  /** A delete, with actual_time set again; the entry's tenant (undefined when no tenant has it). */
  readonly remove: (tenantId: string, id: string) => Effect.Effect<string | undefined, Conflict>
}>()("mes/domain/TimeEntryStore") {}
