// Tenants and API keys (spec 2.9, 5; DECISIONS: process and bootstrap).
import * as Schema from "effect/Schema"
import { isMaxChars, Uuid } from "../fields.ts"
import { bool, oneOf, type ListSpec } from "../query.ts"

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

/** Control characters (C0, DEL, C1) and the Unicode line and paragraph separators. */
const CONTROL = /[\p{Cc}\u2028\u2029]/u

/**
 * A tenant's name: one line of text that is not blank, of at most 255 characters (code points, as every name of the
 * API: an emoji is one). A tab or a line break is refused: `mes tenant list` prints a tenant per line, its fields
 * apart by spaces.
 */
export const TenantName = Schema.String.check(
  Schema.makeFilter<string>((s) => s.trim() !== "", {
    representation: { id: "effect/schema/isMinLength", payload: { minLength: 1 } },
    expected: "a name that is not blank",
    message: "name must not be empty or blank"
  } as any),
  Schema.makeFilter<string>((s) => !CONTROL.test(s), {
    representation: { id: "mes/isOneLine", payload: {} },
    expected: "one line of text",
    message: "name must be one line of text, without a tab, a line break or another control character"
  } as any),
  isMaxChars(255)
)

/** A tenant to create (`mes tenant create`; the domain's Tenants.create takes it as given). */
export const TenantCreate = Schema.Struct({
  name: TenantName,
  plan: Schema.optionalKey(Plan)
})

export const ApiKeyEnvironment = Schema.Literals(["live", "test"])
export type ApiKeyEnvironment = typeof ApiKeyEnvironment.Type

/**
 * A key as it is listed: never its secret nor its hash (spec 5.3 keeps only the SHA-256 hash); `prefix`
 * is the key's first 16 characters, enough to recognize it. `last_used_at` is exact to the auth cache's bound.
 */
export const ApiKey = Schema.Struct({
  id: Uuid,
  tenant_id: Uuid,
  name: Schema.NullOr(Schema.String),
  prefix: Schema.String,
  environment: ApiKeyEnvironment,
  created_at: Schema.String,
  last_used_at: Schema.NullOr(Schema.String),
  revoked_at: Schema.NullOr(Schema.String)
})
export type ApiKey = typeof ApiKey.Type

/** POST /api-key-generate. */
export const ApiKeyCreate = Schema.Struct({
  name: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(255)))),
  environment: ApiKeyEnvironment
})

/** GET /api-key-generate lists the tenant's keys, newest last; `revoked=false` shows the working ones. */
export const apiKeyListSpec = {
  filters: { environment: oneOf(ApiKeyEnvironment.literals), revoked: bool },
  sort: ["created_at", "last_used_at", "name"],
  defaultSort: "created_at"
} satisfies ListSpec<any, any>
