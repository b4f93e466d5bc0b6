// Tenants and API keys (spec 2.9, 5; DECISIONS: process and bootstrap).
import * as Schema from "effect/Schema"
import { Uuid } from "../fields.ts"

export const Plan = Schema.Literals(["free", "pro", "premium", "enterprise"])
export type Plan = typeof Plan.Type

export const Tenant = Schema.Struct({
  id: Uuid,
  name: Schema.String,
  plan: Plan,
  status: Schema.String,
  current_month_parts: Schema.Int,
  created_at: Schema.String,
  updated_at: Schema.String
})
export type Tenant = typeof Tenant.Type

export const TenantCreate = Schema.Struct({
  name: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(255)),
  plan: Schema.optionalKey(Plan)
})

export const ApiKeyEnvironment = Schema.Literals(["live", "test"])
export type ApiKeyEnvironment = typeof ApiKeyEnvironment.Type

/** A stored key: only its SHA-256 hash and a lookup prefix are kept (spec 5.3). */
export const ApiKey = Schema.Struct({
  id: Uuid,
  tenant_id: Uuid,
  key_prefix: Schema.String,
  environment: ApiKeyEnvironment,
  name: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  revoked_at: Schema.NullOr(Schema.String)
})
export type ApiKey = typeof ApiKey.Type
