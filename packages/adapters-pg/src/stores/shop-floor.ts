// Shop-floor stores (issue 12): scrap reasons, quantities, assignments, templates, downtime (plain CRUD over
// crudStorePg, records answered as the API shows them), a template's application as one statement, and the
// OEE inputs summed by PostgreSQL.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import type { Fragment } from "effect/sql/Statement"
import {
  type Assignment,
  AssignmentStore,
  type Downtime,
  DowntimeStore,
  eventPlan,
  MissingReferences,
  type OeeInputs,
  OeeStore,
  type Quantity,
  QuantityStore,
  type ScrapReason,
  ScrapReasonStore,
  type Substep,
  type Template,
  type TemplateItem,
  TemplateItemStore,
  TemplateStore
} from "@mes/domain"
import { Catalog, fieldOf } from "../catalog.ts"
import { mapConstraints } from "../constraints.ts"
import { insertEvents } from "../events.ts"
import { liveAfterJobLock, liveCondition } from "../json.ts"
import { recordWrites, writtenWith } from "../moves.ts"
import { contains, uuidArray } from "./common.ts"
import { crudStorePg } from "./crud.ts"

type Filters = Readonly<Record<string, unknown>>

/** `alias.column = value` for each of `columns` the filters give. */
const equalities = (sql: SqlClient, alias: string, f: Filters, columns: ReadonlyArray<string>): Array<Fragment> =>
  columns.filter((c) => f[c] !== undefined).map((c) => sql`${sql.literal(`${alias}.${c}`)} = ${f[c] as string | boolean}`)

export const ScrapReasonStorePg = Layer.effect(ScrapReasonStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const catalog = yield* Catalog
  return ScrapReasonStore.of({
    ...crudStorePg<ScrapReason>(sql, {
      table: "scrap_reasons",
      columns: catalog.columns("scrap_reasons"),
      alias: "s",
      sort: { code: "s.code", category: "s.category", created_at: "s.created_at" },
      filters: (f) => [
        ...equalities(sql, "s", f, ["id", "category", "active"]),
        ...(f.search !== undefined ? [sql`(s.code ILIKE ${contains(f.search as string)} OR s.description ILIKE ${contains(f.search as string)})`] : [])
      ],
      unique: (value) => sql`code = ${value}`
    }),
    inactive: (tenantId, ids) =>
      sql<{ id: string }>`SELECT id FROM scrap_reasons WHERE tenant_id = ${tenantId} AND id = ANY(${uuidArray(ids)}::uuid[]) AND NOT active`.pipe(
        Effect.map((rows) => rows.map((r) => r.id)),
        Effect.orDie
      )
  })
}))

export const QuantityStorePg = Layer.effect(QuantityStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const catalog = yield* Catalog
  return QuantityStore.of(crudStorePg<Quantity>(sql, {
    table: "operation_quantities",
    columns: catalog.columns("operation_quantities"),
    refTables: ["operations", "scrap_reasons", "profiles", "issues"],
    // a reason given must be active: the domain reads which, only when the create was refused
    createChecks: {
      ctes: [["inactive", `SELECT 1 FROM scrap_reasons s
        WHERE s.tenant_id = $3::uuid AND s.id = ($1::jsonb->>'scrap_reason_id')::uuid AND NOT s.active`]],
      insertWhen: "NOT EXISTS (SELECT 1 FROM inactive)"
    },
    alias: "q",
    insertJson: true,
    sort: { recorded_at: "q.recorded_at", created_at: "q.created_at", good: "q.good", scrap: "q.scrap", rework: "q.rework" },
    filters: (f) => [
      // entries of a soft-deleted job are gone with it
      sql.literal(liveCondition.operation_quantities("q")),
      ...equalities(sql, "q", f, ["id", "operation_id", "scrap_reason_id", "user_id", "issue_id"]),
      ...(f.part_id !== undefined
        ? [sql`EXISTS (SELECT 1 FROM operations o WHERE o.tenant_id = q.tenant_id AND o.id = q.operation_id AND o.part_id = ${f.part_id as string})`]
        : []),
      ...(f.job_id !== undefined
        ? [sql`EXISTS (SELECT 1 FROM operations o JOIN parts p ON p.tenant_id = o.tenant_id AND p.id = o.part_id
            WHERE o.tenant_id = q.tenant_id AND o.id = q.operation_id AND p.job_id = ${f.job_id as string})`]
        : []),
      ...(f.from !== undefined ? [sql`q.recorded_at >= ${f.from as string}::timestamptz`] : []),
      ...(f.to !== undefined ? [sql`q.recorded_at < ${f.to as string}::timestamptz`] : [])
    ],
    unique: () => sql`false`
  }))
}))

