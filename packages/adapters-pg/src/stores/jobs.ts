// Jobs with their parts and operations (spec 4.1): set-based nested insert, lists with one
// extra query per child level, guarded status moves.
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { type Job, type JobDetail, type JobListQuery, type JobStatus, JobStore, type JobWithParts, type Operation, type Part, type Stamp } from "@mes/domain"
import { mapConstraints } from "../constraints.ts"
import { insertRows, moveRow, updateRow, upsertRows } from "../rows.ts"
import { contains, uuidArray } from "./common.ts"
import { listPage } from "./crud.ts"

export const jobDefaults = { status: "'not_started'", priority: "0" }
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

/** SET clauses for the timestamp effects of a lifecycle move (spec 3). */
export const stampSql = (stamps: Readonly<Record<string, Stamp>>, effects: ReadonlyArray<string> = []) => [
  ...Object.entries(stamps).map(([col, stamp]) =>
    stamp === "now" ? `"${col}" = now()` : stamp === "first" ? `"${col}" = coalesce(t."${col}", now())` : `"${col}" = NULL`
  ),
  ...effects.flatMap((e) =>
    e === "actual_duration"
      ? [`actual_duration = round((extract(epoch FROM now() - coalesce(t.started_at, now())) / 60)::numeric, 2)::float8`]
      : e === "complete_percentage"
      ? ["completion_percentage = 100"]
      : []
  )
]

export const JobStorePg = Layer.effect(JobStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const die = <A, R>(e: Effect.Effect<A, SqlError, R>) => Effect.orDie(e)

  const partsOf = (tenantId: string, jobIds: ReadonlyArray<string>) =>
    jobIds.length === 0
      ? Effect.succeed([] as ReadonlyArray<Part>)
      : sql.unsafe<Part>(
        `SELECT * FROM parts WHERE tenant_id = $1 AND job_id = ANY($2::uuid[]) ORDER BY created_at, part_number`,
        [tenantId, uuidArray(jobIds)]
      )

  return JobStore.of({
    insertNested: (job, parts, operations) =>
      Effect.gen(function*() {
        const [created] = yield* insertRows<Job>(sql, "jobs", [job], jobDefaults)
        const p = yield* insertRows<Part>(sql, "parts", parts, partDefaults)
        const o = yield* insertRows<Operation>(sql, "operations", operations, operationDefaults)
        return { job: created!, parts: p, operations: o }
      }).pipe(mapConstraints),

    list: (tenantId, q: JobListQuery) =>
      Effect.gen(function*() {
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
        const { rows, total } = yield* listPage<Job>(sql, { table: "jobs", alias: "j", where, sort: jobSort, query: q })
        const parts = yield* partsOf(tenantId, rows.map((r) => r.id))
        const byJob = new Map<string, Array<Part>>()
        for (const p of parts) {
          const list = byJob.get(p.job_id)
          if (list === undefined) byJob.set(p.job_id, [p])
          else list.push(p)
        }
        const jobs: Array<JobWithParts> = rows.map((job) => ({ ...job, parts: byJob.get(job.id) ?? [] }))
        return { rows: jobs, total }
      }).pipe(die),

    get: (tenantId, id) =>
      Effect.gen(function*() {
        const [job] = yield* sql<Job>`SELECT * FROM jobs WHERE tenant_id = ${tenantId} AND id = ${id} AND deleted_at IS NULL`
        if (job === undefined) return undefined
        const parts = yield* partsOf(tenantId, [id])
        const ops = yield* sql<Operation>`
          SELECT o.* FROM operations o JOIN parts p ON p.tenant_id = o.tenant_id AND p.id = o.part_id
          WHERE p.tenant_id = ${tenantId} AND p.job_id = ${id} ORDER BY o.sequence`
        return { ...job, parts: parts.map((p) => ({ ...p, operations: ops.filter((o) => o.part_id === p.id) })) } as JobDetail
      }).pipe(die),

    update: (tenantId, id, changes) =>
      updateRow<Job>(sql, "jobs", tenantId, id, changes, { where: "AND t.deleted_at IS NULL" }).pipe(mapConstraints),

    move: (tenantId, id, move, changes) =>
      moveRow<Job>(sql, "jobs", tenantId, id, {
        from: move.from,
        to: move.to,
        set: stampSql(move.stamps, move.effects),
        ...(changes === undefined ? {} : { changes }),
        where: "AND deleted_at IS NULL"
      }).pipe(mapConstraints),

    status: (tenantId, id) =>
      sql<{ status: JobStatus }>`SELECT status FROM jobs WHERE tenant_id = ${tenantId} AND id = ${id} AND deleted_at IS NULL`.pipe(
        Effect.map((rows) => rows[0]?.status),
        die
      ),

    softDelete: (tenantId, id) =>
      sql`UPDATE jobs SET deleted_at = now(), updated_at = now() WHERE tenant_id = ${tenantId} AND id = ${id} AND deleted_at IS NULL RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        die
      ),

    upsert: (job) =>
      upsertRows<Job>(sql, "jobs", [job], jobDefaults, { predicate: "deleted_at IS NULL AND external_id IS NOT NULL" }).pipe(
        Effect.map((rows) => rows[0]!),
        mapConstraints
      ),

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
