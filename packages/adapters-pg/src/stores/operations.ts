// Operations (spec 4.3): list filters through part, job and cell; sequence auto-numbering under a
// lock on the part; guarded status moves; sync upserts.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import {
  type SyncAction,
  CLOSE_TIME_ENTRIES,
  jsonText,
  MissingReferences,
  type MovePlan,
  type Operation,
  type OperationMoved,
  type OperationListQuery,
  type OperationState,
  OperationStore,
  UnknownCellName
} from "@mes/domain"
import { Catalog } from "../catalog.ts"
import { mapConstraints } from "../constraints.ts"
import { contains } from "./common.ts"
import { listPage } from "./crud.ts"
import { operationDefaults } from "./jobs.ts"
import { insertDefaults, type MoveAdditions, recordWrites } from "../moves.ts"
import { liveCondition, readOwned, withQuantities } from "../json.ts"
import { rollUp } from "../rollup.ts"
import { givenKey, syncOperationsStatement } from "./sync.ts"
import { statementCache, textArray } from "../sql-text.ts"

const operationSort = {
  sequence: "o.sequence",
  created_at: "o.created_at",
  estimated_time: "o.estimated_time_minutes",
  actual_time: "o.actual_time",
  status: "o.status",
  completion_percentage: "o.completion_percentage"
}

// operations of soft-deleted jobs are gone from queries with their job (DECISIONS: soft-deleted jobs)
const LIVE = liveCondition.operations("o")

/**
 * What an operation move adds to the guarded UPDATE (spec 3.2, 2.8), all in the same statement:
 * the time entry a start or resume opens for $5 (the operator), the running entries a pause or
 * complete ends (actual_time, set by the UPDATE itself, already counts them to now), the part's
 * status rolled up from its operations (spec 2.2) with part.started / part.completed, and the
 * answer of the lifecycle endpoints (the operation with its part and job, spec 4.5).
 */
const operationMove = (catalog: Catalog["Service"]): MoveAdditions => (plan: MovePlan) => {
  const statusesWith = (effect: string) => plan.cases.filter((c) => c.effects.includes(effect)).flatMap((c) => c.from)
  const opening = statusesWith("open_time_entry")
  const closing = statusesWith(CLOSE_TIME_ENTRIES)
  const ctes: Array<readonly [string, string]> = []
  if (opening.length > 0) {
    ctes.push(["te_open", `
      INSERT INTO time_entries (tenant_id, id, operation_id, user_id, start_time)
      SELECT $1, mes_uuid7(), m.id, $5::uuid, now() FROM m WHERE $5::uuid IS NOT NULL AND m.previous = ANY(${textArray(opening)})
      ON CONFLICT (tenant_id, operation_id, user_id) WHERE end_time IS NULL AND user_id IS NOT NULL DO NOTHING`])
  }
  if (closing.length > 0) {
    // after m holds the operation's lock, so an entry a concurrent start committed meanwhile ends too (0026)
    ctes.push(["te_close", `
      SELECT mes_end_time_entries($1, ARRAY(SELECT m.id FROM m WHERE m.previous = ANY(${textArray(closing)}))) AS id`])
  }
  const rolled = rollUp(catalog, "m", "SELECT m.part_id FROM m", { completes: plan.to === "completed" })
  ctes.push(...rolled.ctes)
  const ended = closing.length > 0 ? "EXISTS (SELECT 1 FROM te_close)" : "false"
  return {
    ctes,
    extra: [["time_entry_ended", `to_json(${ended})::text`]],
    moreEvents: rolled.events,
    select: [
      ["ended", ended],
      ["detail", `(SELECT left(m.json, -1) || ',"part":{"id":' || to_json(p.id)::text || ',"part_number":' || to_json(p.part_number)::text
        || ',"job":{"id":' || to_json(j.id)::text || ',"job_number":' || to_json(j.job_number)::text
        || '}},"estimated_time":' || coalesce(to_json(m.estimated_time_minutes)::text, 'null') || '}'
        FROM parts p JOIN jobs j ON j.tenant_id = p.tenant_id AND j.id = p.job_id WHERE p.tenant_id = $1 AND p.id = m.part_id)`]
    ]
  }
}

