// Store-level guarantees on the real driver (PGlite, or PostgreSQL with DATABASE_URL): migrations
// apply once, a transaction that fails halfway leaves nothing, guarded moves have one winner.
import { Cause, Effect, Exit } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { describe, expect, it } from "vitest"
import { Conflict, Jobs, Parts, Sync, Tenants, Tx } from "@mes/domain"
import { migrate, PlannerStatistics, splitStatements, testDatabaseKind } from "../src/index.ts"
import { mapConstraints } from "../src/constraints.ts"
import { asTenant, useDomainApp } from "./domain-app.ts"

const run = useDomainApp()

describe("splitStatements", () => {
  it("splits on semicolons outside quotes, dollar-quoted bodies and comments", () => {
    const sql = `CREATE TABLE a (x text DEFAULT 'a;b'); -- c;d
      /* e; f */ CREATE FUNCTION f() RETURNS int AS $body$ BEGIN RETURN 1; END $body$ LANGUAGE plpgsql;
      SELECT "weird;name" FROM a;`
    const parts = splitStatements(sql)
    expect(parts).toHaveLength(3)
    expect(parts[0]).toContain("'a;b'")
    expect(parts[1]).toContain("RETURN 1; END")
    expect(parts[2]).toContain(`"weird;name"`)
  })

  it("drops empty and comment-only statements", () => {
    expect(splitStatements("-- only a comment\n;  ;\nSELECT 1;")).toEqual(["SELECT 1"])
  })
})

describe("database errors", () => {
  /** What mapConstraints makes of a statement that fails with `code` (and `constraint`), as the driver reports it. */
  const mapped = (code: string, constraint?: string) =>
    run(Effect.flatMap(Effect.service(SqlClient), (sql) =>
      mapConstraints(sql.unsafe(`DO $$ BEGIN RAISE EXCEPTION 'raised' USING ERRCODE = '${code}'${constraint ? `, CONSTRAINT = '${constraint}'` : ""}; END $$`)).pipe(
        Effect.exit,
        Effect.map((exit) => {
          if (Exit.isSuccess(exit)) return "succeeded"
          const error = Cause.findErrorOption(exit.cause)
          return error._tag === "Some" && error.value instanceof Conflict ? `409 ${error.value.message}` : Cause.hasDies(exit.cause) ? "defect" : "other"
        })
      )))

  it("a deadlock or serialization failure is a 409 to retry (nothing was written), an unknown error a defect", async () => {
    const retry = "409 a concurrent write changed records this request writes; nothing was written, retry it"
    expect(await mapped("40P01")).toBe(retry)
    expect(await mapped("40001")).toBe(retry)
    expect(await mapped("23505", "jobs_tenant_job_number_key")).toBe("409 job_number already exists")
    expect(await mapped("XX000")).toBe("defect")
    expect(await mapped("23514", "no_such_constraint")).toBe("defect")
  })
})

describe("migrations", () => {
  it("a second run applies nothing", async () => {
    expect(await run(migrate)).toEqual([])
  })

  it("leaves no table never analyzed, so a first import plans its checks by the right index", async () => {
    // a table with reltuples < 0 has no statistics at all: the planner costs every index that starts with
    // tenant_id alike (statistics.ts); the first bulk sync of 1,000 jobs then timed out after 30 s
    const fresh = await run(Effect.gen(function*() {
      const sql = yield* SqlClient
      yield* sql`CREATE TABLE tmp_never_analyzed (tenant_id uuid, id uuid)`
      const before = yield* sql<{ name: string }>`SELECT relname AS name FROM pg_class WHERE relname = 'tmp_never_analyzed' AND reltuples < 0`
      yield* migrate
      const after = yield* sql<{ name: string }>`
        SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
        WHERE c.relkind = 'r' AND c.reltuples < 0`
      yield* sql`DROP TABLE tmp_never_analyzed`
      return { before: before.map((r) => r.name), after: after.map((r) => r.name) }
    }))
    expect(fresh).toEqual({ before: ["tmp_never_analyzed"], after: [] })
  })
})

