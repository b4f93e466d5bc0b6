import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type { SyncAction } from "../ports.ts"
import type * as Effect from "effect/Effect"
import type { Conflict } from "../errors.ts"
import type { MissingReferences } from "../crud.ts"
import type { CheckedReference, NewRow } from "../jobs/store.ts"
import type { JsonText } from "../json.ts"
import type { MoveOutcome, MovePlan } from "../lifecycle.ts"
import type { OperationState } from "./lifecycle.ts"
import type { ListQuery, Slice } from "../query.ts"
import type { Operation, operationListSpec } from "./schema.ts"
import type { Owned, PatchStatement, RemoveOutcome } from "../crud.ts"

export interface OperationContext {
  readonly part: { readonly id: string; readonly part_number: string; readonly job: { readonly id: string; readonly job_number: string } }
}

/** What a one-statement operation move found and did (spec 3.2, 4.5). */
export interface OperationMoved extends MoveOutcome<Operation> {
  /** The moved operation with its part and job, as the lifecycle endpoints answer it. */
  readonly detail: JsonText<Operation & OperationContext & { readonly estimated_time: number | null }> | undefined
  /** Whether the move ended a running time entry. */
  readonly timeEntryEnded: boolean
}

export type OperationListQuery = ListQuery<typeof operationListSpec["filters"], typeof operationListSpec["sort"][number]>

export interface OperationSyncPlan {
  readonly operation: NewRow<Operation>
  readonly partExternalId: string
  readonly cellName: string
}

export type OperationSyncOutcome =
  | { readonly _tag: "Synced"; readonly id: string; readonly action: SyncAction }
  | {
    readonly _tag: "Refused"
    readonly noPart: boolean
    readonly noCell: boolean
    readonly elsewhere: boolean
    /** A new operation without sequence, on a part whose operations (or the records before it) reach 2147483647. */
    readonly sequenceExhausted: boolean
  }

/** 409 for a new operation without sequence after its part's 2147483647 (a create, or a sync record alone). */
export const operationSequenceExhausted = {
  message: "the part's operations already use sequence 2147483647; give the new operation a sequence",
  field: "sequence"
} as const

/** An operation create refused: its `cell_name` names no cell of the tenant (with the references then missing). */
export class UnknownCellName extends Data.TaggedError("UnknownCellName")<{ readonly missingRefs: ReadonlyArray<number> }> {}

export class OperationStore extends Context.Service<OperationStore, {
  /**
   * Inserts one operation as one statement, only when `refs` (its part, cell, operator) are the tenant's and
   * `cellName`, when given, names a cell of the tenant (its cell_id then); a missing sequence becomes max(existing)+1
   * under a lock on the part. Refused: the indexes of the missing references, and whether the cell name is unknown.
   */
  readonly insert: (
    operation: NewRow<Operation>,
    refs: ReadonlyArray<CheckedReference>,
    cellName: string | undefined
  ) => Effect.Effect<Operation, Conflict | MissingReferences | UnknownCellName>
  readonly list: (tenantId: string, query: OperationListQuery) => Effect.Effect<Slice<Operation>>
  /** One record as the API shows it, with its owner (one query). */
  readonly read: (tenantId: string, id: string) => Effect.Effect<Owned<Operation>>
  readonly get: (tenantId: string, id: string) => Effect.Effect<Operation | undefined>
  /** PATCH without status as one statement (owner, reference checks, update). */
  readonly patch: PatchStatement<Operation>
  /**
   * A guarded move (lifecycle action or PATCH status) as ONE statement (spec 3.2): the move with its
   * stamps, a time entry opened for `userId` or the running ones ended, actual_time, the part's
   * roll-up and every event. `refs` are checked in the same statement (nothing moves when one is missing).
   */
  readonly move: (
    tenantId: string,
    id: string,
    plan: MovePlan,
    o: { readonly userId: string | undefined; readonly refs: ReadonlyArray<CheckedReference> }
  ) => Effect.Effect<OperationMoved, Conflict>
  readonly status: (tenantId: string, id: string) => Effect.Effect<OperationState | undefined>
  /** Deletes in one statement, with the owner of the id; refused (Conflict) when the operation has time entries (spec 4.3). */
  readonly remove: (tenantId: string, id: string) => Effect.Effect<RemoveOutcome, Conflict>
  /**
   * PUT sync and bulk-sync as ONE statement: each operation under the part synced as `partExternalId` (same
   * source) in the cell named `cellName`, upserted by external key; a new one without sequence comes last, as if
   * the plans were synced one after another. One outcome per plan, in order; the plans name distinct operations.
   */
  readonly sync: (plans: ReadonlyArray<OperationSyncPlan>) => Effect.Effect<ReadonlyArray<OperationSyncOutcome>, Conflict>
}>()("mes/domain/OperationStore") {}
