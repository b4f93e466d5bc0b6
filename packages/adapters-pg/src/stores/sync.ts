// ERP sync of jobs with their parts and operations as ONE statement, one job or a bulk of them (spec 4.1 PUT sync; ARCHITECTURE:
// the domain plans, the adapter executes once). The plan names every row with an id of its own;
// rows that already exist under the same (external_source, external_id) keep their stored id, and
// the statement maps the plan's ids (job of a part, parent of a part, part of an operation) onto the
// ids the rows end up with. Everything that can refuse the record is checked first, in the same
// snapshot: references and cell names of the tenant, parts that belong to another job, operations
// that belong to another part. A refused record writes nothing and says why.
import { eventPlan, type JobSyncPlan } from "@mes/domain"
import { type Catalog, type Column, fieldOf, insertSelect, type TableColumns } from "../catalog.ts"
import { insertEvents } from "../events.ts"
import { createdJobStamps } from "../created-stamps.ts"
import { missingReferences, nestedPlanPasses, nestedPlanRecords, nestedPlanRefusals, partMaterials, PLAN_RECORDS, planElements, planRecords } from "./common.ts"
import { givenKeys, ident } from "../sql-text.ts"
import { chainHolds, parentIn } from "../rows.ts"

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
  columns: TableColumns,
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

/**
 * The stored row with the external key of the record `json` (its source and external_id), joined as `s`: `s.id`,
 * and `s.row` as a record of the table's type (NULL when there is none).
 */
const stored = (table: string, alias: string, json: string, live = "") =>
  `LEFT JOIN LATERAL (SELECT ${alias}.id, ${alias} AS row FROM ${table} ${alias} WHERE ${
    keyOf(alias, `(${json}->>'external_source')`, `(${json}->>'external_id')`)
  }${live}) s ON true`

/**
 * The columns synced parts `rows` write, and whether their materials are settled by the statement (`partMaterials`):
 * when some part names a material_id, as a part that gives none takes its name, material is written too; and with
 * `parents` (records naming a parent the statement finds), parent_part_id.
 */
const partsUpdate = (rows: ReadonlyArray<object>, parts: TableColumns, parents = false) => {
  const columns = given(rows, parts)
  const materials = columns.includes("material_id")
  const also = [...(materials ? ["material"] : []), ...(parents ? ["parent_part_id"] : [])].filter((c) => !columns.includes(c))
  return { materials, update: [...columns, ...also] }
}

/** The statement's shape depends only on which columns the plans' rows give; callers cache it by `syncJobsKey`. */
export const syncJobsKey = (plans: ReadonlyArray<JobSyncPlan>, catalog: Catalog["Service"]) =>
  [
    given(plans.map((p) => p.job), catalog.columns("jobs")),
    given(plans.flatMap((p) => p.parts), catalog.columns("parts")),
    given(plans.flatMap((p) => p.operations), catalog.columns("operations"))
  ].map((c) => c.join(",")).join("|")

/** A synced row's values: what the record gives over the stored row's (a field the record leaves out keeps its value). */
const synced = (table: string, stored: string, given: string) => `jsonb_populate_record(coalesce(${stored}, null::${table}), ${given})`

/**
 * $1: the plans, a jsonb array (each: job, parts, operations, refs, cell_names, dry_run), $2: the tenant.
 * Syncs every plan that nothing refuses, all in one statement (bulk-sync: one pass over the bodies, the
 * stored rows found by their external keys' index); answers one row per plan, in order: the job's id
 * and its action, or (nothing of that plan written) what refused it. The plans name distinct rows
 * (the domain sends a bulk whose records share an external key one by one).
 */