/** The job an assignment's target belongs to (migration 0019). */
const JOB = "(mes_assignment_job(a))"
const DUE = `coalesce(${JOB}.due_date_override, ${JOB}.due_date)`

export const AssignmentStorePg = Layer.effect(AssignmentStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const catalog = yield* Catalog
  return AssignmentStore.of(crudStorePg<Assignment>(sql, {
      table: "assignments",
      columns: catalog.columns("assignments"),
      refTables: ["profiles", "operations", "parts", "jobs", "cells"],
      alias: "a",
      insertJson: true,
      sort: {
        // earliest due date first (none last), then the most urgent, then the oldest assignment: one key
        queue: `((coalesce(${DUE} - date '2000-01-01', 999999))::numeric * 10000000000 + (2147483647 - coalesce(${JOB}.priority, 0)))`,
        due_date: DUE,
        priority: `${JOB}.priority`,
        created_at: "a.created_at"
      },
      filters: (f) => [
        sql.literal(liveCondition.assignments("a")),
        ...equalities(sql, "a", f, ["id", "user_id", "operation_id", "part_id", "job_id", "cell_id", "assigned_by", "active"]),
        ...(f.target_type !== undefined ? [sql`${sql.literal(`a.${f.target_type as string}_id`)} IS NOT NULL`] : [])
      ],
      unique: () => sql`false`
  }))
}))

