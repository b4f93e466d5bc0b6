import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { type ApiKey, jsonText, type KeyCandidate, type SessionRow, type Tenant, TenantStore } from "@mes/domain"
import { takesNoWrites } from "../constraints.ts"
import { listPage } from "./crud.ts"

/**
 * A tenant as the schema has it, from a row `t` of tenants and its usage `u`: the times as the API writes them
 * (the driver gave Date objects where `Tenant` says strings).
 */
const TENANT = "t.id, t.name, t.plan, t.status, u.current_month_parts, mes_ts(t.created_at) AS created_at, mes_ts(t.updated_at) AS updated_at"

export const TenantStorePg = Layer.effect(TenantStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const tenant = sql.literal(TENANT)
  return TenantStore.of({
    insert: ({ id, name, plan }) =>
      sql<Tenant>`WITH t AS (INSERT INTO tenants (id, name, plan) VALUES (${id}, ${name}, ${plan}) RETURNING *)
        SELECT ${tenant} FROM t, (SELECT 0 AS current_month_parts) u`.pipe(Effect.map((rows) => rows[0]!), Effect.orDie),
    get: (id) =>
      sql<Tenant>`SELECT ${tenant} FROM tenants t JOIN tenant_usage u ON u.tenant_id = t.id WHERE t.id = ${id}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie),
    list: () =>
      sql<Tenant>`SELECT ${tenant} FROM tenants t JOIN tenant_usage u ON u.tenant_id = t.id ORDER BY t.created_at, t.id`.pipe(Effect.orDie),
    any: () => sql`SELECT 1 FROM tenants LIMIT 1`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),
    countParts: (tenantId, n) =>
      n === 0
        ? Effect.void
        : sql`INSERT INTO part_usage (tenant_id, parts) VALUES (${tenantId}, ${n})`.pipe(Effect.asVoid, Effect.orDie),
    insertKey: (k) =>
      sql<{ json: string }>`INSERT INTO api_keys ${sql.insert(k)} RETURNING api_keys_json(api_keys) AS json`.pipe(
        Effect.map((rows) => jsonText<ApiKey>(rows[0]!.json)),
        Effect.orDie
      ),
    // the same round trip notes the use of the presented key (its hash) when it is a working key: a key used
    // all day is written once a minute at most, and a row being written is skipped, not waited on. A database
    // that takes no writes (a standby, a primary demoted by a failover) still authenticates, without noting the
    // use, so that reads go on being served (writes are 503)
    keysByPrefix: (prefix, usedHash) => {
      const candidates = sql<KeyCandidate>`
        SELECT k.id, k.tenant_id, k.key_hash, t.plan, t.status AS tenant_status
        FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
        WHERE k.key_prefix = ${prefix} AND k.revoked_at IS NULL`
      return sql<KeyCandidate>`
        WITH used AS (
          UPDATE api_keys k SET last_used_at = now()
          FROM tenants t WHERE t.id = k.tenant_id AND t.status = 'active'
            AND k.key_prefix = ${prefix} AND k.key_hash = ${usedHash} AND k.revoked_at IS NULL
            AND (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute')
        )
        ${candidates}`.pipe(Effect.catchIf(takesNoWrites, () => candidates), Effect.orDie)
    },
    listKeys: (tenantId, q) =>
      listPage<ApiKey>(sql, {
        table: "api_keys",
        alias: "k",
        where: [
          sql`k.tenant_id = ${tenantId}`,
          ...(q.filters.environment !== undefined ? [sql`k.environment = ${q.filters.environment as string}`] : []),
          ...(q.filters.revoked !== undefined ? [q.filters.revoked ? sql`k.revoked_at IS NOT NULL` : sql`k.revoked_at IS NULL`] : [])
        ],
        sort: { created_at: "k.created_at", last_used_at: "k.last_used_at", name: "k.name" },
        query: q
      }),
    revokeKey: (tenantId, id) =>
      sql<{ owner: string | null; json: string | null }>`
        WITH revoked AS (
          UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE tenant_id = ${tenantId} AND id = ${id}
          RETURNING api_keys_json(api_keys) AS json
        )
        SELECT (SELECT tenant_id FROM api_keys WHERE id = ${id} LIMIT 1) AS owner, (SELECT json FROM revoked) AS json`.pipe(
        Effect.map(([row]) => ({ owner: row?.owner ?? undefined, record: row?.json == null ? undefined : jsonText<ApiKey>(row.json) })),
        Effect.orDie
      ),
    sessionOf: (tenantId, profileId) =>
      sql<SessionRow>`SELECT t.plan, t.status AS tenant_status, p.role AS profile_role, p.active AS profile_active
        FROM tenants t LEFT JOIN profiles p ON p.tenant_id = t.id AND p.id = ${profileId} WHERE t.id = ${tenantId}`.pipe(
        Effect.map((rows) => rows[0]),
        Effect.orDie
      ),
    setPlan: (id, plan) =>
      sql<Tenant>`WITH t AS (UPDATE tenants SET plan = ${plan}, updated_at = now() WHERE id = ${id} RETURNING *)
        SELECT ${tenant} FROM t JOIN tenant_usage u ON u.tenant_id = t.id`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)
  })
}))
