import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { type ApiKey, type KeyCandidate, type Tenant, TenantStore } from "@mes/domain"

export const TenantStorePg = Layer.effect(TenantStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  return TenantStore.of({
    insert: ({ id, name, plan }) =>
      sql<Tenant>`INSERT INTO tenants (id, name, plan) VALUES (${id}, ${name}, ${plan}) RETURNING *, 0 AS current_month_parts`.pipe(
        Effect.map((rows) => rows[0]!),
        Effect.orDie
      ),
    get: (id) =>
      sql<Tenant>`SELECT t.*, u.current_month_parts FROM tenants t JOIN tenant_usage u ON u.tenant_id = t.id WHERE t.id = ${id}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie),
    any: () => sql`SELECT 1 FROM tenants LIMIT 1`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),
    countParts: (tenantId, n) =>
      n === 0
        ? Effect.void
        : sql`INSERT INTO part_usage (tenant_id, parts) VALUES (${tenantId}, ${n})`.pipe(Effect.asVoid, Effect.orDie),
    insertKey: (k) =>
      sql<ApiKey>`INSERT INTO api_keys ${sql.insert(k)} RETURNING id, tenant_id, key_prefix, environment, name, created_at, revoked_at`.pipe(
        Effect.map((rows) => rows[0]!),
        Effect.orDie
      ),
    keysByPrefix: (prefix) =>
      sql<KeyCandidate>`SELECT k.tenant_id, k.key_hash, t.plan, t.status AS tenant_status
        FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
        WHERE k.key_prefix = ${prefix} AND k.revoked_at IS NULL`.pipe(Effect.orDie)
  })
}))
