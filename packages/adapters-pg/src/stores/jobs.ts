// Jobs with their parts and operations (spec 4.1): the nested create as one statement, lists and
// reads as JSON built by PostgreSQL, guarded status moves.
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import {
  type SyncAction, type Job, type JobDetail, type JobListQuery, type JobStatus, JobStore, type JobSyncResult, type JobWithParts, jsonChunks, type NestedJobPlan, type NestedJobResult } from "@mes/domain"
import { Catalog, fieldOf, insertSelect } from "../catalog.ts"
import { insertEvents } from "../events.ts"
import { createdJobStamps } from "../created-stamps.ts"
import { mapConstraints, mapJobSyncConstraints } from "../constraints.ts"
import { recordWrites } from "../moves.ts"
import { arrayParam, statementCache } from "../sql-text.ts"
import { contains, materialsDiffer, nestedPlanPasses, nestedPlanRecords, nestedPlanRefusals, partMaterials, planElements } from "./common.ts"
import { coalescing as coalesce, CoalescingConfig } from "../coalesce.ts"
import { onOwnConnection } from "../connection.ts"
import { jobDetailJson, jobPartsJson, readOwned } from "../json.ts"
import { listPage } from "./crud.ts"
import { giveBack, type PageChunk, pageColumn } from "../page-bytes.ts"
import { syncJobsKey, syncJobsStatement } from "./sync.ts"

export const partDefaults = { status: "'not_started'", is_bullet_card: "false" }
export const operationDefaults = { status: "'not_started'", completion_percentage: "0", actual_time: "0" }

/**
 * True for a row version `x` (a 32-bit xmin this statement sees) that a sync compared against or wrote:
 * committed before the snapshot `snap` taken before the sync, or not committed yet (a version this transaction
 * sees uncommitted is its own, savepoints included); false when another transaction committed it after `snap`.
 * The 32-bit id is read as the 64-bit id nearest `ref.x8` (the current snapshot's xmax; ids in use are within
 * 2^31 of it). Frozen and bootstrap ids (< 3) are old. Inline: a function call per row cost 20 µs.
 */
const knownVersion = (x: string, snap: string) => {
  const full = `(ref.x8 + ((${x}::text::bigint - ref.x8) % 4294967296 + 4294967296 + 2147483648) % 4294967296 - 2147483648)::text::xid8`
  return `(${x}::text::bigint < 3 OR pg_visible_in_snapshot(${full}, ${snap}) OR pg_xact_status(${full}) = 'in progress')`
}

/**
 * The row versions a job's sync left (migration 0021), as md5 text over the job `j` (a row of jobs in the
 * query), its parts and their operations, and `scope` (the tenant's cells and materials, the same form). With a
 * snapshot `snap` (taken before the sync; needs the CTE `ref`), NULL unless every one of those rows is a version
 * the sync compared against or wrote.
 */
const syncStateToken = (snap: string | null) => `(
  SELECT CASE WHEN ${snap === null ? "true" : `bool_and(${knownVersion("v.x", snap)})`}
    THEN md5(string_agg(v.id::text || ':' || v.x::text, ',' ORDER BY v.id) || (SELECT token FROM scope)) END
  FROM (SELECT j.id, j.xmin AS x
    UNION ALL SELECT p.id, p.xmin FROM parts p WHERE p.tenant_id = j.tenant_id AND p.job_id = j.id
    UNION ALL SELECT o.id, o.xmin FROM parts p JOIN operations o ON o.tenant_id = p.tenant_id AND o.part_id = p.id
      WHERE p.tenant_id = j.tenant_id AND p.job_id = j.id) v${snap === null ? "" : ", ref"})`

const syncScope = (snap: string | null) => `${snap === null ? "" : "ref AS (SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS x8),\n"}scope AS (
  SELECT CASE WHEN ${snap === null ? "true" : `coalesce(bool_and(${knownVersion("v.x", snap)}), true)`}
    THEN md5(coalesce(string_agg(v.id::text || ':' || v.x::text, ',' ORDER BY v.id), '')) END AS token
  FROM (SELECT c.id, c.xmin AS x FROM cells c WHERE c.tenant_id = $1
    UNION ALL SELECT m.id, m.xmin FROM materials m WHERE m.tenant_id = $1) v${snap === null ? "" : ", ref"})`

