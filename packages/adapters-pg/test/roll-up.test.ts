// The part roll-up under concurrency (spec 2.2, 3.2): operations of one part moved at the same time
// by requests on different connections still leave the part with the status all of them imply.
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql/SqlClient"
import { describe, expect, it } from "vitest"
import { Jobs, Operations, Tenants } from "@mes/domain"
import { testDatabaseKind } from "../src/index.ts"
import { asTenant, useDomainApp } from "./domain-app.ts"

// every request on a connection of its own (testDatabase's default), as under load
const run = useDomainApp()

// PGlite is one session: its statements never overlap, so only PostgreSQL can show the race
describe.skipIf(testDatabaseKind() === "pglite")("part roll-up under concurrency", () => {
  it("completing a part's last two operations at once completes the part, with one part.completed", async () => {
    const { tenant } = await run(Effect.flatMap(Effect.service(Tenants), (t) => t.create({ name: "Roll-up race" })))
    const as = <A, E, R>(effect: Effect.Effect<A, E, R>) => run(asTenant(tenant.id, effect))
    const rounds = 20
    const parts: Array<string> = []
    for (let k = 0; k < rounds; k++) {
      const job = await as(Effect.flatMap(Effect.service(Jobs), (jobs) =>
        jobs.create({
          job_number: `RACE-${k}`,
          parts: [{ part_number: "P", quantity: 1, operations: [{ operation_name: "a", sequence: 1 }, { operation_name: "b", sequence: 2 }] }]
        })))
      const part = job.parts[0]!
      const ops = part.operations.map((o) => o.operation_id)
      const operations = Effect.service(Operations)
      for (const id of ops) await as(Effect.flatMap(operations, (o) => o.transition(id, "start")))
      await Promise.all(ops.map((id) => as(Effect.flatMap(operations, (o) => o.transition(id, "complete")))))
      parts.push(part.part_id)
    }
    const rows = await run(Effect.gen(function*() {
      const sql = yield* SqlClient
      return yield* sql<{ status: string; completed_events: number }>`
        SELECT p.status, (SELECT count(*)::int FROM event_log e
          WHERE e.tenant_id = p.tenant_id AND e.event_type = 'part.completed' AND e.data::json->>'part_id' = p.id::text) AS completed_events
        FROM parts p WHERE p.tenant_id = ${tenant.id} AND p.id IN ${sql.in(parts)}`
    }))
    expect(rows).toHaveLength(rounds)
    expect(rows.filter((r) => r.status !== "completed")).toEqual([])
    expect(rows.every((r) => r.completed_events === 1)).toBe(true)
  })
})
