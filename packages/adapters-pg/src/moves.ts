// Writes to one record as ONE statement (ARCHITECTURE: the domain plans, the adapter executes once):
// the owner lookup for 404 / 403, reference checks, the guarded UPDATE with its stamps, and the
// events built from the updated row, all in a data-modifying CTE. $1 is the tenant, $2 the id,
// $3 the changes (jsonb), $4 the references to check (jsonb).
import * as Effect from "effect/Effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import {
  type CreatePlan,
  type EventPlan,
  jsonText,
  MissingReferences,
  type MovePlan,
  type MoveOutcome,
  type PatchOutcome,
  type ReferenceTable,
  type RemoveOutcome,
  type Stamp
} from "@mes/domain"
import { type Column, fieldOf } from "./catalog.ts"
import { type EventSource, insertEvents } from "./events.ts"
import { liveAfterJobLock, liveCondition, recordJson } from "./json.ts"
import { missingReferences } from "./stores/common.ts"
import { givenKeys, ident, literal, shapeKey, statementCache, textArray } from "./sql-text.ts"

/**
 * The value a stamp or effect gives its column, over the row `t` before the change (spec 3); `base`
 * is a column's value otherwise (a PATCH may set it in the same statement).
 */
export const stampExprs = (
  stamps: Readonly<Record<string, Stamp>>,
  effects: ReadonlyArray<string> = [],
  base: (column: string) => string = (column) => `t.${ident(column)}`
): Array<readonly [string, string]> => [
  ...Object.entries(stamps).map(([col, stamp]) =>
    [col, stamp === "now" ? "now()" : stamp === "first" ? `coalesce(t.${ident(col)}, now())` : "NULL"] as const
  ),
  ...effects.flatMap((e): Array<readonly [string, string]> =>
    e === "actual_duration"
      ? [["actual_duration", "round((extract(epoch FROM now() - coalesce(t.started_at, now())) / 60)::numeric, 2)::float8"]]
      : e === "complete_percentage"
      ? [["completion_percentage", "100"]]
      : e === "close_time_entries"
      // when the move ends running entries, actual_time becomes the exact sum of the operation's
      // entries, those it ends counted to now (spec 2.8); otherwise it stays as it is. Read by a
      // VOLATILE function, so after the row lock: entries a concurrent start committed count (0026)
      ? [["actual_time", `mes_entry_minutes(t.tenant_id, t.id, ${base("actual_time")})`]]
      : []
  )
]

/** The SET clauses of stamps and effects (for statements that do not go through moveStatement). */
export const stampSql = (stamps: Readonly<Record<string, Stamp>>, effects: ReadonlyArray<string> = []) =>
  stampExprs(stamps, effects).map(([col, expr]) => `${ident(col)} = ${expr}`)

/** SET clauses of the columns `changes` names, from the jsonb record `r` (but those in `except`). */
const changeSets = (changes: Readonly<Record<string, unknown>>, except: ReadonlySet<string> = new Set()) =>
  Object.keys(changes).filter((c) => changes[c] !== undefined && !except.has(c)).map((c) => `${ident(c)} = r.${ident(c)}`)