/** $1 tenant, $2 keys [{external_source, external_id, hash}]: the unchanged ones, and the snapshot first taken. */
const SYNCED_UNCHANGED = `
WITH ${syncScope(null)},
k AS (SELECT * FROM jsonb_to_recordset($2::jsonb) AS k (external_source text, external_id text, hash text))
SELECT pg_current_snapshot()::text AS snapshot, NULL AS external_source, NULL AS external_id, NULL::uuid AS job_id
UNION ALL
SELECT NULL, s.external_source, s.external_id, s.job_id
FROM k
JOIN job_sync_state s ON s.tenant_id = $1 AND s.external_source = k.external_source AND s.external_id = k.external_id AND s.input_hash = k.hash
JOIN jobs j ON j.tenant_id = $1 AND j.id = s.job_id AND j.deleted_at IS NULL
WHERE s.state_token = ${syncStateToken(null)}`

/** $1 tenant, $2 the snapshot, $3 records [{external_source, external_id, hash, job_id}]. */
const REMEMBER_SYNCED = `
WITH ${syncScope("$2::pg_snapshot")},
k AS (SELECT * FROM jsonb_to_recordset($3::jsonb) AS k (external_source text, external_id text, hash text, job_id uuid)),
t AS (
  SELECT k.external_source, k.external_id, k.job_id, k.hash, ${syncStateToken("$2::pg_snapshot")} AS token
  FROM k JOIN jobs j ON j.tenant_id = $1 AND j.id = k.job_id AND j.deleted_at IS NULL
),
gone AS (
  DELETE FROM job_sync_state s USING k
  WHERE s.tenant_id = $1 AND s.external_source = k.external_source AND s.external_id = k.external_id
    AND NOT EXISTS (SELECT 1 FROM t WHERE t.external_source = k.external_source AND t.external_id = k.external_id AND t.token IS NOT NULL)
)
INSERT INTO job_sync_state AS s (tenant_id, external_source, external_id, job_id, input_hash, state_token)
SELECT $1, t.external_source, t.external_id, t.job_id, t.hash, t.token FROM t WHERE t.token IS NOT NULL
ON CONFLICT (tenant_id, external_source, external_id) DO UPDATE
  SET job_id = EXCLUDED.job_id, input_hash = EXCLUDED.input_hash, state_token = EXCLUDED.state_token
  WHERE (s.job_id, s.input_hash, s.state_token) IS DISTINCT FROM (EXCLUDED.job_id, EXCLUDED.input_hash, EXCLUDED.state_token)`

const jobSort = {
  job_number: "j.job_number",
  customer: "j.customer",
  due_date: "j.due_date",
  created_at: "j.created_at",
  status: "j.status",
  priority: "j.priority"
}

/**
 * The nested create (ARCHITECTURE: the domain plans, the adapter executes once), for one plan or for the
 * plans of concurrent requests coalesced into one statement (createBatched). $1 is the plans (a jsonb
 * array), $2 the tenant. Each plan's reference checks and cell names ride along; its job is inserted only
 * when they pass and its number is free, and its parts, operations and events only with it; the usage row
 * counts the parts of all. The answer, one row per plan in order: the job as the API shows it (parts and
 * operations in input order), or every reason for a refusal.
 *
 * With `materials` (some part names a material_id; the statement without it is the common one), the parts'
 * materials are settled too (`partMaterials`): one left out takes its material_id's name, one that differs refuses
 * its plan.
 */