export const TemplateStorePg = Layer.effect(TemplateStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const catalog = yield* Catalog
  const base = crudStorePg<Template>(sql, {
    table: "substep_templates",
    columns: catalog.columns("substep_templates"),
    alias: "t",
    sort: { name: "t.name", created_at: "t.created_at" },
    filters: (f) => [
      ...equalities(sql, "t", f, ["id", "active"]),
      ...(f.search !== undefined ? [sql`(t.name ILIKE ${contains(f.search as string)} OR t.description ILIKE ${contains(f.search as string)})`] : [])
    ],
    unique: (value) => sql`name = ${value}`
  })
  // a create ($3 the tenant, $4 the items): the template, then its items (its JSON was built before they went in)
  const creates = recordWrites<Template>(sql, {
    table: "substep_templates",
    columns: catalog.columns("substep_templates"),
    ctes: [["it", `INSERT INTO substep_template_items AS i (tenant_id, id, template_id, description, sequence)
      SELECT $3::uuid, mes_uuid7(), m.id, x.description, coalesce(x.sequence, x.n::int)
      FROM m, ROWS FROM (jsonb_to_recordset($4::jsonb) AS (description text, sequence int)) WITH ORDINALITY AS x (description, sequence, n)
      RETURNING i.sequence, substep_template_items_json(i) AS json`]],
    select: [["items", "'[' || coalesce((SELECT string_agg(it.json, ',' ORDER BY it.sequence) FROM it), '') || ']'"]]
  })
  const substepField = fieldOf(catalog.columns("substeps"), "m")
  // the owners of both ids and the template's state ride along: one statement answers 404 / 403 / 409 or the substeps;
  // the caller's operation is found after its job's share lock (liveAfterJobLock, migration 0040), so that an apply
  // that waited for its job's delete finds it gone (404) and adds nothing
  const applyStatement = `
    WITH tw AS (SELECT t.tenant_id, t.active FROM substep_templates t WHERE t.id = $2),
    ow AS (SELECT o.tenant_id FROM operations o WHERE o.id = $3 AND ${liveCondition.operations("o")}
      AND (o.tenant_id <> $1 OR ${liveAfterJobLock("operations", "o")})),
    base AS (SELECT coalesce(max(s.sequence), 0) AS top FROM substeps s WHERE s.tenant_id = $1 AND s.operation_id = $3),
    -- the items numbered after the highest substep stay within int4, else nothing is added (409)
    room AS (SELECT base.top::bigint + (SELECT count(*) FROM substep_template_items i WHERE i.tenant_id = $1 AND i.template_id = $2)
      <= 2147483647 AS fits FROM base),
    m AS (
      INSERT INTO substeps AS s (tenant_id, id, operation_id, description, sequence)
      SELECT $1, mes_uuid7(), $3, i.description, base.top + row_number() OVER (ORDER BY i.sequence)
      FROM substep_template_items i CROSS JOIN base
      WHERE i.tenant_id = $1 AND i.template_id = $2
        AND EXISTS (SELECT 1 FROM tw, ow WHERE tw.tenant_id = $1 AND tw.active AND ow.tenant_id = $1) AND (SELECT fits FROM room)
      RETURNING s.*, substeps_json(s) AS json
    ),
    ${insertEvents("$1", [{ event: eventPlan("step.added"), from: "m", orderBy: "m.sequence", payload: { field: substepField, record: "m.json" } }])}
    SELECT (SELECT tenant_id FROM tw) AS template_owner, (SELECT tenant_id FROM ow) AS operation_owner,
      coalesce((SELECT active FROM tw), false) AS active, ARRAY(SELECT json FROM m ORDER BY sequence) AS substeps,
      (SELECT top FROM base) AS last_sequence, (SELECT fits FROM room) AS fits`
  return TemplateStore.of({
    ...base,
    // the template and its items in one statement; items take ids from the database
    insert: (row, plan = { refs: [], events: [] }) => {
      const { items, ...template } = row as typeof row & { items?: ReadonlyArray<{ description: string; sequence?: number }> }
      return creates.createRow(template, plan, [JSON.stringify(items ?? [])]).pipe(
        Effect.flatMap((r) =>
          r.json === null
            ? Effect.fail(new MissingReferences({ indexes: r.missing_refs }))
            : Effect.succeed(writtenWith<Template>(r, { items: JSON.parse(r.items as string) })!)
        ),
        mapConstraints
      )
    },
    apply: (tenantId, templateId, operationId) =>
      sql.unsafe<{
        template_owner: string | null
        operation_owner: string | null
        active: boolean
        substeps: ReadonlyArray<string>
        last_sequence: number
        fits: boolean
      }>(
        applyStatement,
        [tenantId, templateId, operationId]
      ).pipe(
        Effect.map(([r]) => ({
          templateOwner: r!.template_owner ?? undefined,
          operationOwner: r!.operation_owner ?? undefined,
          active: r!.active,
          lastSequence: r!.fits ? undefined : r!.last_sequence,
          substeps: r!.substeps.map((json) => JSON.parse(json) as Substep)
        })),
        Effect.orDie
      )
  })
}))

export const TemplateItemStorePg = Layer.effect(TemplateItemStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const catalog = yield* Catalog
  return TemplateItemStore.of(crudStorePg<TemplateItem>(sql, {
    table: "substep_template_items",
    columns: catalog.columns("substep_template_items"),
    refTables: ["substep_templates"],
    alias: "i",
    sort: { sequence: "i.sequence", created_at: "i.created_at" },
    filters: (f) => equalities(sql, "i", f, ["id", "template_id"]),
    // a sequence is unique in its template (substep_template_items_sequence_key)
    unique: (sequence) => sql`sequence = ${sequence}`,
    uniqueWithin: "template_id"
  }))
}))