export const syncJobsStatement = (plans: ReadonlyArray<JobSyncPlan>, catalog: Catalog["Service"]) => {
  const jobs = catalog.columns("jobs")
  const parts = catalog.columns("parts")
  const operations = catalog.columns("operations")
  const { materials, update: partsUpdated } = partsUpdate(plans.flatMap((p) => p.parts), parts)
  // each synced row is a LATERAL subquery with OFFSET 0: pulled up into the join, its jsonb_populate_record ran
  // once for every reference to the row or to its fields ((x.r).id, (x.r).part_id) (a bulk chunk of 200 jobs × 5 × 4: 120–142 ms → 105–124, bench/RESULTS.md)
  return `
WITH ${nestedPlanRecords},${materials ? `\n${partMaterials.differ()},` : ""}
jin AS MATERIALIZED (
  SELECT rec.k, x.r, s.id AS stored_id, coalesce(s.id, (x.r).id) AS id
  FROM rec ${stored("jobs", "j", "rec.v->'job'", " AND j.deleted_at IS NULL")}
  CROSS JOIN LATERAL (SELECT ${synced("jobs", "s.row", "rec.v->'job'")} OFFSET 0) x (r)
),
pin AS MATERIALIZED (
  SELECT x.k, x.n, x.r, (x.r).id AS plan_id, coalesce(s.id, (x.r).id) AS id, (s.row).job_id AS stored_job
  FROM ${planElements("parts")} y
  ${stored("parts", "p", "y.v")}
  CROSS JOIN LATERAL (SELECT y.k, y.n, ${synced("parts", "s.row", materials ? partMaterials.filled("y.v") : "y.v")} OFFSET 0) x (k, n, r)
),
elsewhere AS (SELECT pin.k, pin.n FROM pin JOIN jin ON jin.k = pin.k WHERE pin.stored_job IS NOT NULL AND pin.stored_job <> jin.id),
oin AS MATERIALIZED (
  SELECT x.k, x.n, x.cell_name, x.r, coalesce(s.id, (x.r).id) AS id, pin.id AS part_id, (s.row).part_id AS stored_part
  FROM ${planElements("operations")} y
  ${stored("operations", "o", "y.v")}
  CROSS JOIN LATERAL (SELECT y.k, y.n, y.v->>'cell_name', ${synced("operations", "s.row", "y.v")} OFFSET 0) x (k, n, cell_name, r)
  LEFT JOIN pin ON pin.plan_id = (x.r).part_id
),
moved AS (SELECT oin.k, oin.n FROM oin WHERE oin.stored_part IS NOT NULL AND oin.stored_part <> oin.part_id),
ok AS MATERIALIZED (
  SELECT rec.k, NOT (rec.v->>'dry_run')::boolean
    AND ${nestedPlanPasses}
    AND rec.k NOT IN (SELECT k FROM elsewhere) AND rec.k NOT IN (SELECT k FROM moved)${materials ? ` AND ${partMaterials.passes()}` : ""} AS ok
  FROM rec
),
j AS (
  ${
    upsertByExternalKey(jobs, "jobs", { from: "jin x JOIN ok ON ok.k = x.k", row: "x.r", overrides: { id: "x.id", ...createdJobStamps("(x.r).status") }, where: "WHERE ok.ok" }, {
      update: given(plans.map((p) => p.job), jobs),
      live: "deleted_at IS NULL AND "
    })
  }
  RETURNING t.*, (xmax = 0) AS inserted
),
p AS (
  ${
    upsertByExternalKey(parts, "parts", {
      from: "pin x JOIN ok ON ok.k = x.k JOIN jin ON jin.k = x.k LEFT JOIN pin pp ON pp.plan_id = (x.r).parent_part_id",
      row: "x.r",
      overrides: { id: "x.id", job_id: "jin.id", parent_part_id: "pp.id" },
      where: "WHERE ok.ok"
    }, { update: partsUpdated, sameParent: "job_id" })
  }
  RETURNING t.*, (xmax = 0) AS inserted
),
o AS (
  ${
    upsertByExternalKey(operations, "operations", {
      from: "oin x JOIN ok ON ok.k = x.k LEFT JOIN names nm ON nm.k = x.k AND nm.name = x.cell_name",
      row: "x.r",
      overrides: { id: "x.id", part_id: "x.part_id", cell_id: "coalesce((x.r).cell_id, nm.id)" },
      where: "WHERE ok.ok"
    }, { update: given(plans.flatMap((p) => p.operations), operations), sameParent: "part_id" })
  }
  RETURNING t.id, (xmax = 0) AS inserted
),
jk AS (SELECT j.*, jin.k FROM j JOIN jin ON jin.id = j.id),
pk AS (SELECT p.*, pin.k, pin.n FROM p JOIN pin ON pin.id = p.id),
u AS (INSERT INTO part_usage (tenant_id, parts) SELECT $2, count(*) FROM p WHERE p.inserted HAVING count(*) > 0),
${
    insertEvents("$2", [
      ...(["job.created", "job.updated"] as const).map((type) => ({
        event: eventPlan(type),
        from: `jk WHERE jk.inserted = ${type === "job.created"}`,
        orderBy: "ARRAY[jk.k, 0]",
        payload: { field: fieldOf(jobs, "jk"), record: "jk.doc" }
      })),
      // record by record: the job's event, then its parts' in the order the record lists them
      {
        event: eventPlan("part.created"),
        typeSql: "CASE WHEN pk.inserted THEN 'part.created' ELSE 'part.updated' END",
        from: "pk",
        orderBy: "ARRAY[pk.k, pk.n]",
        payload: { field: fieldOf(parts, "pk"), record: "pk.doc" }
      }
    ], { interleave: true })
},
written AS (SELECT k FROM pk UNION SELECT oin.k FROM o JOIN oin ON oin.id = o.id),
-- records that inserted a part or an operation (under update_only, a job that did is skipped: sync/service.ts)
made AS (SELECT k FROM pk WHERE pk.inserted UNION SELECT oin.k FROM o JOIN oin ON oin.id = o.id WHERE o.inserted),
-- a row the upsert skipped is one it found holding the synced values already, unless the checks saw no row
-- there (a concurrent sync wrote it meanwhile): then all is undone
overtaken AS (
  SELECT jin.k FROM jin WHERE jin.stored_id IS NULL AND jin.id NOT IN (SELECT id FROM j)
  UNION SELECT pin.k FROM pin WHERE pin.stored_job IS NULL AND pin.id NOT IN (SELECT id FROM p)
  UNION SELECT oin.k FROM oin WHERE oin.stored_part IS NULL AND oin.id NOT IN (SELECT id FROM o)
)
SELECT CASE WHEN ok.ok THEN jin.id END AS id,
  CASE WHEN jk.inserted THEN 'created' WHEN jk.k IS NOT NULL OR rec.k IN (SELECT k FROM written) THEN 'updated' ELSE 'unchanged' END AS action,
  coalesce(jk.inserted, false) OR rec.k IN (SELECT k FROM made) AS inserted,
  CASE WHEN ok.ok AND rec.k IN (SELECT k FROM overtaken) THEN mes_conflict('sync overtaken') END AS overtaken,
  ${nestedPlanRefusals.columns},
  coalesce(r3.a, '{}')::int[] AS elsewhere, coalesce(r4.a, '{}')::int[] AS moved${materials ? `, ${partMaterials.columns()}` : ""}
FROM rec JOIN ok ON ok.k = rec.k JOIN jin ON jin.k = rec.k LEFT JOIN jk ON jk.k = rec.k
  ${nestedPlanRefusals.joins}
  LEFT JOIN (SELECT k, array_agg(n - 1 ORDER BY n) AS a FROM elsewhere GROUP BY k) r3 ON r3.k = rec.k
  LEFT JOIN (SELECT k, array_agg(n - 1 ORDER BY n) AS a FROM moved GROUP BY k) r4 ON r4.k = rec.k
ORDER BY rec.k`
}

