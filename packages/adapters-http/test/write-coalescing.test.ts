// Concurrent nested creates of a tenant travel together as one statement (write coalescing, ARCHITECTURE §2):
// through the public surface each request still gets exactly its own answer, and a refusal or a failure of one
// takes none of the others with it. One slot (MES_DB_WRITE_SLOTS=1) makes the creates that arrive while one is
// in flight wait and go together.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, expectError, type Harness, nestedJob, startServer } from "./harness.ts"

let h: Harness
beforeAll(async () => {
  h = await startServer({ env: { MES_DB_WRITE_SLOTS: "1" } })
})
afterAll(() => h.close())

/** The tenant's events in the order they were written, with the transaction that wrote each. */
const eventsOf = (tenantId: string) =>
  h.sql(
    `SELECT xid::text AS xid, event_type, data::jsonb->'job'->>'job_number' AS job, data::jsonb->'part'->>'job_id' AS part_of
     FROM event_log WHERE tenant_id = $1 ORDER BY seq`,
    [tenantId]
  ) as Promise<ReadonlyArray<{ xid: string; event_type: string; job: string | null; part_of: string | null }>>

const usageOf = async (tenantId: string) =>
  (await h.sql(`SELECT current_month_parts::int AS n FROM tenant_usage WHERE tenant_id = $1`, [tenantId]))[0]!.n

