// Parent chains under concurrency (migration 0035): a write that sets a parent checks that the record is not in the
// new parent's chain, but two such writes at once each check against the other's old parent. Here one of them is
// held open in a transaction of its own (A's parent set to B, not committed) while the request sets B's parent to
// A; once the first commits, the request must be refused (409, nothing written) instead of closing the loop
// A → B → A. Without the database's rule the request does not wait, passes its check and commits the loop.
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { SqlClient } from "effect/sql/SqlClient"
import { describe, expect, it } from "vitest"
import { Batches, Conflict, Jobs, Parts, Tenants, ValidationFailed } from "@mes/domain"
import { testDatabaseKind } from "../src/index.ts"
import { asTenant, held, someoneWaits, useDomainApp } from "./domain-app.ts"

// every request on a connection of its own (testDatabase's default)
const run = useDomainApp()

/** `statement` run in a transaction of its own that stays open until `commit()`. */
const holding = (statement: string, params: ReadonlyArray<string>) =>
  held(run, Effect.flatMap(Effect.service(SqlClient), (sql) => sql.unsafe(statement, params)))

/** The request's outcome: a Conflict's field and status, or what else it was. */
const outcome = (exit: Exit.Exit<unknown, unknown>) => {
  if (Exit.isSuccess(exit)) return "written"
  const error = Cause.findErrorOption(exit.cause)
  return error._tag === "Some" && error.value instanceof Conflict ? `409 ${error.value.field}` : Cause.pretty(exit.cause)
}

/** A 422's details as "field constraint". */
const refusedAs = (exit: Exit.Exit<unknown, unknown>) => {
  const error = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : undefined
  return error?._tag === "Some" && error.value instanceof ValidationFailed ? error.value.details.map((d) => `${d.field} ${d.constraint}`) : exit
}

