// Bulk sync of parts, operations, cells and resources (spec 4.2, 4.3, 4.10 bulk-sync) is one statement per chunk of records
// (ARCHITECTURE: the domain plans, the adapter executes once). Its answers and what it writes must be those of
// the same records synced one after another: fast-check draws record lists (new and stored rows, rows of another
// parent, unknown parents and cells, sequences given or left to the database, repeated external ids), tenant A
// bulk-syncs them, tenant B PUTs them one by one from the same starting point, and every result, row, event and
// usage count is compared. Seed: MES_MODEL_SEED.
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, type Harness, startServer } from "./harness.ts"

const SEED = Number(process.env.MES_MODEL_SEED ?? 20261128)
const RUNS = Number(process.env.MES_MODEL_RUNS ?? 25)

let h: Harness
type Side = { readonly tenantId: string; readonly api: ReturnType<typeof client> }
let bulk: Side
let oneByOne: Side

beforeAll(async () => {
  h = await startServer()
  bulk = await h.as("bulk")
  oneByOne = await h.as("one-by-one")
  for (const side of [bulk, oneByOne]) {
    for (const name of ["Saw", "Weld"]) expect((await side.api.post("/api-cells", { name })).status).toBe(201)
  }
})
afterAll(() => h.close())

let run = 0

/**
 * The same start in both tenants: job J (parts P1 with O1 at 1 and O2 at 2, P2), job K (part Q1 with O9 at 1), cells
 * C1 and C2 (named A and B), resources R1 and R2.
 */
const seed = async (side: Side, source: string) => {
  const op = (external_id: string, sequence: number) => ({ external_id, operation_name: "Stored", sequence, cell_name: "Saw" })
  for (
    const job of [
      { external_id: "J", job_number: `${source}-J`, parts: [{ external_id: "P1", part_number: "A", quantity: 1, operations: [op("O1", 1), op("O2", 2)] }, { external_id: "P2", part_number: "B", quantity: 2 }] },
      { external_id: "K", job_number: `${source}-K`, parts: [{ external_id: "Q1", part_number: "A", quantity: 1, operations: [op("O9", 1)] }] }
    ]
  ) expect((await side.api.put("/api-jobs/sync", { ...job, external_source: source })).status).toBe(201)
  for (const [external_id, name] of [["C1", "A"], ["C2", "B"]]) {
    expect((await side.api.put("/api-cells/sync", { external_id, external_source: source, name: `${source}-${name}`, sequence: 1 })).status).toBe(201)
  }
  for (const external_id of ["R1", "R2"]) {
    expect((await side.api.put("/api-resources/sync", { external_id, external_source: source, name: "Press", type: "tooling", location: "Bay 1" })).status).toBe(201)
  }
}

type Result = { readonly action: string }
const resultOf = (res: { status: number; body: any }): Result =>
  res.status === 200 || res.status === 201 ? { action: res.body.data.action } : { action: `error ${res.status}` }
// a bulk reports a refusal as an error without its status: the record-by-record answers are compared by action
const bulkResultOf = (r: any): Result => ({ action: r.action })
const plain = (results: ReadonlyArray<Result>) => results.map((r) => (r.action.startsWith("error") ? "error" : r.action))

