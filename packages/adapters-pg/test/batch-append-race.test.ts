// Two add-operations of the same operation to the same batch at the same moment. One after the other, the second is
// 409 "operations already in this batch: <ids>". At once, both checked with the snapshot they began with and the
// second met batch_operations' primary key after the first committed: 409 without the ids. Here the first is held
// open after its append, and the second must wait for it and then be refused by name, having written nothing.
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { SqlClient } from "effect/sql/SqlClient"
import { describe, expect, it } from "vitest"
import { Batches, Conflict, Jobs, Tenants } from "@mes/domain"
import { testDatabaseKind } from "../src/index.ts"
import { asTenant, held, someoneWaits, useDomainApp } from "./domain-app.ts"

// every request on a connection of its own (testDatabase's default)
const run = useDomainApp()

/** A request's outcome: "written", "409 <message>", or what else it was. */
const outcome = (exit: Exit.Exit<unknown, unknown>): string => {
  const error = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : undefined
  if (error?._tag === "Some" && error.value instanceof Conflict) return `409 ${error.value.message}`
  return Exit.isSuccess(exit) ? "written" : Cause.pretty(exit.cause)
}

const query = <A extends object>(statement: string, params: ReadonlyArray<string>) =>
  run(Effect.flatMap(Effect.service(SqlClient), (sql) => sql.unsafe<A>(statement, params)))

// PGlite is one session: its statements never overlap, so only PostgreSQL can show the race
describe.skipIf(testDatabaseKind() === "pglite")("two add-operations of the same operation to one batch at once", () => {
  it("the one that waited for the other's commit is 409 naming the operations already in the batch, and writes nothing", async () => {
    const { tenant } = await run(Effect.flatMap(Effect.service(Tenants), (t) => t.create({ name: "Append twice" })))
    const as = <A, E>(effect: Effect.Effect<A, E, any>) => asTenant(tenant.id, effect)
    const batches = await run(Effect.service(Batches))
    const job = await run(as(Effect.flatMap(Effect.service(Jobs), (jobs) =>
      jobs.create({
        job_number: "J-1",
        parts: [{ part_number: "P", quantity: 1, operations: [1, 2, 3].map((sequence) => ({ operation_name: `op ${sequence}`, sequence })) }]
      }))))
    const [first, second, third] = job.parts[0]!.operations.map((o) => o.operation_id)
    const [cell] = await query<{ id: string }>("INSERT INTO cells (tenant_id, id, name) VALUES ($1, gen_random_uuid(), 'Saw') RETURNING id", [tenant.id])
    const batch = await run(as(batches.create({ batch_number: "B-1", cell_id: cell!.id, operation_ids: [first!] })))
    const place = () =>
      query<{ operation_id: string; sequence: number }>(
        "SELECT operation_id, sequence FROM batch_operations WHERE batch_id = $1 ORDER BY sequence",
        [batch.id]
      )

    // the winner's add, appended and not yet committed
    const adding = held(run, as(batches.addOperations(batch.id, { operation_ids: [second!] })))
    await adding.written
    // the loser names the winner's operation after one of its own
    const request = run(Effect.exit(as(batches.addOperations(batch.id, { operation_ids: [third!, second!] }))))
    const waited = await someoneWaits(run)
    adding.commit()
    await adding.done
    expect(outcome(await request)).toBe(`409 operations already in this batch: ${second}`)
    expect(waited).toBe(true)
    // nothing of the loser's: the winner's operation once, the loser's other one not at all
    expect(await place()).toEqual([{ operation_id: first, sequence: 1 }, { operation_id: second, sequence: 2 }])
    // asked again, the same answer
    expect(outcome(await run(Effect.exit(as(batches.addOperations(batch.id, { operation_ids: [third!, second!] })))))).toBe(
      `409 operations already in this batch: ${second}`
    )
  })
})
