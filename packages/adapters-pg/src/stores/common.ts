// Pieces shared by the stores: the transaction port, reference lookups and list helpers.
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { References, type ReferenceTable, Tx } from "@mes/domain"

/** `%text%` for ILIKE with the pattern characters of the input escaped. */
export const contains = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/** ORDER BY fragment from a whitelisted column map. */
export const orderBy = (columns: Readonly<Record<string, string>>, sort: string, order: "asc" | "desc", alias: string) =>
  `ORDER BY ${columns[sort] ?? `${alias}.created_at`} ${order} NULLS LAST, ${alias}.id ${order}`

export const TxPg = Layer.effect(Tx, Effect.gen(function*() {
  const sql = yield* SqlClient
  return Tx.of({ transaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die)) as any })
}))

// rows under a soft-deleted job count as absent (404), like the job itself
const underLiveJob = (table: string, alias: string) =>
  `SELECT ${alias}.id, ${alias}.tenant_id FROM ${table} ${alias}
   JOIN operations o ON o.tenant_id = ${alias}.tenant_id AND o.id = ${alias}.operation_id
   JOIN parts p ON p.tenant_id = o.tenant_id AND p.id = o.part_id
   JOIN jobs j ON j.tenant_id = p.tenant_id AND j.id = p.job_id
   WHERE j.deleted_at IS NULL AND ${alias}.id = ANY($1::uuid[])`

const ownerSql: Record<ReferenceTable, string> = {
  jobs: "SELECT id, tenant_id FROM jobs WHERE deleted_at IS NULL AND id = ANY($1::uuid[])",
  parts: "SELECT p.id, p.tenant_id FROM parts p JOIN jobs j ON j.tenant_id = p.tenant_id AND j.id = p.job_id WHERE j.deleted_at IS NULL AND p.id = ANY($1::uuid[])",
  operations: "SELECT o.id, o.tenant_id FROM operations o JOIN parts p ON p.tenant_id = o.tenant_id AND p.id = o.part_id JOIN jobs j ON j.tenant_id = p.tenant_id AND j.id = p.job_id WHERE j.deleted_at IS NULL AND o.id = ANY($1::uuid[])",
  cells: "SELECT id, tenant_id FROM cells WHERE id = ANY($1::uuid[])",
  profiles: "SELECT id, tenant_id FROM profiles WHERE id = ANY($1::uuid[])",
  batches: "SELECT id, tenant_id FROM batches WHERE id = ANY($1::uuid[])",
  time_entries: underLiveJob("time_entries", "e"),
  issues: underLiveJob("issues", "i"),
  substeps: underLiveJob("substeps", "s"),
  webhooks: "SELECT id, tenant_id FROM webhooks WHERE id = ANY($1::uuid[])",
  webhook_logs: "SELECT id, tenant_id FROM webhook_logs WHERE id = ANY($1::uuid[])"
}

/** PostgreSQL array literal for a uuid[] parameter (ids are validated UUIDs). */
export const uuidArray = (ids: ReadonlyArray<string>) => `{${ids.join(",")}}`

export const ReferencesPg = Layer.effect(References, Effect.gen(function*() {
  const sql = yield* SqlClient
  const owners = (table: ReferenceTable, ids: ReadonlyArray<string>) =>
    ids.length === 0
      ? Effect.succeed(new Map<string, string>())
      : sql.unsafe<{ id: string; tenant_id: string }>(ownerSql[table], [uuidArray(ids)]).pipe(
        Effect.map((rows) => new Map(rows.map((r) => [r.id, r.tenant_id]))),
        Effect.orDie
      )
  return References.of({
    owners,
    ownerOf: (table, id) => owners(table, [id]).pipe(Effect.map((m) => m.get(id))),
    cellsByName: (tenantId, names) =>
      sql<{ id: string; name: string }>`SELECT id, name FROM cells WHERE tenant_id = ${tenantId} AND name IN ${sql.in(names)}`.pipe(
        Effect.map((rows) => new Map(rows.map((r) => [r.name, r.id]))),
        Effect.orDie
      )
  })
}))
