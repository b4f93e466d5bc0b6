// Part records and inputs (spec 2.2, 4.2).
import * as Schema from "effect/Schema"
import { isMinChars, JsonObject, Max255, Name255, opt, optNull, PositiveInt, Text, Uuid } from "../fields.ts"
import { int, oneOf, text, uuid, type ListSpec } from "../query.ts"

export const PartStatus = Schema.Literals(["not_started", "in_progress", "completed"])

/** Fields a part takes wherever it is created (nested in a job, standalone, synced). */
export const PartNestedFields = {
  part_number: Name255,
  quantity: PositiveInt,
  material: optNull(Text),
  description: optNull(Text),
  drawing_no: optNull(Max255),
  cnc_program_name: optNull(Max255),
  is_bullet_card: opt(Schema.Boolean),
  material_lot: optNull(Text),
  material_supplier: optNull(Text),
  material_cert_number: optNull(Text),
  parent_part_id: optNull(Uuid),
  parent_part_number: optNull(Text),
  current_cell_id: optNull(Uuid),
  material_id: optNull(Uuid),
  drawing_url: optNull(Text),
  step_file_url: optNull(Text),
  notes: optNull(Text),
  metadata: optNull(JsonObject),
  file_paths: optNull(Schema.Array(Schema.String)),
  status: opt(PartStatus)
}

/** POST /api-parts */
export const PartCreate = Schema.Struct({ job_id: Uuid, ...PartNestedFields })
export type PartCreate = typeof PartCreate.Type

const { part_number: _pn, quantity: _q, ...optionalPartFields } = PartNestedFields

/** PATCH /api-parts: any field except tenant_id, id, created_at (spec 4.2). */
export const PartPatch = Schema.Struct({
  part_number: opt(Name255),
  quantity: opt(PositiveInt),
  ...optionalPartFields
})
export type PartPatch = typeof PartPatch.Type

/** PUT /api-parts/sync */
export const PartSync = Schema.Struct({
  external_id: Name255,
  external_source: Name255,
  job_external_id: Schema.String.check(isMinChars(1)),
  ...PartNestedFields
})
export type PartSync = typeof PartSync.Type

export const partListSpec = {
  filters: {
    id: uuid,
    job_id: uuid,
    job_number: text,
    part_number: text,
    material: text,
    material_lot: text,
    status: oneOf(PartStatus.literals),
    parent_part_id: uuid,
    search: text,
    quantity: int
  },
  sort: ["part_number", "material", "status", "created_at", "quantity"],
  defaultSort: "created_at"
} satisfies ListSpec<any, any>

export const Part = Schema.Struct({
  id: Uuid,
  tenant_id: Uuid,
  job_id: Uuid,
  part_number: Schema.String,
  quantity: Schema.Int,
  material: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  drawing_no: Schema.NullOr(Schema.String),
  cnc_program_name: Schema.NullOr(Schema.String),
  is_bullet_card: Schema.Boolean,
  material_lot: Schema.NullOr(Schema.String),
  material_supplier: Schema.NullOr(Schema.String),
  material_cert_number: Schema.NullOr(Schema.String),
  parent_part_id: Schema.NullOr(Uuid),
  current_cell_id: Schema.NullOr(Uuid),
  material_id: Schema.NullOr(Uuid),
  drawing_url: Schema.NullOr(Schema.String),
  step_file_url: Schema.NullOr(Schema.String),
  notes: Schema.NullOr(Schema.String),
  metadata: Schema.NullOr(JsonObject),
  file_paths: Schema.NullOr(Schema.Array(Schema.String)),
  status: PartStatus,
  external_id: Schema.NullOr(Schema.String),
  external_source: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String
})
export type Part = typeof Part.Type
