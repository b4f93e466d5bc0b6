// The monthly reset, the export and the cloud request counts (issue 10), each one statement per step.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { SqlClient } from "effect/sql/SqlClient"
import { EXPORT_ENTITIES, type ExportEntity, ExportStore, MonthlyResetStore, RequestCounter } from "@mes/domain"
import { liveCondition, recordJson } from "../json.ts"

export const MonthlyResetStorePg = Layer.effect(MonthlyResetStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  return MonthlyResetStore.of({
    activeTenants: () =>
      sql<{ id: string }>`SELECT id FROM tenants WHERE status = 'active' ORDER BY id`.pipe(Effect.map((rows) => rows.map((r) => r.id)), Effect.orDie),
    // each tenant's ledger rows are deleted and summed into its log record, whose billing period starts at
    // the tenant's previous reset (or its creation); rows of writes not yet committed stay for next month
    reset: ({ at, entries, metadata }) =>
      sql<{ tenant_id: string; previous: number }>`
        WITH plan AS (
          SELECT e.tenant_id, e.log_id, t.created_at FROM unnest(${entries.map((e) => e.tenant_id)}::uuid[], ${entries.map((e) => e.log_id)}::uuid[]) AS e (tenant_id, log_id)
          JOIN tenants t ON t.id = e.tenant_id AND t.status = 'active'
        ),
        gone AS (DELETE FROM part_usage u USING plan WHERE u.tenant_id = plan.tenant_id RETURNING u.tenant_id, u.parts),
        counted AS (SELECT tenant_id, sum(parts)::int AS parts FROM gone GROUP BY tenant_id),
        logged AS (
          INSERT INTO monthly_reset_logs (tenant_id, id, reset_date, previous_parts_count, billing_period_start, billing_period_end, reset_type, metadata)
          SELECT plan.tenant_id, plan.log_id, ${at}::timestamptz, coalesce(counted.parts, 0),
            coalesce((SELECT max(l.reset_date) FROM monthly_reset_logs l WHERE l.tenant_id = plan.tenant_id), plan.created_at),
            ${at}::timestamptz, 'automatic', ${JSON.stringify(metadata)}::jsonb
          FROM plan LEFT JOIN counted ON counted.tenant_id = plan.tenant_id
          RETURNING tenant_id, previous_parts_count
        )
        SELECT tenant_id, previous_parts_count AS previous FROM logged`.pipe(Effect.orDie),
    claimPeriod: (periodStart) =>
      sql`INSERT INTO monthly_reset_periods (period_start) VALUES (${periodStart})
          ON CONFLICT (period_start) DO UPDATE SET claimed_at = now()
          WHERE monthly_reset_periods.finished_at IS NULL AND monthly_reset_periods.claimed_at < now() - interval '15 minutes'
          RETURNING 1`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),
    finishPeriod: (periodStart) =>
      sql`UPDATE monthly_reset_periods SET finished_at = now() WHERE period_start = ${periodStart}`.pipe(Effect.asVoid, Effect.orDie)
  })
}))

/** Records per page of an export: about 1 MB of JSON for operations. */
const EXPORT_PAGE = 1000

export const ExportStorePg = Layer.effect(ExportStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const pageSql = (entity: ExportEntity) => {
    const table = EXPORT_ENTITIES[entity]
    // keyset pages in id order (ids are time-ordered), each one index range however deep; whether a row is
    // live (not under a deleted job) is asked per row of the page, after the LIMIT: as a filter of the scan
    // the planner joined every part and job of the tenant for each page (measured: 26 s for 100,000 operations)
    return `SELECT t.id, CASE WHEN ${liveCondition[table]("t")} THEN ${recordJson(table, "t")} END AS json
      FROM (SELECT * FROM ${table} WHERE tenant_id = $1 AND id > $2 ORDER BY id LIMIT ${EXPORT_PAGE}) t ORDER BY t.id`
  }
  return ExportStore.of({
    open: (tenantId) =>
      Effect.gen(function*() {
        // one connection and one read-only snapshot for the whole export: every entity as of one instant
        const conn = yield* sql.reserve
        yield* Effect.acquireRelease(
          conn.executeRaw("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", []),
          () => conn.executeRaw("COMMIT", []).pipe(Effect.ignore)
        )
        return {
          pages: (entity: ExportEntity) =>
            Stream.paginate(NIL_UUID, (after: string) =>
              conn.execute(pageSql(entity), [tenantId, after], undefined).pipe(
                Effect.map((rows: ReadonlyArray<{ id: string; json: string | null }>) => {
                  const live = rows.flatMap((r) => (r.json === null ? [] : [r.json]))
                  return [
                    live.length === 0 ? [] : [live.join(",")],
                    rows.length < EXPORT_PAGE ? Option.none() : Option.some(rows[rows.length - 1]!.id)
                  ] as const
                })
              )).pipe(Stream.orDie),
          // the record's keys are the fields of its wire type (migration 0010)
          columns: (entity: ExportEntity) =>
            conn.execute(
              `SELECT attname AS name FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
              [`${EXPORT_ENTITIES[entity]}_wire`],
              undefined
            ).pipe(Effect.map((rows: ReadonlyArray<{ name: string }>) => rows.map((r) => r.name)), Effect.orDie)
        }
      }).pipe(Effect.orDie)
  })
}))

const NIL_UUID = "00000000-0000-0000-0000-000000000000"

export const RequestCounterPg = Layer.effect(RequestCounter, Effect.gen(function*() {
  const sql = yield* SqlClient
  return RequestCounter.of({
    // one autocommit statement: the row is locked only while it runs, never across a request's transaction
    count: (tenantId, day) =>
      sql<{ requests: number }>`INSERT INTO api_request_counts (tenant_id, day, requests) VALUES (${tenantId}, ${day}, 1)
        ON CONFLICT (tenant_id, day) DO UPDATE SET requests = api_request_counts.requests + 1
        RETURNING requests`.pipe(Effect.map((rows) => rows[0]!.requests), Effect.orDie)
  })
}))
