// Time entries (spec 2.8): opened and closed by the lifecycles, corrected by hand; durations in
// minutes; actual_time of an operation is the sum of its ended entries.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { type Operation, type TimeEntry, TimeEntryStore } from "@mes/domain"
import { mapConstraints } from "../constraints.ts"
import { deleteRow, insertRows, updateRow } from "../rows.ts"
import { uuidArray } from "./common.ts"
import { listPage } from "./crud.ts"
import { liveCondition, readOwned } from "../json.ts"

const sort = {
  start_time: "e.start_time",
  end_time: "e.end_time",
  created_at: "e.created_at",
  duration_minutes: "e.duration_minutes"
}

// entries of soft-deleted jobs are gone from queries with their job (DECISIONS: soft-deleted jobs)
const LIVE = liveCondition.time_entries("e")

const DURATION = "CASE WHEN end_time IS NULL THEN NULL ELSE extract(epoch FROM end_time - start_time) / 60 END"

export const TimeEntryStorePg = Layer.effect(TimeEntryStore, Effect.gen(function*() {
  const sql = yield* SqlClient

  // a hand-made or corrected entry's duration always follows its times
  const withDuration = (tenantId: string, id: string) =>
    sql.unsafe<TimeEntry>(
      `UPDATE time_entries SET duration_minutes = ${DURATION} WHERE tenant_id = $1 AND id = $2 RETURNING *`,
      [tenantId, id]
    ).pipe(Effect.map((rows) => rows[0]))

  return TimeEntryStore.of({
    insert: (row) =>
      insertRows<TimeEntry>(sql, "time_entries", [row]).pipe(
        Effect.flatMap((rows) => withDuration(row.tenant_id, rows[0]!.id)),
        Effect.map((e) => e!),
        mapConstraints
      ),
    list: (tenantId, q) =>
      listPage<TimeEntry>(sql, {
        table: "time_entries",
        alias: "e",
        where: [
          sql`e.tenant_id = ${tenantId}`,
          sql.literal(LIVE),
          ...(q.filters.id !== undefined ? [sql`e.id = ${q.filters.id as string}`] : []),
          ...(q.filters.operation_id !== undefined ? [sql`e.operation_id = ${q.filters.operation_id as string}`] : []),
          ...(q.filters.user_id !== undefined ? [sql`e.user_id = ${q.filters.user_id as string}`] : []),
          ...(q.filters.batch_id !== undefined ? [sql`e.batch_id = ${q.filters.batch_id as string}`] : []),
          ...(q.filters.active === true ? [sql`e.end_time IS NULL`] : q.filters.active === false ? [sql`e.end_time IS NOT NULL`] : [])
        ],
        sort,
        query: q
      }),
    read: (tenantId, id) => readOwned<TimeEntry>(sql, "time_entries", tenantId, id),
    get: (tenantId, id) =>
      sql<TimeEntry>`SELECT e.* FROM time_entries e WHERE e.tenant_id = ${tenantId} AND e.id = ${id} AND ${sql.literal(LIVE)}`.pipe(
        Effect.map((rows) => rows[0]),
        Effect.orDie
      ),
    update: (tenantId, id, changes) =>
      updateRow<TimeEntry>(sql, "time_entries", tenantId, id, changes).pipe(
        Effect.flatMap((row) => (row === undefined ? Effect.succeed(undefined) : withDuration(tenantId, id))),
        mapConstraints
      ),
    remove: (tenantId, id) =>
      deleteRow(sql, "time_entries", tenantId, id).pipe(mapConstraints),
    open: (tenantId, entries) =>
      entries.length === 0
        ? Effect.succeed(0)
        : sql.unsafe<{ id: string }>(
          `INSERT INTO time_entries (tenant_id, id, operation_id, user_id, batch_id, start_time)
           SELECT $1, mes_uuid7(), e.operation_id, e.user_id, e.batch_id, now()
           FROM jsonb_to_recordset($2::jsonb) AS e (operation_id uuid, user_id uuid, batch_id uuid)
           ON CONFLICT (tenant_id, operation_id, user_id) WHERE end_time IS NULL AND user_id IS NOT NULL DO NOTHING
           RETURNING id`,
          [tenantId, JSON.stringify(entries)]
        ).pipe(Effect.map((rows) => rows.length), Effect.orDie),
    closeActive: (tenantId, operationIds) =>
      operationIds.length === 0
        ? Effect.succeed(0)
        : sql.unsafe<{ id: string }>(
          `SELECT mes_end_time_entries($1, $2::uuid[]) AS id`,
          [tenantId, uuidArray(operationIds)]
        ).pipe(Effect.map((rows) => rows.length), Effect.orDie),
    openForBatch: (tenantId, batchId) =>
      // in the batch's operation order, so the time shares (and their event) come out in that order
      sql<{ operation_id: string; elapsed_seconds: number }>`
        SELECT e.operation_id, floor(extract(epoch FROM now() - e.start_time))::int AS elapsed_seconds
        FROM time_entries e
        LEFT JOIN batch_operations bo ON bo.tenant_id = e.tenant_id AND bo.batch_id = e.batch_id AND bo.operation_id = e.operation_id
        WHERE e.tenant_id = ${tenantId} AND e.batch_id = ${batchId} AND e.end_time IS NULL
        ORDER BY bo.sequence, e.operation_id`.pipe(Effect.orDie),
    closeBatch: (tenantId, batchId, minutes) =>
      sql.unsafe<{ id: string }>(
        `UPDATE time_entries t SET end_time = now(), duration_minutes = m.minutes, updated_at = now()
         FROM jsonb_to_recordset($3::jsonb) AS m (operation_id uuid, minutes float8)
         WHERE t.tenant_id = $1 AND t.batch_id = $2 AND t.end_time IS NULL AND t.operation_id = m.operation_id
         RETURNING t.id`,
        [tenantId, batchId, JSON.stringify(minutes)]
      ).pipe(Effect.map((rows) => rows.length), Effect.orDie),
    recomputeActualTime: (tenantId, operationIds) =>
      operationIds.length === 0
        ? Effect.succeed([])
        : sql.unsafe<Operation>(
          // locked first, then summed by a VOLATILE function: entries a concurrent pause or complete ended while
          // this waited for the lock count (0027; ARCHITECTURE "One statement reads with one snapshot"). NO KEY
          // UPDATE, the UPDATE's own lock: FOR UPDATE would wait for the key-share lock that a concurrent entry's
          // insert holds on the operation (its foreign key) while that one waits for ours, a deadlock
          `WITH l AS (SELECT o.id FROM operations o WHERE o.tenant_id = $1 AND o.id = ANY($2::uuid[]) ORDER BY o.id FOR NO KEY UPDATE)
           UPDATE operations o SET actual_time = mes_ended_minutes(o.tenant_id, o.id), updated_at = now()
           FROM l WHERE o.tenant_id = $1 AND o.id = l.id RETURNING o.*`,
          [tenantId, uuidArray(operationIds)]
        ).pipe(Effect.orDie)
  })
}))
