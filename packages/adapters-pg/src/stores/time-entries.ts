// Time entries (spec 2.8): opened and closed by the lifecycles, corrected by hand; durations in
// minutes; actual_time of an operation is the sum of its ended entries.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { type EntryWrite, type TimeEntry, TimeEntryStore } from "@mes/domain"
import { mapConstraints } from "../constraints.ts"
import { withoutDoc } from "../rows.ts"
import { arrayParam, ident, shapeKey, statementCache } from "../sql-text.ts"
import { missingReferences } from "./common.ts"
import { listPage } from "./crud.ts"
import { liveAfterJobLock, liveCondition, readOwned } from "../json.ts"

const sort = {
  start_time: "e.start_time",
  end_time: "e.end_time",
  created_at: "e.created_at",
  duration_minutes: "e.duration_minutes"
}

// entries of soft-deleted jobs are gone from queries with their job (DECISIONS: soft-deleted jobs)
const LIVE = liveCondition.time_entries("e")

/** An entry's minutes from its times over the alias `a` (NULL while it runs). */
const duration = (a: string) => `CASE WHEN ${a}.end_time IS NULL THEN NULL ELSE extract(epoch FROM ${a}.end_time - ${a}.start_time) / 60 END`

/**
 * A write by hand is one statement (ARCHITECTURE: the domain plans, the adapter executes once) over the CTEs `l` (the
 * operation, locked first, with its status), `bad` (the references that are not the tenant's) and `w` (the entry's
 * values as written, whether it `opens` and whether it goes `backwards`). `writeGuard` is the condition to write;
 * `writeAnswer` follows the write `m`: actual_time becomes the other ended entries' minutes, read after the lock
 * (0028), plus the written entry's, and the answer row says what was checked, with the entry's columns when written.
 * $1 is the tenant.
 */
const writeGuard = (closedTo: string) =>
  `NOT EXISTS (SELECT 1 FROM bad) AND NOT w.backwards AND NOT (w.opens AND l.status = ANY(${closedTo}))`
const writeAnswer = (owner: string, operation: string) => `
, o AS (UPDATE operations o SET actual_time = mes_ended_minutes(o.tenant_id, o.id, m.id) + coalesce(m.duration_minutes, 0), updated_at = now()
        FROM m WHERE o.tenant_id = $1 AND o.id = m.operation_id RETURNING 1)
SELECT ${owner} AS owner_id, ${operation} AS target_id, l.status AS target_status, coalesce(w.opens, false) AS opens,
  coalesce(w.backwards, false) AS backwards, ARRAY(SELECT i FROM bad ORDER BY i) AS missing_refs, m.*
FROM (SELECT 1) one LEFT JOIN l ON true LEFT JOIN w ON true LEFT JOIN m ON true`

type WriteRow = TimeEntry & {
  readonly owner_id: string | null
  readonly target_id: string | null
  readonly target_status: string | null
  readonly opens: boolean
  readonly backwards: boolean
  readonly missing_refs: ReadonlyArray<number>
}
const written = ([row]: ReadonlyArray<WriteRow>): EntryWrite => {
  const { owner_id, target_id, target_status, opens, backwards, missing_refs, ...entry } = row!
  return {
    owner: owner_id ?? undefined,
    operationId: target_id ?? undefined,
    status: target_status ?? undefined,
    opens,
    backwards,
    missingRefs: missing_refs,
    entry: entry.id === null ? undefined : withoutDoc(entry as TimeEntry)
  }
}

/**
 * The operation `operation` of the tenant $1, locked: every writer of an operation's entries holds the operation first
 * (DECISIONS: time entries), so they stay as read after it; and before it its job, share-locked and found live after
 * that lock (liveAfterJobLock, migration 0040): a job's delete committed meanwhile leaves no operation to write under.
 */
const locked = (operation: string) => `l AS (SELECT o.id, o.status FROM operations o
        WHERE o.tenant_id = $1 AND o.id = ${operation} AND ${liveAfterJobLock("operations", "o")} FOR NO KEY UPDATE)`

// the entry's tenant, whichever it is (404 / 403), and its operation locked when the tenant is the caller's
const OWNER_AND_LOCK = `ow AS (SELECT t.tenant_id, t.operation_id FROM time_entries t WHERE t.id = $2 AND ${liveCondition.time_entries("t")})
, ${locked("(SELECT ow.operation_id FROM ow WHERE ow.tenant_id = $1)")}`

