// The webhooks a cloud tenant holds, under concurrency (migration 0036): a registration counts the tenant's
// webhooks and inserts only below the cap, but two at once would each count without the other's row. Here one
// registration is held open in a transaction of its own (the 100th webhook inserted, not committed) while the
// request registers another; once the first commits, the request must be refused (402, nothing written). Without
// the database's lock the request does not wait, counts 99 and commits a 101st.
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, describe, expect, it } from "vitest"
import { QuotaExceeded, Tenants, Webhooks, WEBHOOKS_PER_TENANT } from "@mes/domain"
import { testDatabaseKind } from "../src/index.ts"
import { asTenant, held, someoneWaits, useDomainApp } from "./domain-app.ts"

// the cap is a cloud deployment's; this file's application reads it when it is built
const deployment = process.env.MES_DEPLOYMENT
process.env.MES_DEPLOYMENT = "cloud"
afterAll(() => {
  if (deployment === undefined) delete process.env.MES_DEPLOYMENT
  else process.env.MES_DEPLOYMENT = deployment
})

// every request on a connection of its own (testDatabase's default)
const run = useDomainApp()

// PGlite is one session: its statements never overlap, so only PostgreSQL can show the race
describe.skipIf(testDatabaseKind() === "pglite")("webhooks per tenant under concurrency", () => {
  it("a registration waits for one in flight, and is refused when that one took the last place", async () => {
    const { tenant } = await run(Effect.flatMap(Effect.service(Tenants), (t) => t.create({ name: "Capped" })))
    const register = (i: number) =>
      asTenant(tenant.id, Effect.flatMap(Effect.service(Webhooks), (w) => w.create({ url: `https://hooks.example.com/${i}`, events: ["job.created"] })))
    for (let i = 1; i < WEBHOOKS_PER_TENANT; i++) await run(register(i))
    const held100 = held(run, Effect.flatMap(Effect.service(SqlClient), (sql) =>
      sql`INSERT INTO webhooks (tenant_id, id, url, events, secret)
          SELECT ${tenant.id}, gen_random_uuid(), 'https://hooks.example.com/held', '{job.created}', 'whsec_held'
          WHERE mes_webhooks_held(${tenant.id}) < ${WEBHOOKS_PER_TENANT}`))
    await held100.written
    const request = run(Effect.exit(register(WEBHOOKS_PER_TENANT + 1)))
    const waited = await someoneWaits(run)
    held100.commit()
    await held100.done
    const exit = await request
    const error = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : undefined
    expect(error?._tag === "Some" && error.value instanceof QuotaExceeded ? "402" : exit).toBe("402")
    expect(waited).toBe(true)
    const [row] = await run(Effect.flatMap(Effect.service(SqlClient), (sql) =>
      sql<{ n: number }>`SELECT count(*)::int AS n FROM webhooks WHERE tenant_id = ${tenant.id}`))
    expect(row!.n).toBe(WEBHOOKS_PER_TENANT)
  })
})
