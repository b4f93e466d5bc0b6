// PostgreSQL ends the server's backends while requests run (a restart, a failover, an operator's
// pg_terminate_backend). Each request in flight is answered 2xx or 503 SERVICE_UNAVAILABLE with Retry-After,
// never 500 and never left hanging; each write happened whole or not at all (a job with all its parts and
// operations, their events and their usage rows; a bulk's records together; an Idempotency-Key with its job);
// a client that retries its 503s with the same Idempotency-Key ends with exactly one job each; the pool serves
// the next requests; and creates that travelled together in one statement are not sent again once its
// connection is lost (it may have committed). And a statement the database gives up on (cancelled by a
// statement_timeout or pg_cancel_backend, a lock not had within lock_timeout) is 503 too, having written nothing.
// A database that takes no writes (a standby, a primary demoted by a failover) serves reads, even to a key not
// used before, and answers writes 503; one out of resources (too many connections, a full disk) is 503 as well.
// PostgreSQL only: PGlite runs inside the process.
import { testDatabaseKind } from "@mes/adapters-pg"
import { Effect, Exit } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { databaseUnavailable } from "../src/unavailable.ts"
import { client, expectError, type Harness, nestedJob, type Reply, retryWhile, sleep, startServer } from "./harness.ts"

type Kind = "create" | "keyed" | "bulk" | "list"
interface Answer {
  readonly kind: Kind
  /** The job numbers the request writes. */
  readonly numbers: ReadonlyArray<string>
  readonly key?: string
  readonly res: Reply
}

const KINDS: ReadonlyArray<Kind> = ["create", "keyed", "bulk", "list"]

/**
 * Holds the jobs table in `mode` in a transaction of its own (a connection of its own), so that the statements that
 * need it wait in the database; the returned function lets it go (commits) and waits until it has.
 */
const holdJobs = async (h: Harness, mode: "SHARE ROW EXCLUSIVE" | "ACCESS EXCLUSIVE") => {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let locked!: () => void
  const holding = new Promise<void>((resolve) => (locked = resolve))
  const done = h.run(Effect.flatMap(Effect.service(SqlClient), (sql) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* sql.unsafe(`LOCK TABLE jobs IN ${mode} MODE`)
      locked()
      yield* Effect.promise(() => released)
    }))))
  await holding
  return async () => {
    release()
    await done
  }
}

/** Ends (`pg_terminate_backend`) or cancels (`pg_cancel_backend`) the test database's statements that wait for a lock; waits (at most 3 s) until there is one. */
const signalWaiting = async (h: Harness, signal: "pg_terminate_backend" | "pg_cancel_backend") => {
  for (let i = 0; i < 150; i++) {
    const [{ n }] = (await h.sql(
      `SELECT count(${signal}(pid))::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`
    )) as [{ n: number }]
    if (n > 0) return n
    await sleep(20)
  }
  return 0
}