export interface WriteOptions {
  readonly table: ReferenceTable
  readonly columns: ReadonlyArray<Column>
  /** Tables the references in $4 may name (a reference to any other table counts as missing). */
  readonly refTables?: ReadonlyArray<ReferenceTable>
  /** The references are checked with the statement's snapshot, not after their jobs' share lock (missingReferences). */
  readonly snapshotRefs?: boolean
  /** Further CTEs after the write (`m`), e.g. time entries; they may reference m. */
  readonly ctes?: ReadonlyArray<readonly [string, string]>
  /** Further values of the answer row. */
  readonly select?: ReadonlyArray<readonly [string, string]>
  /** Extra [key, JSON text expression over m] pairs of the events' payloads. */
  readonly extra?: ReadonlyArray<readonly [string, string]>
  /** Further events, after those of the move (e.g. a roll-up's, from a CTE of `ctes`). */
  readonly moreEvents?: ReadonlyArray<EventSource>
  /** Columns a PATCH that names them sets from an expression over `t` (before) and `r` (the changes) rather than from `r`. */
  readonly patchValues?: Readonly<Record<string, string>>
  /** Further SET clauses of a PATCH over `t` (before) and `r` (the changes), e.g. a stamp that follows a flag. */
  readonly patchSets?: (changes: Readonly<Record<string, unknown>>) => ReadonlyArray<string>
  /**
   * A PATCH whose events depend on the record before it: the row is locked first (`prev`, as a move's) and this
   * column's value before the write, as text, is the answer's `previous`; the PATCH's events are appended only where
   * `eventsWhen` (over `m`, e.g. `m.previous = 'false'`) holds. A concurrent PATCH waits for the lock and then sees
   * this one's result, so an event on a change is written once.
   */
  readonly previous?: { readonly column: string; readonly eventsWhen: string }
  /** The column whose value before the write the answer reports as `current` (default: status, where the table has one). */
  readonly current?: string
  /** A further condition on the row before a PATCH or move (over `t`, and $3, the changes as jsonb): no change where it fails. */
  readonly guard?: string
  /**
   * What a PATCH or move reads before it writes, once: CTEs after `bad` (over $1 the tenant, $2 the id, $3 the changes
   * and the store's parameters from $5), which `guard`, `patchValues` and `select` may read.
   */
  readonly checks?: ReadonlyArray<readonly [string, string]>
  /** Columns a create sets from an expression over the given row `r` (and $1, the row) rather than from its value. */
  readonly insertValues?: Readonly<Record<string, string>>
  /**
   * What else a create checks before it inserts: CTEs after `bad` (over $1 …, and the create's further parameters
   * from $4), and the condition over them under which it inserts; `select` reports them.
   */
  readonly createChecks?: { readonly ctes: ReadonlyArray<readonly [string, string]>; readonly insertWhen: string }
}

/** An event's payload values over the rows `alias` of the write's table, whose record JSON is `alias.json`. */
const payloadOf = (o: WriteOptions, alias: string) => ({ field: fieldOf(o.columns, alias, `${alias}.json`), record: `${alias}.json`, extra: o.extra ?? [] })

/** What a store adds to a move statement for a given plan (its effects' CTEs, events, answer values). */
export type MoveAdditions = (plan: MovePlan) => Pick<WriteOptions, "ctes" | "select" | "extra" | "moreEvents">

/** A statement's further CTEs, each `, name AS (body)`. */
const moreCtes = (ctes: ReadonlyArray<readonly [string, string]> | undefined) => (ctes ?? []).map(([name, body]) => `, ${name} AS (${body})`).join("\n")

const finish = (o: WriteOptions, events: ReadonlyArray<EventSource>) => `
${moreCtes(o.ctes)}
${events.length + (o.moreEvents ?? []).length > 0 ? `, ${insertEvents("$1", [...events, ...(o.moreEvents ?? [])])}` : ""}
SELECT ow.tenant_id AS owner, ow.status AS current, m.json, m.previous,
  ARRAY(SELECT i FROM bad ORDER BY i) AS missing_refs
  ${(o.select ?? []).map(([name, expr]) => `, ${expr} AS ${name}`).join("")}
FROM (SELECT 1) one LEFT JOIN ow ON true LEFT JOIN m ON true`

const head = (o: WriteOptions) => `
WITH ow AS (SELECT t.tenant_id, ${
  o.current !== undefined ? `t.${ident(o.current)}::text AS status` : o.columns.some((c) => c.name === "status") ? "t.status" : "NULL::text AS status"
}
            FROM ${o.table} t WHERE t.id = $2 AND ${liveCondition[o.table]("t")})
    , bad AS (${missingReferences("$4::jsonb", "$1", o.refTables ?? [], undefined, { snapshot: o.snapshotRefs })})
${moreCtes(o.checks)}`

/**
 * The row of the tenant locked first (`prev`), then updated with `sets` (`m`, whose `previous` is the expression
 * `previous` over the row before the write); `guard` is a further condition on that row. prev locks the row before
 * anything reads what hangs on it (ARCHITECTURE 2, "One statement reads with one snapshot"), FOR NO KEY UPDATE as the
 * UPDATE would: FOR UPDATE also waited for the key-share lock of a concurrent insert referencing the row (a time
 * entry), which deadlocked when that insert's transaction then locked it too. A row under a job has its job
 * share-locked before (liveAfterJobLock): a job's delete committed meanwhile leaves nothing to write.
 */
