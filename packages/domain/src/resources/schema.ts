// Resources (spec 2.9, 4.12): tooling, fixtures, molds, materials and equipment, synced from the ERP.
import * as Schema from "effect/Schema"
import { Max255, Name255, opt, optNull, Uuid } from "../fields.ts"
import { oneOf, text, uuid, type ListSpec } from "../query.ts"

export const ResourceType = Schema.Literals(["tooling", "fixture", "mold", "material", "equipment"])
export const ResourceStatus = Schema.Literals(["available", "in_use", "maintenance"])
const Text255 = Max255
const ExternalKey = Name255

const resourceFields = {
  description: optNull(Schema.String),
  identifier: optNull(Text255),
  location: optNull(Text255),
  status: opt(ResourceStatus),
  external_id: optNull(ExternalKey),
  external_source: optNull(ExternalKey)
}

export const ResourceCreate = Schema.Struct({ name: Name255, type: ResourceType, ...resourceFields })
export const ResourcePatch = Schema.Struct({ name: opt(Name255), type: opt(ResourceType), ...resourceFields })
/** PUT /api-resources/sync: upsert by (external_source, external_id). */
export const ResourceSync = Schema.Struct({ ...ResourceCreate.fields, external_id: ExternalKey, external_source: ExternalKey })

export const resourceListSpec = {
  filters: { id: uuid, type: oneOf(ResourceType.literals), status: oneOf(ResourceStatus.literals), location: text, search: text, external_source: text },
  sort: ["name", "type", "status", "location", "created_at"],
  defaultSort: "created_at"
} satisfies ListSpec<any, any>

export const Resource = Schema.Struct({
  id: Uuid,
  tenant_id: Uuid,
  name: Schema.String,
  type: ResourceType,
  description: Schema.NullOr(Schema.String),
  identifier: Schema.NullOr(Schema.String),
  location: Schema.NullOr(Schema.String),
  status: ResourceStatus,
  external_id: Schema.NullOr(Schema.String),
  external_source: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String
})
export type Resource = typeof Resource.Type
