// The material catalog (spec 4.12 /api-materials): names a tenant uses, with ids once they are entries.
import * as Schema from "effect/Schema"
import { Name255, opt, optNull, Uuid } from "../fields.ts"
import { bool, text, uuid, type ListSpec } from "../query.ts"

export const MaterialCreate = Schema.Struct({ name: Name255, description: optNull(Schema.String) })
export const MaterialPatch = Schema.Struct({ name: opt(Name255), description: optNull(Schema.String) })

export const materialListSpec = {
  filters: { id: uuid, search: text, in_catalog: bool },
  sort: ["name", "created_at"],
  defaultSort: "name",
  defaultOrder: "asc"
} satisfies ListSpec<any, any>

/** A name in use: a catalog entry (`in_catalog`, with an id), or a name parts carry that no entry has yet (id null). */
export const Material = Schema.Struct({
  id: Schema.NullOr(Uuid),
  tenant_id: Uuid,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  in_catalog: Schema.Boolean,
  created_at: Schema.String,
  updated_at: Schema.String
})
export type Material = typeof Material.Type
