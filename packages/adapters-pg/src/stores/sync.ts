// ERP sync of a job with its parts and operations as ONE statement (spec 4.1 PUT sync; ARCHITECTURE:
// the domain plans, the adapter executes once). The plan names every row with an id of its own;
// rows that already exist under the same (external_source, external_id) keep their stored id, and
// the statement maps the plan's ids (job of a part, parent of a part, part of an operation) onto the
// ids the rows end up with. Everything that can refuse the record is checked first, in the same
// snapshot: references and cell names of the tenant, parts that belong to another job, operations
// that belong to another part. A refused record writes nothing and says why.
import { eventPlan, type JobSyncPlan } from "@mes/domain"
import { type Catalog, type Column, fieldOf, insertSelect } from "../catalog.ts"
import { insertEvents } from "../events.ts"
import { missingReferences, nestedPlanChecks, nestedPlanPasses, nestedPlanRefusals } from "./common.ts"
import { givenKeys, ident } from "../sql-text.ts"

/** The columns any of `rows` gives a value: those an existing row takes from the sync. */
const given = (rows: ReadonlyArray<object>, columns: ReadonlyArray<Column>): Array<string> => {
  const names = new Set(givenKeys(rows))
  return columns.map((c) => c.name).filter((c) => names.has(c) && c !== "id" && c !== "tenant_id" && c !== "created_at")
}

/**
 * `INSERT INTO table AS t … ON CONFLICT (tenant_id, external_source, external_id) DO UPDATE` of the
 * `update` columns: a row that exists by external key takes them, unless it is under another
 * `sameParent` (a synced row never moves; the upsert then skips it). `live` is the key index's WHERE.
 */
const upsertByExternalKey = (
  columns: ReadonlyArray<Column>,
  table: string,
  select: Parameters<typeof insertSelect>[2],
  o: { readonly update: ReadonlyArray<string>; readonly sameParent?: string; readonly live?: string }
) => {
  // a row that already holds every synced value is left alone: no write, no updated_at, no event (its
  // upsert returns nothing; the statement tells "unchanged" from "refused" by the row it found first)
  const conditions = [
    ...(o.sameParent === undefined ? [] : [`t.${ident(o.sameParent)} = EXCLUDED.${ident(o.sameParent)}`]),
    ...(o.update.length === 0 ? ["false"] : [`(${o.update.map((c) => `t.${ident(c)}`).join(", ")}) IS DISTINCT FROM (${o.update.map((c) => `EXCLUDED.${ident(c)}`).join(", ")})`])
  ]
  return `${insertSelect(columns, `${table} AS t`, select)}
  ON CONFLICT (tenant_id, external_source, external_id) WHERE ${o.live ?? ""}external_id IS NOT NULL
  DO UPDATE SET ${[...o.update.map((c) => `${ident(c)} = EXCLUDED.${ident(c)}`), "updated_at = now()"].join(", ")}
  WHERE ${conditions.join(" AND ")}`
}

/** The statement's shape depends only on which columns the plan's rows give; callers cache it by `syncJobKey`. */
export const syncJobKey = (plan: JobSyncPlan, catalog: Catalog["Service"]) =>
  [given([plan.job], catalog.columns("jobs")), given(plan.parts, catalog.columns("parts")), given(plan.operations, catalog.columns("operations"))]
    .map((c) => c.join(",")).join("|")

/**
 * $1: the plan (jsonb: job, parts, operations, refs, cell_names, dry_run), $2: the tenant. Answers
 * one row: the job's id and whether it was created, or (nothing written) what refused it.
 */
