// The dispatcher's claim shares due deliveries between tenants (DeliveryStore.claimDue, migration 0037): each place
// goes to the tenant holding the fewest attempts (what the dispatcher holds already plus the places given in this
// claim), oldest delivery first within a tenant, and a tenant given a room (a limited one) gets no more than that.
// Deliveries are written here with known due times, so the places are exact.
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql/SqlClient"
import { beforeEach, describe, expect, it } from "vitest"
import { DeliveryStore, Tenants } from "@mes/domain"
import { useDomainApp } from "./domain-app.ts"

const run = useDomainApp()

const sql = (text: string, params: ReadonlyArray<unknown> = []) =>
  run(Effect.flatMap(Effect.service(SqlClient), (s) => s.unsafe<Record<string, unknown>>(text, params as Array<any>)))

/** A tenant with one webhook and `due` pending deliveries `<name>:1` to `<name>:<due>`, the i-th due 24 − i hours ago plus `offsetMs`. */
const tenantWith = async (name: string, due: number, offsetMs: number) => {
  const { tenant } = await run(Effect.flatMap(Effect.service(Tenants), (t) => t.create({ name })))
  const [hook] = await sql(
    `INSERT INTO webhooks (tenant_id, id, url, events, secret)
     VALUES ($1, gen_random_uuid(), 'https://hooks.example.com/' || $2, '{job.created}', 'whsec_x') RETURNING id`,
    [tenant.id, name]
  )
  // lower i is older; between tenants, the same i is ordered by offsetMs
  await sql(
    `INSERT INTO webhook_deliveries (tenant_id, id, webhook_id, event_id, event_type, body, next_attempt_at)
     SELECT $1, gen_random_uuid(), $2, gen_random_uuid(), 'job.created', $3 || ':' || g,
       now() - interval '1 day' + g * interval '1 hour' + $4::int * interval '1 millisecond'
     FROM generate_series(1, $5::int) g`,
    [tenant.id, hook!.id, name, offsetMs, due]
  )
  return tenant.id
}

const claim = (limit: number, held: ReadonlyMap<string, number>, room: ReadonlyMap<string, number | null>, otherRoom?: number) =>
  run(Effect.flatMap(Effect.service(DeliveryStore), (store) =>
    store.claimDue(limit, 60_000, { held, room, ...(otherRoom !== undefined ? { otherRoom } : {}) })))

describe("claiming due deliveries", () => {
  // each test sees its own deliveries only
  beforeEach(() => sql("UPDATE webhook_deliveries SET status = 'failed' WHERE status = 'pending'"))

  it("gives each place to the tenant holding fewest, oldest first within a tenant, and a tenant with room no more than that", async () => {
    const a = await tenantWith("A", 6, 0)
    const b = await tenantWith("B", 3, 1)
    const c = await tenantWith("C", 2, 2)
    // the dispatcher holds one attempt of A and two of C already; each may hold three
    const claimed = await claim(3, new Map([[a, 1], [c, 2]]), new Map([[a, 2], [b, 3], [c, 1]]))
    // places: B:1 first | A:1, B:2 second | C:1, A:2, B:3 third (A:3 would be A's fourth, C:2 C's); within a place
    // the oldest first, and three are asked for (the three oldest due would be A:1, B:1, C:1)
    expect(claimed.map((d) => d.body)).toEqual(["B:1", "A:1", "B:2"])
    expect(claimed.every((d) => d.url === `https://hooks.example.com/${d.body.split(":")[0]}` && d.attempts === 0 && d.active)).toBe(true)

    // what is claimed is leased; A and C hold their share
    expect((await claim(10, new Map([[a, 3], [b, 2], [c, 3]]), new Map([[a, 0], [b, 1], [c, 0]]))).map((d) => d.body)).toEqual(["B:3"])
    // nothing held: C:1 and A:2 first (C:1 the older), C:2 and A:3 second, then A:4, up to A's share
    expect((await claim(10, new Map(), new Map([[a, 3], [c, 3]]))).map((d) => d.body)).toEqual(["C:1", "A:2", "C:2", "A:3", "A:4"])
  })

  it("a tenant alone gets its oldest due deliveries up to its room; a future retry is not due", async () => {
    const solo = await tenantWith("Solo", 4, 0)
    await sql(`UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 hour' WHERE tenant_id = $1 AND body = 'Solo:1'`, [solo])
    expect((await claim(10, new Map(), new Map([[solo, 2]]))).map((d) => d.body)).toEqual(["Solo:2", "Solo:3"])
    expect((await claim(10, new Map([[solo, 2]]), new Map([[solo, 1]]))).map((d) => d.body)).toEqual(["Solo:4"])
    expect(await claim(10, new Map(), new Map())).toEqual([])
  })

  it("a tenant with no room given is not limited, however much it holds; the others' room limits the tenants not named", async () => {
    const busy = await tenantWith("Busy", 5, 0)
    expect((await claim(4, new Map([[busy, 50]]), new Map())).map((d) => d.body)).toEqual(["Busy:1", "Busy:2", "Busy:3", "Busy:4"])
    const known = await tenantWith("Known", 3, 1)
    await tenantWith("New", 3, 2)
    // Known is named without a limit; Busy (named by what it holds) and New get the others' room, one each; Busy
    // holds 50, so its one comes last
    expect((await claim(10, new Map([[busy, 50]]), new Map([[known, null]]), 1)).map((d) => d.body))
      .toEqual(["Known:1", "New:1", "Known:2", "Known:3", "Busy:5"])
  })
})