export const DowntimeStorePg = Layer.effect(DowntimeStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const catalog = yield* Catalog
  return DowntimeStore.of(crudStorePg<Downtime>(sql, {
      table: "downtime",
      columns: catalog.columns("downtime"),
      refTables: ["cells"],
      alias: "d",
      insertJson: true,
      sort: { start_time: "d.start_time", end_time: "d.end_time", created_at: "d.created_at" },
      filters: (f) => [
        ...equalities(sql, "d", f, ["id", "cell_id", "planned"]),
        ...(f.open !== undefined ? [f.open ? sql`d.end_time IS NULL` : sql`d.end_time IS NOT NULL`] : []),
        // from / to: downtime that overlaps the window
        ...(f.from !== undefined ? [sql`(d.end_time IS NULL OR d.end_time > ${f.from as string}::timestamptz)`] : []),
        ...(f.to !== undefined ? [sql`d.start_time < ${f.to as string}::timestamptz`] : [])
      ],
      unique: () => sql`false`,
      // downtime.ended once, when a PATCH ends downtime that was open (the PATCH's rows locked first)
      previous: { column: "end_time", eventsWhen: "m.previous IS NULL AND m.end_time IS NOT NULL" }
  }))
}))

/**
 * OEE inputs per group in one statement (docs/DECISIONS.md "OEE"): run minutes of time entries on operations of
 * the cells (open entries count to now), downtime minutes (planned and unplanned), each clipped to the group's
 * window; quantities recorded in the window, with the ideal minutes of what they count (the operation's
 * estimate ÷ its part's quantity, per unit). Groups: days or 8-hour shifts (06:00, 14:00, 22:00 UTC) across the
 * cells, or one per cell over the window. Quantities are summed past int4 (as float8, exact to 2^53, as the
 * operation's totals in its JSON); the ideal minutes are summed with the per-unit estimates × 2^-64 (a power of two:
 * the same sum, without overflowing float8 for estimates near its largest) and are Infinity past the largest double,
 * which the report refuses (OeeReports).
 */