describe.skipIf(testDatabaseKind() !== "postgres")("PostgreSQL ends the server's backends under load", () => {
  let h: Harness
  let api: ReturnType<typeof client>
  let tenantId: string
  beforeAll(async () => {
    h = await startServer()
    ;({ api, tenantId } = await h.as("Ended"))
  })
  afterAll(() => h?.close())

  const bulkRecord = (n: string) => ({
    external_id: n,
    external_source: "erp",
    job_number: n,
    parts: [{ external_id: `${n}-p`, part_number: "A", quantity: 1, operations: [{ external_id: `${n}-o`, operation_name: "Saw", sequence: 1 }] }]
  })

  const send = (kind: Kind, w: number, i: number): Promise<Answer> => {
    const n = `${kind.toUpperCase()}-${w}-${i}`
    switch (kind) {
      case "create":
        return api.post("/api-jobs", nestedJob(n, 3, 2)).then((res) => ({ kind, numbers: [n], res }))
      case "keyed":
        return api.post("/api-jobs", nestedJob(n, 3, 2), { headers: { "idempotency-key": `key-${n}` } }).then((res) => ({ kind, numbers: [n], key: `key-${n}`, res }))
      case "bulk":
        return api.post("/api-jobs/bulk-sync", { items: [bulkRecord(`${n}-a`), bulkRecord(`${n}-b`)] }).then((res) => ({ kind, numbers: [`${n}-a`, `${n}-b`], res }))
      case "list":
        return api.get("/api-jobs?limit=20").then((res) => ({ kind, numbers: [], res }))
    }
  }

  /** Ends every other backend of the test's database, through the server's own pool (retried: its connection may be one ended before). */
  const endBackends = async () => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await h.sql("SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
      } catch (e) {
        if (attempt === 5) throw e
        await sleep(50)
      }
    }
  }

  // PostgreSQL's FATAL reaches a connection idle in a transaction; the driver keeps it as the connection's end and
  // fails the transaction's next statement with it as an unknown error, which was answered 500
  it.each([
    [
      "pg_terminate_backend (57P01, as a restart or a failover)",
      (mark: string) =>
        Effect.promise(() =>
          h.sql(
            `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
             WHERE pid <> pg_backend_pid() AND state = 'idle in transaction' AND query LIKE '%' || $1 || '%'`,
            [mark]
          )
        ).pipe(Effect.map((rows) => expect(rows).toEqual([{ n: 1 }])))
    ],
    [
      "idle_in_transaction_session_timeout (25P03)",
      () => Effect.flatMap(Effect.service(SqlClient), (sql) => sql`SET LOCAL idle_in_transaction_session_timeout = '50ms'`)
    ]
  ])("a connection ended by %s while nothing was in flight fails its next statement as the database being unreachable", async (_, end) => {
    const mark = `ended-${globalThis.crypto.randomUUID()}`
    const exit = await h.run(Effect.exit(Effect.flatMap(Effect.service(SqlClient), (sql) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql.unsafe(`SELECT '${mark}' AS mark`)
        yield* end(mark)
        yield* Effect.sleep("300 millis") // the FATAL arrives while nothing is in flight
        return yield* sql`SELECT 1 AS one`
      })))))
    expect(Exit.isFailure(exit) ? databaseUnavailable(exit.cause)?.log : exit).toBe("database unreachable")
    expect((await api.get("/api-jobs?limit=1")).status).toBe(200)
  })

  it("answers each request 2xx or 503, writes each whole or not at all, and a keyed retry ends with one job", async () => {
    const answers: Array<Answer> = []
    let running = true
    const worker = async (w: number) => {
      for (let i = 0; running; i++) answers.push(await send(KINDS[(w + i) % KINDS.length]!, w, i))
    }
    const workers = Array.from({ length: 12 }, (_, w) => worker(w))
    // end the backends every 150 ms until requests in flight were cut (503) at least three times over
    for (let rounds = 0; rounds < 60 && answers.filter((a) => a.res.status === 503).length < 3; rounds++) {
      await sleep(150)
      await endBackends()
    }
    running = false
    await Promise.all(workers)

    // every answer is a success or the spec's 503, never a 500
    const statuses = new Map<string, number>()
    for (const a of answers) statuses.set(`${a.kind} ${a.res.status}`, (statuses.get(`${a.kind} ${a.res.status}`) ?? 0) + 1)
    const unexpected = answers.filter((a) => a.res.status !== 503 && a.res.status !== (a.kind === "create" || a.kind === "keyed" ? 201 : 200))
    expect(unexpected.map((a) => [a.kind, a.res.status, a.res.body]), JSON.stringify([...statuses])).toEqual([])
    const cut = answers.filter((a) => a.res.status === 503)
    expect(cut.length).toBeGreaterThanOrEqual(3)
    for (const a of cut) {
      expectError(a.res, 503, "SERVICE_UNAVAILABLE")
      expect(a.res.headers.get("retry-after")).toBe("5")
    }

    // what was written, written whole: each job with all its parts and operations, and nothing else
    const rows = await h.sql(
      `SELECT j.job_number, count(DISTINCT p.id)::int AS parts, count(o.id)::int AS operations
       FROM jobs j LEFT JOIN parts p ON p.tenant_id = j.tenant_id AND p.job_id = j.id
         LEFT JOIN operations o ON o.tenant_id = p.tenant_id AND o.part_id = p.id
       WHERE j.tenant_id = $1 GROUP BY j.job_number`,
      [tenantId]
    )
    const stored = new Map(rows.map((r) => [String(r.job_number), [r.parts, r.operations]]))
    const writes = answers.filter((a) => a.kind !== "list")
    for (const a of writes) {
      const shape = a.kind === "bulk" ? [1, 1] : [3, 2 * 3]
      const found = a.numbers.filter((n) => stored.has(n))
      // a bulk is one transaction: both of its records, or neither
      expect(found.length === 0 || found.length === a.numbers.length, `${a.kind} ${a.numbers.join(" ")} ${a.res.status}`).toBe(true)
      if (a.res.status !== 503) expect(found, `${a.kind} answered ${a.res.status}`).toEqual(a.numbers)
      for (const n of found) expect(stored.get(n), n).toEqual(shape)
    }
    expect(stored.size).toBe(new Set(writes.flatMap((a) => a.numbers.filter((n) => stored.has(n)))).size)

    // the events and the usage ledger went with the rows
    const [ledger] = await h.sql(
      `SELECT (SELECT count(*) FROM parts WHERE tenant_id = $1)::int AS parts,
              (SELECT coalesce(sum(parts), 0) FROM part_usage WHERE tenant_id = $1)::int AS counted,
              (SELECT count(*) FROM event_log WHERE tenant_id = $1 AND event_type = 'part.created')::int AS part_events,
              (SELECT count(*) FROM event_log WHERE tenant_id = $1 AND event_type = 'job.created')::int AS job_events`,
      [tenantId]
    )
    expect(ledger).toEqual({ parts: ledger!.parts, counted: ledger!.parts, part_events: ledger!.parts, job_events: stored.size })

    // an Idempotency-Key exists exactly when its job does
    const keys = new Set((await h.sql("SELECT key FROM idempotency_keys WHERE tenant_id = $1", [tenantId])).map((r) => String(r.key)))
    for (const a of writes.filter((a) => a.kind === "keyed")) expect(keys.has(a.key!), `${a.key} ${a.res.status}`).toBe(stored.has(a.numbers[0]!))

    // the pool serves the next requests; a keyed create cut by a 503 and sent again ends with one job
    expect((await api.get("/api-jobs?limit=1")).status).toBe(200)
    for (const a of cut.filter((a) => a.kind === "keyed")) {
      const again = await api.post("/api-jobs", nestedJob(a.numbers[0]!, 3, 2), { headers: { "idempotency-key": a.key! } })
      expect(again.status, `${a.key}`).toBe(201)
      expect(again.body.data.job.job_number).toBe(a.numbers[0])
    }
    const numbers = cut.filter((a) => a.kind === "keyed").map((a) => a.numbers[0]!)
    if (numbers.length > 0) {
      const [{ n }] = (await h.sql("SELECT count(*)::int AS n FROM jobs WHERE tenant_id = $1 AND job_number = ANY($2)", [tenantId, numbers])) as [{ n: number }]
      expect(n).toBe(numbers.length)
    }
  }, 60_000)
})

