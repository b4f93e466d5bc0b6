// The pool as production runs it on PostgreSQL (client.ts): statements of concurrent requests pipelined
// several to a connection, transactions on a connection of their own.
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { SqlClient } from "effect/sql/SqlClient"
import { describe, expect, it } from "vitest"
import { Jobs, Tenants, Tx } from "@mes/domain"
import { testDatabaseKind } from "../src/index.ts"
import { asTenant, useDomainApp } from "./domain-app.ts"

const run = useDomainApp({ pipeline: 4 })

// PGlite has no pool to pipeline
describe.skipIf(testDatabaseKind() === "pglite")("pipelined pool", () => {
  it("concurrent creates, reads and a transaction that fails halfway: each answers alone, the transaction leaves nothing", async () => {
    const { tenant } = await run(Effect.flatMap(Effect.service(Tenants), (t) => t.create({ name: "Pipelined" })))
    const create = (n: number) =>
      run(asTenant(tenant.id, Effect.flatMap(Effect.service(Jobs), (jobs) =>
        jobs.create({ job_number: `PL-${n}`, parts: [{ part_number: "P", quantity: 1, operations: [{ operation_name: "o", sequence: 1 }] }] }))))
    const failing = run(Effect.exit(Effect.flatMap(Effect.service(Tx), (tx) =>
      tx.transaction(Effect.gen(function*() {
        const sql = yield* SqlClient
        yield* sql`INSERT INTO jobs (tenant_id, id, job_number) VALUES (${tenant.id}, gen_random_uuid(), 'PL-TX')`
        yield* Effect.sleep("20 millis")
        return yield* Effect.fail("halfway")
      })))))
    const [created, tx] = await Promise.all([Promise.all(Array.from({ length: 40 }, (_, i) => create(i))), failing])
    const reads = await Promise.all(created.map((c) => run(asTenant(tenant.id, Effect.flatMap(Effect.service(Jobs), (jobs) => jobs.get(c.job_id))))))
    expect(reads.map((r) => r.parse().job_number)).toEqual(created.map((c) => c.job_number))
    expect(Exit.isFailure(tx)).toBe(true)
    const [row] = await run(Effect.flatMap(SqlClient, (sql) =>
      sql<{ jobs: number; tx: number }>`SELECT count(*)::int AS jobs, count(*) FILTER (WHERE job_number = 'PL-TX')::int AS tx
        FROM jobs WHERE tenant_id = ${tenant.id}`))
    expect(row).toEqual({ jobs: 40, tx: 0 })
  })
})
