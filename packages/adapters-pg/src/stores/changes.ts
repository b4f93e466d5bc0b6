// The change feed over the event log (migration 0018): one range of the (tenant, xid, seq) key per page,
// only events of transactions older than every running one, so a later page never finds an earlier event.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { ChangeFeedStore, jsonText } from "@mes/domain"

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
            || to_json(p.event_type)::text || ',"occurred_at":"' || mes_ts(p.occurred_at) || '","data":' || p.data::text || '}',
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