const keyOf = (alias: string, source: string, externalId: string) =>
  `${alias}.tenant_id = $2 AND ${alias}.external_source = ${source} AND ${alias}.external_id = ${externalId}`

/**
 * PUT /api-parts/sync, one record or a bulk of them, as one statement. $1: the plans, a jsonb array (each: part
 * (plan id; parent_part_id when the request names a parent, resolved), job_external_id, refs), $2: the tenant.
 * Each part goes under the job synced with `job_external_id` from the same source; an existing part keeps its
 * id and may not move, and a field its record leaves out keeps its value. A created part is counted in the
 * usage ledger; each written part has its part.created|updated, record by record. Answers one row per plan, in
 * order: the id and action, or (nothing of that plan written) what refused it. The plans name distinct parts.
 */
type PartSyncPlans = ReadonlyArray<{ readonly part: object; readonly parent?: unknown }>
const namingParents = (plans: PartSyncPlans) => plans.some((p) => p.parent !== undefined)

/** The parts sync statement's shape depends on the columns given and on whether a record names a parent; callers cache it by this. */
export const syncPartsKey = (plans: PartSyncPlans, catalog: Catalog["Service"]) =>
  `${givenKey(plans.map((p) => p.part), catalog.columns("parts"))}${namingParents(plans) ? " parents" : ""}`

