// Writes to one record as ONE statement (ARCHITECTURE: the domain plans, the adapter executes once):
// the owner lookup for 404 / 403, reference checks, the guarded UPDATE with its stamps, and the
// events built from the updated row, all in a data-modifying CTE. $1 is the tenant, $2 the id,
// $3 the changes (jsonb), $4 the references to check (jsonb).
import { Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { jsonText, type MovePlan, type MoveOutcome, type PatchOutcome, type ReferenceTable, type RemoveOutcome, type Stamp } from "@mes/domain"
import { type Column, fieldJson } from "./catalog.ts"
import { type EventSource, insertEvents, payloadSql } from "./events.ts"
import { liveCondition, recordJson } from "./json.ts"
import { missingReferences } from "./stores/common.ts"

const ident = (name: string) => {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad column name ${name}`)
  return `"${name}"`
}
const literal = (s: string) => `'${s.replace(/'/g, "''")}'`
const textArray = (items: ReadonlyArray<string>) => `ARRAY[${items.map(literal).join(", ")}]::text[]`

/** The value a stamp or effect gives its column, over the row `t` before the change (spec 3). */
export const stampExprs = (stamps: Readonly<Record<string, Stamp>>, effects: ReadonlyArray<string> = []): Array<readonly [string, string]> => [
  ...Object.entries(stamps).map(([col, stamp]) =>
    [col, stamp === "now" ? "now()" : stamp === "first" ? `coalesce(t.${ident(col)}, now())` : "NULL"] as const
  ),
  ...effects.flatMap((e): Array<readonly [string, string]> =>
    e === "actual_duration"
      ? [["actual_duration", "round((extract(epoch FROM now() - coalesce(t.started_at, now())) / 60)::numeric, 2)::float8"]]
      : e === "complete_percentage"
      ? [["completion_percentage", "100"]]
      : []
  )
]

/** SET clauses of the columns `changes` names, from the jsonb record `r`. */
const changeSets = (changes: Readonly<Record<string, unknown>>) =>
  Object.keys(changes).filter((c) => changes[c] !== undefined && c !== "status").map((c) => `${ident(c)} = r.${ident(c)}`)

const field = (columns: ReadonlyArray<Column>, alias: string) => (name: string) => {
  const column = columns.find((c) => c.name === name)
  if (column === undefined) throw new Error(`no column ${name}`)
  return fieldJson(column, alias)
}

export interface WriteOptions {
  readonly table: ReferenceTable
  readonly columns: ReadonlyArray<Column>
  /** Tables the references in $4 may name (a reference to any other table counts as missing). */
  readonly refTables?: ReadonlyArray<ReferenceTable>
  /** Further CTEs after the write (`m`), e.g. time entries; they may reference m. */
  readonly ctes?: ReadonlyArray<readonly [string, string]>
  /** Further values of the answer row. */
  readonly select?: ReadonlyArray<readonly [string, string]>
  /** Extra [key, JSON text expression over m] pairs of the events' payloads. */
  readonly extra?: ReadonlyArray<readonly [string, string]>
}

const finish = (o: WriteOptions, events: ReadonlyArray<EventSource>) => `
${(o.ctes ?? []).map(([name, body]) => `, ${name} AS (${body})`).join("\n")}
${events.length > 0 ? `, ev AS (${insertEvents("$1", events)})` : ""}
SELECT ow.tenant_id AS owner, ow.status AS current, m.json, m.previous,
  ARRAY(SELECT i FROM bad ORDER BY i) AS missing_refs
  ${(o.select ?? []).map(([name, expr]) => `, ${expr} AS ${name}`).join("")}
FROM (SELECT 1) one LEFT JOIN ow ON true LEFT JOIN m ON true`

const head = (o: WriteOptions) => `
WITH ow AS (SELECT t.tenant_id, ${o.columns.some((c) => c.name === "status") ? "t.status" : "NULL::text AS status"}
            FROM ${o.table} t WHERE t.id = $2 AND ${liveCondition[o.table]("t")})
    , bad AS (${missingReferences("$4::jsonb", "$1", o.refTables ?? [])})`