// PGlite is one session: its statements never overlap, so only PostgreSQL can show the race
describe.skipIf(testDatabaseKind() === "pglite")("parent chains under concurrency", () => {
  const scene = async (name: string) => {
    const { tenant } = await run(Effect.flatMap(Effect.service(Tenants), (t) => t.create({ name })))
    const as = <A, E, R>(effect: Effect.Effect<A, E, R>) => run(asTenant(tenant.id, effect))
    const race = <A, E, R>(effect: Effect.Effect<A, E, R>) => run(asTenant(tenant.id, Effect.exit(effect)))
    const [cell] = await run(Effect.flatMap(Effect.service(SqlClient), (sql) =>
      sql<{ id: string }>`INSERT INTO cells (tenant_id, id, name) VALUES (${tenant.id}, gen_random_uuid(), 'Saw') RETURNING id`))
    return { tenant, as, race, cell: cell!.id }
  }
  const parentOf = (table: "batches" | "parts", id: string) =>
    run(Effect.flatMap(Effect.service(SqlClient), (sql) =>
      sql.unsafe<{ parent: string | null }>(`SELECT ${table === "parts" ? "parent_part_id" : "parent_batch_id"} AS parent FROM ${table} WHERE id = $1`, [id])))
      .then((rows) => rows[0]!.parent)

  it("a batch PATCH of its parent, and one with a status, wait for another parent change and are refused when it closed a loop", async () => {
    const { as, race, cell } = await scene("Batch loops")
    const batches = Effect.service(Batches)
    const batch = (n: string) => as(Effect.flatMap(batches, (b) => b.create({ batch_number: n, cell_id: cell })))
    for (const withStatus of [false, true]) {
      const a = await batch(`A-${withStatus}`)
      const b = await batch(`B-${withStatus}`)
      const first = holding("UPDATE batches SET parent_batch_id = $2 WHERE id = $1", [a.id, b.id])
      await first.written
      const request = race(Effect.flatMap(batches, (s) => s.update(b.id, withStatus ? { status: "ready", parent_batch_id: a.id } : { parent_batch_id: a.id })))
      const waited = await someoneWaits(run)
      first.commit()
      await first.done
      expect([withStatus, outcome(await request)]).toEqual([withStatus, "409 parent_batch_id"])
      expect(waited).toBe(true)
      // nothing of the request was written: no loop, and the status unchanged
      expect([await parentOf("batches", a.id), await parentOf("batches", b.id)]).toEqual([b.id, null])
      const [row] = await run(Effect.flatMap(Effect.service(SqlClient), (sql) => sql<{ status: string }>`SELECT status FROM batches WHERE id = ${b.id}`))
      expect(row!.status).toBe("draft")
      // asked again, the loop is the request's own: 422
      const again = await race(Effect.flatMap(batches, (s) => s.update(b.id, { parent_batch_id: a.id })))
      expect(refusedAs(again)).toEqual(["parent_batch_id CIRCULAR_REFERENCE"])
    }
  })

  it("random parent changes at once, with and without a status, never leave a loop nor a defect", async () => {
    const { tenant, race, cell } = await scene("Batch forest")
    const batches = Effect.service(Batches)
    const ids: Array<string> = []
    for (let i = 0; i < 8; i++) ids.push((await run(asTenant(tenant.id, Effect.flatMap(batches, (b) => b.create({ batch_number: `F-${i}`, cell_id: cell }))))).id)
    let seed = 7
    // a fixed sequence (MINSTD), so that a failure replays
    const next = (n: number) => Math.floor((seed = (seed * 48271) % 2147483647) / 2147483647 * n)
    let written = 0
    for (let round = 0; round < 12; round++) {
      const exits = await Promise.all(Array.from({ length: 10 }, () => {
        const child = ids[next(ids.length)]!
        const parent = ids[next(ids.length)]!
        const body = next(6) === 0 ? { status: "cancelled", parent_batch_id: parent } : { parent_batch_id: parent }
        return race(Effect.flatMap(batches, (b) => b.update(child, body)))
      }))
      written += exits.filter(Exit.isSuccess).length
      expect(exits.flatMap((e) => (Exit.isFailure(e) && Cause.hasDies(e.cause) ? [Cause.pretty(e.cause)] : []))).toEqual([])
      // every batch's chain ends: no batch is its own ancestor
      const loops = await run(Effect.flatMap(Effect.service(SqlClient), (sql) =>
        sql<{ id: string }>`WITH RECURSIVE up (start, id, depth) AS (
            SELECT b.id, b.parent_batch_id, 1 FROM batches b WHERE b.tenant_id = ${tenant.id} AND b.parent_batch_id IS NOT NULL
            UNION ALL SELECT up.start, b.parent_batch_id, up.depth + 1 FROM up JOIN batches b ON b.tenant_id = ${tenant.id} AND b.id = up.id
            WHERE b.parent_batch_id IS NOT NULL AND up.depth < 20
          ) SELECT DISTINCT start AS id FROM up WHERE up.id = up.start`))
      expect([round, loops]).toEqual([round, []])
    }
    // the race happened: some changes were written
    expect(written).toBeGreaterThan(10)
  })

  it("a part PATCH of its parent waits for another parent change and is refused when it closed a loop", async () => {
    const { tenant, as, race } = await scene("Part loops")
    await as(Effect.flatMap(Effect.service(Jobs), (jobs) =>
      jobs.create({ job_number: "L-1", parts: ["A", "B", "C"].map((n) => ({ part_number: n, quantity: 1, operations: [{ operation_name: "cut", sequence: 1 }] })) })))
    const ids = await run(Effect.flatMap(Effect.service(SqlClient), (sql) =>
      sql<{ id: string }>`SELECT id FROM parts WHERE tenant_id = ${tenant.id} ORDER BY part_number`))
    const [a, b, c] = ids.map((p) => p.id)
    // a loop of three: A → B held, C → A committed, then B → C asked
    await as(Effect.flatMap(Effect.service(Parts), (s) => s.update(c!, { parent_part_id: a })))
    const first = holding("UPDATE parts SET parent_part_id = $2 WHERE id = $1", [a!, b!])
    await first.written
    const request = race(Effect.flatMap(Effect.service(Parts), (s) => s.update(b!, { parent_part_id: c })))
    const waited = await someoneWaits(run)
    first.commit()
    await first.done
    expect(outcome(await request)).toBe("409 parent_part_id")
    expect(waited).toBe(true)
    expect([await parentOf("parts", a!), await parentOf("parts", b!), await parentOf("parts", c!)]).toEqual([b, null, a])
  })
})