const state = async (side: Side, source: string) => ({
  operations: await h.sql(
    `SELECT o.external_id, p.external_id AS part, o.sequence, c.name AS cell, o.operation_name, o.notes, o.estimated_time_minutes
     FROM operations o JOIN parts p ON p.tenant_id = o.tenant_id AND p.id = o.part_id LEFT JOIN cells c ON c.tenant_id = o.tenant_id AND c.id = o.cell_id
     WHERE o.tenant_id = $1 AND o.external_source = $2 ORDER BY o.external_id`,
    [side.tenantId, source]
  ),
  parts: await h.sql(
    `SELECT p.external_id, j.external_id AS job, p.part_number, p.quantity, p.material, p.notes
     FROM parts p JOIN jobs j ON j.tenant_id = p.tenant_id AND j.id = p.job_id
     WHERE p.tenant_id = $1 AND p.external_source = $2 ORDER BY p.external_id`,
    [side.tenantId, source]
  ),
  // the part events of the run, in the order they were written
  events: (await h.sql(
    `SELECT event_type, data FROM event_log WHERE tenant_id = $1 AND event_type LIKE 'part.%' ORDER BY seq`,
    [side.tenantId]
  )).map((e) => [e.event_type, JSON.parse(e.data as string)]).filter(([, d]) => JSON.stringify(d).includes(`"${source}"`))
    .map(([type, d]) => [type, (d.part ?? d).external_id, (d.part ?? d).quantity]),
  cells: await h.sql(
    "SELECT external_id, name, color, sequence, active FROM cells WHERE tenant_id = $1 AND external_source = $2 ORDER BY external_id",
    [side.tenantId, source]
  ),
  resources: await h.sql(
    "SELECT external_id, name, type, description, location FROM resources WHERE tenant_id = $1 AND external_source = $2 ORDER BY external_id",
    [side.tenantId, source]
  ),
  usage: (await h.sql("SELECT current_month_parts FROM tenant_usage WHERE tenant_id = $1", [side.tenantId]))[0]!.current_month_parts
})

const maybe = <A>(arb: fc.Arbitrary<A>) => fc.option(arb, { nil: undefined, freq: 2 })
const defined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))

const operationRecord = fc.record({
  external_id: fc.constantFrom("O1", "O2", "O3", "O4", "O5", "O6", "O7", "O8", "O9"),
  part_external_id: fc.constantFrom("P1", "P1", "P2", "Q1", "nope"),
  cell_name: fc.constantFrom("Saw", "Saw", "Weld", "Nope"),
  operation_name: fc.constantFrom("Cut", "Bend"),
  // mostly left to the database; a given one mostly apart from the others (a taken one undoes the statement)
  sequence: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: fc.integer({ min: 1, max: 40 }) }),
  notes: maybe(fc.constantFrom("n1", "n2")),
  estimated_time_minutes: maybe(fc.constantFrom(5, 10))
}).map(defined)

const partRecord = fc.record({
  external_id: fc.constantFrom("P1", "P2", "P3", "P4", "P5", "Q1"),
  job_external_id: fc.constantFrom("J", "J", "K", "nope"),
  part_number: fc.constantFrom("A", "B", "C", "D", "E", "F"),
  quantity: fc.integer({ min: 1, max: 3 }),
  material: maybe(fc.constantFrom("S355", "AlMg3")),
  notes: maybe(fc.constantFrom("n1", "n2")),
  current_cell_id: maybe(fc.constant("00000000-0000-4000-8000-000000000000"))
}).map(defined)

const cellRecord = fc.record({
  external_id: fc.constantFrom("C1", "C2", "C3", "C4", "C5"),
  name: fc.constantFrom("A", "B", "C", "D", "E", "F"),
  color: maybe(fc.constantFrom("#ff0000", "#00ff00")),
  sequence: maybe(fc.integer({ min: 1, max: 5 })),
  active: maybe(fc.boolean())
}).map(defined)

const resourceRecord = fc.record({
  external_id: fc.constantFrom("R1", "R2", "R3", "R4", "R5"),
  name: fc.constantFrom("Press", "Jig", "Fixture"),
  type: fc.constantFrom("tooling", "fixture", "mold"),
  description: maybe(fc.constantFrom("d1", "d2")),
  location: maybe(fc.constantFrom("Bay 1", "Bay 2"))
}).map(defined)

/**
 * Record lists: mostly each row once (one statement syncs them all), sometimes a row twice (then the bulk goes
 * record by record).
 */
const recordLists = (record: fc.Arbitrary<Record<string, unknown>>, maxLength: number) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.uniqueArray(record, { minLength: 1, maxLength, selector: (r) => r.external_id }) },
    { weight: 1, arbitrary: fc.array(record, { minLength: 2, maxLength }) }
  )