export const OperationStorePg = Layer.effect(OperationStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const catalog = yield* Catalog
  const syncStatements = statementCache()
  const writes = recordWrites<Operation>(sql, {
    table: "operations",
    columns: catalog.columns("operations"),
    refTables: ["cells", "profiles"],
    additions: operationMove(catalog)
  })
  // a create: the part, cell and operator checked, a cell named ($4, null when none) resolved in the tenant, the
  // defaults, and the sequence after the part's last when none is given (0029: under the part's row lock, so that
  // concurrent creates on one part number on)
  const creates = recordWrites<Operation>(sql, {
    table: "operations",
    columns: catalog.columns("operations"),
    refTables: ["parts", "cells", "profiles"],
    createChecks: {
      ctes: [["named", "SELECT c.id FROM cells c WHERE c.tenant_id = $3::uuid AND c.name = $4::text"]],
      insertWhen: "($4::text IS NULL OR EXISTS (SELECT 1 FROM named))"
    },
    insertValues: {
      ...insertDefaults(operationDefaults),
      cell_id: "coalesce(r.cell_id, (SELECT named.id FROM named))",
      sequence: "coalesce(r.sequence, mes_next_operation_sequence(r.tenant_id, r.part_id))"
    },
    select: [["unknown_cell", "$4::text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM named)"]]
  })
  return OperationStore.of({
    insert: (op, refs, cellName) =>
      creates.createRow(op, { refs, events: [] }, [cellName ?? null]).pipe(
        Effect.flatMap((r): Effect.Effect<Operation, MissingReferences | UnknownCellName> =>
          r.unknown_cell === true
            ? Effect.fail(new UnknownCellName({ missingRefs: r.missing_refs }))
            : r.json === null
            ? Effect.fail(new MissingReferences({ indexes: r.missing_refs }))
            : Effect.succeed(JSON.parse(r.json) as Operation)
        ),
        mapConstraints
      ),
    list: (tenantId, q: OperationListQuery) =>
      Effect.gen(function*() {
        const f = q.filters
        const where = [sql`o.tenant_id = ${tenantId}`, sql.literal(LIVE)]
        if (f.id !== undefined) where.push(sql`o.id = ${f.id}`)
        if (f.part_id !== undefined) where.push(sql`o.part_id = ${f.part_id}`)
        if (f.job_id !== undefined) {
          where.push(sql`o.part_id IN (SELECT id FROM parts WHERE tenant_id = ${tenantId} AND job_id = ${f.job_id})`)
        }
        if (f.cell_id !== undefined) where.push(sql`o.cell_id = ${f.cell_id}`)
        if (f.cell_name !== undefined) {
          where.push(sql`o.cell_id IN (SELECT id FROM cells WHERE tenant_id = ${tenantId} AND name ILIKE ${contains(f.cell_name)})`)
        }
        if (f.status !== undefined) where.push(sql`o.status = ${f.status}`)
        if (f.assigned_operator_id !== undefined) where.push(sql`o.assigned_operator_id = ${f.assigned_operator_id}`)
        if (f.operation_name !== undefined) where.push(sql`o.operation_name ILIKE ${contains(f.operation_name)}`)
        if (f.search !== undefined) {
          const s = contains(f.search)
          where.push(sql`(o.operation_name ILIKE ${s} OR o.notes ILIKE ${s})`)
        }
        return yield* listPage<Operation>(sql, { table: "operations", alias: "o", where, sort: operationSort, query: q })
      }).pipe(Effect.orDie),
    get: (tenantId, id) =>
      sql<Operation>`SELECT o.* FROM operations o WHERE o.tenant_id = ${tenantId} AND o.id = ${id} AND ${sql.literal(LIVE)}`.pipe(
        Effect.map((rows) => rows[0]),
        Effect.orDie
      ),
    read: (tenantId, id) => readOwned<Operation>(sql, "operations", tenantId, id, withQuantities("operations")),
    patch: (tenantId, id, changes, refs) => writes.patch(tenantId, id, changes, [], refs).pipe(mapConstraints),
    move: (tenantId, id, plan, o) =>
      writes.move(tenantId, id, plan, o.refs, plan.cases.some((c) => c.effects.includes("open_time_entry")) ? [o.userId ?? null] : []).pipe(
        Effect.map(({ outcome, row }) => ({
          ...outcome,
          detail: typeof row.detail === "string" ? (jsonText(row.detail) as OperationMoved["detail"]) : undefined,
          timeEntryEnded: row.ended === true
        })),
        mapConstraints
      ),
    status: (tenantId, id) =>
      sql<{ status: OperationState }>`SELECT o.status FROM operations o WHERE o.tenant_id = ${tenantId} AND o.id = ${id} AND ${sql.literal(LIVE)}`.pipe(
        Effect.map((rows) => rows[0]?.status),
        Effect.orDie
      ),
    remove: (tenantId, id) => writes.remove(tenantId, id).pipe(mapConstraints),
    sync: (plans) =>
      Effect.gen(function*() {
        const rows = plans.map((p) => p.operation)
        const statement = syncStatements(givenKey(rows, catalog.columns("operations")), () => syncOperationsStatement(plans, catalog))
        const outcomes = yield* sql.unsafe<
          { id: string | null; action: SyncAction | null; no_owner: boolean; no_cell: boolean; elsewhere: boolean; exhausted: boolean }
        >(
          statement,
          [JSON.stringify(plans.map((p) => ({ operation: p.operation, part_external_id: p.partExternalId, cell_name: p.cellName }))), plans[0]!.operation.tenant_id]
        )
        return outcomes.map((r) =>
          r.id !== null
            ? { _tag: "Synced" as const, id: r.id, action: r.action! }
            : { _tag: "Refused" as const, noPart: r.no_owner, noCell: r.no_cell, elsewhere: r.elsewhere, sequenceExhausted: r.exhausted }
        )
      }).pipe(mapConstraints)
  })
}))
