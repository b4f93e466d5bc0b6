// Batches (spec 2.6, 4.6): a batch with its ordered operations; guarded moves; time shares.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import {
  type Batch,
  batchStopCompletes,
  CLOSE_TIME_ENTRIES,
  COMPLETE_OPERATIONS,
  type BatchListQuery,
  type BatchStatus,
  BatchStore,
  eventPlan,
  type EventType,
  operationMachine,
  START_OPERATIONS,
  type TimeShare
} from "@mes/domain"
import { Catalog, fieldOf } from "../catalog.ts"
import { rollUp } from "../rollup.ts"
import { mapConstraints } from "../constraints.ts"
import { chainHolds } from "../rows.ts"
import { contains, uuidArray } from "./common.ts"
import { listPage } from "./crud.ts"
import { insertDefaults, type MoveAdditions, recordWrites, stampExprs, stampSql, writtenWith } from "../moves.ts"
import { readOwned } from "../json.ts"
import { arrayParam, ident, literal, textArray } from "../sql-text.ts"

const sort = { created_at: "b.created_at", batch_number: "b.batch_number", status: "b.status" }

/**
 * The batch's operations (`ol`), locked in id order, each with its status read by the lock and its place in the
 * batch. A start and a stop lock every one, also those they do not move (see each). The batch's operations are read
 * after its lock (migration 0033): an add-operations that held it may have appended one.
 */
const lockedOperations: readonly [string, string] = ["ol", `SELECT o.id, o.status, o.part_id, bo.sequence
  FROM m CROSS JOIN LATERAL mes_batch_operations($1, m.id) bo
  JOIN operations o ON o.tenant_id = $1 AND o.id = bo.operation_id ORDER BY o.id FOR NO KEY UPDATE OF o`]

/**
 * What a start or stop adds for the operations it wrote (`om`: each with its json, its status before as `previous`,
 * its place in the batch as `batch_order`, and whether the batch's move moved it as `moved`): the `event` of each one
 * moved, in batch order, with the batch's id; their ids as `operations_moved`; and the parts rolled up.
 */
const operationMoves = (catalog: Catalog["Service"], event: EventType, o: { readonly completes: boolean }) => {
  const rolled = rollUp(catalog, "om", "SELECT ol.part_id FROM ol", o)
  return {
    ctes: rolled.ctes,
    moreEvents: [
      {
        event: eventPlan(event),
        from: "m, om WHERE om.moved",
        orderBy: "om.batch_order",
        payload: {
          field: fieldOf(catalog.columns("operations"), "om"),
          record: "om.json",
          previous: "om.previous",
          extra: [["batch_id", "to_json(m.id)::text"] as const]
        }
      },
      ...rolled.events
    ],
    select: [["operations_moved", "ARRAY(SELECT om.id FROM om WHERE om.moved ORDER BY om.batch_order)"] as const]
  }
}

/** The RETURNING of `om`, the operations a start or stop wrote (see operationMoves), moved where `moved`. */
const returningMoved = (moved: string) =>
  `RETURNING t.*, operations_json(t) AS json, ol.status AS previous, ol.sequence AS batch_order, ${moved} AS moved`

/**
 * What a batch start adds to the guarded UPDATE of the batch (spec 3.3), in the same statement: its
 * operations that may start are moved as the operation lifecycle's start row says, the operator
 * ($5) gets a time entry on every operation of the batch that is not completed, and the parts roll up.
 */
const batchStart = (catalog: Catalog["Service"]): MoveAdditions => (plan) => {
  if (!plan.cases.some((c) => c.effects.includes(START_OPERATIONS))) return {}
  const start = operationMachine.find((t) => t.action === "start")!
  const moves = operationMoves(catalog, start.event!, { completes: start.to === "completed" })
  return {
    ctes: [
      // every operation of the batch is locked, also those that do not move: an entry opens on each that is not
      // completed, so a concurrent complete or pause of one either comes first (no entry then) or sees the entry
      lockedOperations,
      ["om", `UPDATE operations t SET status = ${literal(start.to)}, ${[...stampSql(start.stamps), "updated_at = now()"].join(", ")}
        FROM ol WHERE t.tenant_id = $1 AND t.id = ol.id AND ol.status = ANY(${textArray(start.from)})
        ${returningMoved("true")}`],
      ["te_open", `INSERT INTO time_entries (tenant_id, id, operation_id, user_id, batch_id, start_time)
        SELECT $1, mes_uuid7(), ol.id, $5::uuid, m.id, now()
        FROM m, ol LEFT JOIN om ON om.id = ol.id
        WHERE $5::uuid IS NOT NULL AND coalesce(om.status, ol.status) <> 'completed'
        ON CONFLICT (tenant_id, operation_id, user_id) WHERE end_time IS NULL AND user_id IS NOT NULL DO NOTHING
        RETURNING id`],
      ...moves.ctes
    ],
    // the operator named by this start (null when none), as before
    extra: [["operator_id", "to_json($5::uuid)::text"]],
    moreEvents: moves.moreEvents,
    select: [...moves.select, ["opened", "(SELECT count(*)::int FROM te_open)"]]
  }
}

