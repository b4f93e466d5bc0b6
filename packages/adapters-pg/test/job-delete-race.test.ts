// A job's delete and an append of one of its operations to a batch, at the same moment (migration 0039). A job is not
// deleted while one of its operations is in a draft, ready or in-progress batch (409), but each statement checked with
// the snapshot it began with: an append still running when the delete committed put the hidden operation in the batch,
// and a delete still running when the append committed did not see it. Here each side is held open at the point where
// the race lands, and the other request must wait for it and then be refused.
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { SqlClient } from "effect/sql/SqlClient"
import { describe, expect, it } from "vitest"
import { Batches, Conflict, Jobs, Tenants, ValidationFailed } from "@mes/domain"
import { testDatabaseKind } from "../src/index.ts"
import { asTenant, held, someoneWaits, useDomainApp } from "./domain-app.ts"

// every request on a connection of its own (testDatabase's default)
const run = useDomainApp()

/** The request's outcome: written, a 409's message, a 422's "field constraint" details, or what else it was. */
const outcome = (exit: Exit.Exit<unknown, unknown>) => {
  if (Exit.isSuccess(exit)) return "written"
  const error = Cause.findErrorOption(exit.cause)
  if (error._tag === "Some" && error.value instanceof Conflict) return `409 ${error.value.message}`
  if (error._tag === "Some" && error.value instanceof ValidationFailed) return `422 ${error.value.details.map((d) => `${d.field} ${d.constraint}`).join(", ")}`
  return Cause.pretty(exit.cause)
}

/** `statement` run in a transaction of its own that stays open until `commit()`. */
const holding = (statement: string, params: ReadonlyArray<string>) =>
  held(run, Effect.flatMap(Effect.service(SqlClient), (sql) => sql.unsafe(statement, params)))

const query = <A extends object>(statement: string, params: ReadonlyArray<string>) =>
  run(Effect.flatMap(Effect.service(SqlClient), (sql) => sql.unsafe<A>(statement, params)))

// PGlite is one session: its statements never overlap, so only PostgreSQL can show the race
describe.skipIf(testDatabaseKind() === "pglite")("a job's delete and a batch append under concurrency", () => {
  const scene = async (name: string) => {
    const { tenant } = await run(Effect.flatMap(Effect.service(Tenants), (t) => t.create({ name })))
    const race = <A, E, R>(effect: Effect.Effect<A, E, R>) => run(asTenant(tenant.id, Effect.exit(effect)))
    const [cell] = await query<{ id: string }>("INSERT INTO cells (tenant_id, id, name) VALUES ($1, gen_random_uuid(), 'Saw') RETURNING id", [tenant.id])
    let n = 0
    /** A job with one operation, and an empty draft batch (a batch with another job's operation when `full`). */
    const pair = async () => {
      const k = ++n
      const create = (number: string) =>
        run(asTenant(tenant.id, Effect.flatMap(Effect.service(Jobs), (jobs) =>
          jobs.create({ job_number: number, parts: [{ part_number: "P", quantity: 1, operations: [{ operation_name: "saw", sequence: 1 }] }] }))))
      const job = await create(`J-${k}`)
      const other = await create(`O-${k}`)
      const batch = await run(asTenant(tenant.id, Effect.flatMap(Effect.service(Batches), (b) =>
        b.create({ batch_number: `B-${k}`, cell_id: cell!.id, operation_ids: [other.parts[0]!.operations[0]!.operation_id] }))))
      return { job: job.job_id, operation: job.parts[0]!.operations[0]!.operation_id, batch: batch.id }
    }
    return { race, pair, cell: cell!.id }
  }
  const inBatch = (operation: string) =>
    query<{ n: number }>("SELECT count(*)::int AS n FROM batch_operations WHERE operation_id = $1", [operation]).then((r) => r[0]!.n)
  const deleted = (job: string) =>
    query<{ gone: boolean }>("SELECT deleted_at IS NOT NULL AS gone FROM jobs WHERE id = $1", [job]).then((r) => r[0]!.gone)

  it("an add-operations and a batch create that run while the job's delete commits are refused (409), and nothing is appended", async () => {
    const { race, pair, cell } = await scene("Delete first")
    for (const via of ["add-operations", "create"] as const) {
      const { job, operation, batch } = await pair()
      // the delete's write, not yet committed
      const deleting = holding("UPDATE jobs SET deleted_at = now(), updated_at = now() WHERE id = $1", [job])
      await deleting.written
      const request = race(Effect.flatMap(Effect.service(Batches), (b) =>
        via === "create" ? b.create({ batch_number: `N-${operation}`, cell_id: cell, operation_ids: [operation] }) : b.addOperations(batch, { operation_ids: [operation] })))
      const waited = await someoneWaits(run)
      deleting.commit()
      await deleting.done
      expect([via, outcome(await request)]).toEqual([via, "409 the job of an operation being added was deleted meanwhile; nothing was written, retry it"])
      expect(waited).toBe(true)
      expect(await inBatch(operation)).toBe(0)
      // asked again, the operation is gone: 422 at the operation
      const again = await race(Effect.flatMap(Effect.service(Batches), (b) => b.addOperations(batch, { operation_ids: [operation] })))
      expect(outcome(again)).toMatch(/^422 operation_ids/)
    }
  })

  it("a job's delete that runs while an append of its operation commits is refused (409, naming the batch), and the job stays", async () => {
    const { race, pair } = await scene("Append first")
    const { job, operation, batch } = await pair()
    // the append, not yet committed (as add-operations does it after the batch's lock)
    const appending = holding(
      "SELECT mes_append_batch_operations(tenant_id, id, mes_operations_of_live_jobs(tenant_id, ARRAY[$2]::uuid[])) FROM batches WHERE id = $1",
      [batch, operation]
    )
    await appending.written
    const request = race(Effect.flatMap(Effect.service(Jobs), (j) => j.remove(job)))
    const waited = await someoneWaits(run)
    appending.commit()
    await appending.done
    expect(outcome(await request)).toMatch(/^409 .*B-1/)
    expect(waited).toBe(true)
    expect(await deleted(job)).toBe(false)
    expect(await inBatch(operation)).toBe(1)
  })
})