const createNestedSql = (catalog: Catalog["Service"], events: NestedJobPlan["events"], materials: boolean) => {
  const jobs = catalog.columns("jobs")
  const parts = catalog.columns("parts")
  return `
WITH ${nestedPlanRecords},${materials ? `\n${partMaterials.differ()},` : ""}
ok AS MATERIALIZED (SELECT rec.k FROM rec WHERE ${nestedPlanPasses}${materials ? ` AND ${partMaterials.passes()}` : ""}),
j AS (
  ${insertSelect(jobs, "jobs", { from: "rec CROSS JOIN LATERAL jsonb_populate_record(null::jobs, rec.v->'job') r", row: "r", overrides: createdJobStamps("r.status"), where: "WHERE rec.k IN (SELECT k FROM ok) ORDER BY rec.k" })}
  ON CONFLICT (tenant_id, job_number) WHERE deleted_at IS NULL DO NOTHING
  RETURNING *
),
pe AS ${planElements("parts")},
p AS (
  ${
    insertSelect(parts, "parts", {
      from: `pe CROSS JOIN LATERAL jsonb_populate_record(null::parts, ${materials ? partMaterials.filled("pe.v") : "pe.v"}) r`,
      row: "r",
      where: "WHERE r.job_id IN (SELECT id FROM j)"
    })
  }
  RETURNING *
),
o AS (
  ${
    insertSelect(catalog.columns("operations"), "operations", {
      from: `${planElements("operations")} oe CROSS JOIN LATERAL jsonb_populate_record(null::operations, oe.v) r
      LEFT JOIN names nm ON nm.k = oe.k AND nm.name = oe.v->>'cell_name'`,
      row: "r",
      overrides: { cell_id: "coalesce(r.cell_id, nm.id)" },
      where: "WHERE r.part_id IN (SELECT id FROM p)"
    })
  }
  RETURNING id, part_id, operations_json(operations) AS json
),
oj AS (
  SELECT o.part_id, string_agg(o.json, ',' ORDER BY oe.n) AS operations
  FROM o JOIN ${planElements("operations")} oe ON (oe.v->>'id')::uuid = o.id GROUP BY o.part_id
),
pd AS (
  SELECT p.*, pe.k, pe.n, left(p.doc, -1) || ',"operations":[' || coalesce(oj.operations, '') || ']}' AS detail
  FROM p JOIN pe ON (pe.v->>'id')::uuid = p.id LEFT JOIN oj ON oj.part_id = p.id
),
d AS (
  SELECT j.*, rec.k, left(j.doc, -1) || ',"parts":[' || coalesce((SELECT string_agg(pd.detail, ',' ORDER BY pd.n) FROM pd WHERE pd.job_id = j.id), '') || ']}' AS json
  FROM j JOIN rec ON (rec.v->'job'->>'id')::uuid = j.id
),
u AS (INSERT INTO part_usage (tenant_id, parts) SELECT $2, count(*) FROM p HAVING count(*) > 0),
${
    insertEvents("$2", [
      { event: events.job, from: "d", orderBy: "ARRAY[d.k, 0]", payload: { field: fieldOf(jobs, "d"), record: "d.json" } },
      { event: events.part, from: "pd", orderBy: "ARRAY[pd.k, pd.n]", payload: { field: fieldOf(parts, "pd"), record: "pd.doc" } }
    ], { interleave: true })
}
SELECT ${pageColumn("d.json")} AS json, ${nestedPlanRefusals.columns}, t.taken IS NOT NULL AS taken${materials ? `, ${partMaterials.columns()}` : ""}
FROM rec LEFT JOIN d ON d.k = rec.k
  -- a lookup by the number's index for each refused plan (as EXISTS, PostgreSQL hashed all the tenant's jobs)
  LEFT JOIN LATERAL (
    SELECT true AS taken FROM jobs x WHERE d.k IS NULL AND x.tenant_id = $2 AND x.job_number = rec.v->'job'->>'job_number' AND x.deleted_at IS NULL LIMIT 1
  ) t ON true
  ${nestedPlanRefusals.joins}
ORDER BY rec.k`
}

/**
 * A job's soft delete ($1 tenant, $2 id, $3 the batch statuses that hold its operations), as one statement: the job
 * is locked (as its UPDATE would), then marked deleted unless one of its operations is in a batch of those statuses,
 * whose number is `held_by` (the first by number); with the owner of the id, for 404 / 403. The batches are looked
 * for after the lock (mes_job_held_by, migration 0039), which an add-operations or batch create appending one of the
 * job's operations holds a share of until it commits.
 */
