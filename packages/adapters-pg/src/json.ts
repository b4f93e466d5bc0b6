// Records as JSON text built by PostgreSQL (migration 0010): the expression for one row, one read
// with its owner (404 vs 403), and rows of JSON joined into an array without parsing any of them.
import * as Effect from "effect/Effect"
import type { SqlClient } from "effect/sql/SqlClient"
import { jsonText, type Owned, type ReferenceTable } from "@mes/domain"

/**
 * Tables whose JSON is stored in `doc` (lists carry them by the hundred): written by `insertSelect`, or by their
 * triggers for other inserts and every update (migrations 0010, 0025). The catalog finds the same tables by their
 * `doc` column (`TableColumns.record`).
 */
const materialized = new Set(["jobs", "parts"])

/** The API's JSON of the row `alias` of `table`, as text. */
export const recordJson = (table: string, alias: string) =>
  materialized.has(table) ? `${alias}.doc` : `${table}_json(${alias})`

/** The stored JSON of a job's parts, joined in part order (the list's `parts`). */
export const jobPartsJson = (alias: string) =>
  `(SELECT string_agg(p.doc, ',' ORDER BY p.created_at, p.part_number)
     FROM parts p WHERE p.tenant_id = ${alias}.tenant_id AND p.job_id = ${alias}.id)`

/** A job with its parts and their operations (read-one and create form). */
export const jobDetailJson = (alias: string) =>
  `left(${alias}.doc, -1) || ',"parts":[' || coalesce((SELECT string_agg(left(p.doc, -1) || ',"operations":[' || coalesce(
       (SELECT string_agg(operations_json(o), ',' ORDER BY o.sequence) FROM operations o WHERE o.tenant_id = p.tenant_id AND o.part_id = p.id),
       '') || ']}', ',' ORDER BY p.created_at, p.part_number)
     FROM parts p WHERE p.tenant_id = ${alias}.tenant_id AND p.job_id = ${alias}.id), '') || ']}'`

/** A record's JSON with one more key, `quantities`: the running totals of its recorded quantities (migration 0019). */
export const withQuantities = (table: "operations" | "parts") => (alias: string) =>
  `left(${recordJson(table, alias)}, -1) || ',"quantities":' || ${table === "operations" ? "mes_operation_totals" : "mes_part_totals"}(${alias}.tenant_id, ${alias}.id) || '}'`

// Rows of child tables count as absent when their job is soft-deleted (DECISIONS: soft-deleted jobs).
const throughOperation = (alias: string) =>
  `EXISTS (SELECT 1 FROM operations o JOIN parts p ON p.tenant_id = o.tenant_id AND p.id = o.part_id
     JOIN jobs j ON j.tenant_id = p.tenant_id AND j.id = p.job_id
     WHERE o.tenant_id = ${alias}.tenant_id AND o.id = ${alias}.operation_id AND j.deleted_at IS NULL)`

/** The condition under which a row of `table` exists for the API (true for most tables). */
export const liveCondition: Record<ReferenceTable, (alias: string) => string> = {
  jobs: (a) => `${a}.deleted_at IS NULL`,
  parts: (a) => `EXISTS (SELECT 1 FROM jobs j WHERE j.tenant_id = ${a}.tenant_id AND j.id = ${a}.job_id AND j.deleted_at IS NULL)`,
  operations: (a) =>
    `EXISTS (SELECT 1 FROM parts p JOIN jobs j ON j.tenant_id = p.tenant_id AND j.id = p.job_id
       WHERE p.tenant_id = ${a}.tenant_id AND p.id = ${a}.part_id AND j.deleted_at IS NULL)`,
  time_entries: throughOperation,
  issues: throughOperation,
  substeps: throughOperation,
  cells: () => "true",
  profiles: () => "true",
  batches: () => "true",
  webhooks: () => "true",
  webhook_logs: () => "true",
  api_keys: () => "true",
  resources: () => "true",
  materials: () => "true",
  scrap_reasons: () => "true",
  operation_quantities: throughOperation,
  // an assignment to a soft-deleted job (or its parts and operations) is gone with it
  assignments: (a) => `coalesce((mes_assignment_job(${a})).deleted_at IS NULL, true)`,
  substep_templates: () => "true",
  substep_template_items: () => "true",
  downtime: () => "true",
  // an image of a part of a soft-deleted job is gone with it
  part_images: (a) =>
    `EXISTS (SELECT 1 FROM parts p JOIN jobs j ON j.tenant_id = p.tenant_id AND j.id = p.job_id
       WHERE p.tenant_id = ${a}.tenant_id AND p.id = ${a}.part_id AND j.deleted_at IS NULL)`
}

