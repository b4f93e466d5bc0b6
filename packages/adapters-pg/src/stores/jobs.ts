// Jobs with their parts and operations (spec 4.1): the nested create as one statement, lists and
// reads as JSON built by PostgreSQL, guarded status moves.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import {
  type SyncAction, type Job, type JobDetail, type JobListQuery, type JobStatus, JobStore, type JobSyncResult, type JobWithParts, jsonText, type NestedJobPlan } from "@mes/domain"
import { Catalog, fieldOf, insertSelect } from "../catalog.ts"
import { insertEvents } from "../events.ts"
import { mapConstraints } from "../constraints.ts"
import { recordWrites } from "../moves.ts"
import { statementCache } from "../sql-text.ts"
import { contains, nestedPlanChecks, nestedPlanPasses, nestedPlanRefusals } from "./common.ts"
import { jobDetailJson, jobPartsJson, readOwned } from "../json.ts"
import { listPage } from "./crud.ts"
import { syncJobsKey, syncJobsStatement } from "./sync.ts"

export const partDefaults = { status: "'not_started'", is_bullet_card: "false" }
export const operationDefaults = { status: "'not_started'", completion_percentage: "0", actual_time: "0" }

const jobSort = {
  job_number: "j.job_number",
  customer: "j.customer",
  due_date: "j.due_date",
  created_at: "j.created_at",
  status: "j.status",
  priority: "j.priority"
}

/**
 * The nested create (ARCHITECTURE: the domain plans, the adapter executes once). $1 is the plan
 * (jsonb), $2 the tenant. Reference checks and cell names ride along; the job is inserted only when
 * they pass and its number is free, and parts, operations, the usage row and the events only with
 * it. The answer: the job as the API shows it (parts and operations in input order), or every
 * reason for a refusal.
 */
const createNestedSql = (catalog: Catalog["Service"], events: NestedJobPlan["events"]) => {
  const jobs = catalog.columns("jobs")
  const parts = catalog.columns("parts")
  return `
WITH ${nestedPlanChecks()},
ok AS (SELECT ${nestedPlanPasses} AS ok),
j AS (
  ${insertSelect(jobs, "jobs", { from: "ok, jsonb_populate_record(null::jobs, $1::jsonb->'job') r", row: "r", where: "WHERE ok.ok" })}
  ON CONFLICT (tenant_id, job_number) WHERE deleted_at IS NULL DO NOTHING
  RETURNING *
),
p AS (
  ${insertSelect(parts, "parts", { from: "j, jsonb_array_elements($1::jsonb->'parts') e (v), jsonb_populate_record(null::parts, e.v) r", row: "r" })}
  RETURNING *
),
o AS (
  ${
    insertSelect(catalog.columns("operations"), "operations", {
      from: "j, jsonb_array_elements($1::jsonb->'operations') e (v) CROSS JOIN LATERAL jsonb_populate_record(null::operations, e.v) r LEFT JOIN names nm ON nm.name = e.v->>'cell_name'",
      row: "r",
      overrides: { cell_id: "coalesce(r.cell_id, nm.id)" }
    })
  }
  RETURNING id, part_id, operations_json(operations) AS json
),
part_order AS (SELECT (e.v->>'id')::uuid AS id, e.n FROM jsonb_array_elements($1::jsonb->'parts') WITH ORDINALITY e (v, n)),
operation_order AS (SELECT (e.v->>'id')::uuid AS id, e.n FROM jsonb_array_elements($1::jsonb->'operations') WITH ORDINALITY e (v, n)),
oj AS (SELECT o.part_id, string_agg(o.json, ',' ORDER BY oo.n) AS operations FROM o JOIN operation_order oo ON oo.id = o.id GROUP BY o.part_id),
pd AS (
  SELECT p.*, po.n, left(p.doc, -1) || ',"operations":[' || coalesce(oj.operations, '') || ']}' AS detail
  FROM p JOIN part_order po ON po.id = p.id LEFT JOIN oj ON oj.part_id = p.id
),
d AS (SELECT left(j.doc, -1) || ',"parts":[' || coalesce((SELECT string_agg(pd.detail, ',' ORDER BY pd.n) FROM pd), '') || ']}' AS json FROM j),
u AS (INSERT INTO part_usage (tenant_id, parts) SELECT $2, count(*) FROM p HAVING count(*) > 0),
ev AS (
  ${
    insertEvents("$2", [
      { event: events.job, from: "j, d", payload: { field: fieldOf(jobs, "j"), record: "d.json" } },
      { event: events.part, from: "pd", orderBy: "pd.n", payload: { field: fieldOf(parts, "pd"), record: "pd.doc" } }
    ])
  }
)
SELECT (SELECT json FROM d) AS json,
  ${nestedPlanRefusals},
  EXISTS (SELECT 1 FROM jobs x WHERE x.tenant_id = $2 AND x.job_number = $1::jsonb->'job'->>'job_number' AND x.deleted_at IS NULL) AS taken`
}