describe.skipIf(testDatabaseKind() !== "postgres")("creates that travel together, when PostgreSQL ends their statement's backend", () => {
  let h: Harness
  beforeAll(async () => {
    // one slot: the creates that arrive while one is in flight wait, then go together as one statement
    h = await startServer({ env: { MES_DB_WRITE_SLOTS: "1" } })
  })
  afterAll(() => h?.close())

  it("are each answered 503, and none is sent again on its own (it could find its own job taken)", async () => {
    const { api, tenantId } = await h.as("Together")
    // every create waits in the database until the holder lets the jobs table go
    const release = await holdJobs(h, "SHARE ROW EXCLUSIVE")
    try {
      const first = api.post("/api-jobs", nestedJob("TOGETHER-A"))
      await sleep(100) // A is in flight (waiting for the lock): B and C wait for the one slot
      const together = [api.post("/api-jobs", nestedJob("TOGETHER-B")), api.post("/api-jobs", nestedJob("TOGETHER-C"))]
      await sleep(100)
      expect(await signalWaiting(h, "pg_terminate_backend")).toBe(1) // A's statement
      expectError(await first, 503, "SERVICE_UNAVAILABLE")
      expect(await signalWaiting(h, "pg_terminate_backend")).toBe(1) // B's and C's, one statement
      await sleep(300) // a create sent again on its own would now wait for the lock
      await release()
      for (const res of await Promise.all(together)) {
        expectError(res, 503, "SERVICE_UNAVAILABLE")
        expect(res.headers.get("retry-after")).toBe("5")
      }
    } finally {
      await release()
    }
    // none committed (each was ended while it waited), and none was written since
    expect(await h.sql("SELECT job_number FROM jobs WHERE tenant_id = $1", [tenantId])).toEqual([])
    expect((await api.post("/api-jobs", nestedJob("TOGETHER-B"))).status).toBe(201)
  })
})

describe.skipIf(testDatabaseKind() !== "postgres")("PostgreSQL gives up on a statement (statement_timeout, pg_cancel_backend, lock_timeout)", () => {
  let h: Harness
  beforeAll(async () => {
    h = await startServer()
  })
  afterAll(() => h?.close())

  it("a list and a create the database cancels are 503 with Retry-After, not 500, and the create wrote nothing", async () => {
    const { api, tenantId } = await h.as("Cancelled")
    expect((await api.get("/api-jobs?limit=1")).status).toBe(200) // the key is known: only the jobs wait
    const release = await holdJobs(h, "ACCESS EXCLUSIVE") // no read or write of it proceeds
    try {
      for (const request of [() => api.get("/api-jobs?limit=5"), () => api.post("/api-jobs", nestedJob("CANCELLED-1"))]) {
        const answer = request()
        expect(await signalWaiting(h, "pg_cancel_backend")).toBe(1)
        const res = await answer
        expectError(res, 503, "SERVICE_UNAVAILABLE")
        expect(res.headers.get("retry-after")).toBe("5")
        expect(res.body.error.message).toBe("The database did not finish the request in time; retry later")
      }
    } finally {
      await release()
    }
    expect(await h.sql("SELECT job_number FROM jobs WHERE tenant_id = $1", [tenantId])).toEqual([])
    expect((await api.post("/api-jobs", nestedJob("CANCELLED-1"))).status).toBe(201)
  })

  it("a lock not had within lock_timeout is the database giving up too", async () => {
    const release = await holdJobs(h, "ACCESS EXCLUSIVE")
    try {
      const exit = await h.run(Effect.exit(Effect.flatMap(Effect.service(SqlClient), (sql) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`SET LOCAL lock_timeout = '100ms'`
          return yield* sql`SELECT count(*) FROM jobs`
        })))))
      expect(Exit.isFailure(exit) ? databaseUnavailable(exit.cause)?.log : exit).toBe("database gave up on the statement")
    } finally {
      await release()
    }
  })
})