const jobOfOperation = (operation: string, tenant: string) =>
  `(SELECT p.job_id FROM operations o JOIN parts p ON p.tenant_id = o.tenant_id AND p.id = o.part_id
     WHERE o.tenant_id = ${tenant} AND o.id = ${operation})`
const jobOfPart = (part: string, tenant: string) => `(SELECT p.job_id FROM parts p WHERE p.tenant_id = ${tenant} AND p.id = ${part})`

/** The job a row of `table` is under (SQL over the alias), for the tables whose rows are gone with a soft-deleted job. */
const jobOf: Partial<Record<ReferenceTable, (alias: string) => string>> = {
  parts: (a) => `${a}.job_id`,
  operations: (a) => jobOfPart(`${a}.part_id`, `${a}.tenant_id`),
  time_entries: (a) => jobOfOperation(`${a}.operation_id`, `${a}.tenant_id`),
  issues: (a) => jobOfOperation(`${a}.operation_id`, `${a}.tenant_id`),
  substeps: (a) => jobOfOperation(`${a}.operation_id`, `${a}.tenant_id`),
  operation_quantities: (a) => jobOfOperation(`${a}.operation_id`, `${a}.tenant_id`),
  part_images: (a) => jobOfPart(`${a}.part_id`, `${a}.tenant_id`),
  assignments: (a) => `(mes_assignment_job(${a})).id`
}

/**
 * liveCondition for a write: the row's job share-locked first and found live after the lock (mes_job_live, migration
 * 0040), so that the write and the job's delete (which locks the job first, FOR NO KEY UPDATE) meet at the job's row.
 * A write that waited for a delete that committed finds the job deleted and writes nothing. Tables whose rows are not
 * under a job, and jobs themselves (a job's own write locks its row as the delete does): liveCondition. `reference`:
 * the row is referenced, not written (a job too is share-locked then: a part created under it).
 */
export const liveAfterJobLock = (table: ReferenceTable, alias: string, o: { readonly reference?: boolean } = {}) => {
  const job = table === "jobs" && o.reference === true ? `${alias}.id` : jobOf[table]?.(alias)
  return job === undefined
    ? liveCondition[table](alias)
    // an assignment to a cell is under no job
    : `${table === "assignments" ? "coalesce(" : "("}mes_job_live(${alias}.tenant_id, ${job})${table === "assignments" ? ", true)" : ")"}`
}

/**
 * One record by id, in one query: its owning tenant (whoever it is) and, when that is `tenantId`,
 * its JSON. `json` overrides the record expression (e.g. a job with its parts and operations).
 */
export const readOwned = <A>(
  sql: SqlClient,
  table: ReferenceTable,
  tenantId: string,
  id: string,
  json: (alias: string) => string = (alias) => recordJson(table, alias)
): Effect.Effect<Owned<A>> =>
  sql.unsafe<{ owner: string; json: string | null }>(
    `SELECT t.tenant_id AS owner, CASE WHEN t.tenant_id = $1 THEN ${json("t")} END AS json
     FROM ${table} t WHERE t.id = $2 AND ${liveCondition[table]("t")}`,
    [tenantId, id]
  ).pipe(
    Effect.map(([row]) => ({
      owner: row?.owner,
      record: row?.json == null ? undefined : jsonText<A>(row.json)
    })),
    Effect.orDie
  )