const SOFT_DELETE = `
WITH ow AS (SELECT t.tenant_id FROM jobs t WHERE t.id = $2 AND t.deleted_at IS NULL),
lk AS (SELECT t.id FROM jobs t WHERE t.tenant_id = $1 AND t.id = $2 AND t.deleted_at IS NULL FOR NO KEY UPDATE OF t),
held AS (SELECT lk.id, mes_job_held_by($1, lk.id, $3::text[]) AS batch_number FROM lk),
d AS (
  UPDATE jobs t SET deleted_at = now(), updated_at = now()
  FROM held WHERE t.tenant_id = $1 AND t.id = held.id AND t.deleted_at IS NULL AND held.batch_number IS NULL
  RETURNING t.id
),
-- the deleted job's parts and operations give up their external ids, as the job does (its key is unique among live
-- jobs only): an ERP may push the same structure again, under a job of the same key
dp AS (
  UPDATE parts p SET external_id = NULL FROM d
  WHERE p.tenant_id = $1 AND p.job_id = d.id AND p.external_id IS NOT NULL
),
dop AS (
  UPDATE operations o SET external_id = NULL FROM parts p, d
  WHERE p.tenant_id = $1 AND p.job_id = d.id AND o.tenant_id = $1 AND o.part_id = p.id AND o.external_id IS NOT NULL
)
SELECT (SELECT tenant_id FROM ow) AS owner, EXISTS (SELECT 1 FROM d) AS removed, (SELECT batch_number FROM held) AS held_by`