export const syncPartsStatement = (plans: PartSyncPlans, catalog: Catalog["Service"]) => {
  const parts = catalog.columns("parts")
  const src = "(rec.v->'part'->>'external_source')"
  // a record naming a parent (`parent`: its id, else its number, both null to clear it): the part of the owner job
  // with that id or number (par), refused when there is none or when its chain holds the part (itself included)
  const parents = namingParents(plans)
  const { materials, update } = partsUpdate(plans.map((p) => p.part), parts, parents)
  const names = "rec.v ? 'parent'"
  const asked = "(rec.v->'parent'->>'id' IS NOT NULL OR rec.v->'parent'->>'number' IS NOT NULL)"
  return `
WITH ${planRecords},
bad AS (${missingReferences("rec.v->'refs'", "$2", ["cells", "materials"], PLAN_RECORDS)}),${
    materials ? `\n${partMaterials.differ("(SELECT rec.k, 1 AS n, rec.v->'part' AS v FROM rec)")},` : ""
  }
x AS MATERIALIZED (
  SELECT rec.k, y.r, coalesce(s.id, (y.r).id) AS id, s.id AS stored_id, (s.row).job_id AS stored_job, owner.id AS job_id${
    parents ? `,
    ${names} AS names_parent, ${asked} AND par.id IS NULL AS no_parent, par.id AS parent_id` : ""
  }
  FROM rec
  ${stored("parts", "p", "rec.v->'part'")}
  CROSS JOIN LATERAL (SELECT ${synced("parts", "s.row", materials ? partMaterials.filled("rec.v->'part'") : "rec.v->'part'")} OFFSET 0) y (r)
  -- the owner job found after its share lock (mes_job_live, migration 0040): one deleted meanwhile is no owner (OFFSET 0:
  -- looked up per record, never a scan that locks the tenant's jobs)
  LEFT JOIN LATERAL (
    SELECT j.id FROM jobs j WHERE ${keyOf("j", src, "(rec.v->>'job_external_id')")} AND j.deleted_at IS NULL AND mes_job_live($2, j.id) OFFSET 0
  ) owner ON true${
    parents ? `
  LEFT JOIN LATERAL (${parentIn("$2", "owner.id", "(rec.v->'parent'->>'id')", "(rec.v->'parent'->>'number')")}) par ON ${names}` : ""
  }
)${
    parents ? `,
xc AS MATERIALIZED (SELECT x.*, x.parent_id IS NOT NULL AND ${chainHolds("parts", "parent_part_id", "$2", "x.parent_id", "x.id")} AS cycle FROM x)` : ""
  },
ok AS MATERIALIZED (
  SELECT x.*, x.job_id IS NOT NULL AND x.k NOT IN (SELECT k FROM bad) AND coalesce(x.stored_job = x.job_id, true)${
    materials ? ` AND ${partMaterials.passes("x.k")}` : ""
  }${parents ? " AND NOT x.no_parent AND NOT x.cycle" : ""} AS ok FROM ${parents ? "xc" : "x"} x
),
p AS (
  ${
    upsertByExternalKey(parts, "parts", {
      from: "ok x",
      row: "x.r",
      overrides: { id: "x.id", job_id: "x.job_id", ...(parents ? { parent_part_id: "CASE WHEN x.names_parent THEN x.parent_id ELSE (x.r).parent_part_id END" } : {}) },
      where: "WHERE x.ok"
    }, {
      update,
      sameParent: "job_id"
    })
  }
  RETURNING t.*, (xmax = 0) AS inserted
),
pk AS (SELECT p.*, ok.k FROM p JOIN ok ON ok.id = p.id),
u AS (INSERT INTO part_usage (tenant_id, parts) SELECT $2, count(*) FROM p WHERE p.inserted HAVING count(*) > 0),
${
    insertEvents("$2", [{
      event: eventPlan("part.created"),
      typeSql: "CASE WHEN pk.inserted THEN 'part.created' ELSE 'part.updated' END",
      from: "pk",
      orderBy: "pk.k",
      payload: { field: fieldOf(parts, "pk"), record: "pk.doc" }
    }])
}
SELECT CASE WHEN ok.ok THEN ok.id END AS id,
  CASE WHEN pk.k IS NULL THEN 'unchanged' WHEN pk.inserted THEN 'created' ELSE 'updated' END AS action,
  CASE WHEN ok.ok AND pk.k IS NULL AND ok.stored_id IS NULL THEN mes_conflict('sync overtaken') END AS overtaken,
  ok.job_id IS NULL AS no_owner, coalesce(ok.stored_job <> ok.job_id, false) AS elsewhere,
  coalesce(r.a, '{}') AS missing_refs${materials ? `, ${partMaterials.columns("ok.k")}` : ""}${
    parents ? ", ok.no_parent, ok.cycle, ok.parent_id = ok.id AS parent_self" : ""
  }
FROM ok LEFT JOIN pk ON pk.k = ok.k
  LEFT JOIN (SELECT k, array_agg(i ORDER BY i) AS a FROM bad GROUP BY k) r ON r.k = ok.k
ORDER BY ok.k`
}

