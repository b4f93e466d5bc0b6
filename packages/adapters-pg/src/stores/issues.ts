// Issues and NCRs (spec 4.7): job and part filters through the operation, stamps in the same
// statement as the write, and the per-tenant, per-year NCR counter.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { type Issue, type IssueListQuery, type IssueRow, type IssueStamps, IssueStore, type Stamp } from "@mes/domain"
import { mapConstraints } from "../constraints.ts"
import { Catalog } from "../catalog.ts"
import { contains } from "./common.ts"
import { listPage } from "./crud.ts"
import { insertDefaults, recordWrites } from "../moves.ts"
import { liveCondition, readOwned } from "../json.ts"

// severity and status sort by rank (low → critical, open → closed), not alphabetically
const issueSort = {
  created_at: "i.created_at",
  severity: "CASE i.severity WHEN 'low' THEN 1 WHEN 'medium' THEN 2 WHEN 'high' THEN 3 WHEN 'critical' THEN 4 END",
  status: "CASE i.status WHEN 'open' THEN 1 WHEN 'in_progress' THEN 2 WHEN 'resolved' THEN 3 WHEN 'closed' THEN 4 END",
  resolved_at: "i.resolved_at"
}

const issueDefaults = { status: "'open'", issue_type: "'general'" }

const THROUGH = `FROM operations o
  JOIN parts p ON p.tenant_id = o.tenant_id AND p.id = o.part_id
  JOIN jobs j ON j.tenant_id = p.tenant_id AND j.id = p.job_id`

// issues of soft-deleted jobs are gone from queries with their job (DECISIONS: soft-deleted jobs)
const live = liveCondition.issues

export const IssueStorePg = Layer.effect(IssueStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const columns = (yield* Catalog).columns("issues")
  const writes = recordWrites<Issue>(sql, {
    table: "issues",
    columns,
    refTables: ["profiles"],
    // the answer's `current` is the issue's type: the domain names the NCR rule a refusal broke
    current: "issue_type",
    // an NCR keeps its severity (spec 4.7)
    guard: "NOT (t.issue_type = 'ncr' AND coalesce($3::jsonb -> 'severity' = 'null'::jsonb, false))",
    // ncr.verified when an NCR's verifier changes (to someone: the domain plans it only then)
    previous: { column: "verified_by_id", eventsWhen: "m.issue_type = 'ncr' AND m.previous IS DISTINCT FROM m.verified_by_id::text" }
  })
  // a create: the operation and profiles checked, the defaults, an NCR's next number (0030) and the events
  const creates = recordWrites<Issue>(sql, {
    table: "issues",
    columns,
    refTables: ["operations", "profiles"],
    insertValues: {
      ...insertDefaults(issueDefaults),
      ncr_number: "coalesce(r.ncr_number, CASE WHEN r.issue_type = 'ncr' THEN mes_next_ncr_number(r.tenant_id) END)"
    }
  })
  return IssueStore.of({
    insert: (issue, stamps: IssueStamps, plan) => {
      // a stamp on create is the transaction's time, as created_at: PostgreSQL reads the timestamp 'now' as that
      const row: Record<string, unknown> = { ...issue }
      for (const [col, stamp] of Object.entries(stamps)) row[col] = stamp === "clear" ? null : "now"
      return creates.create(row, plan).pipe(mapConstraints)
    },
    list: (tenantId, q: IssueListQuery) =>
      Effect.gen(function*() {
        const f = q.filters
        // one semi-join through operation, part and job: liveness and the job_id / part_id filters
        const through = [sql`o.tenant_id = i.tenant_id`, sql`o.id = i.operation_id`, sql`j.deleted_at IS NULL`]
        if (f.part_id !== undefined) through.push(sql`o.part_id = ${f.part_id}`)
        if (f.job_id !== undefined) through.push(sql`p.job_id = ${f.job_id}`)
        const where = [sql`i.tenant_id = ${tenantId}`, sql`EXISTS (SELECT 1 ${sql.literal(THROUGH)} WHERE ${sql.and(through)})`]
        if (f.id !== undefined) where.push(sql`i.id = ${f.id}`)
        if (f.severity !== undefined) where.push(sql`i.severity = ${f.severity}`)
        if (f.status !== undefined) where.push(sql`i.status = ${f.status}`)
        if (f.issue_type !== undefined) where.push(sql`i.issue_type = ${f.issue_type}`)
        if (f.reported_by !== undefined) where.push(sql`i.reported_by_id = ${f.reported_by}`)
        if (f.assigned_to !== undefined) where.push(sql`i.assigned_to_id = ${f.assigned_to}`)
        if (f.operation_id !== undefined) where.push(sql`i.operation_id = ${f.operation_id}`)
        if (f.search !== undefined) {
          const s = contains(f.search)
          where.push(sql`(i.title ILIKE ${s} OR i.description ILIKE ${s})`)
        }
        return yield* listPage<Issue>(sql, { table: "issues", alias: "i", where, sort: issueSort, query: q })
      }).pipe(Effect.orDie),
    read: (tenantId, id) => readOwned<Issue>(sql, "issues", tenantId, id),
    get: (tenantId, id) =>
      sql<IssueRow>`SELECT i.* FROM issues i WHERE i.tenant_id = ${tenantId} AND i.id = ${id} AND ${sql.literal(live("i"))}`.pipe(
        Effect.map((rows) => rows[0]),
        Effect.orDie
      ),
    patch: (tenantId, id, changes, plan) =>
      writes.patch(tenantId, id, changes, plan.events, plan.refs, plan.stamps as Readonly<Record<string, Stamp>>).pipe(mapConstraints),
    ncrNumberTaken: (tenantId, ncrNumber, exceptId) => {
      const where = [sql`tenant_id = ${tenantId}`, sql`ncr_number = ${ncrNumber}`]
      if (exceptId !== undefined) where.push(sql`id <> ${exceptId}`)
      return sql`SELECT 1 FROM issues WHERE ${sql.and(where)} LIMIT 1`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)
    }
  })
}))