export const syncJobStatement = (plan: JobSyncPlan, catalog: Catalog["Service"]) => {
  const jobs = catalog.columns("jobs")
  const parts = catalog.columns("parts")
  const operations = catalog.columns("operations")
  const key = (alias: string) => `${alias}.tenant_id = $2 AND ${alias}.external_source = (x.r).external_source AND ${alias}.external_id = (x.r).external_id`
  return `
WITH ${nestedPlanChecks},
jin AS (SELECT jsonb_populate_record(null::jobs, $1::jsonb->'job') AS r),
jid AS (
  SELECT coalesce((SELECT j.id FROM jin x JOIN jobs j ON ${key("j")} AND j.deleted_at IS NULL), ((SELECT r FROM jin)).id) AS id
),
pin AS (SELECT e.n, jsonb_populate_record(null::parts, e.v) AS r FROM jsonb_array_elements($1::jsonb->'parts') WITH ORDINALITY e (v, n)),
pid AS (
  SELECT x.n, (x.r).id AS plan_id, coalesce(p.id, (x.r).id) AS id, p.job_id AS stored_job
  FROM pin x LEFT JOIN parts p ON ${key("p")}
),
elsewhere AS (SELECT pid.n FROM pid, jid WHERE pid.stored_job IS NOT NULL AND pid.stored_job <> jid.id),
oin AS (
  SELECT e.n, e.v->>'cell_name' AS cell_name, jsonb_populate_record(null::operations, e.v) AS r
  FROM jsonb_array_elements($1::jsonb->'operations') WITH ORDINALITY e (v, n)
),
oid AS (
  SELECT x.n, coalesce(o.id, (x.r).id) AS id, (SELECT pid.id FROM pid WHERE pid.plan_id = (x.r).part_id) AS part_id, o.part_id AS stored_part
  FROM oin x LEFT JOIN operations o ON ${key("o")}
),
moved AS (SELECT oid.n FROM oid WHERE oid.stored_part IS NOT NULL AND oid.stored_part <> oid.part_id),
ok AS (
  SELECT NOT ($1::jsonb->>'dry_run')::boolean AND ${nestedPlanPasses}
    AND NOT EXISTS (SELECT 1 FROM elsewhere) AND NOT EXISTS (SELECT 1 FROM moved) AS ok
),
j AS (
  ${
    upsertByExternalKey(jobs, "jobs", { from: "ok, jid, jin x", row: "x.r", overrides: { id: "jid.id" }, where: "WHERE ok.ok" }, {
      update: given([plan.job], jobs),
      live: "deleted_at IS NULL AND "
    })
  }
  RETURNING t.*, (xmax = 0) AS inserted
),
p AS (
  ${
    upsertByExternalKey(parts, "parts", {
      from: "ok, jid, pin x JOIN pid ON pid.n = x.n",
      row: "x.r",
      overrides: { id: "pid.id", job_id: "jid.id", parent_part_id: "(SELECT pp.id FROM pid pp WHERE pp.plan_id = (x.r).parent_part_id)" },
      where: "WHERE ok.ok"
    }, { update: given(plan.parts, parts), sameParent: "job_id" })
  }
  RETURNING t.*, (xmax = 0) AS inserted
),
o AS (
  ${
    upsertByExternalKey(operations, "operations", {
      from: "ok, oin x JOIN oid ON oid.n = x.n LEFT JOIN names nm ON nm.name = x.cell_name",
      row: "x.r",
      overrides: { id: "oid.id", part_id: "oid.part_id", cell_id: "coalesce((x.r).cell_id, nm.id)" },
      where: "WHERE ok.ok"
    }, { update: given(plan.operations, operations), sameParent: "part_id" })
  }
  RETURNING t.id
),
po AS (SELECT p.*, pid.n FROM p JOIN pid ON pid.id = p.id),
u AS (INSERT INTO part_usage (tenant_id, parts) SELECT $2, count(*) FROM p WHERE p.inserted HAVING count(*) > 0),
ev AS (
  ${
    insertEvents("$2", [
      ...(["job.created", "job.updated"] as const).map((type) => ({
        event: eventPlan(type),
        from: `j WHERE j.inserted = ${type === "job.created"}`,
        payload: { field: fieldOf(jobs, "j"), record: "j.doc" }
      })),
      // part events in the order the record lists the parts, created and updated alike
      {
        event: eventPlan("part.created"),
        typeSql: "CASE WHEN po.inserted THEN 'part.created' ELSE 'part.updated' END",
        from: "po",
        orderBy: "po.n",
        payload: { field: fieldOf(parts, "po"), record: "po.doc" }
      }
    ])
  }
)
SELECT CASE WHEN (SELECT ok FROM ok) THEN (SELECT id FROM jid) END AS id,
  CASE WHEN (SELECT inserted FROM j) THEN 'created' WHEN EXISTS (SELECT 1 FROM j) OR EXISTS (SELECT 1 FROM p) OR EXISTS (SELECT 1 FROM o)
    THEN 'updated' ELSE 'unchanged' END AS action,
  -- a row the upsert skipped is one it found holding the synced values already, unless the checks saw no row
  -- there (a concurrent sync wrote it meanwhile) or the job row was new and skipped: undo all
  CASE WHEN (SELECT ok FROM ok) AND (
    (NOT EXISTS (SELECT 1 FROM j) AND (SELECT id FROM jid) = ((SELECT r FROM jin)).id)
    OR EXISTS (SELECT 1 FROM pid WHERE pid.stored_job IS NULL AND pid.id NOT IN (SELECT id FROM p))
    OR EXISTS (SELECT 1 FROM oid WHERE oid.stored_part IS NULL AND oid.id NOT IN (SELECT id FROM o))
  ) THEN mes_conflict('sync overtaken') END AS overtaken,
  ${nestedPlanRefusals},
  ARRAY(SELECT n - 1 FROM elsewhere ORDER BY n)::int[] AS elsewhere,
  ARRAY(SELECT n - 1 FROM moved ORDER BY n)::int[] AS moved`
}