export const JobStorePg = Layer.effect(JobStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const catalog = yield* Catalog
  const die = <A, R>(e: Effect.Effect<A, SqlError, R>) => Effect.orDie(e)
  const statements = statementCache()
  const writes = recordWrites<Job>(sql, { table: "jobs", columns: catalog.columns("jobs"), refTables: ["cells"], softDelete: true })

  return JobStore.of({
    createNested: (plan) =>
      Effect.gen(function*() {
        const statement = statements(`create ${plan.events.job.type} ${plan.events.part.type}`, () => createNestedSql(catalog, plan.events))
        const [row] = yield* sql.unsafe<{ json: string | null; missing_refs: Array<number>; missing_cells: Array<string>; taken: boolean }>(
          statement,
          [JSON.stringify({ job: plan.job, parts: plan.parts, operations: plan.operations, refs: plan.refs, cell_names: plan.cellNames }), plan.job.tenant_id]
        )
        return row!.json !== null
          ? { _tag: "Created" as const, job: jsonText<JobDetail>(row!.json) }
          : { _tag: "Refused" as const, taken: row!.taken, missingRefs: row!.missing_refs, missingCells: row!.missing_cells }
      }).pipe(mapConstraints),

    list: (tenantId, q: JobListQuery) => {
      const f = q.filters
      const where = [sql`j.tenant_id = ${tenantId}`, sql`j.deleted_at IS NULL`]
      if (f.id !== undefined) where.push(sql`j.id = ${f.id}`)
      if (f.status !== undefined) where.push(sql`j.status = ${f.status}`)
      if (f.customer !== undefined) where.push(sql`j.customer ILIKE ${contains(f.customer)}`)
      if (f.job_number !== undefined) where.push(sql`j.job_number ILIKE ${contains(f.job_number)}`)
      if (f.priority !== undefined) where.push(sql`j.priority = ${f.priority}`)
      if (f.current_cell_id !== undefined) where.push(sql`j.current_cell_id = ${f.current_cell_id}`)
      if (f.search !== undefined) {
        const s = contains(f.search)
        where.push(sql`(j.job_number ILIKE ${s} OR j.customer ILIKE ${s})`)
      }
      return listPage<JobWithParts>(sql, {
        table: "jobs",
        alias: "j",
        where,
        sort: jobSort,
        query: q,
        children: { key: "parts", elements: jobPartsJson }
      })
    },

    read: (tenantId, id) => readOwned<JobDetail>(sql, "jobs", tenantId, id, jobDetailJson),

    patch: (tenantId, id, changes, events, refs) => writes.patch(tenantId, id, changes, events, refs).pipe(mapConstraints),

    move: (tenantId, id, plan, refs) => writes.move(tenantId, id, plan, refs).pipe(Effect.map((m) => m.outcome), mapConstraints),

    status: (tenantId, id) =>
      sql<{ status: JobStatus }>`SELECT status FROM jobs WHERE tenant_id = ${tenantId} AND id = ${id} AND deleted_at IS NULL`.pipe(
        Effect.map((rows) => rows[0]?.status),
        die
      ),

    softDelete: (tenantId, id) => writes.remove(tenantId, id).pipe(die),

    sync: (plans) =>
      Effect.gen(function*() {
        const statement = statements(`sync ${syncJobsKey(plans, catalog)}`, () => syncJobsStatement(plans, catalog))
        const rows = yield* sql.unsafe<{
          id: string | null
          action: SyncAction | null
          missing_refs: Array<number>
          missing_cells: Array<string>
          elsewhere: Array<number>
          moved: Array<number>
        }>(statement, [JSON.stringify(plans.map(({ cellNames, dryRun, ...plan }) => ({ ...plan, cell_names: cellNames, dry_run: dryRun }))), plans[0]!.job.tenant_id])
        return rows.map((r): JobSyncResult =>
          r.id !== null
            ? { _tag: "Synced", id: r.id, action: r.action! }
            : { _tag: "Refused", missingRefs: r.missing_refs, missingCells: r.missing_cells, partsElsewhere: r.elsewhere, operationsElsewhere: r.moved }
        )
      }).pipe(mapConstraints),

    byExternalId: (tenantId, source, externalId) =>
      sql<Job>`SELECT * FROM jobs WHERE tenant_id = ${tenantId} AND external_source = ${source}
        AND external_id = ${externalId} AND deleted_at IS NULL`.pipe(Effect.map((rows) => rows[0]), die),

    numberTaken: (tenantId, jobNumber) =>
      sql`SELECT 1 FROM jobs WHERE tenant_id = ${tenantId} AND job_number = ${jobNumber} AND deleted_at IS NULL`.pipe(
        Effect.map((rows) => rows.length > 0),
        die
      )
  })
}))
