import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Owned, PatchOutcome, RemoveOutcome } from "../crud.ts"
import type { EventPlan } from "../events.ts"
import type { JsonText } from "../json.ts"
import type { SyncAction, ReferenceTable } from "../ports.ts"
import type { NestedOperation } from "./nested.ts"
import type { Conflict } from "../errors.ts"
import type { Operation } from "../operations/schema.ts"
import type { Part } from "../parts/schema.ts"
import type { ListQuery, Slice } from "../query.ts"
import type { MoveEvent, MoveOutcome, MovePlan, Transition } from "../lifecycle.ts"
import type { Job, JobListSpec, JobStatus } from "./schema.ts"
import type { BatchStatus } from "../batches/schema.ts"

/** Column values for new rows: everything but the database's timestamps and defaults. */
export type NewRow<T> = { readonly [K in keyof T]?: T[K] | null } & { readonly id: string; readonly tenant_id: string }

export type JobWithParts = Job & { readonly parts: ReadonlyArray<Part> }
export type JobDetail = Job & { readonly parts: ReadonlyArray<Part & { readonly operations: ReadonlyArray<Operation> }> }
export type JobListQuery = ListQuery<JobListSpec["filters"], JobListSpec["sort"][number]>

/** A reference the store checks in the caller's tenant within its statement; `i` indexes the caller's list. */
export interface CheckedReference {
  readonly i: number
  readonly tbl: ReferenceTable
  readonly id: string
}

/**
 * A job with its parts and operations as the domain plans them: the rows with their ids (operations
 * may name a cell by `cell_name`), and the references and cell names to check in the tenant.
 */
export interface JobRowsPlan {
  readonly job: NewRow<Job>
  readonly parts: ReadonlyArray<NewRow<Part>>
  readonly operations: ReadonlyArray<NestedOperation>
  readonly refs: ReadonlyArray<CheckedReference>
  readonly cellNames: ReadonlyArray<string>
}

/** Everything a nested job create writes: the rows, and the events with their shapes. */
export interface NestedJobPlan extends JobRowsPlan {
  readonly events: { readonly job: EventPlan; readonly part: EventPlan }
}

/** Created, with the job as the API shows it; or refused with every reason the statement found. */
export type NestedJobResult =
  | { readonly _tag: "Created"; readonly job: JsonText<JobDetail> }
  | {
    readonly _tag: "Refused"
    /** A live job of the tenant has the job_number. */
    readonly taken: boolean
    /** Indexes (`i`) of references that are not the tenant's. */
    readonly missingRefs: ReadonlyArray<number>
    readonly missingCells: ReadonlyArray<string>
    /** Parts (index in the plan, and their material_id's name) whose `material` is not that name. */
    readonly materialsDiffer: ReadonlyArray<{ readonly part: number; readonly name: string }>
  }

/**
 * A job sync as the domain plans it: the rows with ids of their own (the store keeps the stored ids
 * of rows that exist by external key, and maps the plan's ids onto them), and `dryRun` to only check
 * (the request is refused already and wants every reason).
 */
export interface JobSyncPlan extends JobRowsPlan {
  readonly dryRun: boolean
}

/**
 * Synced (with the job's id, created or updated, and whether it inserted a row: the job, or a part or operation
 * beneath a job that existed), or refused with every reason the statement found.
 */
export type JobSyncResult =
  | { readonly _tag: "Synced"; readonly id: string; readonly action: SyncAction; readonly inserted: boolean }
  | {
    readonly _tag: "Refused"
    readonly missingRefs: ReadonlyArray<number>
    readonly missingCells: ReadonlyArray<string>
    /** Indexes of synced parts that exist under another job. */
    readonly partsElsewhere: ReadonlyArray<number>
    /** Indexes of synced operations that exist under another part. */
    readonly operationsElsewhere: ReadonlyArray<number>
    /** As a nested create's: parts whose `material` is not their material_id's name. */
    readonly materialsDiffer: ReadonlyArray<{ readonly part: number; readonly name: string }>
  }