describe.skipIf(testDatabaseKind() !== "postgres")("PostgreSQL takes no writes (a standby, a demoted primary, default_transaction_read_only)", () => {
  let h: Harness
  beforeAll(async () => {
    h = await startServer()
  })
  afterAll(() => h?.close())

  /** Sets the test database's default for new sessions, and ends every session of it so that the pool's new ones take it. */
  const readOnly = async (on: boolean) => {
    await h.run(Effect.flatMap(Effect.service(SqlClient), (sql) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`SET TRANSACTION READ WRITE`
        yield* sql.unsafe(`DO $$ BEGIN EXECUTE format('ALTER DATABASE %I ${on ? "SET default_transaction_read_only = on" : "RESET default_transaction_read_only"}', current_database()); END $$`)
      }))))
    // this statement's own session ends too: its answer never comes
    await h.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database()").catch(() => undefined)
  }

  it("reads are served, to a key used before and to a new one; a write is 503 with Retry-After, not 500; writes are taken again once the database takes them", async () => {
    const { api } = await h.as("ReadOnly")
    const job = await api.post("/api-jobs", nestedJob("RO-0", 1, 2))
    expect(job.status).toBe(201)
    const { api: fresh } = await h.as("ReadOnly, a key not used before")
    await readOnly(true)
    try {
      // a key's first use would note it (a write): on a database that takes none, it is authenticated without
      const reads = [await api.get(`/api-jobs?id=${job.body.data.job_id}`), await api.get("/api-operations"), await fresh.get("/api-jobs")]
      expect(reads.map((r) => r.status)).toEqual([200, 200, 200])
      expect(reads[0]!.body.data.job.job_number).toBe("RO-0")
      expect(reads[1]!.body.data.operations).toHaveLength(2)
      expect(reads[2]!.body.data.jobs).toEqual([])
      for (const res of [await api.post("/api-jobs", nestedJob("RO-1")), await fresh.post("/api-jobs", nestedJob("RO-1"))]) {
        expectError(res, 503, "SERVICE_UNAVAILABLE")
        expect(res.headers.get("retry-after")).toBe("5")
        expect(res.body.error.message).toBe("The database takes no writes now (read-only); retry later")
      }
    } finally {
      await readOnly(false)
    }
    const back = await retryWhile(() => api.post("/api-jobs", nestedJob("RO-1")), (r) => r.status === 503, 20)
    expect(back.status).toBe(201)
  })
})

describe.skipIf(testDatabaseKind() !== "postgres")("PostgreSQL is out of resources (class 53: connections, disk, memory)", () => {
  let h: Harness
  beforeAll(async () => {
    h = await startServer()
  })
  afterAll(() => h?.close())

  it.each([
    ["53100", "a disk that is full"],
    ["53300", "too many connections"]
  ])("a statement failing with %s (%s) is 503 with Retry-After, not 500", async (code) => {
    const { api } = await h.as(`Resources ${code}`)
    // the database's own error, raised where a full disk would raise it: on the insert
    await h.sql(`CREATE OR REPLACE FUNCTION test_out_of_resources() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'out of resources' USING ERRCODE = '${code}'; END $$`)
    await h.sql("CREATE TRIGGER test_out_of_resources BEFORE INSERT ON jobs FOR EACH ROW EXECUTE FUNCTION test_out_of_resources()")
    try {
      const res = await api.post("/api-jobs", nestedJob(`RES-${code}`))
      expectError(res, 503, "SERVICE_UNAVAILABLE")
      expect(res.headers.get("retry-after")).toBe("5")
      expect(res.body.error.message).toBe("The database is out of resources (connections, memory or disk); retry later")
    } finally {
      await h.sql("DROP TRIGGER test_out_of_resources ON jobs")
    }
    expect((await api.post("/api-jobs", nestedJob(`RES-${code}`))).status).toBe(201)
  })
})
