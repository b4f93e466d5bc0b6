import { Context, type Effect } from "effect"
import type { Conflict } from "../errors.ts"
import type { GuardedMove, NewRow } from "../jobs/store.ts"
import type { Moved } from "../lifecycle.ts"
import type { Upserted } from "../parts/store.ts"
import type { OperationState } from "./lifecycle.ts"
import type { ListQuery, Slice } from "../query.ts"
import type { Operation, operationListSpec } from "./schema.ts"
import type { Owned } from "../crud.ts"

export interface OperationContext {
  readonly part: { readonly id: string; readonly part_number: string; readonly job: { readonly id: string; readonly job_number: string } }
}

export type OperationListQuery = ListQuery<typeof operationListSpec["filters"], typeof operationListSpec["sort"][number]>

export class OperationStore extends Context.Service<OperationStore, {
  /** Inserts one operation; a missing sequence becomes max(existing)+1 under a lock on the part. */
  readonly insert: (operation: NewRow<Operation>) => Effect.Effect<Operation, Conflict>
  readonly list: (tenantId: string, query: OperationListQuery) => Effect.Effect<Slice<Operation>>
  /** One record as the API shows it, with its owner (one query). */
  readonly read: (tenantId: string, id: string) => Effect.Effect<Owned<Operation>>
  readonly get: (tenantId: string, id: string) => Effect.Effect<Operation | undefined>
  readonly update: (tenantId: string, id: string, changes: Readonly<Record<string, unknown>>) => Effect.Effect<Operation | undefined, Conflict>
  /** A guarded lifecycle move in one statement (spec 3.2); undefined when missing or not in `from`. */
  readonly move: (
    tenantId: string,
    id: string,
    move: GuardedMove,
    changes?: Readonly<Record<string, unknown>>
  ) => Effect.Effect<Moved<Operation> | undefined, Conflict>
  readonly status: (tenantId: string, id: string) => Effect.Effect<OperationState | undefined>
  /** The part and job an operation belongs to (lifecycle answers, spec 4.5). */
  readonly context: (tenantId: string, id: string) => Effect.Effect<OperationContext>
  readonly getMany: (tenantId: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Operation>>
  /** A guarded move of many operations at once (batches); returns the moved rows with their previous status. */
  readonly moveMany: (tenantId: string, ids: ReadonlyArray<string>, move: GuardedMove) => Effect.Effect<ReadonlyArray<Moved<Operation>>>
  /** Refused (Conflict) when the operation has time entries (spec 4.3). */
  readonly remove: (tenantId: string, id: string) => Effect.Effect<boolean, Conflict>
  /** max(sequence)+1 of a part's operations. */
  readonly nextSequence: (tenantId: string, partId: string) => Effect.Effect<number>
  /** Operations by (external_source, external_id) of the tenant. */
  readonly byExternalIds: (tenantId: string, source: string, externalIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Operation>>
  /** Inserts or updates operations by (external_source, external_id); rows under another part are left alone. */
  readonly upsert: (rows: ReadonlyArray<NewRow<Operation>>) => Effect.Effect<ReadonlyArray<Upserted<Operation>>, Conflict>
}>()("mes/domain/OperationStore") {}