/**
 * PATCH as one statement: the row of the tenant takes `changes` (unless a reference is missing),
 * and `events` are appended from the updated row.
 */
export const updateStatement = (o: WriteOptions & { readonly changes: Readonly<Record<string, unknown>>; readonly events: ReadonlyArray<MovePlan["cases"][number]["events"][number]> }) => {
  const sets = [...changeSets(o.changes), "updated_at = now()"]
  return `${head(o)}
, m AS (
  UPDATE ${o.table} t SET ${sets.join(", ")}
  FROM jsonb_populate_record(null::${o.table}, $3::jsonb) r
  WHERE t.tenant_id = $1 AND t.id = $2 AND ${liveCondition[o.table]("t")} AND NOT EXISTS (SELECT 1 FROM bad)
  RETURNING t.*, ${recordJson(o.table, "t")} AS json, NULL::text AS previous
)${finish(o, o.events.map((event) => ({
    event,
    from: "m",
    data: payloadSql(event.shape, { field: field(o.columns, "m"), record: "m.json", extra: o.extra ?? [] })
  })))}`
}

/**
 * A guarded move as one statement (spec 3): lock the row only while its status is one of the plan's
 * `from`, set `to`, the changes and the stamps of the case the status falls in, and append that
 * case's events. Under concurrency the second mover re-checks the status after the first commits
 * and finds nothing to move (exactly one wins).
 */
export const moveStatement = (o: WriteOptions & { readonly plan: MovePlan }) => {
  const { plan } = o
  const from = plan.cases.flatMap((c) => c.from)
  const stamped = new Map<string, Array<readonly [ReadonlyArray<string>, string]>>()
  for (const c of plan.cases) {
    for (const [col, expr] of stampExprs(c.stamps, c.effects)) stamped.set(col, [...(stamped.get(col) ?? []), [c.from, expr]])
  }
  const sets = [
    `status = ${literal(plan.to)}`,
    ...changeSets(plan.changes),
    ...[...stamped].map(([col, byCase]) =>
      byCase.length === 1 && byCase[0]![0].length === from.length
        ? `${ident(col)} = ${byCase[0]![1]}`
        : `${ident(col)} = CASE ${byCase.map(([statuses, expr]) => `WHEN prev.status = ANY(${textArray(statuses)}) THEN ${expr}`).join(" ")} ELSE t.${ident(col)} END`
    ),
    "updated_at = now()"
  ]
  const events = plan.cases.flatMap((c) =>
    c.events.map((event): EventSource => ({
      event,
      from: `m WHERE m.previous = ANY(${textArray(c.from)})`,
      data: payloadSql(event.shape, {
        field: field(o.columns, "m"),
        record: "m.json",
        ...(event.move ? { previous: "m.previous" } : {}),
        extra: o.extra ?? []
      })
    }))
  )
  return `${head(o)}
, prev AS (
  SELECT t.id, t.status FROM ${o.table} t
  WHERE t.tenant_id = $1 AND t.id = $2 AND t.status = ANY(${textArray(from)}) AND ${liveCondition[o.table]("t")}
    AND NOT EXISTS (SELECT 1 FROM bad)
  FOR UPDATE OF t
)
, m AS (
  UPDATE ${o.table} t SET ${sets.join(", ")}
  FROM prev, jsonb_populate_record(null::${o.table}, $3::jsonb) r
  WHERE t.tenant_id = $1 AND t.id = prev.id
  RETURNING t.*, ${recordJson(o.table, "t")} AS json, prev.status AS previous
)${finish(o, events)}`
}

export interface WriteRow {
  readonly owner: string | null
  readonly current: string | null
  readonly json: string | null
  readonly previous: string | null
  readonly missing_refs: ReadonlyArray<number>
  readonly [more: string]: unknown
}