const keyOf = (alias: string, source: string, externalId: string) =>
  `${alias}.tenant_id = $2 AND ${alias}.external_source = ${source} AND ${alias}.external_id = ${externalId}`

/**
 * PUT /api-parts/sync as one statement. $1: {part (plan id), job_external_id, refs, parent (a resolved
 * parent_part_id, when the request names one)}, $2: the tenant. The part goes under the job synced
 * with `job_external_id` from the same source; an existing part keeps its id and may not move.
 */
export const syncPartStatement = (part: object, withParent: boolean, catalog: Catalog["Service"]) => {
  const parts = catalog.columns("parts")
  const src = "($1::jsonb->'part'->>'external_source')"
  return `
WITH bad AS (${missingReferences("$1::jsonb->'refs'", "$2", ["cells", "materials"])}),
owner AS (SELECT j.id FROM jobs j WHERE ${keyOf("j", src, "($1::jsonb->>'job_external_id')")} AND j.deleted_at IS NULL),
existing AS (SELECT p.id, p.job_id FROM parts p WHERE ${keyOf("p", src, "($1::jsonb->'part'->>'external_id')")}),
ok AS (
  SELECT EXISTS (SELECT 1 FROM owner) AND NOT EXISTS (SELECT 1 FROM bad)
    AND NOT EXISTS (SELECT 1 FROM existing, owner WHERE existing.job_id <> owner.id) AS ok
),
p AS (
  ${
    upsertByExternalKey(parts, "parts", {
      from: "ok, owner, jsonb_populate_record(null::parts, $1::jsonb->'part') r",
      row: "r",
      overrides: {
        id: "coalesce((SELECT id FROM existing), r.id)",
        job_id: "owner.id",
        ...(withParent ? { parent_part_id: "($1::jsonb->>'parent')::uuid" } : {})
      },
      where: "WHERE ok.ok"
    }, { update: [...given([part], parts), ...(withParent ? ["parent_part_id"] : [])], sameParent: "job_id" })
  }
  RETURNING t.*, (xmax = 0) AS inserted
),
u AS (INSERT INTO part_usage (tenant_id, parts) SELECT $2, 1 FROM p WHERE p.inserted),
ev AS (
  ${
    insertEvents("$2", [{
      event: eventPlan("part.created"),
      typeSql: "CASE WHEN p.inserted THEN 'part.created' ELSE 'part.updated' END",
      from: "p",
      payload: { field: fieldOf(parts, "p"), record: "p.doc" }
    }])
  }
)
SELECT CASE WHEN (SELECT ok FROM ok) THEN coalesce((SELECT id FROM p), (SELECT id FROM existing)) END AS id,
  CASE WHEN NOT EXISTS (SELECT 1 FROM p) THEN 'unchanged' WHEN (SELECT inserted FROM p) THEN 'created' ELSE 'updated' END AS action,
  CASE WHEN (SELECT ok FROM ok) AND NOT EXISTS (SELECT 1 FROM p) AND NOT EXISTS (SELECT 1 FROM existing) THEN mes_conflict('sync overtaken') END AS overtaken,
  NOT EXISTS (SELECT 1 FROM owner) AS no_owner,
  EXISTS (SELECT 1 FROM existing, owner WHERE existing.job_id <> owner.id) AS elsewhere,
  ARRAY(SELECT i FROM bad ORDER BY i) AS missing_refs`
}