const lockThenUpdate = (o: WriteOptions, sets: ReadonlyArray<string>, previous: string, guard = "true") => `
, prev AS (
  SELECT t.id, ${previous} AS previous FROM ${o.table} t
  WHERE t.tenant_id = $1 AND t.id = $2 AND ${guard} AND ${liveAfterJobLock(o.table, "t")}
    AND NOT EXISTS (SELECT 1 FROM bad)
  FOR NO KEY UPDATE OF t
)
, m AS (
  UPDATE ${o.table} t SET ${sets.join(", ")}
  FROM prev, jsonb_populate_record(null::${o.table}, $3::jsonb) r
  WHERE t.tenant_id = $1 AND t.id = prev.id
  RETURNING t.*, ${recordJson(o.table, "t")} AS json, prev.previous
)`

/**
 * PATCH as one statement: the row of the tenant takes `changes` (unless a reference is missing),
 * and `events` are appended from the updated row.
 */
export const updateStatement = (
  o: WriteOptions & {
    readonly changes: Readonly<Record<string, unknown>>
    readonly events: ReadonlyArray<EventPlan>
    readonly stamps?: Readonly<Record<string, Stamp>>
  }
) => {
  const values = Object.entries(o.patchValues ?? {}).filter(([col]) => o.changes[col] !== undefined)
  const sets = [
    ...changeSets(o.changes, new Set(values.map(([col]) => col))),
    ...values.map(([col, expr]) => `${ident(col)} = ${expr}`),
    ...(o.patchSets?.(o.changes) ?? []),
    ...stampSql(o.stamps ?? {}),
    "updated_at = now()"
  ]
  const write = o.previous === undefined
    ? `
, m AS (
  UPDATE ${o.table} t SET ${sets.join(", ")}
  FROM jsonb_populate_record(null::${o.table}, $3::jsonb) r
  WHERE t.tenant_id = $1 AND t.id = $2 AND ${liveAfterJobLock(o.table, "t")} AND ${o.guard ?? "true"} AND NOT EXISTS (SELECT 1 FROM bad)
  RETURNING t.*, ${recordJson(o.table, "t")} AS json, NULL::text AS previous
)`
    : lockThenUpdate(o, sets, `t.${ident(o.previous.column)}::text`, o.guard)
  return `${head(o)}${write}${finish(o, o.events.map((event) => ({
    event,
    from: o.previous === undefined ? "m" : `m WHERE ${o.previous.eventsWhen}`,
    payload: payloadOf(o, "m")
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
  // a column the PATCH also sets: the effect decides, from the PATCH's value where it keeps one
  const base = (col: string) => (plan.changes[col] !== undefined ? `r.${ident(col)}` : `t.${ident(col)}`)
  for (const c of plan.cases) {
    for (const [col, expr] of stampExprs(c.stamps, c.effects, base)) stamped.set(col, [...(stamped.get(col) ?? []), [c.from, expr]])
  }
  const sets = [
    `status = ${literal(plan.to)}`,
    // the move sets status; a column a stamp or effect sets is decided there
    ...changeSets(plan.changes, new Set(["status", ...stamped.keys()])),
    ...[...stamped].map(([col, byCase]) =>
      byCase.length === 1 && byCase[0]![0].length === from.length
        ? `${ident(col)} = ${byCase[0]![1]}`
        : `${ident(col)} = CASE ${byCase.map(([statuses, expr]) => `WHEN prev.previous = ANY(${textArray(statuses)}) THEN ${expr}`).join(" ")} ELSE ${base(col)} END`
    ),
    "updated_at = now()"
  ]
  const events = plan.cases.flatMap((c) =>
    c.events.map((event): EventSource => ({
      event,
      from: `m WHERE m.previous = ANY(${textArray(c.from)})`,
      payload: { ...payloadOf(o, "m"), ...(event.move ? { previous: "m.previous" } : {}) }
    }))
  )
  return `${head(o)}${lockThenUpdate(o, sets, "t.status", `${o.guard === undefined ? "" : `${o.guard} AND `}t.status = ANY(${textArray(from)})`)}${finish(o, events)}`
}

/** A create's `insertValues` for columns with a default: the row's value, else the default (SQL per column). */
export const insertDefaults = (defaults: Readonly<Record<string, string>>) =>
  Object.fromEntries(Object.entries(defaults).map(([c, d]) => [c, `coalesce(r.${ident(c)}, ${d})`]))

/**
 * A create as one statement ($1 the row as jsonb, $2 the references to check, $3 the tenant): the references that are
 * not live records of the tenant (`bad`), the row inserted only when there is none (`m`, with the record's JSON), the
 * store's further CTEs over m, and `events` built from the new record.
 */
export const createStatement = (o: WriteOptions & { readonly given: ReadonlyArray<string>; readonly events: ReadonlyArray<EventPlan> }) => {
  const values = o.insertValues ?? {}
  const cols = [...new Set([...o.given, ...Object.keys(values)])]
  const events = o.events.map((event): EventSource => ({ event, from: "m", payload: payloadOf(o, "m") }))
  return `
WITH bad AS (${missingReferences("$2::jsonb", "$3::uuid", o.refTables ?? [], undefined, { snapshot: o.snapshotRefs })})
${moreCtes(o.createChecks?.ctes)}
, m AS (
  INSERT INTO ${o.table} AS t (${cols.map(ident).join(", ")})
  SELECT ${cols.map((c) => values[c] ?? `r.${ident(c)}`).join(", ")} FROM jsonb_populate_record(null::${o.table}, $1::jsonb) r
  WHERE NOT EXISTS (SELECT 1 FROM bad)${o.createChecks === undefined ? "" : ` AND ${o.createChecks.insertWhen}`}
  RETURNING t.*, ${recordJson(o.table, "t")} AS json
)
${moreCtes(o.ctes)}
${events.length > 0 ? `, ${insertEvents("$3::uuid", events)}` : ""}
SELECT m.json, ARRAY(SELECT i FROM bad ORDER BY i) AS missing_refs${(o.select ?? []).map(([k, v]) => `, ${v} AS ${ident(k)}`).join("")}
FROM (SELECT 1) one LEFT JOIN m ON true`
}

/**
 * The record a statement wrote, with `more` over its JSON: values the statement wrote after it built that JSON (a
 * record's children inserted in the same statement, which its JSON function, reading with the statement's snapshot,
 * does not see). Undefined when it wrote nothing.
 */
export const writtenWith = <T>(row: { readonly json: string | null }, more: Readonly<Record<string, unknown>>): T | undefined =>
  row.json === null ? undefined : { ...JSON.parse(row.json), ...more } as T

/** The answer row of a create's statement. */
export interface CreateRow {
  readonly json: string | null
  readonly missing_refs: ReadonlyArray<number>
  readonly [more: string]: unknown
}

export interface WriteRow {
  readonly owner: string | null
  readonly current: string | null
  readonly json: string | null
  readonly previous: string | null
  readonly missing_refs: ReadonlyArray<number>
  readonly [more: string]: unknown
}

/** Runs a statement of this module: $1 tenant, $2 id, $3 changes, $4 references, then `more` ($5 …). */
export const runWrite = (
  sql: SqlClient,
  statement: string,
  tenantId: string,
  id: string,
  changes: Readonly<Record<string, unknown>>,
  refs: ReadonlyArray<{ readonly i: number; readonly tbl: string; readonly id: string }> = [],
  more: ReadonlyArray<string | null> = []
): Effect.Effect<WriteRow, SqlError> =>
  sql.unsafe<WriteRow>(statement, [tenantId, id, JSON.stringify(changes), JSON.stringify(refs), ...more]).pipe(
    Effect.map((rows) => rows[0]!)
  )

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
export const recordWrites = <T>(
  sql: SqlClient,
  o: WriteOptions & { readonly additions?: MoveAdditions }
) => {
  const cached = statementCache()
  /** The create's statement run with its `more` parameters ($4 …). */
  const createRow = (row: object, plan: CreatePlan, more: ReadonlyArray<unknown> = []) => {
    const given = givenKeys([row])
    const statement = cached(`create ${given.join(",")} ${plan.events.map((e) => e.type).join(",")}`, () => createStatement({ ...o, given, events: plan.events }))
    return sql.unsafe<CreateRow>(statement, [JSON.stringify(row), JSON.stringify(plan.refs), (row as { tenant_id: string }).tenant_id, ...more]).pipe(
      Effect.map((rows) => rows[0]!)
    )
  }
  return {
    /** A PATCH, with its answer row; `more` are the parameters from $5 on that the store's guard, CTEs and select use. */
    patch: (
      tenantId: string,
      id: string,
      changes: Readonly<Record<string, unknown>>,
      events: ReadonlyArray<EventPlan>,
      refs: ReadonlyArray<{ readonly i: number; readonly tbl: string; readonly id: string }> = [],
      stamps: Readonly<Record<string, Stamp>> = {},
      more: ReadonlyArray<string | null> = []
    ): Effect.Effect<PatchOutcome<T> & { readonly row: WriteRow }, SqlError> => {
      const key = `patch ${shapeKey(changes)} ${events.map((e) => e.type).join(",")} ${Object.entries(stamps).map(([c, s]) => `${c}=${s}`).sort().join(",")}`
      const statement = cached(key, () => updateStatement({ ...o, changes, events, stamps }))
      return runWrite(sql, statement, tenantId, id, changes, refs, more).pipe(Effect.map((row) => ({
        owner: row.owner ?? undefined,
        record: row.json === null ? undefined : jsonText<T>(row.json),
        missingRefs: row.missing_refs,
        current: row.current ?? undefined,
        row
      })))
    },
    /** A guarded move; `more` are the parameters from $5 on that the store's additions use. */
    move: (
      tenantId: string,
      id: string,
      plan: MovePlan,
      refs: ReadonlyArray<{ readonly i: number; readonly tbl: string; readonly id: string }> = [],
      more: ReadonlyArray<string | null> = []
    ) => {
      const signature = plan.cases.map((c) => `${c.from}>${Object.keys(c.stamps)}/${c.effects}/${c.events.map((e) => `${e.type}${e.move}`)}`).join(";")
      const statement = cached(`move ${plan.to} ${shapeKey(plan.changes)} ${signature}`, () => moveStatement({ ...o, ...o.additions?.(plan), plan }))
      return runWrite(sql, statement, tenantId, id, plan.changes, refs, more).pipe(Effect.map((row) => ({ row, outcome: moveOutcome<T>(row) })))
    },
    /**
     * Creates a row (with a plan: only when its references are the tenant's, and with its events), answering the
     * record as the API shows it.
     */
    create: (row: object, plan: CreatePlan = { refs: [], events: [] }): Effect.Effect<T, SqlError | MissingReferences> =>
      createRow(row, plan).pipe(Effect.flatMap((r) =>
        r.json === null ? Effect.fail(new MissingReferences({ indexes: r.missing_refs })) : Effect.succeed(JSON.parse(r.json) as T)
      )),
    /** A create's answer row: the record's JSON (null when nothing was written), the missing references, `select`'s values. */
    createRow,
    /**
     * Deletes a live row of the tenant (a job's soft delete is the job store's own statement), with the `events` about it; with the owner of
     * the id, and the deleted row's `column` as `value` when one is asked for.
     */
    remove: (tenantId: string, id: string, events: ReadonlyArray<EventPlan> = [], column?: string) => {
      const json = events.length > 0 ? `, ${recordJson(o.table, "t")} AS json` : ""
      const statement = cached(`remove ${events.map((e) => e.type).join(",")} ${column ?? ""}`, () => `
          WITH ow AS (SELECT t.tenant_id FROM ${o.table} t WHERE t.id = $2 AND ${liveCondition[o.table]("t")}),
          d AS (DELETE FROM ${o.table} t WHERE t.tenant_id = $1 AND t.id = $2 AND ${liveAfterJobLock(o.table, "t")} RETURNING t.*${json})
          ${events.length > 0 ? `, ${insertEvents("$1", events.map((event): EventSource => ({ event, from: "d", payload: payloadOf(o, "d") })))}` : ""}
          SELECT (SELECT tenant_id FROM ow) AS owner, EXISTS (SELECT 1 FROM d) AS removed${column === undefined ? "" : `, (SELECT d.${ident(column)}::text FROM d) AS value`}`)
      return sql.unsafe<{ owner: string | null; removed: boolean; value?: string | null }>(statement, [tenantId, id]).pipe(
        Effect.map(([row]): RemoveOutcome & { readonly value: string | undefined } => ({
          owner: row!.owner ?? undefined,
          removed: row!.removed,
          value: row!.value ?? undefined
        }))
      )
    }
  }
}