/** Runs a statement of this module: $1 tenant, $2 id, $3 changes, $4 references. */
export const runWrite = (
  sql: SqlClient,
  statement: string,
  tenantId: string,
  id: string,
  changes: Readonly<Record<string, unknown>>,
  refs: ReadonlyArray<{ readonly i: number; readonly tbl: string; readonly id: string }> = []
): Effect.Effect<WriteRow, SqlError> =>
  sql.unsafe<WriteRow>(statement, [tenantId, id, JSON.stringify(changes), JSON.stringify(refs)]).pipe(Effect.map((rows) => rows[0]!))

/** A move's outcome from its answer row. */
export const moveOutcome = <T>(row: WriteRow): MoveOutcome<T> => ({
  owner: row.owner ?? undefined,
  current: row.current ?? undefined,
  moved: row.json === null ? undefined : { record: jsonText<T>(row.json), previous: row.previous ?? "" },
  missingRefs: row.missing_refs
})

/**
 * PATCH and guarded moves of one table's records, each one statement; statements are built once
 * per distinct shape (changed columns, plan) and then reused, so the driver keeps them prepared.
 */
export const recordWrites = <T>(sql: SqlClient, o: WriteOptions & { readonly softDelete?: boolean }) => {
  const cache = new Map<string, string>()
  const cached = (key: string, build: () => string) => {
    let statement = cache.get(key)
    if (statement === undefined) cache.set(key, statement = build())
    return statement
  }
  const keysOf = (changes: Readonly<Record<string, unknown>>) => Object.keys(changes).filter((k) => changes[k] !== undefined).sort().join(",")
  return {
    patch: (
      tenantId: string,
      id: string,
      changes: Readonly<Record<string, unknown>>,
      events: ReadonlyArray<MovePlan["cases"][number]["events"][number]>,
      refs: ReadonlyArray<{ readonly i: number; readonly tbl: string; readonly id: string }> = []
    ): Effect.Effect<PatchOutcome<T>, SqlError> => {
      const statement = cached(`patch ${keysOf(changes)} ${events.map((e) => e.type).join(",")}`, () => updateStatement({ ...o, changes, events }))
      return runWrite(sql, statement, tenantId, id, changes, refs).pipe(Effect.map((row) => ({
        owner: row.owner ?? undefined,
        record: row.json === null ? undefined : jsonText<T>(row.json),
        missingRefs: row.missing_refs
      })))
    },
    move: (tenantId: string, id: string, plan: MovePlan, refs: ReadonlyArray<{ readonly i: number; readonly tbl: string; readonly id: string }> = []) => {
      const signature = plan.cases.map((c) => `${c.from}>${Object.keys(c.stamps)}/${c.effects}/${c.events.map((e) => `${e.type}${e.move}`)}`).join(";")
      const statement = cached(`move ${plan.to} ${keysOf(plan.changes)} ${signature}`, () => moveStatement({ ...o, plan }))
      return runWrite(sql, statement, tenantId, id, plan.changes, refs).pipe(Effect.map(moveOutcome<T>))
    },
    /** Deletes (or, with `soft`, marks deleted) a live row of the tenant; with the owner of the id. */
    remove: (tenantId: string, id: string) =>
      sql.unsafe<{ owner: string | null; removed: boolean }>(
        cached("remove", () => `
          WITH ow AS (SELECT t.tenant_id FROM ${o.table} t WHERE t.id = $2 AND ${liveCondition[o.table]("t")}),
          d AS (${
          o.softDelete
            ? `UPDATE ${o.table} t SET deleted_at = now(), updated_at = now() WHERE t.tenant_id = $1 AND t.id = $2 AND ${liveCondition[o.table]("t")} RETURNING t.id`
            : `DELETE FROM ${o.table} t WHERE t.tenant_id = $1 AND t.id = $2 AND ${liveCondition[o.table]("t")} RETURNING t.id`
        })
          SELECT (SELECT tenant_id FROM ow) AS owner, EXISTS (SELECT 1 FROM d) AS removed`),
        [tenantId, id]
      ).pipe(Effect.map(([row]): RemoveOutcome => ({ owner: row!.owner ?? undefined, removed: row!.removed })))
    }
}
