// Profiles: the operators and users that user_id, operator_id and assigned_operator_id reference (DECISIONS).
import * as Schema from "effect/Schema"
import { isMaxChars, Name255, opt, optNull, Uuid } from "../fields.ts"
import { bool, oneOf, text, uuid, type ListSpec } from "../query.ts"

export const Role = Schema.Literals(["admin", "operator"])
export type Role = typeof Role.Type

const Email = Schema.String.check(isMaxChars(255), Schema.isPattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/))

export const ProfileCreate = Schema.Struct({
  display_name: Name255,
  email: optNull(Email),
  role: opt(Role),
  active: opt(Schema.Boolean)
})
export type ProfileCreate = typeof ProfileCreate.Type
export const ProfilePatch = Schema.Struct({
  display_name: opt(Name255),
  email: optNull(Email),
  role: opt(Role),
  active: opt(Schema.Boolean)
})
export type ProfilePatch = typeof ProfilePatch.Type

export const profileListSpec = {
  filters: { id: uuid, role: oneOf(Role.literals), active: bool, search: text, email: text },
  sort: ["display_name", "created_at", "role"],
  defaultSort: "created_at"
} satisfies ListSpec<any, any>

export const Profile = Schema.Struct({
  id: Uuid,
  tenant_id: Uuid,
  display_name: Schema.String,
  email: Schema.NullOr(Schema.String),
  role: Role,
  active: Schema.Boolean,
  created_at: Schema.String,
  updated_at: Schema.String
})
export type Profile = typeof Profile.Type