/** A bulk-sync record by its external key, with the SHA-256 of the record as the client sent it. */
export interface SyncedRecordKey {
  readonly external_source: string
  readonly external_id: string
  readonly hash: string
}

/** A lifecycle row as the stores apply it: guard, target, timestamp stamps and named effects. */
export type GuardedMove = Pick<Transition<string, string>, "from" | "to" | "stamps" | "effects">

export class JobStore extends Context.Service<JobStore, {
  /**
   * A nested create as ONE statement: checks the references, cell names and parts' materials, inserts the job
   * (unless its number is taken), its parts (a `material` left out taking its material_id's name) and operations,
   * counts the parts and appends the events.
   */
  readonly createNested: (plan: NestedJobPlan) => Effect.Effect<NestedJobResult, Conflict>
  readonly list: (tenantId: string, query: JobListQuery) => Effect.Effect<Slice<JobWithParts>>
  /** A job with its parts and their operations, as the API shows it, with its owner. */
  readonly read: (tenantId: string, id: string) => Effect.Effect<Owned<JobDetail>>
  /** PATCH without status as one statement (owner, reference checks, update, events). */
  readonly patch: (
    tenantId: string,
    id: string,
    changes: Readonly<Record<string, unknown>>,
    events: ReadonlyArray<MoveEvent>,
    refs: ReadonlyArray<CheckedReference>
  ) => Effect.Effect<PatchOutcome<Job>, Conflict>
  /** A guarded move (lifecycle action or PATCH status) as one statement (spec 3.1). */
  readonly move: (tenantId: string, id: string, plan: MovePlan, refs: ReadonlyArray<CheckedReference>) => Effect.Effect<MoveOutcome<Job>, Conflict>
  /** The status of a non-deleted job. */
  readonly status: (tenantId: string, id: string) => Effect.Effect<JobStatus | undefined>
  /**
   * Soft delete as one statement, with the owner of the id; refused while an operation of the job is in a batch of
   * one of the `holding` statuses, answering that batch's number as `heldBy` (DECISIONS).
   */
  readonly softDelete: (
    tenantId: string,
    id: string,
    holding: ReadonlyArray<BatchStatus>
  ) => Effect.Effect<RemoveOutcome & { readonly heldBy: string | undefined }>
  /**
   * PUT sync and bulk-sync as ONE statement: checks each plan, then upserts the jobs, parts and
   * operations of the plans nothing refuses by external key, counts created parts and appends
   * job.created|updated and part.created|updated record by record (spec 4.1). One result per plan, in
   * order. The plans must name distinct rows (no external key in two plans).
   */
  readonly sync: (plans: ReadonlyArray<JobSyncPlan>) => Effect.Effect<ReadonlyArray<JobSyncResult>, Conflict>
  /**
   * The records whose last bulk sync sent the same bytes (hash) and whose job, parts and operations (and the
   * tenant's cells and materials) are still the row versions that sync left: unchanged, by key
   * (`source\u0000external_id`) → job id. Also a snapshot of the database taken first, for `rememberSynced`.
   */
  readonly syncedUnchanged: (tenantId: string, keys: ReadonlyArray<SyncedRecordKey>) => Effect.Effect<{
    readonly unchanged: ReadonlyMap<string, string>
    readonly snapshot: string
  }>
  /**
   * Remembers records a bulk sync just synced, with the row versions they left, for `syncedUnchanged`; skips a
   * job any of whose rows another transaction committed after `snapshot` (not what this sync compared against).
   */
  readonly rememberSynced: (tenantId: string, snapshot: string, records: ReadonlyArray<SyncedRecordKey & { readonly job_id: string }>) => Effect.Effect<void>
  /** True when a non-deleted job of the tenant has this number. */
  readonly numberTaken: (tenantId: string, jobNumber: string) => Effect.Effect<boolean>
}>()("mes/domain/JobStore") {}
