// Operations (spec 4.3): list filters through part, job and cell; sequence auto-numbering under a
// lock on the part; guarded status moves; sync upserts.
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { type Operation, type OperationListQuery, type OperationState, OperationStore } from "@mes/domain"
import { mapConstraints } from "../constraints.ts"
import { deleteRow, insertRows, moveRow, updateRow, upsertRows } from "../rows.ts"
import { contains, uuidArray } from "./common.ts"
import { listPage } from "./crud.ts"
import { operationDefaults, stampSql } from "./jobs.ts"
import { readOwned } from "../json.ts"

const operationSort = {
  sequence: "o.sequence",
  created_at: "o.created_at",
  estimated_time: "o.estimated_time_minutes",
  actual_time: "o.actual_time",
  status: "o.status",
  completion_percentage: "o.completion_percentage"
}

const LIVE = `EXISTS (SELECT 1 FROM parts p JOIN jobs j ON j.tenant_id = p.tenant_id AND j.id = p.job_id
  WHERE p.tenant_id = o.tenant_id AND p.id = o.part_id AND j.deleted_at IS NULL)`

export const OperationStorePg = Layer.effect(OperationStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  return OperationStore.of({
    insert: (op) =>
      sql.withTransaction(Effect.gen(function*() {
        let row = op
        if (op.sequence == null) {
          // serialize concurrent auto-numbering on the same part
          yield* sql`SELECT id FROM parts WHERE tenant_id = ${op.tenant_id} AND id = ${op.part_id!} FOR UPDATE`
          const [{ next }] = yield* sql<{ next: number }>`
            SELECT coalesce(max(sequence), 0) + 1 AS next FROM operations WHERE tenant_id = ${op.tenant_id} AND part_id = ${op.part_id!}`
          row = { ...op, sequence: next }
        }
        return (yield* insertRows<Operation>(sql, "operations", [row], operationDefaults))[0]!
      })).pipe(mapConstraints),
    list: (tenantId, q: OperationListQuery) =>
      Effect.gen(function*() {
        const f = q.filters
        const where = [sql`o.tenant_id = ${tenantId}`, sql.literal(LIVE)]
        if (f.id !== undefined) where.push(sql`o.id = ${f.id}`)
        if (f.part_id !== undefined) where.push(sql`o.part_id = ${f.part_id}`)
        if (f.job_id !== undefined) {
          where.push(sql`o.part_id IN (SELECT id FROM parts WHERE tenant_id = ${tenantId} AND job_id = ${f.job_id})`)
        }
        if (f.cell_id !== undefined) where.push(sql`o.cell_id = ${f.cell_id}`)
        if (f.cell_name !== undefined) {
          where.push(sql`o.cell_id IN (SELECT id FROM cells WHERE tenant_id = ${tenantId} AND name ILIKE ${contains(f.cell_name)})`)
        }
        if (f.status !== undefined) where.push(sql`o.status = ${f.status}`)
        if (f.assigned_operator_id !== undefined) where.push(sql`o.assigned_operator_id = ${f.assigned_operator_id}`)
        if (f.operation_name !== undefined) where.push(sql`o.operation_name ILIKE ${contains(f.operation_name)}`)
        if (f.search !== undefined) {
          const s = contains(f.search)
          where.push(sql`(o.operation_name ILIKE ${s} OR o.notes ILIKE ${s})`)
        }
        return yield* listPage<Operation>(sql, { table: "operations", alias: "o", where, sort: operationSort, query: q })
      }).pipe(Effect.orDie),
    get: (tenantId, id) =>
      sql<Operation>`SELECT o.* FROM operations o WHERE o.tenant_id = ${tenantId} AND o.id = ${id} AND ${sql.literal(LIVE)}`.pipe(
        Effect.map((rows) => rows[0]),
        Effect.orDie
      ),
    read: (tenantId, id) => readOwned<Operation>(sql, "operations", tenantId, id),
    update: (tenantId, id, changes) => updateRow<Operation>(sql, "operations", tenantId, id, changes).pipe(mapConstraints),
    move: (tenantId, id, move, changes) =>
      moveRow<Operation>(sql, "operations", tenantId, id, {
        from: move.from,
        to: move.to,
        set: stampSql(move.stamps, move.effects),
        ...(changes === undefined ? {} : { changes })
      }).pipe(mapConstraints),
    status: (tenantId, id) =>
      sql<{ status: OperationState }>`SELECT o.status FROM operations o WHERE o.tenant_id = ${tenantId} AND o.id = ${id} AND ${sql.literal(LIVE)}`.pipe(
        Effect.map((rows) => rows[0]?.status),
        Effect.orDie
      ),
    context: (tenantId, id) =>
      sql<{ part_id: string; part_number: string; job_id: string; job_number: string }>`
        SELECT p.id AS part_id, p.part_number, j.id AS job_id, j.job_number
        FROM operations o JOIN parts p ON p.tenant_id = o.tenant_id AND p.id = o.part_id
        JOIN jobs j ON j.tenant_id = p.tenant_id AND j.id = p.job_id
        WHERE o.tenant_id = ${tenantId} AND o.id = ${id}`.pipe(
        Effect.map(([r]) => ({ part: { id: r!.part_id, part_number: r!.part_number, job: { id: r!.job_id, job_number: r!.job_number } } })),
        Effect.orDie
      ),
    getMany: (tenantId, ids) =>
      ids.length === 0
        ? Effect.succeed([])
        : sql.unsafe<Operation>(`SELECT * FROM operations WHERE tenant_id = $1 AND id = ANY($2::uuid[])`, [tenantId, uuidArray(ids)]).pipe(
          Effect.orDie
        ),
    moveMany: (tenantId, ids, move) =>
      ids.length === 0
        ? Effect.succeed([])
        : sql.unsafe<Operation & { _previous: string }>(
          `WITH prev AS (
             SELECT id, status FROM operations WHERE tenant_id = $1 AND id = ANY($2::uuid[]) AND status = ANY($4::text[]) FOR UPDATE
           )
           UPDATE operations t SET status = $3, ${[...stampSql(move.stamps, move.effects), "updated_at = now()"].join(", ")}
           FROM prev WHERE t.tenant_id = $1 AND t.id = prev.id RETURNING t.*, prev.status AS _previous`,
          [tenantId, uuidArray(ids), move.to, `{${move.from.join(",")}}`]
        ).pipe(
          Effect.map((rows) => rows.map(({ _previous, ...row }) => ({ row: row as Operation, previous: _previous }))),
          Effect.orDie
        ),
    remove: (tenantId, id) =>
      deleteRow(sql, "operations", tenantId, id).pipe(mapConstraints),
    nextSequence: (tenantId, partId) =>
      sql<{ next: number }>`SELECT coalesce(max(sequence), 0) + 1 AS next FROM operations WHERE tenant_id = ${tenantId} AND part_id = ${partId}`.pipe(
        Effect.map((rows) => rows[0]!.next),
        Effect.orDie
      ),
    byExternalIds: (tenantId, source, externalIds) =>
      externalIds.length === 0
        ? Effect.succeed([])
        : sql<Operation>`SELECT o.* FROM operations o WHERE o.tenant_id = ${tenantId} AND o.external_source = ${source}
            AND o.external_id IN ${sql.in(externalIds)}`.pipe(Effect.orDie),
    upsert: (rows) =>
      upsertRows<Operation>(sql, "operations", rows, operationDefaults, { predicate: "external_id IS NOT NULL", sameParent: "part_id" })
        .pipe(mapConstraints)
  })
}))