/**
 * What a batch stop adds to the guarded UPDATE of the batch (spec 3.3), in the same statement: its operations locked,
 * the tracked time shared out and the entries ended by mes_stop_batch_time (migration 0032) after those locks, the
 * operations not yet completed completed as batchStopCompletes says and the actual_time of all of them summed again
 * where an entry ended (`om`), and the parts rolled up.
 */
const batchStop = (catalog: Catalog["Service"]): MoveAdditions => (plan) => {
  if (!plan.cases.some((c) => c.effects.includes(COMPLETE_OPERATIONS))) return {}
  const t = batchStopCompletes
  const moving = `ol.status = ANY(${textArray(t.from)})`
  const moves = operationMoves(catalog, t.event!, { completes: true })
  const sets = [
    `status = CASE WHEN ${moving} THEN ${literal(t.to)} ELSE t.status END`,
    // its running entries are ended by the function; actual_time is their sum below
    ...stampExprs(t.stamps, (t.effects ?? []).filter((e) => e !== CLOSE_TIME_ENTRIES)).map(([col, expr]) =>
      `${ident(col)} = CASE WHEN ${moving} THEN ${expr} ELSE t.${ident(col)} END`
    ),
    "actual_time = CASE WHEN st.recompute THEN mes_ended_minutes(t.tenant_id, t.id) ELSE t.actual_time END",
    "updated_at = now()"
  ]
  return {
    ctes: [
      lockedOperations,
      ["st", "SELECT s.shares, s.recompute FROM m, mes_stop_batch_time($1, m.id, ARRAY(SELECT ol.id FROM ol)) s"],
      ["om", `UPDATE operations t SET ${sets.join(", ")}
        FROM ol, st WHERE t.tenant_id = $1 AND t.id = ol.id AND (${moving} OR st.recompute)
        ${returningMoved(moving)}`],
      ...moves.ctes
    ],
    extra: [["time_distribution", "(SELECT st.shares FROM st)"]],
    moreEvents: moves.moreEvents,
    select: [...moves.select, ["shares", "(SELECT st.shares FROM st)"]]
  }
}

/**
 * The batch a create or add-operations statement wrote, with its operations as mes_append_batch_operations answered
 * them (migration 0031).
 */
const withOperations = (row: { readonly json: string | null; readonly [more: string]: unknown }) =>
  writtenWith<Batch>(row, { operation_ids: row.operation_ids })