describe("write coalescing of nested creates", () => {
  it("concurrent creates share statements; each gets its own job, 409 or 422, and its events in order", async () => {
    const t = await h.as("Coalesced")
    await t.api.post("/api-cells", { name: "Laser" })
    const bodies: Array<unknown> = Array.from({ length: 12 }, (_, i) => nestedJob(`CO-${i}`, 1 + (i % 3), 1 + (i % 2)))
    bodies[3] = { ...nestedJob("CO-3", 1, 1), parts: [{ part_number: "P-1", quantity: 1, operations: [{ operation_name: "Cut", sequence: 1, cell_name: "Laser" }] }] }
    bodies.push(nestedJob("CO-DUP", 2, 1), nestedJob("CO-DUP", 1, 1))
    const unknownCell = nestedJob("CO-NOCELL", 1, 2)
    unknownCell.parts[0]!.operations[1] = { ...unknownCell.parts[0]!.operations[1]!, cell_name: "Nowhere" } as never
    bodies.push(unknownCell)
    const replies = await Promise.all(bodies.map((b) => t.api.post("/api-jobs", b)))

    for (let i = 0; i < 12; i++) {
      expect(replies[i]!.status).toBe(201)
      const created = replies[i]!.body.data
      expect(created.job_number).toBe(`CO-${i}`)
      // the answer is this request's job as a read shows it, parts and operations in input order
      const read = (await t.api.get(`/api-jobs?id=${created.job_id}`)).body.data.job
      expect(read.job_number).toBe(`CO-${i}`)
      expect(read.parts.map((p: { part_number: string }) => p.part_number)).toEqual(
        (bodies[i] as ReturnType<typeof nestedJob>).parts.map((p) => p.part_number)
      )
      expect(created.parts.map((p: { part_id: string }) => p.part_id)).toEqual(read.parts.map((p: { id: string }) => p.id))
      expect(created.job).toEqual(read)
    }
    const cut = (await t.api.get(`/api-jobs?id=${replies[3]!.body.data.job_id}`)).body.data.job.parts[0].operations[0]
    const [laser] = await h.sql(`SELECT id FROM cells WHERE tenant_id = $1 AND name = 'Laser'`, [t.tenantId])
    expect(cut.cell_id).toBe(laser!.id)

    expect(replies.slice(12, 14).map((r) => r.status).sort()).toEqual([201, 409])
    expectError(replies.slice(12, 14).find((r) => r.status === 409)!, 409, "CONFLICT")
    expectError(replies[14]!, 422, "VALIDATION_ERROR")
    expect(replies[14]!.body.error.details).toEqual([
      expect.objectContaining({ field: "parts[0].operations[1].cell_name", value: "Nowhere", constraint: "FK_CONSTRAINT" })
    ])

    const created = replies.filter((r) => r.status === 201)
    const jobs = await h.sql(`SELECT job_number FROM jobs WHERE tenant_id = $1 ORDER BY job_number`, [t.tenantId])
    expect(jobs.map((j) => j.job_number)).toEqual(created.map((r) => r.body.data.job_number).sort())
    const parts = created.reduce((n, r) => n + r.body.data.parts.length, 0)
    expect(await usageOf(t.tenantId)).toBe(parts)

    // one job.created per created job, each followed by its own parts' events within its transaction
    const events = await eventsOf(t.tenantId)
    expect(events.filter((e) => e.event_type === "job.created").map((e) => e.job).sort()).toEqual(created.map((r) => r.body.data.job_number).sort())
    expect(events.filter((e) => e.event_type === "part.created")).toHaveLength(parts)
    const idOf = new Map(created.map((r) => [r.body.data.job_number, r.body.data.job_id]))
    let current: string | undefined
    for (const e of events) {
      if (e.event_type === "job.created") current = idOf.get(e.job!)
      else expect(e.part_of).toBe(current)
    }
    // and they did travel together: fewer transactions than created jobs
    expect(new Set(events.map((e) => e.xid)).size).toBeLessThan(created.length)
  })

  it("a create the database refuses fails alone: the others of its statement are written", async () => {
    const t = await h.as("Exploding")
    await h.sql(`ALTER TABLE operations ADD CONSTRAINT tmp_no_explode CHECK (operation_name <> 'explode')`)
    try {
      const bodies = Array.from({ length: 10 }, (_, i) => nestedJob(`EX-${i}`, 2, 2))
      bodies[6]!.parts[1]!.operations[0]!.operation_name = "explode"
      const replies = await Promise.all(bodies.map((b) => t.api.post("/api-jobs", b)))
      expect(replies.map((r) => r.status)).toEqual([201, 201, 201, 201, 201, 201, 500, 201, 201, 201])
      expectError(replies[6]!, 500, "INTERNAL_ERROR")
    } finally {
      await h.sql(`ALTER TABLE operations DROP CONSTRAINT tmp_no_explode`)
    }
    const jobs = await h.sql(`SELECT job_number FROM jobs WHERE tenant_id = $1 ORDER BY job_number`, [t.tenantId])
    expect(jobs.map((j) => j.job_number)).toEqual(["EX-0", "EX-1", "EX-2", "EX-3", "EX-4", "EX-5", "EX-7", "EX-8", "EX-9"])
    expect(await usageOf(t.tenantId)).toBe(18)
    expect((await eventsOf(t.tenantId)).filter((e) => e.job === "EX-6")).toEqual([])
  })

  it("creates of two tenants at once are written apart, each in its own tenant", async () => {
    const a = await h.as("Coalesced A")
    const b = await h.as("Coalesced B")
    const replies = await Promise.all(Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? a : b).api.post("/api-jobs", nestedJob(`T-${i}`, 1, 1))))
    expect(replies.map((r) => r.status)).toEqual(Array(16).fill(201))
    const listed = async (api: ReturnType<typeof client>) =>
      (await api.get("/api-jobs?limit=100")).body.data.jobs.map((j: { job_number: string }) => j.job_number).sort()
    expect(await listed(a.api)).toEqual(["T-0", "T-10", "T-12", "T-14", "T-2", "T-4", "T-6", "T-8"])
    expect(await listed(b.api)).toEqual(["T-1", "T-11", "T-13", "T-15", "T-3", "T-5", "T-7", "T-9"])
    const [ea, eb] = [await eventsOf(a.tenantId), await eventsOf(b.tenantId)]
    const xa = new Set(ea.map((e) => e.xid))
    expect(eb.filter((e) => xa.has(e.xid))).toEqual([])
  })
})
