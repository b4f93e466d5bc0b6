import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Conflict, ValidationFailed } from "../errors.ts"
import type { CheckedReference, NewRow } from "../jobs/store.ts"
import type { MoveOutcome, MovePlan } from "../lifecycle.ts"
import type { ListQuery, Slice } from "../query.ts"
import type { Batch, batchListSpec, BatchStatus, TimeShare } from "./schema.ts"
import type { Owned, PatchOutcome, PatchStatement, RemoveOutcome } from "../crud.ts"

export type BatchListQuery = ListQuery<typeof batchListSpec["filters"], typeof batchListSpec["sort"][number]>
export type BatchRow = Omit<Batch, "operation_ids">

/** What a one-statement batch start or stop did (spec 3.3). */
export interface BatchMoved extends MoveOutcome<Batch> {
  /** The operations the move started or completed, in batch order. */
  readonly operationsMoved: ReadonlyArray<string>
  /** Start: the time entries it opened. */
  readonly timeEntriesOpened: number
  /** Stop: how the tracked time was shared, in batch order (empty when no entry of the batch was open). */
  readonly shares: ReadonlyArray<TimeShare>
  /** A PATCH's move refused because the batch is in its new parent's chain (nothing moved). */
  readonly cycle: boolean
}

/** What a batch create's statement found, and the batch when it wrote it. */
export interface BatchInsertOutcome {
  readonly numberTaken: boolean
  /** Indexes into the refs that are not live records of the tenant. */
  readonly missingRefs: ReadonlyArray<number>
  /** The operations that are in another batch. */
  readonly held: ReadonlyArray<string>
  readonly batch: Batch | undefined
}

/** What an add-operations statement found, and the batch when it appended the operations. */
export interface BatchAddOutcome {
  readonly owner: string | undefined
  /** The batch's status as the statement read it. */
  readonly current: BatchStatus | undefined
  readonly missingRefs: ReadonlyArray<number>
  /** The operations that are in another batch. */
  readonly held: ReadonlyArray<string>
  /** The operations that are in this batch already. */
  readonly heldHere: ReadonlyArray<string>
  readonly batch: Batch | undefined
}

export class BatchStore extends Context.Service<BatchStore, {
  /**
   * Inserts the batch and its operations in order as ONE statement, only when its number is free, `refs` are the
   * tenant's and none of the operations is in another batch (and not when `dryRun`): what it found either way, and
   * the batch when it wrote it. Conflict when a concurrent create took one of the operations.
   */
  readonly insert: (
    batch: NewRow<BatchRow>,
    operationIds: ReadonlyArray<string>,
    refs: ReadonlyArray<CheckedReference>,
    dryRun: boolean
  ) => Effect.Effect<BatchInsertOutcome, Conflict>
  readonly list: (tenantId: string, query: BatchListQuery) => Effect.Effect<Slice<Batch>>
  /** One record as the API shows it, with its owner (one query). */
  readonly read: (tenantId: string, id: string) => Effect.Effect<Owned<Batch>>
  /**
   * PATCH of fields as one statement: the owner of the id, the references (cells, batches) checked, and a new parent
   * whose chain (itself included) holds the batch refused (`cycle`), then the update.
   */
  readonly patch: (...args: Parameters<PatchStatement<Batch>>) => Effect.Effect<PatchOutcome<Batch> & { readonly cycle: boolean }, Conflict | ValidationFailed>
  /** Delete as one statement, with the owner of the id. */
  readonly remove: (tenantId: string, id: string) => Effect.Effect<RemoveOutcome, Conflict>
  /**
   * A batch move as ONE statement (spec 3.3): the guarded move with the plan's changes (a PATCH's fields, a start's
   * operator), and `refs` checked in it. Start starts the operations, opens a time entry per open operation for
   * `operatorId` and writes batch.started and operation.started; stop shares the time of the batch's open entries
   * across their operations as distributeBatchTime does, ends them and the operations' other running entries,
   * completes the operations, sums their actual_time again and writes batch.completed (with the shares) and
   * operation.completed. Both roll the parts up, with their events. Ready and cancel move the batch alone; with a
   * PATCH's new parent whose chain (itself included) holds the batch they move nothing (`cycle`).
   */
  readonly transition: (
    tenantId: string,
    id: string,
    plan: MovePlan,
    o: { readonly operatorId: string | null; readonly refs: ReadonlyArray<CheckedReference> }
  ) => Effect.Effect<BatchMoved, Conflict>
  readonly status: (tenantId: string, id: string) => Effect.Effect<BatchStatus | undefined>
  /**
   * Appends operations to the batch as ONE statement, only while its status is one of `whileIn`, the operations are
   * the tenant's (`refs`) and in no batch yet (another, or this one), and not when `dryRun`: what it found either way, and the batch with
   * all of its operations when it wrote them. Conflict when a concurrent write took one of the operations.
   */
  readonly addOperations: (
    tenantId: string,
    id: string,
    o: {
      readonly operationIds: ReadonlyArray<string>
      readonly whileIn: ReadonlyArray<BatchStatus>
      readonly refs: ReadonlyArray<CheckedReference>
      readonly dryRun: boolean
    }
  ) => Effect.Effect<BatchAddOutcome, Conflict>
  readonly numberTaken: (tenantId: string, batchNumber: string, exceptId?: string) => Effect.Effect<boolean>
}>()("mes/domain/BatchStore") {}