export const JobStorePg = Layer.effect(JobStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const catalog = yield* Catalog
  const die = <A, R>(e: Effect.Effect<A, SqlError, R>) => Effect.orDie(e)
  const statements = statementCache()
  const writes = recordWrites<Job>(sql, { table: "jobs", columns: catalog.columns("jobs"), refTables: ["cells"] })

  // A coalesced statement runs on a connection of its own (as a transaction's statements do): on the shared,
  // pipelining pool the statements in flight (up to MES_DB_WRITE_SLOTS) went down one connection, and one server
  // process ran them one after the other while a core idled (37 % idle under the create load; 20–24 % with this).
  // Measured with compare.sh create, ROUNDS=3, one sitting: mes's req/s within the noise (337–346 before, 329–507
  // and 344–350 after), its peak RSS 241–249 → 177–189 MB (fewer requests wait).
  const ownConnection = onOwnConnection(sql)
  /** The nested creates of `plans` (of one tenant, with the same events) as one statement. */
  const createNested = (plans: ReadonlyArray<NestedJobPlan>) =>
    Effect.gen(function*() {
      const { events } = plans[0]!
      const materials = plans.some((p) => p.parts.some((part) => part.material_id != null))
      const statement = statements(`create ${events.job.type} ${events.part.type}${materials ? " materials" : ""}`, () => createNestedSql(catalog, events, materials))
      const param = JSON.stringify(plans.map((p) => ({ job: p.job, parts: p.parts, operations: p.operations, refs: p.refs, cell_names: p.cellNames })))
      // the job as UTF-8 bytes in a reused slab, as a list page's records (DECISIONS, "A list page's bytes"),
      // spliced into the response and given back once copied there
      const rows = yield* sql.unsafe<{
        json: PageChunk | null
        missing_refs: Array<number>
        missing_cells: Array<string>
        taken: boolean
        differ_parts?: Array<number>
        differ_names?: Array<string>
      }>(statement, [param, plans[0]!.job.tenant_id])
      return rows.map((row): NestedJobResult =>
        row.json !== null
          ? { _tag: "Created", job: jsonChunks<JobDetail>([row.json], () => giveBack([row.json])) }
          : {
            _tag: "Refused",
            taken: row.taken,
            missingRefs: row.missing_refs,
            missingCells: row.missing_cells,
            materialsDiffer: materialsDiffer(row)
          }
      )
    }).pipe(mapConstraints)
  const createOne = (plan: NestedJobPlan) => Effect.map(createNested([plan]), (results) => results[0]!)
  // concurrent creates of a tenant (with the same events), one statement; when that fails (a unique key two of them share, say), each
  // goes again alone, so every request gets its own answer and a failing one takes no other down with it
  const createBatched = coalesce(yield* CoalescingConfig, (_key: string, plans: ReadonlyArray<NestedJobPlan>) =>
    ownConnection(plans.length === 1
      ? Effect.map(Effect.exit(createOne(plans[0]!)), (exit) => [exit])
      : createNested(plans).pipe(
        Effect.map((results) => results.map((r) => Exit.succeed(r))),
        Effect.catchCause(() => Effect.forEach(plans, (plan) => Effect.exit(createOne(plan)), { concurrency: "unbounded" }))
      )))

  return JobStore.of({
    createNested: (plan) =>
      Effect.serviceOption(sql.transactionService).pipe(
        // inside a transaction (an Idempotency-Key's) the write must use its connection
        Effect.flatMap((tx) =>
          tx._tag === "Some" ? createOne(plan) : createBatched(`${plan.job.tenant_id} ${plan.events.job.type} ${plan.events.part.type}`, plan)
        )
      ),

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

    softDelete: (tenantId, id, holding) =>
      sql.unsafe<{ owner: string | null; removed: boolean; held_by: string | null }>(SOFT_DELETE, [tenantId, id, arrayParam(holding)]).pipe(
        Effect.map(([row]) => ({ owner: row!.owner ?? undefined, removed: row!.removed, heldBy: row!.held_by ?? undefined })),
        die
      ),

    sync: (plans) => {
      // the statement and its parameter are made when the effect is, not when it runs: a bulk makes the next
      // chunk's while the database writes the one before (sync/service.ts)
      const statement = statements(`sync ${syncJobsKey(plans, catalog)}`, () => syncJobsStatement(plans, catalog))
      const param = JSON.stringify(plans.map(({ cellNames, dryRun, ...plan }) => ({ ...plan, cell_names: cellNames, dry_run: dryRun })))
      return Effect.gen(function*() {
        const rows = yield* sql.unsafe<{
          id: string | null
          action: SyncAction | null
          inserted: boolean
          missing_refs: Array<number>
          missing_cells: Array<string>
          elsewhere: Array<number>
          moved: Array<number>
          differ_parts?: Array<number>
          differ_names?: Array<string>
        }>(statement, [param, plans[0]!.job.tenant_id])
        return rows.map((r): JobSyncResult =>
          r.id !== null
            ? { _tag: "Synced", id: r.id, action: r.action!, inserted: r.inserted }
            : { _tag: "Refused", missingRefs: r.missing_refs, missingCells: r.missing_cells, partsElsewhere: r.elsewhere, operationsElsewhere: r.moved, materialsDiffer: materialsDiffer(r) }
        )
      }).pipe(mapJobSyncConstraints)
    },

    syncedUnchanged: (tenantId, keys) =>
      sql.unsafe<{ snapshot: string | null; external_source: string | null; external_id: string | null; job_id: string | null }>(
        SYNCED_UNCHANGED,
        [tenantId, JSON.stringify(keys)]
      ).pipe(
        Effect.map((rows) => ({
          snapshot: rows.find((r) => r.snapshot !== null)!.snapshot!,
          unchanged: new Map(rows.flatMap((r) => (r.job_id === null ? [] : [[`${r.external_source}\u0000${r.external_id}`, r.job_id] as const])))
        })),
        die
      ),

    rememberSynced: (tenantId, snapshot, records) =>
      sql.unsafe(REMEMBER_SYNCED, [tenantId, snapshot, JSON.stringify(records)]).pipe(Effect.asVoid, die),

    numberTaken: (tenantId, jobNumber) =>
      sql`SELECT 1 FROM jobs WHERE tenant_id = ${tenantId} AND job_number = ${jobNumber} AND deleted_at IS NULL`.pipe(
        Effect.map((rows) => rows.length > 0),
        die
      )
  })
}))
