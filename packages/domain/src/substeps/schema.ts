// Substeps (spec 2.5, 4.8): the checklist steps of an operation.
import * as Schema from "effect/Schema"
import { isMinChars, opt, PositiveInt, Uuid } from "../fields.ts"
import { bool, type ListSpec, uuid } from "../query.ts"

const Description = Schema.String.check(isMinChars(1))

export const SubstepCreate = Schema.Struct({
  operation_id: Uuid,
  description: Description,
  sequence: PositiveInt,
  completed: opt(Schema.Boolean)
})
export type SubstepCreate = typeof SubstepCreate.Type

/** PATCH /api-substeps: `completed` (spec 4.8) sets or clears completed_at; description and sequence too. */
export const SubstepPatch = Schema.Struct({
  completed: opt(Schema.Boolean),
  description: opt(Description),
  sequence: opt(PositiveInt)
})
export type SubstepPatch = typeof SubstepPatch.Type

export const substepListSpec = {
  filters: { id: uuid, operation_id: uuid, completed: bool },
  sort: ["sequence", "created_at", "completed"],
  defaultSort: "sequence",
  defaultOrder: "asc"
} satisfies ListSpec<any, any>

export const Substep = Schema.Struct({
  id: Uuid,
  tenant_id: Uuid,
  operation_id: Uuid,
  description: Schema.String,
  sequence: Schema.Int,
  completed: Schema.Boolean,
  completed_at: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String
})
export type Substep = typeof Substep.Type
