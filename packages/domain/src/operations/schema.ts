// Operation records and inputs (spec 2.3, 4.3).
import * as Schema from "effect/Schema"
import { isMinChars, Name255, NonNegativeNumber, opt, optNull, Percentage, PositiveInt, Text, Uuid } from "../fields.ts"
import { bool, oneOf, text, uuid, type ListSpec } from "../query.ts"

/** `paused` is accepted on input as an alias of `on_hold` (DECISIONS). */
export const OperationStatus = Schema.Literals(["not_started", "in_progress", "on_hold", "completed"])
export const OperationStatusInput = Schema.Literals(["not_started", "in_progress", "on_hold", "paused", "completed"])

export const operationAliases = { estimated_time: "estimated_time_minutes", instructions: "notes" } as const
/** The aliases a PATCH takes: those of the fields it changes (`estimated_time` is refused by its own name). */
export const operationPatchAliases = { instructions: operationAliases.instructions } as const

const operationFields = {
  cell_id: optNull(Uuid),
  cell_name: optNull(Schema.String.check(isMinChars(1))),
  assigned_operator_id: optNull(Uuid),
  estimated_time_minutes: optNull(NonNegativeNumber),
  setup_time_minutes: optNull(NonNegativeNumber),
  notes: optNull(Text)
}

/** An operation nested in a part of a job create: sequence is required there. */
export const OperationNested = Schema.Struct({
  operation_name: Name255,
  sequence: PositiveInt,
  ...operationFields
})
export type OperationNested = typeof OperationNested.Type

/** POST /api-operations: sequence defaults to max(existing)+1. */
export const OperationCreate = Schema.Struct({
  part_id: Uuid,
  operation_name: Name255,
  sequence: opt(PositiveInt),
  ...operationFields
})
export type OperationCreate = typeof OperationCreate.Type

/** PATCH /api-operations: the fields spec 4.3 allows. */
export const OperationPatch = Schema.Struct({
  status: opt(OperationStatusInput),
  completion_percentage: opt(Percentage),
  notes: optNull(Text),
  assigned_operator_id: optNull(Uuid),
  actual_time: opt(NonNegativeNumber),
  cell_id: optNull(Uuid)
})
export type OperationPatch = typeof OperationPatch.Type

/** PUT /api-operations/sync */
export const OperationSync = Schema.Struct({
  external_id: Name255,
  external_source: Name255,
  part_external_id: Schema.String.check(isMinChars(1)),
  cell_name: Schema.String.check(isMinChars(1)),
  operation_name: Name255,
  sequence: opt(PositiveInt),
  estimated_time_minutes: optNull(NonNegativeNumber),
  setup_time_minutes: optNull(NonNegativeNumber),
  notes: optNull(Text)
})
export type OperationSync = typeof OperationSync.Type

export const operationListSpec = {
  filters: {
    id: uuid,
    part_id: uuid,
    job_id: uuid,
    cell_id: uuid,
    cell_name: text,
    status: oneOf(OperationStatusInput.literals),
    assigned_operator_id: uuid,
    operation_name: text,
    search: text,
    include_count: bool
  },
  sort: ["sequence", "created_at", "estimated_time", "actual_time", "status", "completion_percentage"],
  defaultSort: "sequence",
  defaultOrder: "asc",
  aliases: { sort_by: "sort", sort_order: "order" }
} satisfies ListSpec<any, any>

export const Operation = Schema.Struct({
  id: Uuid,
  tenant_id: Uuid,
  part_id: Uuid,
  operation_name: Schema.String,
  sequence: Schema.Int,
  cell_id: Schema.NullOr(Uuid),
  assigned_operator_id: Schema.NullOr(Uuid),
  estimated_time_minutes: Schema.NullOr(Schema.Number),
  setup_time_minutes: Schema.NullOr(Schema.Number),
  notes: Schema.NullOr(Schema.String),
  status: OperationStatus,
  completion_percentage: Schema.Number,
  actual_time: Schema.Number,
  started_at: Schema.NullOr(Schema.String),
  paused_at: Schema.NullOr(Schema.String),
  resumed_at: Schema.NullOr(Schema.String),
  completed_at: Schema.NullOr(Schema.String),
  external_id: Schema.NullOr(Schema.String),
  external_source: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String
})
export type Operation = typeof Operation.Type