export const BatchStorePg = Layer.effect(BatchStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const catalog = yield* Catalog
  // a PATCH naming a parent (with or without a status) changes nothing when the batch is in the parent's chain
  // (itself included): `cycle`, walked once before the write
  const parent = "($3::jsonb->>'parent_batch_id')::uuid"
  const writes = recordWrites<Batch>(sql, {
    table: "batches",
    columns: catalog.columns("batches"),
    refTables: ["profiles", "cells", "batches"],
    checks: [["bc", `SELECT ${parent} IS NOT NULL AND ${chainHolds("batches", "parent_batch_id", "$1", parent, "$2")} AS cycle`]],
    guard: "NOT (SELECT bc.cycle FROM bc)",
    select: [["cycle", "(SELECT bc.cycle FROM bc)"]],
    additions: (plan) => ({ ...batchStart(catalog)(plan), ...batchStop(catalog)(plan) })
  })

  /**
   * Those of the operations `ops` (a uuid[] parameter) in a batch that is not cancelled (`more`: a further condition on
   * `bo`): a cancelled batch never runs its operations, so a create or add-operations takes them from it (`freed`).
   */
  const heldBy = (tenant: string, ops: string, more = "") => `SELECT bo.operation_id FROM batch_operations bo
    JOIN batches hb ON hb.tenant_id = bo.tenant_id AND hb.id = bo.batch_id
    WHERE bo.tenant_id = ${tenant} AND bo.operation_id = ANY (${ops}::uuid[]) AND hb.status <> 'cancelled'${more}`
  /**
   * The operations `ops` that were in a cancelled batch, taken out of it once the batch `m` is written (cancelled is
   * final, and a batch seen cancelled was committed so); the append (`bo`) reads this first, so its insert follows.
   */
  const freed = (tenant: string, ops: string): readonly [string, string] => ["freed", `DELETE FROM batch_operations bo USING m, batches hb
    WHERE bo.tenant_id = ${tenant} AND bo.operation_id = ANY (${ops}::uuid[]) AND hb.tenant_id = bo.tenant_id
      AND hb.id = bo.batch_id AND hb.status = 'cancelled'
    RETURNING bo.operation_id`]
  /** The append of `ops` to the batch `m` (migration 0031), after `freed`. */
  const append = (tenant: string, ops: string): readonly [string, string] =>
    ["bo", `SELECT mes_append_batch_operations(${tenant}, m.id, ${liveJobs(tenant, ops)}) AS ids FROM m CROSS JOIN (SELECT count(*) FROM freed) f`]

  /**
   * The operation ids `ops` (a uuid[] parameter) once their jobs are share-locked and found live (migration 0039): a
   * job's delete locks the job, so the two meet there, and an append never puts a deleted job's operation in a batch.
   */
  const liveJobs = (tenant: string, ops: string) => `mes_operations_of_live_jobs(${tenant}, ${ops}::uuid[])`

  // add-operations ($5 the statuses it may add in, $6 dry run, $7 the operation ids): the batch touched only while in
  // one of them, its references the tenant's and none of the operations in a batch (another: `held`; this one already:
  // `held_here`); the operations appended by a function that reads the last sequence after the batch's lock (migration
  // 0031), answering all of them in order
  const inBatches = (batch?: "<>") => heldBy("$1", "$7", batch === undefined ? "" : ` AND bo.batch_id ${batch} $2`)
  // Those already in this batch, read by mes_batch_operations (0033), whose query has a snapshot of its own: it sees an
  // add of the same operation that held the batch's lock and committed meanwhile. In the guard, over the batch's row,
  // it is checked again on the row that wait found, and nothing is written (the append met batch_operations_pkey, an
  // unnamed 409); `held_here` is read only when nothing was written, after that wait, and names them.
  const inThisBatch = (batch: string) =>
    `SELECT h.operation_id FROM mes_batch_operations($1, ${batch}) h WHERE h.operation_id = ANY ($7::uuid[])`
  const adds = recordWrites<Batch>(sql, {
    table: "batches",
    columns: catalog.columns("batches"),
    refTables: ["operations"],
    // the append meets a job's delete itself (liveJobs): the references are checked with the statement's snapshot
    snapshotRefs: true,
    guard: `t.status = ANY ($5::text[]) AND NOT $6::boolean AND NOT EXISTS (${inBatches()}) AND NOT EXISTS (${inThisBatch("t.id")})`,
    ctes: [freed("$1", "$7"), append("$1", "$7")],
    select: [
      ["held", `ARRAY(${inBatches("<>")})`],
      ["held_here", `CASE WHEN m.id IS NULL THEN ARRAY(${inThisBatch("$2")}) END`],
      ["operation_ids", "(SELECT ids FROM bo)"]
    ]
  })

  // a create ($4 the operation ids, $5 dry run): its number free, its references the tenant's, its operations in no
  // other batch, then the batch and its operations in order
  const creates = recordWrites<Batch>(sql, {
    table: "batches",
    columns: catalog.columns("batches"),
    refTables: ["operations", "cells", "batches"],
    snapshotRefs: true,
    insertValues: insertDefaults({ batch_type: "'general'", status: "'draft'" }),
    createChecks: {
      ctes: [
        ["number", "SELECT EXISTS (SELECT 1 FROM batches b WHERE b.tenant_id = $3::uuid AND b.batch_number = $1::jsonb->>'batch_number') AS taken"],
        ["held", heldBy("$3::uuid", "$4")]
      ],
      insertWhen: "NOT $5::boolean AND NOT (SELECT taken FROM number) AND NOT EXISTS (SELECT 1 FROM held)"
    },
    ctes: [freed("$3::uuid", "$4"), append("$3::uuid", "$4")],
    select: [["number_taken", "(SELECT taken FROM number)"], ["held", "ARRAY(SELECT operation_id FROM held)"], ["operation_ids", "(SELECT ids FROM bo)"]]
  })
  return BatchStore.of({
    insert: (batch, operationIds, refs, dryRun) =>
      creates.createRow(batch, { refs, events: [] }, [uuidArray(operationIds), dryRun]).pipe(
        Effect.map((r) => ({
          numberTaken: r.number_taken as boolean,
          missingRefs: r.missing_refs,
          held: r.held as ReadonlyArray<string>,
          batch: withOperations(r)
        })),
        mapConstraints
      ),
    list: (tenantId, q: BatchListQuery) => {
      const f = q.filters
      return listPage<Batch>(sql, {
        table: "batches",
        alias: "b",
        where: [
          sql`b.tenant_id = ${tenantId}`,
          ...(f.id !== undefined ? [sql`b.id = ${f.id}`] : []),
          ...(f.status !== undefined ? [sql`b.status = ${f.status}`] : []),
          ...(f.batch_type !== undefined ? [sql`b.batch_type = ${f.batch_type}`] : []),
          ...(f.cell_id !== undefined ? [sql`b.cell_id = ${f.cell_id}`] : []),
          ...(f.material !== undefined ? [sql`b.material = ${f.material}`] : []),
          ...(f.search !== undefined ? [sql`(b.batch_number ILIKE ${contains(f.search)} OR b.material ILIKE ${contains(f.search)})`] : [])
        ],
        sort,
        query: q
      })
    },
    read: (tenantId, id) => readOwned<Batch>(sql, "batches", tenantId, id),
    patch: (tenantId, id, changes, refs) =>
      writes.patch(tenantId, id, changes, [], refs).pipe(
        Effect.map(({ row, ...outcome }) => ({ ...outcome, cycle: row.cycle === true })),
        mapConstraints
      ),
    remove: (tenantId, id) => writes.remove(tenantId, id).pipe(mapConstraints),
    transition: (tenantId, id, plan, o) =>
      // a start's additions take its operator as $5
      writes.move(tenantId, id, plan, o.refs, plan.cases.some((c) => c.effects.includes(START_OPERATIONS)) ? [o.operatorId] : []).pipe(
        Effect.map(({ outcome, row }) => ({
          ...outcome,
          operationsMoved: (row.operations_moved as ReadonlyArray<string> | null | undefined) ?? [],
          timeEntriesOpened: (row.opened as number | null | undefined) ?? 0,
          shares: row.shares == null ? [] : JSON.parse(row.shares as string) as ReadonlyArray<TimeShare>,
          cycle: row.cycle === true
        })),
        mapConstraints
      ),
    status: (tenantId, id) =>
      sql<{ status: BatchStatus }>`SELECT status FROM batches WHERE tenant_id = ${tenantId} AND id = ${id}`.pipe(
        Effect.map((rows) => rows[0]?.status),
        Effect.orDie
      ),
    addOperations: (tenantId, id, o) =>
      adds.patch(tenantId, id, {}, [], o.refs, {}, [arrayParam(o.whileIn), String(o.dryRun), uuidArray(o.operationIds)]).pipe(
        Effect.map(({ row }) => ({
          owner: row.owner ?? undefined,
          current: (row.current ?? undefined) as BatchStatus | undefined,
          missingRefs: row.missing_refs,
          held: row.held as ReadonlyArray<string>,
          heldHere: (row.held_here ?? []) as ReadonlyArray<string>,
          batch: withOperations(row)
        })),
        mapConstraints
      ),
    numberTaken: (tenantId, batchNumber, exceptId) =>
      sql`SELECT 1 FROM batches WHERE tenant_id = ${tenantId} AND batch_number = ${batchNumber} AND id <> ${exceptId ?? "00000000-0000-0000-0000-000000000000"}`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )
  })
}))
