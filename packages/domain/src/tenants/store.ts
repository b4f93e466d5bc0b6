import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Owned } from "../crud.ts"
import type { JsonText } from "../json.ts"
import type { FilterKind, ListQuery, Slice } from "../query.ts"
import type { ApiKey, Plan, Tenant } from "./schema.ts"

export interface KeyCandidate {
  readonly id: string
  readonly tenant_id: string
  readonly key_hash: string
  readonly plan: Plan
  readonly tenant_status: string
}

export interface SessionRow {
  readonly plan: Plan
  readonly tenant_status: string
  /** Null when the profile does not exist in the tenant. */
  readonly profile_role: "admin" | "operator" | null
  readonly profile_active: boolean | null
}

export class TenantStore extends Context.Service<TenantStore, {
  readonly insert: (tenant: { id: string; name: string; plan: Plan }) => Effect.Effect<Tenant>
  readonly get: (id: string) => Effect.Effect<Tenant | undefined>
  /** Every tenant, the oldest first. */
  readonly list: () => Effect.Effect<ReadonlyArray<Tenant>>
  /** True when at least one tenant exists. */
  readonly any: () => Effect.Effect<boolean>
  /** Counts created parts towards current_month_parts (DECISIONS): appends to the usage ledger, never a shared row. */
  readonly countParts: (tenantId: string, n: number) => Effect.Effect<void>
  readonly insertKey: (key: {
    id: string
    tenant_id: string
    key_prefix: string
    key_hash: string
    environment: "live" | "test"
    name: string | null
  }) => Effect.Effect<JsonText<ApiKey>>
  /**
   * Active keys whose prefix matches, with their tenant's plan; notes in the same round trip that the working
   * key with hash `usedHash` was used (at most once a minute is written).
   */
  readonly keysByPrefix: (prefix: string, usedHash: string) => Effect.Effect<ReadonlyArray<KeyCandidate>>
  readonly listKeys: (tenantId: string, query: ListQuery<Record<string, FilterKind>, string>) => Effect.Effect<Slice<ApiKey>>
  /** Revokes the tenant's key (a revoked key stays revoked at its first time); the owner of the id, and the key. */
  readonly revokeKey: (tenantId: string, id: string) => Effect.Effect<Owned<ApiKey>>
  /** A session's tenant and profile as they are now; undefined when the tenant does not exist. */
  readonly sessionOf: (tenantId: string, profileId: string) => Effect.Effect<SessionRow | undefined>
  /** Changes the tenant's plan; undefined when there is no such tenant. */
  readonly setPlan: (tenantId: string, plan: Plan) => Effect.Effect<Tenant | undefined>
}>()("mes/domain/TenantStore") {}
