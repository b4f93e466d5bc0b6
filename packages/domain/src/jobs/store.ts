import { Context, type Effect } from "effect"
import type { Conflict } from "../errors.ts"
import type { Operation } from "../operations/schema.ts"
import type { Part } from "../parts/schema.ts"
import type { ListQuery, Slice } from "../query.ts"
import type { Moved, Transition } from "../lifecycle.ts"
import type { Job, JobListSpec, JobStatus } from "./schema.ts"

/** Column values for new rows: everything but the database's timestamps and defaults. */
export type NewRow<T> = { readonly [K in keyof T]?: T[K] | null } & { readonly id: string; readonly tenant_id: string }

export type JobWithParts = Job & { readonly parts: ReadonlyArray<Part> }
export type JobDetail = Job & { readonly parts: ReadonlyArray<Part & { readonly operations: ReadonlyArray<Operation> }> }
export type JobListQuery = ListQuery<JobListSpec["filters"], JobListSpec["sort"][number]>

/** A lifecycle row as the stores apply it: guard, target, timestamp stamps and named effects. */
export type GuardedMove = Pick<Transition<string, string>, "from" | "to" | "stamps" | "effects">

export class JobStore extends Context.Service<JobStore, {
  /** Inserts a job, its parts and their operations: one statement per level. */
  readonly insertNested: (
    job: NewRow<Job>,
    parts: ReadonlyArray<NewRow<Part>>,
    operations: ReadonlyArray<NewRow<Operation>>
  ) => Effect.Effect<{ job: Job; parts: ReadonlyArray<Part>; operations: ReadonlyArray<Operation> }, Conflict>
  readonly list: (tenantId: string, query: JobListQuery) => Effect.Effect<Slice<JobWithParts>>
  readonly get: (tenantId: string, id: string) => Effect.Effect<JobDetail | undefined>
  /** Updates columns; undefined when no row matched. */
  readonly update: (tenantId: string, id: string, changes: Readonly<Record<string, unknown>>) => Effect.Effect<Job | undefined, Conflict>
  /** A guarded lifecycle move in one statement (spec 3.1); undefined when missing or not in `from`. */
  readonly move: (
    tenantId: string,
    id: string,
    move: GuardedMove,
    changes?: Readonly<Record<string, unknown>>
  ) => Effect.Effect<Moved<Job> | undefined, Conflict>
  /** The status of a non-deleted job. */
  readonly status: (tenantId: string, id: string) => Effect.Effect<JobStatus | undefined>
  readonly softDelete: (tenantId: string, id: string) => Effect.Effect<boolean>
  /** Inserts or updates a job by (external_source, external_id) among non-deleted jobs. */
  readonly upsert: (job: NewRow<Job>) => Effect.Effect<{ readonly row: Job; readonly inserted: boolean }, Conflict>
  /** The non-deleted job with this external key. */
  readonly byExternalId: (tenantId: string, source: string, externalId: string) => Effect.Effect<Job | undefined>
  /** True when a non-deleted job of the tenant has this number. */
  readonly numberTaken: (tenantId: string, jobNumber: string) => Effect.Effect<boolean>
}>()("mes/domain/JobStore") {}