/** The columns that any of `rows` gives, as a statement cache key (a bulk's statement depends on nothing else). */
export const givenKey = (rows: ReadonlyArray<object>, columns: ReadonlyArray<Column>) => given(rows, columns).join(",")

/**
 * PUT /api-operations/sync, one record or a bulk of them, as one statement. $1: the plans, a jsonb array (each:
 * operation (plan id; sequence may be absent), part_external_id, cell_name), $2: the tenant. Each operation goes
 * under the part synced with `part_external_id` from the same source, in the tenant's cell of that name; an
 * existing one keeps its id, its part and (unless given) its sequence, and a field its record leaves out keeps its
 * value. A new operation without sequence comes after its part's last, as if the records were synced one after
 * another: after the stored operations and after what the records before it gave that part. Answers one row per
 * plan, in order: the id and action, or (nothing of that plan written) what refused it. The plans name distinct
 * operations (the domain sends a bulk whose records share an external key one by one).
 */
export const syncOperationsStatement = (plans: ReadonlyArray<{ readonly operation: object }>, catalog: Catalog["Service"]) => {
  const operations = catalog.columns("operations")
  const src = "(rec.v->'operation'->>'external_source')"
  return `
WITH ${planRecords},
x AS MATERIALIZED (
  SELECT rec.k, y.r, coalesce(s.id, (y.r).id) AS id, s.id AS stored_id, (s.row).part_id AS stored_part, owner.id AS part_id, cell.id AS cell_id,
    (rec.v->'operation'->>'sequence')::int AS given_sequence
  FROM rec
  ${stored("operations", "o", "rec.v->'operation'")}
  CROSS JOIN LATERAL (SELECT ${synced("operations", "s.row", "rec.v->'operation'")} OFFSET 0) y (r)
  -- the owner part, of a live job (found after the job's share lock, mes_job_live, migration 0040; OFFSET 0: per record)
  LEFT JOIN LATERAL (
    SELECT p.id FROM parts p WHERE ${keyOf("p", src, "(rec.v->>'part_external_id')")} AND mes_job_live($2, p.job_id) OFFSET 0
  ) owner ON true
  LEFT JOIN cells cell ON cell.tenant_id = $2 AND cell.name = rec.v->>'cell_name'
),
ok AS MATERIALIZED (
  SELECT x.*, x.part_id IS NOT NULL AND x.cell_id IS NOT NULL AND coalesce(x.stored_part = x.part_id, true) AS ok,
    x.stored_id IS NULL AND x.given_sequence IS NULL AS auto
  FROM x
),
-- the sequence of a new operation without one: a = how many such operations of its part up to it, so the
-- k-th comes a after the highest sequence its part had when the last record that gave one was synced
numbered AS (
  SELECT ok.k, ok.part_id, ok.stored_id, ok.given_sequence,
    count(*) FILTER (WHERE ok.auto) OVER w AS a,
    min(ok.k) FILTER (WHERE ok.auto) OVER (PARTITION BY ok.part_id) AS first_auto
  FROM ok WHERE ok.ok
  WINDOW w AS (PARTITION BY ok.part_id ORDER BY ok.k)
),
after AS (
  SELECT n.*,
    max(n.given_sequence - n.a) OVER (PARTITION BY n.part_id ORDER BY n.k ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS given_before
  FROM numbered n
),
-- the part's stored operations before its first new one without sequence, but those that records before it re-sequence
top AS (
  SELECT f.part_id, (
    SELECT coalesce(max(o.sequence), 0) FROM operations o WHERE o.tenant_id = $2 AND o.part_id = f.part_id
      AND o.id NOT IN (SELECT e.stored_id FROM after e WHERE e.part_id = f.part_id AND e.k < f.k AND e.stored_id IS NOT NULL AND e.given_sequence IS NOT NULL)
  ) AS m
  FROM after f WHERE f.k = f.first_auto
),
-- each new operation's sequence (bigint); one past int4 is refused alone, as a create is (409), and the records after
-- it on its part number as if it took it (as they would after its refusal: the highest sequence is the same)
auto AS (
  SELECT after.k, after.a + greatest(top.m, after.given_before) AS sequence,
    after.a + greatest(top.m, after.given_before) > 2147483647 AS exhausted
  FROM ok JOIN after ON after.k = ok.k AND ok.auto LEFT JOIN top ON top.part_id = after.part_id
),
o AS (
  ${
    upsertByExternalKey(operations, "operations", {
      from: "ok x LEFT JOIN auto ON auto.k = x.k",
      row: "x.r",
      overrides: { id: "x.id", part_id: "x.part_id", cell_id: "x.cell_id", sequence: "coalesce((x.r).sequence, auto.sequence)" },
      where: "WHERE x.ok AND NOT coalesce(auto.exhausted, false)"
    }, { update: [...new Set([...given(plans.map((p) => p.operation), operations), "cell_id"])], sameParent: "part_id" })
  }
  RETURNING t.id, (xmax = 0) AS inserted
)
SELECT CASE WHEN ok.ok AND NOT coalesce(auto.exhausted, false) THEN ok.id END AS id,
  CASE WHEN o.id IS NULL THEN 'unchanged' WHEN o.inserted THEN 'created' ELSE 'updated' END AS action,
  CASE WHEN ok.ok AND o.id IS NULL AND ok.stored_id IS NULL AND NOT coalesce(auto.exhausted, false) THEN mes_conflict('sync overtaken') END AS overtaken,
  ok.part_id IS NULL AS no_owner, ok.cell_id IS NULL AS no_cell, coalesce(ok.stored_part <> ok.part_id, false) AS elsewhere,
  coalesce(auto.exhausted, false) AS exhausted
FROM ok LEFT JOIN o ON o.id = ok.id LEFT JOIN auto ON auto.k = ok.k
ORDER BY ok.k`
}