/** One draw: both tenants seeded alike, A bulk-syncs the records, B PUTs them in order; answers and state compared. */
const compare = (kind: "parts" | "operations" | "cells" | "resources") => async (records: ReadonlyArray<Record<string, unknown>>) => {
  const source = `m${++run}`
  await seed(bulk, source)
  await seed(oneByOne, source)
  // names of cells are unique in a tenant: each run names its own
  const withSource = records.map((r) => ({ ...r, external_source: source, ...(kind === "cells" ? { name: `${source}-${r.name}` } : {}) }))
  const res = await bulk.api.post(`/api-${kind}/bulk-sync`, { [kind]: withSource })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  const expected: Array<Result> = []
  for (const r of withSource) expected.push(resultOf(await oneByOne.api.put(`/api-${kind}/sync`, r)))
  const where = JSON.stringify(records)
  expect(plain(res.body.data.results.map(bulkResultOf)), where).toEqual(plain(expected))
  expect(res.body.data.errors, where).toBe(expected.filter((r) => r.action.startsWith("error")).length)
  const [a, b] = [await state(bulk, source), await state(oneByOne, source)]
  expect(a.operations, where).toEqual(b.operations)
  expect(a.parts, where).toEqual(b.parts)
  expect(a.events, where).toEqual(b.events)
  expect(a.cells, where).toEqual(b.cells)
  expect(a.resources, where).toEqual(b.resources)
  expect(Number(a.usage), where).toBe(Number(b.usage))
  return true
}

describe("bulk-sync of parts, operations, cells and resources against the records synced one after another (seed MES_MODEL_SEED)", () => {
  it("operations: the same answers, rows and sequences", async () => {
    await fc.assert(fc.asyncProperty(recordLists(operationRecord, 9), compare("operations")), { seed: SEED, numRuns: RUNS })
  }, 240_000)

  it("parts: the same answers, rows, part events and usage count", async () => {
    await fc.assert(fc.asyncProperty(recordLists(partRecord, 6), compare("parts")), { seed: SEED, numRuns: RUNS })
  }, 240_000)

  it("cells and resources: the same answers and rows", async () => {
    await fc.assert(fc.asyncProperty(recordLists(cellRecord, 5), compare("cells")), { seed: SEED, numRuns: RUNS })
    await fc.assert(fc.asyncProperty(recordLists(resourceRecord, 5), compare("resources")), { seed: SEED, numRuns: RUNS })
  }, 240_000)

  it("new operations without sequence come after the stored ones and after what the records before them gave", async () => {
    const source = `m${++run}`
    await seed(bulk, source)
    const op = (external_id: string, extra: Record<string, unknown> = {}) => ({ external_id, external_source: source, part_external_id: "P1", cell_name: "Weld", operation_name: "New", ...extra })
    expect((await bulk.api.put("/api-operations/sync", op("O4", { sequence: 8 }))).status).toBe(201)
    const res = await bulk.api.post("/api-operations/bulk-sync", {
      operations: [op("O4", { sequence: 5 }), op("N1"), op("N2", { sequence: 10 }), op("N3"), op("O2", { sequence: 2 }), op("N4", { part_external_id: "P2" }), op("N5", { cell_name: "Nope" }), op("O9")]
    })
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({ total: 8, created: 4, updated: 2, errors: 2 })
    expect(res.body.data.results.map((r: any) => r.action)).toEqual(["updated", "created", "created", "created", "updated", "created", "error", "error"])
    expect(res.body.data.results[6].error).toContain("cell_name")
    expect(res.body.data.results[7].error).toBe("operation O9 belongs to another part")
    // O4 moved from 8 to 5 before N1: N1 comes after 5, not after 8
    const { operations } = await state(bulk, source)
    expect(operations.map((o) => [o.external_id, o.part, o.sequence])).toEqual([
      ["N1", "P1", 6], ["N2", "P1", 10], ["N3", "P1", 11], ["N4", "P2", 1], ["O1", "P1", 1], ["O2", "P1", 2], ["O4", "P1", 5], ["O9", "Q1", 1]
    ])
  })
})
