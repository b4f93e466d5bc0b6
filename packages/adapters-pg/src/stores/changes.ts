// The change feed over the event log (migration 0018): one range of the (tenant, xid, seq) key per page,
// only events of transactions older than every running one, so a later page never finds an earlier event.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { ChangeFeedStore, jsonText, SyncRecordStore, SyncRunStore } from "@mes/domain"
import { liveCondition, recordJson } from "../json.ts"

export const ChangeFeedStorePg = Layer.effect(ChangeFeedStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  return ChangeFeedStore.of({
    page: (tenantId, after, limit, types) =>
      sql<{ changes: string; count: number; xid: string | null; seq: string | null }>`
        WITH page AS (
          SELECT e.xid, e.seq, e.event_id, e.event_type, e.occurred_at, e.data FROM event_log e
          WHERE e.tenant_id = ${tenantId} AND (e.xid, e.seq) > (${after.xid}::xid8, ${after.seq}::bigint)
            AND e.xid < pg_snapshot_xmin(pg_current_snapshot())
            ${types === undefined ? sql`` : sql`AND e.event_type IN ${sql.in(types)}`}
          ORDER BY e.xid, e.seq LIMIT ${limit}
        ),
        last AS (SELECT xid, seq FROM page ORDER BY xid DESC, seq DESC LIMIT 1)
        SELECT '[' || coalesce(string_agg(
            '{"cursor":' || to_json(p.xid::text || '.' || p.seq::text)::text || ',"event_id":"' || p.event_id || '","event_type":'
            || to_json(p.event_type)::text || ',"occurred_at":"' || mes_ts(p.occurred_at) || '","data":' || p.data || '}',
            ',' ORDER BY p.xid, p.seq), '') || ']' AS changes,
          count(*)::int AS count, (SELECT xid::text FROM last) AS xid, (SELECT seq::text FROM last) AS seq
        FROM page p`.pipe(
        Effect.map(([r]) => ({
          changes: jsonText<ReadonlyArray<unknown>>(r!.changes),
          count: r!.count,
          last: r!.xid === null ? undefined : { xid: r!.xid, seq: r!.seq! }
        })),
        Effect.orDie
      )
  })
}))

/** How many runs per external source GET /api-erp-sync/status shows. */
const RECENT_RUNS = 10

export const SyncRunStorePg = Layer.effect(SyncRunStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  return SyncRunStore.of({
    record: (run) =>
      sql`INSERT INTO sync_runs (tenant_id, id, kind, external_sources, total, created, updated, unchanged, skipped, errors)
        VALUES (${run.tenant_id}, ${run.id}, ${run.kind}, ${`{${run.external_sources.map((s) => JSON.stringify(s)).join(",")}}`}::text[],
          ${run.total}, ${run.created}, ${run.updated}, ${run.unchanged}, ${run.skipped}, ${run.errors})`.pipe(Effect.asVoid, Effect.orDie),
    status: (tenantId) =>
      sql<{ json: string }>`
        WITH runs AS (
          SELECT s.source, r.*, row_number() OVER (PARTITION BY s.source ORDER BY r.ran_at DESC, r.id DESC) AS n
          FROM sync_runs r, unnest(r.external_sources) s (source) WHERE r.tenant_id = ${tenantId}
        )
        SELECT json_build_object('sources', coalesce(json_agg(src ORDER BY src.external_source), '[]'))::text AS json FROM (
          SELECT source AS external_source, mes_ts(max(ran_at)) AS last_sync_at,
            json_agg(json_build_object('kind', kind, 'ran_at', mes_ts(ran_at), 'total', total, 'created', created, 'updated', updated,
              'unchanged', unchanged, 'skipped', skipped, 'errors', errors) ORDER BY ran_at DESC, id DESC) AS runs
          FROM runs WHERE n <= ${RECENT_RUNS} GROUP BY source
        ) src`.pipe(Effect.map(([r]) => jsonText<unknown>(r!.json)), Effect.orDie)
  })
}))

export const SyncRecordStorePg = Layer.effect(SyncRecordStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  return SyncRecordStore.of({
    read: (kind, tenantId, source, externalId) =>
      sql.unsafe<{ json: string }>(
        // a kind of synced record is named after its table
        `SELECT ${recordJson(kind, "t")} AS json FROM ${kind} t
         WHERE t.tenant_id = $1 AND t.external_source = $2 AND t.external_id = $3 AND ${liveCondition[kind]("t")}`,
        [tenantId, source, externalId]
      ).pipe(Effect.map(([r]) => (r === undefined ? undefined : JSON.parse(r.json) as Record<string, unknown>)), Effect.orDie)
  })
}))
