// Job records and inputs (spec 2.1, 4.1).
import * as Schema from "effect/Schema"
import { IsoDate, JsonObject, Max255, Name255, NonNegativeInt, opt, optNull, Text, Uuid } from "../fields.ts"
import { OperationNested } from "../operations/schema.ts"
import { PartNestedFields } from "../parts/schema.ts"
import { int, oneOf, text, uuid, type ListSpec } from "../query.ts"

export const JobStatus = Schema.Literals(["not_started", "in_progress", "on_hold", "completed"])
export type JobStatus = typeof JobStatus.Type

/** Input aliases stored under the canonical name (DECISIONS). */
export const jobAliases = { customer_name: "customer", description: "notes" } as const

export const PartNested = Schema.Struct({
  ...PartNestedFields,
  operations: Schema.Array(OperationNested).check(Schema.isMinLength(1))
})
export type PartNested = typeof PartNested.Type

const jobFields = {
  customer: optNull(Max255),
  due_date: optNull(IsoDate),
  priority: optNull(NonNegativeInt),
  notes: optNull(Text),
  status: opt(JobStatus),
  metadata: optNull(JsonObject),
  current_cell_id: optNull(Uuid)
}

/** `priority: null` means the default, 0 (the column holds a number for every job). */
export const defaultPriority = <T extends { readonly priority?: number | null }>(fields: T): T =>
  fields.priority === null ? { ...fields, priority: 0 } : fields

/** POST /api-jobs: the job with nested parts and operations, created in one transaction. */
export const JobCreate = Schema.Struct({
  job_number: Name255,
  ...jobFields,
  parts: Schema.Array(PartNested).check(Schema.isMinLength(1))
})
export type JobCreate = typeof JobCreate.Type

/** PATCH /api-jobs: the fields spec 4.1 allows (plus priority and current_cell_id, see docs/DECISIONS.md). */
export const JobPatch = Schema.Struct({
  ...jobFields,
  due_date_override: optNull(IsoDate)
})
export type JobPatch = typeof JobPatch.Type

export const JobSyncPart = Schema.Struct({
  external_id: Name255,
  ...PartNestedFields,
  operations: opt(Schema.Array(Schema.Struct({
    external_id: Name255,
    ...OperationNested.fields
  })))
})

/** PUT /api-jobs/sync: upsert by (external_source, external_id), parts and operations optional. */
export const JobSync = Schema.Struct({
  external_id: Name255,
  external_source: Name255,
  job_number: Name255,
  ...jobFields,
  parts: opt(Schema.Array(JobSyncPart))
})
export type JobSync = typeof JobSync.Type

export const jobListSpec = {
  filters: {
    id: uuid,
    status: oneOf(JobStatus.literals),
    customer: text,
    job_number: text,
    priority: int,
    search: text,
    current_cell_id: uuid
  },
  sort: ["job_number", "customer", "due_date", "created_at", "status", "priority"],
  defaultSort: "created_at"
} satisfies ListSpec<any, any>
export type JobListSpec = typeof jobListSpec

export const Timestamp = Schema.NullOr(Schema.String)

/** A job as the API returns it. */
export const Job = Schema.Struct({
  id: Uuid,
  tenant_id: Uuid,
  job_number: Schema.String,
  customer: Schema.NullOr(Schema.String),
  due_date: Schema.NullOr(Schema.String),
  due_date_override: Schema.NullOr(Schema.String),
  priority: Schema.Int,
  notes: Schema.NullOr(Schema.String),
  status: JobStatus,
  metadata: Schema.NullOr(JsonObject),
  current_cell_id: Schema.NullOr(Uuid),
  started_at: Timestamp,
  paused_at: Timestamp,
  resumed_at: Timestamp,
  completed_at: Timestamp,
  actual_duration: Schema.NullOr(Schema.Number),
  external_id: Schema.NullOr(Schema.String),
  external_source: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String
})
export type Job = typeof Job.Type