describe("planner statistics", () => {
  const sqlRun = <A>(f: (sql: SqlClient) => Effect.Effect<A, unknown>) => run(Effect.flatMap(Effect.service(SqlClient), f))
  // inserts committed rows into `table` and makes the statistics system count them now (it reports at most once a second)
  const insertCommitted = (table: string) => (from: number, to: number) =>
    sqlRun((sql) => Effect.gen(function*() {
      yield* sql.unsafe(`INSERT INTO ${table} SELECT g, repeat('x', 50) FROM generate_series($1::int, $2::int) g`, [from, to])
      yield* sql`SELECT pg_stat_force_next_flush()`
    }))
  const reltuples = () =>
    sqlRun((sql) => sql<{ n: number }>`SELECT reltuples::float8 AS n FROM pg_class WHERE relname = 'tmp_watch'`).then((r) => r[0]!.n)

  it("the serving process analyzes a table analyzed empty once it holds committed rows, not while they are uncommitted", async () => {
    await sqlRun((sql) => Effect.gen(function*() {
      yield* sql`CREATE TABLE tmp_watch (id int PRIMARY KEY, v text)`
      yield* sql`ANALYZE tmp_watch`
    }))
    expect(await reltuples()).toBe(0)
    if (testDatabaseKind() === "postgres") {
      // an import holds 2,000 uncommitted rows while the watcher looks (PGlite has one connection: nobody looks then)
      let inserted!: () => void
      let release!: () => void
      const insertedP = new Promise<void>((r) => (inserted = r))
      const released = new Promise<void>((r) => (release = r))
      const importing = sqlRun((sql) => sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO tmp_watch SELECT g, repeat('x', 50) FROM generate_series(1, 2000) g`
        inserted()
        yield* Effect.promise(() => released)
      })))
      await insertedP
      expect(await run(PlannerStatistics.analyzeFilled(["tmp_watch"]))).toBe(true)
      expect(await reltuples()).toBe(0)
      release()
      await importing
    } else {
      await sqlRun((sql) => sql`INSERT INTO tmp_watch SELECT g, repeat('x', 50) FROM generate_series(1, 2000) g`)
    }
    expect(await run(PlannerStatistics.analyzeFilled(["tmp_watch"]))).toBe(false)
    expect(await reltuples()).toBeGreaterThan(1000)
    await sqlRun((sql) => sql`DROP TABLE tmp_watch`)
  })

  it("the serving process analyzes a table again once its committed rows grew eightfold, not before", async () => {
    const insert = insertCommitted("tmp_grow")
    const tuples = () =>
      sqlRun((sql) => sql<{ n: number }>`SELECT reltuples::float8 AS n FROM pg_class WHERE relname = 'tmp_grow'`).then((r) => r[0]!.n)
    await sqlRun((sql) => sql`CREATE TABLE tmp_grow (id int PRIMARY KEY, v text)`)
    await insert(1, 1000)
    await sqlRun((sql) => sql`ANALYZE tmp_grow`)
    expect(await tuples()).toBe(1000)
    await insert(1001, 4000)
    expect(await run(PlannerStatistics.analyzeFilled(["tmp_grow"]))).toBe(false)
    expect(await tuples()).toBe(1000)
    await insert(4001, 8000)
    await run(PlannerStatistics.analyzeFilled(["tmp_grow"]))
    expect(await tuples()).toBe(8000)
    await sqlRun((sql) => sql`DROP TABLE tmp_grow`)
  })

  it("the serving process vacuums a table once a burst of inserts has settled, not while it goes on nor for a few rows", async () => {
    const insert = insertCommitted("tmp_settle")
    const visible = () =>
      sqlRun((sql) => sql<{ n: number }>`SELECT relallvisible::int AS n FROM pg_class WHERE relname = 'tmp_settle'`).then((r) => r[0]!.n)
    const seen = new Map<string, number>()
    const round = () => run(PlannerStatistics.vacuumSettled(["tmp_settle"], seen))
    await sqlRun((sql) => sql`CREATE TABLE tmp_settle (id int PRIMARY KEY, v text)`)
    await insert(1, 1000)
    expect(await round()).toEqual([]) // first sight: not known to have settled
    await insert(1001, 2000)
    expect(await round()).toEqual([]) // still growing
    expect(await visible()).toBe(0)
    expect(await round()).toEqual(["tmp_settle"]) // unchanged since the last round
    expect(await visible()).toBeGreaterThan(0)
    expect(await round()).toEqual([]) // nothing inserted since
    await insert(2001, 2300)
    await round()
    expect(await round()).toEqual([]) // settled, but 300 rows are too few to be worth it
    await sqlRun((sql) => sql`DROP TABLE tmp_settle`)
  })
})

describe("transactions", () => {
  it("a job create that fails halfway (after the job and parts rows) leaves nothing written", async () => {
    const { tenant } = await run(Effect.flatMap(Effect.service(Tenants), (t) => t.create({ name: "Tx" })))
    // the domain accepts the input; a temporary CHECK makes the database refuse the third statement
    // of the nested insert (operations), after the job and part rows went in
    await run(Effect.gen(function*() {
      const sql = yield* SqlClient
      yield* sql`ALTER TABLE operations ADD CONSTRAINT tmp_no_x CHECK (operation_name <> 'explode')`
    }))
    const exit = await run(Effect.exit(asTenant(tenant.id, Effect.flatMap(Effect.service(Jobs), (jobs) =>
      jobs.create({ job_number: "TX-1", parts: [{ part_number: "P", quantity: 1, operations: [{ operation_name: "explode", sequence: 1 }] }] })
    ))))
    expect(Exit.isFailure(exit)).toBe(true)
    const counts = await run(Effect.gen(function*() {
      const sql = yield* SqlClient
      yield* sql`ALTER TABLE operations DROP CONSTRAINT tmp_no_x`
      const [row] = yield* sql<{ jobs: number; parts: number; events: number; counted: number }>`
        SELECT (SELECT count(*)::int FROM jobs WHERE tenant_id = ${tenant.id}) AS jobs,
               (SELECT count(*)::int FROM parts WHERE tenant_id = ${tenant.id}) AS parts,
               (SELECT count(*)::int FROM event_log WHERE tenant_id = ${tenant.id}) AS events,
               (SELECT current_month_parts FROM tenant_usage WHERE tenant_id = ${tenant.id}) AS counted`
      return row!
    }))
    expect(counts).toEqual({ jobs: 0, parts: 0, events: 0, counted: 0 })
  })

  it("a nested create inside a transaction runs on its connection: a failure after it undoes it too", async () => {
    // creates outside transactions coalesce (coalesce.ts); one inside must not leave for the pool
    const { tenant } = await run(Effect.flatMap(Effect.service(Tenants), (t) => t.create({ name: "In tx" })))
    const create = (n: string) =>
      Effect.flatMap(Effect.service(Jobs), (jobs) =>
        jobs.create({ job_number: n, parts: [{ part_number: "P", quantity: 1, operations: [{ operation_name: "o", sequence: 1 }] }] }))
    const outside = Promise.all(["OUT-1", "OUT-2", "OUT-3"].map((n) => run(asTenant(tenant.id, create(n)))))
    const exit = await run(Effect.exit(asTenant(tenant.id, Effect.flatMap(Effect.service(Tx), (tx) =>
      tx.transaction(Effect.gen(function*() {
        yield* create("IN-1")
        return yield* Effect.fail("after the create")
      }))))))
    await outside
    expect(Exit.isFailure(exit)).toBe(true)
    const numbers = await run(Effect.flatMap(SqlClient, (sql) =>
      sql<{ job_number: string }>`SELECT job_number FROM jobs WHERE tenant_id = ${tenant.id} ORDER BY job_number`))
    expect(numbers.map((r) => r.job_number)).toEqual(["OUT-1", "OUT-2", "OUT-3"])
  })

  it("guarded moves: of 10 concurrent starts exactly one succeeds", async () => {
    const { tenant } = await run(Effect.flatMap(Effect.service(Tenants), (t) => t.create({ name: "Race" })))
    const job = await run(asTenant(tenant.id, Effect.flatMap(Effect.service(Jobs), (jobs) =>
      jobs.create({ job_number: "R-1", parts: [{ part_number: "P", quantity: 1, operations: [{ operation_name: "o", sequence: 1 }] }] })
    )))
    const exits = await Promise.all(Array.from({ length: 10 }, () =>
      run(Effect.exit(asTenant(tenant.id, Effect.flatMap(Effect.service(Jobs), (jobs) => jobs.transition(job.job_id, "start")))))
    ))
    expect(exits.filter(Exit.isSuccess)).toHaveLength(1)
  })
})

describe("stored record JSON (jobs.doc, parts.doc)", () => {
  it("is the record's JSON however the row was written: nested create, sync (insert and update), single insert, update", async () => {
    // the nested create and the syncs compute doc in their INSERT (insertSelect): they run with the insert triggers off;
    // a single part insert leaves it to the insert trigger, an update to the update trigger (migration 0025)
    const { tenant } = await run(Effect.flatMap(Effect.service(Tenants), (t) => t.create({ name: "Docs" })))
    const insertTriggers = (on: boolean) =>
      Effect.flatMap(SqlClient, (sql) =>
        Effect.forEach(["jobs", "parts"], (t) => sql.unsafe(`ALTER TABLE ${t} ${on ? "ENABLE" : "DISABLE"} TRIGGER ${t}_doc_insert`)))
    const job = await run(asTenant(tenant.id, Effect.gen(function*() {
      const jobs = yield* Jobs
      const sync = yield* Sync
      yield* insertTriggers(false)
      const job = yield* jobs.create({
        job_number: "D-1", customer: "Acme", due_date: "2026-12-31", metadata: { a: [1, "x"] },
        parts: [{ part_number: "P-1", quantity: 2, material: "S355", operations: [{ operation_name: "Cut", sequence: 1 }] }]
      })
      for (const customer of ["Erp", "Erp 2"]) {
        yield* sync.job({
          external_id: "E-1", external_source: "erp", job_number: "D-2", customer,
          parts: [{ external_id: "EP-1", part_number: "Q-1", quantity: 1, operations: [{ external_id: "EO-1", operation_name: "Saw", sequence: 1 }] }]
        })
      }
      yield* sync.part({ external_id: "SP-1", external_source: "erp", job_external_id: "E-1", part_number: "Q-2", quantity: 4 })
      return job
    }).pipe(Effect.ensuring(Effect.orDie(insertTriggers(true))))))
    const created = await run(asTenant(tenant.id, Effect.gen(function*() {
      const single = yield* Effect.flatMap(Effect.service(Parts), (parts) =>
        parts.create({ job_id: job.job_id, part_number: "P-2", quantity: 3, notes: "one \"quoted\" note" }))
      yield* Effect.flatMap(Effect.service(Jobs), (jobs) => jobs.transition(job.job_id, "start"))
      return single
    })))
    const stale = await run(Effect.flatMap(SqlClient, (sql) =>
      sql<{ jobs: number; parts: number; all_jobs: number; all_parts: number }>`
        SELECT (SELECT count(*)::int FROM jobs WHERE tenant_id = ${tenant.id} AND doc IS DISTINCT FROM jobs_json(jobs)) AS jobs,
               (SELECT count(*)::int FROM parts WHERE tenant_id = ${tenant.id} AND doc IS DISTINCT FROM parts_json(parts)) AS parts,
               (SELECT count(*)::int FROM jobs WHERE tenant_id = ${tenant.id}) AS all_jobs,
               (SELECT count(*)::int FROM parts WHERE tenant_id = ${tenant.id}) AS all_parts`))
    expect(created.part_number).toBe("P-2")
    expect(stale).toEqual([{ jobs: 0, parts: 0, all_jobs: 2, all_parts: 4 }])
  })
})

describe("write coalescing on the production pool (statements of requests pipelined down shared connections)", () => {
  const pipelined = useDomainApp({ pipeline: 4 })

  it.skipIf(testDatabaseKind() !== "postgres")("two coalesced creates in flight at once run on two connections, not one after the other down one", async () => {
    // the pool pipelines statements of concurrent requests down a shared connection (client.ts); the batches a tenant
    // has in flight at once (up to MES_DB_WRITE_SLOTS; the second of two creates goes beside the first) must each have
    // a server process, or they run one after the other
    const { tenant } = await pipelined(Effect.flatMap(Effect.service(Tenants), (t) => t.create({ name: "Two slots" })))
    await pipelined(Effect.flatMap(SqlClient, (sql) => Effect.gen(function*() {
      yield* sql`CREATE TABLE tmp_backends (pid int)`
      yield* sql.unsafe(`CREATE FUNCTION tmp_slow_job() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.job_number LIKE 'SLOW-%' THEN PERFORM pg_sleep(0.3); INSERT INTO tmp_backends VALUES (pg_backend_pid()); END IF; RETURN NEW; END $$`)
      yield* sql`CREATE TRIGGER tmp_slow_job BEFORE INSERT ON jobs FOR EACH ROW EXECUTE FUNCTION tmp_slow_job()`
    })))
    const create = (n: string) =>
      Effect.flatMap(Effect.service(Jobs), (jobs) =>
        jobs.create({ job_number: n, parts: [{ part_number: "P", quantity: 1, operations: [{ operation_name: "o", sequence: 1 }] }] }))
    await Promise.all(["SLOW-1", "SLOW-2"].map((n) => pipelined(asTenant(tenant.id, create(n)))))
    const backends = await pipelined(Effect.flatMap(SqlClient, (sql) => Effect.gen(function*() {
      const rows = yield* sql<{ n: number; rows: number }>`SELECT count(DISTINCT pid)::int AS n, count(*)::int AS rows FROM tmp_backends`
      yield* sql`DROP TRIGGER tmp_slow_job ON jobs`
      yield* sql`DROP FUNCTION tmp_slow_job()`
      yield* sql`DROP TABLE tmp_backends`
      return rows[0]!
    })))
    expect(backends).toEqual({ n: 2, rows: 2 })
  })
})

describe("tenant deletion", () => {
  it("removes the tenant's jobs, parts, operations, time entries and usage (parts and operations reach it through their job)", async () => {
    const { tenant } = await run(Effect.flatMap(Effect.service(Tenants), (t) => t.create({ name: "Gone" })))
    const created = await run(asTenant(tenant.id, Effect.flatMap(Effect.service(Jobs), (jobs) =>
      jobs.create({ job_number: "G-1", parts: [{ part_number: "P", quantity: 1, operations: [{ operation_name: "o", sequence: 1 }] }] }))))
    const counts = () =>
      run(Effect.gen(function*() {
        const sql = yield* SqlClient
        const [row] = yield* sql<{ jobs: number; parts: number; operations: number; entries: number; usage: number }>`
          SELECT (SELECT count(*)::int FROM jobs WHERE tenant_id = ${tenant.id}) AS jobs,
                 (SELECT count(*)::int FROM parts WHERE tenant_id = ${tenant.id}) AS parts,
                 (SELECT count(*)::int FROM operations WHERE tenant_id = ${tenant.id}) AS operations,
                 (SELECT count(*)::int FROM time_entries WHERE tenant_id = ${tenant.id}) AS entries,
                 (SELECT count(*)::int FROM part_usage WHERE tenant_id = ${tenant.id}) AS usage`
        return row!
      }))
    await run(Effect.gen(function*() {
      const sql = yield* SqlClient
      const operationId = created.parts[0]!.operations[0]!.operation_id
      yield* sql`INSERT INTO time_entries (tenant_id, id, operation_id, start_time) VALUES (${tenant.id}, gen_random_uuid(), ${operationId}, now())`
    }))
    expect(await counts()).toEqual({ jobs: 1, parts: 1, operations: 1, entries: 1, usage: 1 })
    await run(Effect.gen(function*() {
      const sql = yield* SqlClient
      yield* sql`DELETE FROM tenants WHERE id = ${tenant.id}`
    }))
    expect(await counts()).toEqual({ jobs: 0, parts: 0, operations: 0, entries: 0, usage: 0 })
  })
})

describe("tenants", () => {
  it("are the schema's Tenant however they are read (create, get, list, set-plan): times are ISO strings, as the API writes them", async () => {
    const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
    const read = await run(Effect.gen(function*() {
      const tenants = yield* Tenants
      const { tenant: created } = yield* tenants.create({ name: "Times", plan: "pro" })
      return { created, got: yield* tenants.get(created.id), listed: (yield* tenants.list()).find((t) => t.id === created.id), moved: yield* tenants.setPlan(created.id, "premium") }
    }))
    // the driver gave Date objects where Tenant says strings: `created_at.slice` threw in an embedding service
    const expected = { id: read.created.id, name: "Times", plan: "pro", status: "active", current_month_parts: 0, created_at: expect.stringMatching(ISO), updated_at: expect.stringMatching(ISO) }
    expect(read.created).toEqual(expected)
    expect(read.got).toEqual({ ...expected, created_at: read.created.created_at })
    expect(read.listed).toEqual(read.got)
    expect(read.moved).toEqual({ ...read.got, plan: "premium", updated_at: expect.stringMatching(ISO) })
  })
})
