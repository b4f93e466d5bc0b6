// Substeps (spec 4.8): plain CRUD under the operation; completed_at follows completed in the same
// statement, a PATCH that completes a step writes step.completed in it too, and substeps of a soft-deleted job are
// hidden like its parts and operations.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { moveEvent, type Substep, SubstepStore } from "@mes/domain"
import { mapConstraints } from "../constraints.ts"
import { Catalog } from "../catalog.ts"
import { recordWrites } from "../moves.ts"
import { listPage } from "./crud.ts"
import { liveCondition, readOwned } from "../json.ts"

const substepSort = { sequence: "s.sequence", created_at: "s.created_at", completed: "s.completed" }

/** The substep's operation is under a job that is not soft-deleted. */
const live = liveCondition.substeps

/** completed_at on insert: now() when created completed. */
const insertValues = { completed_at: "CASE WHEN r.completed THEN now() END" }
/** completed_at on update of `completed`: the first completion time is kept; reopening clears it. */
const completedAtSet = "completed_at = CASE WHEN NOT r.completed THEN NULL WHEN t.completed THEN coalesce(t.completed_at, now()) ELSE now() END"

export const SubstepStorePg = Layer.effect(SubstepStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const writes = recordWrites<Substep>(sql, {
    table: "substeps",
    columns: (yield* Catalog).columns("substeps"),
    refTables: ["operations"],
    patchSets: (changes) => (changes.completed === undefined ? [] : [completedAtSet]),
    // step.completed once, when a PATCH completes a step that was not (spec 6)
    previous: { column: "completed", eventsWhen: "m.previous = 'false'" },
    insertValues
  })
  const completedEvents = [moveEvent("step.completed", false)]
  return SubstepStore.of({
    // with its operation checked and its step.added, in one statement
    insert: (row, plan) => writes.create(row, plan).pipe(mapConstraints),
    list: (tenantId, q) => {
      const f = q.filters
      const where = [sql`s.tenant_id = ${tenantId}`, sql.literal(live("s"))]
      if (f.id !== undefined) where.push(sql`s.id = ${f.id as string}`)
      if (f.operation_id !== undefined) where.push(sql`s.operation_id = ${f.operation_id as string}`)
      if (f.completed !== undefined) where.push(sql`s.completed = ${f.completed as boolean}`)
      return listPage<Substep>(sql, { table: "substeps", alias: "s", where, sort: substepSort, query: q })
    },
    read: (tenantId, id) => readOwned<Substep>(sql, "substeps", tenantId, id),
    get: (tenantId, id) =>
      sql<Substep>`SELECT s.* FROM substeps s WHERE s.tenant_id = ${tenantId} AND s.id = ${id} AND ${sql.literal(live("s"))}`.pipe(
        Effect.map((rows) => rows[0]),
        Effect.orDie
      ),
    patch: (tenantId, id, changes, refs) =>
      writes.patch(tenantId, id, changes, changes.completed === true ? completedEvents : [], refs).pipe(mapConstraints),
    remove: (tenantId, id) => writes.remove(tenantId, id).pipe(mapConstraints),
    // substeps have no field unique per tenant
    taken: () => Effect.succeed(false)
  })
}))