const oeeStatement = (groupBy: "day" | "shift" | "cell") => {
  const groups = groupBy === "cell"
    ? `SELECT c.id::text AS grp, c.id AS cell_id, c.name AS cell_name, $2::timestamptz AS g_from, $3::timestamptz AS g_to FROM cells_in c`
    : `SELECT ${groupBy === "day" ? `to_char(s AT TIME ZONE 'UTC', 'YYYY-MM-DD')` : `mes_ts(s)`} AS grp,
         $4::uuid AS cell_id, (SELECT c.name FROM cells_in c WHERE c.id = $4::uuid) AS cell_name,
         greatest(s, $2::timestamptz) AS g_from, least(s + ${groupBy === "day" ? "interval '1 day'" : "interval '8 hours'"}, $3::timestamptz) AS g_to
       FROM generate_series(${
      groupBy === "day"
        ? `date_trunc('day', $2::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`
        : `(date_trunc('day', $2::timestamptz AT TIME ZONE 'UTC') - interval '2 hours') AT TIME ZONE 'UTC'`
    }, $3::timestamptz - interval '1 microsecond', ${groupBy === "day" ? "interval '1 day'" : "interval '8 hours'"}) s
       WHERE s + ${groupBy === "day" ? "interval '1 day'" : "interval '8 hours'"} > $2::timestamptz`
  const overlap = (start: string, end: string) => `greatest(extract(epoch FROM least(${end}, g.g_to) - greatest(${start}, g.g_from)) / 60, 0)`
  const inGroup = (alias: string) => `(g.cell_id IS NULL OR ${alias}.cell_id = g.cell_id)`
  return `
    WITH cells_in AS (SELECT c.id, c.name FROM cells c WHERE c.tenant_id = $1 AND ($4::uuid IS NULL OR c.id = $4::uuid)),
    te AS (
      SELECT o.cell_id, e.start_time, coalesce(e.end_time, now()) AS end_time
      FROM time_entries e JOIN operations o ON o.tenant_id = e.tenant_id AND o.id = e.operation_id
      WHERE e.tenant_id = $1 AND o.cell_id IN (SELECT id FROM cells_in)
        AND e.start_time < $3::timestamptz AND coalesce(e.end_time, now()) > $2::timestamptz
    ),
    dt AS (
      SELECT d.cell_id, d.planned, d.start_time, coalesce(d.end_time, now()) AS end_time
      FROM downtime d
      WHERE d.tenant_id = $1 AND d.cell_id IN (SELECT id FROM cells_in)
        AND d.start_time < $3::timestamptz AND coalesce(d.end_time, now()) > $2::timestamptz
    ),
    qt AS (
      SELECT o.cell_id, q.recorded_at, q.good, q.scrap, q.rework,
        coalesce(o.estimated_time_minutes / nullif(p.quantity, 0), 0) * 2::float8 ^ -64 AS ideal_per_unit_scaled
      FROM operation_quantities q
      JOIN operations o ON o.tenant_id = q.tenant_id AND o.id = q.operation_id
      JOIN parts p ON p.tenant_id = o.tenant_id AND p.id = o.part_id
      WHERE q.tenant_id = $1 AND o.cell_id IN (SELECT id FROM cells_in)
        AND q.recorded_at >= $2::timestamptz AND q.recorded_at < $3::timestamptz
    ),
    g AS (${groups})
    SELECT g.grp AS "group", g.cell_id, g.cell_name, mes_ts(g.g_from) AS "from", mes_ts(g.g_to) AS "to",
      (SELECT coalesce(sum(${overlap("te.start_time", "te.end_time")}), 0) FROM te WHERE ${inGroup("te")})::float8 AS run_minutes,
      d.unplanned_downtime_minutes, d.planned_downtime_minutes,
      CASE WHEN q.ideal_scaled < 2::float8 ^ 960 THEN q.ideal_scaled * 2::float8 ^ 64 ELSE 'Infinity' END::float8 AS ideal_minutes,
      q.good, q.scrap, q.rework
    FROM g
    -- each group's downtime and quantities read once, every sum of them from that one pass
    CROSS JOIN LATERAL (
      SELECT coalesce(sum(${overlap("dt.start_time", "dt.end_time")}) FILTER (WHERE NOT dt.planned), 0)::float8 AS unplanned_downtime_minutes,
        coalesce(sum(${overlap("dt.start_time", "dt.end_time")}) FILTER (WHERE dt.planned), 0)::float8 AS planned_downtime_minutes
      FROM dt WHERE ${inGroup("dt")}
    ) d
    CROSS JOIN LATERAL (
      SELECT coalesce(sum((qt.good::float8 + qt.scrap + qt.rework) * qt.ideal_per_unit_scaled), 0) AS ideal_scaled,
        coalesce(sum(qt.good), 0)::float8 AS good, coalesce(sum(qt.scrap), 0)::float8 AS scrap, coalesce(sum(qt.rework), 0)::float8 AS rework
      FROM qt WHERE ${inGroup("qt")} AND qt.recorded_at >= g.g_from AND qt.recorded_at < g.g_to
    ) q
    ORDER BY g.g_from, g.cell_name, g.cell_id`
}

export const OeeStorePg = Layer.effect(OeeStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const statements = { day: oeeStatement("day"), shift: oeeStatement("shift"), cell: oeeStatement("cell") }
  return OeeStore.of({
    inputs: (tenantId, q) =>
      sql.unsafe<OeeInputs>(statements[q.groupBy], [tenantId, q.from, q.to, q.cellId]).pipe(Effect.orDie)
  })
}))

export const ShopFloorStoresPg = Layer.mergeAll(
  ScrapReasonStorePg,
  QuantityStorePg,
  AssignmentStorePg,
  TemplateStorePg,
  TemplateItemStorePg,
  DowntimeStorePg,
  OeeStorePg
)
