import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { ApiKey, Plan, Tenant } from "./schema.ts"

export interface KeyCandidate {
  readonly tenant_id: string
  readonly key_hash: string
  readonly plan: Plan
  readonly tenant_status: string
}

export class TenantStore extends Context.Service<TenantStore, {
  readonly insert: (tenant: { id: string; name: string; plan: Plan }) => Effect.Effect<Tenant>
  readonly get: (id: string) => Effect.Effect<Tenant | undefined>
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
  }) => Effect.Effect<ApiKey>
  /** Active keys whose prefix matches, with their tenant's plan. */
  readonly keysByPrefix: (prefix: string) => Effect.Effect<ReadonlyArray<KeyCandidate>>
}>()("mes/domain/TenantStore") {}