/**
 * PUT /api-operations/sync as one statement. $1: {operation (plan id; sequence may be absent),
 * part_external_id, cell_name}, $2: the tenant. A new operation without sequence comes after the
 * part's last; an existing one keeps its id, sequence (unless given) and part.
 */
export const syncOperationStatement = (operation: object, catalog: Catalog["Service"]) => {
  const operations = catalog.columns("operations")
  const src = "($1::jsonb->'operation'->>'external_source')"
  const withSequence = given([operation], operations).includes("sequence")
  return `
WITH owner AS (SELECT p.id FROM parts p WHERE ${keyOf("p", src, "($1::jsonb->>'part_external_id')")}),
cell AS (SELECT c.id FROM cells c WHERE c.tenant_id = $2 AND c.name = $1::jsonb->>'cell_name'),
existing AS (SELECT o.id, o.part_id, o.sequence FROM operations o WHERE ${keyOf("o", src, "($1::jsonb->'operation'->>'external_id')")}),
ok AS (
  SELECT EXISTS (SELECT 1 FROM owner) AND EXISTS (SELECT 1 FROM cell)
    AND NOT EXISTS (SELECT 1 FROM existing, owner WHERE existing.part_id <> owner.id) AS ok
),
o AS (
  ${
    upsertByExternalKey(operations, "operations", {
      from: "ok, owner, cell, jsonb_populate_record(null::operations, $1::jsonb->'operation') r",
      row: "r",
      overrides: {
        id: "coalesce((SELECT id FROM existing), r.id)",
        part_id: "owner.id",
        cell_id: "cell.id",
        sequence: `coalesce(r.sequence, (SELECT sequence FROM existing),
          (SELECT coalesce(max(x.sequence), 0) + 1 FROM operations x WHERE x.tenant_id = $2 AND x.part_id = owner.id))`
      },
      where: "WHERE ok.ok"
    }, { update: [...new Set([...given([operation], operations), "cell_id", ...(withSequence ? ["sequence"] : [])])], sameParent: "part_id" })
  }
  RETURNING t.id, (xmax = 0) AS inserted
)
SELECT CASE WHEN (SELECT ok FROM ok) THEN coalesce((SELECT id FROM o), (SELECT id FROM existing)) END AS id,
  CASE WHEN NOT EXISTS (SELECT 1 FROM o) THEN 'unchanged' WHEN (SELECT inserted FROM o) THEN 'created' ELSE 'updated' END AS action,
  CASE WHEN (SELECT ok FROM ok) AND NOT EXISTS (SELECT 1 FROM o) AND NOT EXISTS (SELECT 1 FROM existing) THEN mes_conflict('sync overtaken') END AS overtaken,
  NOT EXISTS (SELECT 1 FROM owner) AS no_owner,
  NOT EXISTS (SELECT 1 FROM cell) AS no_cell,
  EXISTS (SELECT 1 FROM existing, owner WHERE existing.part_id <> owner.id) AS elsewhere`
}

/**
 * PUT <cells|resources>/sync as one statement (spec 4.10). $1: the record (plan id, tenant), $2: the tenant.
 * An existing record keeps its id and takes the synced values, or stays as it is when it holds them already.
 */
export const syncRecordStatement = (table: "cells" | "resources", row: object, catalog: Catalog["Service"]) => {
  const columns = catalog.columns(table)
  return `
WITH x AS (SELECT jsonb_populate_record(null::${table}, $1::jsonb) AS r),
existing AS (SELECT t.id FROM ${table} t, x WHERE ${keyOf("t", "(x.r).external_source", "(x.r).external_id")}),
up AS (
  ${upsertByExternalKey(columns, table, { from: "x", row: "x.r", overrides: { id: "coalesce((SELECT id FROM existing), (x.r).id)" } }, { update: given([row], columns) })}
  RETURNING t.id, (xmax = 0) AS inserted
)
SELECT coalesce((SELECT id FROM up), (SELECT id FROM existing)) AS id,
  CASE WHEN NOT EXISTS (SELECT 1 FROM up) THEN 'unchanged' WHEN (SELECT inserted FROM up) THEN 'created' ELSE 'updated' END AS action`
}
