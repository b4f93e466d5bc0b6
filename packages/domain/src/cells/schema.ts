// Work cells (spec 2.9, 4.12): standard CRUD; operations reference them by id or name.
import * as Schema from "effect/Schema"
import { Int32, isMaxChars, Name255, opt, optNull, Uuid } from "../fields.ts"
import { bool, text, uuid, type ListSpec } from "../query.ts"

const cellFields = {
  color: optNull(Schema.String.check(isMaxChars(64))),
  sequence: optNull(Int32),
  active: opt(Schema.Boolean),
  external_id: optNull(Name255),
  external_source: optNull(Name255)
}

export const CellCreate = Schema.Struct({ name: Name255, ...cellFields })
export type CellCreate = typeof CellCreate.Type
/** PUT /api-cells/sync (spec 4.10): upsert by (external_source, external_id). */
export const CellSync = Schema.Struct({
  ...CellCreate.fields,
  external_id: Name255,
  external_source: Name255
})
export const CellPatch = Schema.Struct({ name: opt(Name255), ...cellFields })
export type CellPatch = typeof CellPatch.Type

export const cellListSpec = {
  filters: { id: uuid, name: text, active: bool, search: text },
  sort: ["name", "sequence", "created_at"],
  defaultSort: "sequence",
  defaultOrder: "asc"
} satisfies ListSpec<any, any>

export const Cell = Schema.Struct({
  id: Uuid,
  tenant_id: Uuid,
  name: Schema.String,
  color: Schema.NullOr(Schema.String),
  sequence: Schema.NullOr(Schema.Int),
  active: Schema.Boolean,
  external_id: Schema.NullOr(Schema.String),
  external_source: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String
})
export type Cell = typeof Cell.Type