/**
 * PUT <cells|resources>/sync (spec 4.10), one record or a bulk of them, as one statement. $1: the records (plan id,
 * tenant), a jsonb array, $2: the tenant. An existing record keeps its id and takes the synced values (a field its
 * record leaves out keeps its value), or stays as it is when it holds them already. One row per record, in order.
 */
export const syncRecordsStatement = (table: "cells" | "resources", rows: ReadonlyArray<object>, catalog: Catalog["Service"]) => {
  const columns = catalog.columns(table)
  return `
WITH ${planRecords},
x AS MATERIALIZED (
  SELECT rec.k, y.r, coalesce(s.id, (y.r).id) AS id, s.id AS stored_id
  FROM rec
  ${stored(table, "t", "rec.v")}
  CROSS JOIN LATERAL (SELECT ${synced(table, "s.row", "rec.v")} OFFSET 0) y (r)
),
up AS (
  ${upsertByExternalKey(columns, table, { from: "x", row: "x.r", overrides: { id: "x.id" } }, { update: given(rows, columns) })}
  RETURNING t.id, (xmax = 0) AS inserted
)
SELECT x.id, CASE WHEN up.id IS NULL THEN 'unchanged' WHEN up.inserted THEN 'created' ELSE 'updated' END AS action,
  CASE WHEN up.id IS NULL AND x.stored_id IS NULL THEN mes_conflict('sync overtaken') END AS overtaken
FROM x LEFT JOIN up ON up.id = x.id
ORDER BY x.k`
}