// $2 the entry's values, $3 the references, $4 the statuses closed to an open entry
const CREATE = `WITH r AS (SELECT * FROM jsonb_populate_record(null::time_entries, $2::jsonb))
, ${locked("(SELECT r.operation_id FROM r)")}
, bad AS (${missingReferences("$3::jsonb", "$1", ["operations", "profiles"])})
, w AS (SELECT r.*, r.end_time IS NULL AS opens, coalesce(r.end_time < r.start_time, false) AS backwards FROM r)
, m AS (INSERT INTO time_entries (tenant_id, id, operation_id, user_id, start_time, end_time, duration_minutes)
        SELECT $1, w.id, w.operation_id, w.user_id, w.start_time, w.end_time, ${duration("w")}
        FROM w JOIN l ON l.id = w.operation_id WHERE ${writeGuard("$4::text[]")}
        RETURNING *)${writeAnswer("$1::uuid", "w.operation_id")}`

/** A correction ($2 the entry, $3 the changes, $4 the references, $5 the statuses closed to an open entry). */
const correction = (changes: Readonly<Record<string, unknown>>) => {
  const value = (column: string) => (changes[column] !== undefined ? `r.${column}` : `cur.${column}`)
  const sets = Object.keys(changes).filter((c) => changes[c] !== undefined).map((c) => `${ident(c)} = w.${ident(c)}`)
  return `WITH ${OWNER_AND_LOCK}
, cur AS (SELECT t.* FROM time_entries t JOIN l ON l.id = t.operation_id WHERE t.tenant_id = $1 AND t.id = $2 FOR NO KEY UPDATE OF t)
, r AS (SELECT * FROM jsonb_populate_record(null::time_entries, $3::jsonb))
, bad AS (${missingReferences("$4::jsonb", "$1", ["profiles"])})
, w AS (SELECT cur.id, ${value("user_id")} AS user_id, ${value("start_time")} AS start_time, ${value("end_time")} AS end_time,
          ${value("end_time")} IS NULL AND cur.end_time IS NOT NULL AS opens,
          coalesce(${value("end_time")} < ${value("start_time")}, false) AS backwards
        FROM cur, r)
, m AS (UPDATE time_entries t SET ${[...sets, `duration_minutes = ${duration("w")}`, "updated_at = now()"].join(", ")}
        FROM w, l WHERE t.tenant_id = $1 AND t.id = w.id AND ${writeGuard("$5::text[]")}
        RETURNING t.*)${writeAnswer("(SELECT tenant_id FROM ow)", "(SELECT operation_id FROM ow WHERE tenant_id = $1)")}`
}

const REMOVE = `WITH ${OWNER_AND_LOCK}
, m AS (DELETE FROM time_entries t USING l WHERE t.tenant_id = $1 AND t.id = $2 AND t.operation_id = l.id RETURNING t.id, t.operation_id)
, o AS (UPDATE operations o SET actual_time = mes_ended_minutes(o.tenant_id, o.id, m.id), updated_at = now()
        FROM m WHERE o.tenant_id = $1 AND o.id = m.operation_id RETURNING 1)
-- the caller's entry that was not deleted (its job's delete won the lock) is not found, as after that delete
SELECT (SELECT tenant_id FROM ow WHERE tenant_id <> $1 OR EXISTS (SELECT 1 FROM m)) AS owner_id`

export const TimeEntryStorePg = Layer.effect(TimeEntryStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const corrections = statementCache()

  return TimeEntryStore.of({
    create: (tenantId, row, plan) =>
      sql.unsafe<WriteRow>(CREATE, [tenantId, JSON.stringify(row), JSON.stringify(plan.refs), arrayParam(plan.closedTo)]).pipe(
        Effect.map(written),
        mapConstraints
      ),
    correct: (tenantId, id, changes, plan) =>
      sql.unsafe<WriteRow>(
        corrections(shapeKey(changes), () => correction(changes)),
        [tenantId, id, JSON.stringify(changes), JSON.stringify(plan.refs), arrayParam(plan.closedTo)]
      ).pipe(Effect.map(written), mapConstraints),
    remove: (tenantId, id) =>
      sql.unsafe<{ owner_id: string | null }>(REMOVE, [tenantId, id]).pipe(
        Effect.map(([row]) => row?.owner_id ?? undefined),
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
    read: (tenantId, id) => readOwned<TimeEntry>(sql, "time_entries", tenantId, id)
  })
}))
