// GET /api-dashboard-stats in one statement: every count is a subquery of one json_build_object, read from the
// tenant's rows through the indexes that lead with tenant_id. "Today" is the UTC day.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { type DashboardStats, DashboardStore, jsonText } from "@mes/domain"
import { liveCondition } from "../json.ts"

const countsBy = (column: string, from: string) =>
  `(SELECT coalesce(json_object_agg(k, n), '{}') FROM (SELECT ${column} AS k, count(*)::int AS n FROM ${from} GROUP BY ${column}) s)`

/** The start of the current UTC day. */
const TODAY = "(date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')"

const STATS_SQL = `SELECT json_build_object(
  'jobs_by_status', ${countsBy("j.status", `jobs j WHERE j.tenant_id = $1 AND ${liveCondition.jobs("j")}`)},
  'operations_by_status', ${countsBy("o.status", `operations o WHERE o.tenant_id = $1 AND ${liveCondition.operations("o")}`)},
  'overdue_jobs', (SELECT count(*)::int FROM jobs j WHERE j.tenant_id = $1 AND ${liveCondition.jobs("j")}
    AND j.status <> 'completed' AND coalesce(j.due_date_override, j.due_date) < (now() AT TIME ZONE 'UTC')::date),
  'open_issues_by_severity', ${countsBy("coalesce(i.severity, 'none')", `issues i WHERE i.tenant_id = $1 AND i.issue_type <> 'ncr' AND i.status IN ('open', 'in_progress') AND ${liveCondition.issues("i")}`)},
  'open_ncrs_by_severity', ${countsBy("coalesce(i.severity, 'none')", `issues i WHERE i.tenant_id = $1 AND i.issue_type = 'ncr' AND i.status IN ('open', 'in_progress') AND ${liveCondition.issues("i")}`)},
  'operations_in_progress_by_cell', (SELECT coalesce(json_agg(json_build_object('cell_id', x.cell_id, 'cell_name', c.name, 'operations', x.n) ORDER BY x.n DESC, c.name), '[]')
    FROM (SELECT o.cell_id, count(*)::int AS n FROM operations o
          WHERE o.tenant_id = $1 AND o.status = 'in_progress' AND ${liveCondition.operations("o")} GROUP BY o.cell_id) x
    LEFT JOIN cells c ON c.tenant_id = $1 AND c.id = x.cell_id),
  'minutes_logged_today', (SELECT coalesce(round((sum(extract(epoch FROM
      least(coalesce(t.end_time, now()), now()) - greatest(t.start_time, ${TODAY}))) / 60.0)::numeric, 2), 0)::float8
    FROM time_entries t WHERE t.tenant_id = $1 AND coalesce(t.end_time, now()) > ${TODAY}),
  'as_of', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
)::text AS json`

export const DashboardStorePg = Layer.effect(DashboardStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  return DashboardStore.of({
    stats: (tenantId) =>
      sql.unsafe<{ json: string }>(STATS_SQL, [tenantId]).pipe(
        Effect.map(([row]) => jsonText<DashboardStats>(row!.json)),
        Effect.orDie
      )
  })
}))
