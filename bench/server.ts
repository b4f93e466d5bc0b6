// Benchmark target: the real HTTP server over a migrated database, in its own process.
//
//   node --import tsx bench/server.ts --db pglite
//   node --import tsx bench/server.ts --db postgres --url postgres://postgres@127.0.0.1:5432/mes_bench_x
//
// Listens on 127.0.0.1 with a free port, creates one tenant, then prints ONE JSON line on stdout:
//   {"ready":true,"port":40123,"url":"http://127.0.0.1:40123/functions/v1","key":"...","db":"pglite"}
// Afterwards it reads line commands on stdin and answers each with one JSON line:
//   analyze  → runs ANALYZE                     → {"ok":"analyze","ms":12}
//   counts   → row counts of jobs/parts/ops     → {"ok":"counts","jobs":200,"parts":1000,"operations":4000,
//                                                   "completed_operations":0,"time_entries":0,"open_time_entries":0}
//   lifecycle → whole-table invariants of completed operations (lifecycle scenario), see below
//   outbox done → drops all events so far (the seed's, written before any webhook existed)
//   outbox N → (webhook scenarios) N copies of the tenant's newest job.created event, straight into the event log and outbox
//              in one INSERT … generate_series
//              → {"ok":"outbox","inserted":N,"job_created_events":…,"job_created_undispatched":N+1,"ms":40}
//   dispatcher start → starts WebhookDispatcher.layerConfig (MES_WEBHOOK_* from the environment, as `mes serve`)
//              with the allow-all UrlGuard → {"ok":"dispatcher","started_at_ms":<epoch ms>,"env":{…}}
//   dispatcher stop  → closes it (in-flight attempts get its shutdown grace)
//   webhooks → outbox / delivery / attempt-log counts, attempt durations, error samples, and the dispatcher's
//              store calls (fanOut / claimDue / record: calls, rows, summed latency) (webhook scenarios)
//   quit     → closes the server and the database, exits 0
// It also exits (cleanly) on SIGTERM/SIGINT or when stdin closes, so it never outlives its parent.
// The database itself (for postgres) is created and dropped by the parent (bench/run.ts).
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { parseArgs } from "node:util"
import { Effect, Exit, Layer, Scope } from "effect"
import { HttpServer } from "effect/http"
import { SqlClient } from "effect/sql/SqlClient"
import { CommitSignal, HttpServerLive, WebhookDispatcher } from "@mes/adapters-http"
import { Db, eventWrites, PlannerStatistics, StoresPg } from "@mes/adapters-pg"
import { DeliveryStore, DomainLive, Tenants, UrlGuard } from "@mes/domain"

const { values: args } = parseArgs({
  options: {
    db: { type: "string", default: "pglite" },
    url: { type: "string" },
    "data-dir": { type: "string" }, // pglite: "memory" (default) or "temp" for a throwaway directory
    "max-connections": { type: "string", default: "10" }
  }
})

const say = (line: unknown) => process.stdout.write(JSON.stringify(line) + "\n")

const main = async () => {
  let tempDir: string | undefined
  let database: Layer.Layer<Db.Database, unknown>
  if (args.db === "postgres") {
    if (args.url === undefined) throw new Error("--db postgres needs --url")
    database = Db.postgres(args.url, { maxConnections: Number(args["max-connections"]) })
  } else if (args.db === "pglite") {
    if (args["data-dir"] === "temp") tempDir = mkdtempSync(join(tmpdir(), "mes-bench-pglite-"))
    database = Db.pglite(tempDir)
  } else {
    throw new Error(`unknown --db ${args.db} (pglite|postgres)`)
  }

  const scope = Effect.runSync(Scope.make())
  // The webhook dispatcher does not run unless the runner asks for it (`dispatcher start`, webhook scenarios
  // only). The SSRF guard (MES_DEPLOYMENT=cloud in `mes serve`) is the allow-all one: receivers are on 127.0.0.1.
  // As in `mes serve`, the API and the dispatcher share a CommitSignal: a committed write wakes delivery.
  // as `mes serve` composes it (serve-live.ts), but for the dispatcher, which commands start
  const app = Layer.merge(HttpServerLive({ port: 0, host: "127.0.0.1" }, { logRequests: false }), PlannerStatistics.layer).pipe(
    Layer.provideMerge(CommitSignal.layer),
    Layer.provideMerge(DomainLive),
    Layer.provideMerge(Layer.succeed(UrlGuard, UrlGuard.allowAll)),
    Layer.provideMerge(StoresPg),
    Layer.provideMerge(Db.withMigrations(database))
  )
  const context = await Effect.runPromise(Layer.buildWithScope(app, scope) as Effect.Effect<any, unknown>)
  const run = <A>(effect: Effect.Effect<A, unknown, any>) =>
    Effect.runPromise(Effect.provideContext(effect, context) as Effect.Effect<A, unknown>)

  let closing: Promise<void> | undefined
  const close = (code: number) => {
    closing ??= Effect.runPromise(Scope.close(scope, Exit.void))
      .catch((e) => void process.stderr.write(`close failed: ${String(e)}\n`))
      .finally(() => {
        if (tempDir !== undefined) rmSync(tempDir, { recursive: true, force: true })
        process.exit(code)
      })
    return closing
  }
  process.on("SIGTERM", () => void close(0))
  process.on("SIGINT", () => void close(0))

  // the webhook dispatcher, in its own scope so that it can start after the outbox is filled. Its store is the
  // real DeliveryStorePg, wrapped to count the statements it runs, their rows and the sum of their latencies
  // (which includes waiting for a pooled connection; reported by `webhooks`).
  const storeStats = {
    fanOut: { calls: 0, msSum: 0, rows: 0 },
    claimDue: { calls: 0, msSum: 0, rows: 0 },
    record: { calls: 0, msSum: 0, rows: 0 }
  }
  const timed = <A>(what: keyof typeof storeStats, effect: Effect.Effect<A>, rows: (a: A) => number) =>
    Effect.suspend(() => {
      const t0 = performance.now()
      return Effect.tap(effect, (a) =>
        Effect.sync(() => {
          const s = storeStats[what]
          s.calls++
          s.msSum += performance.now() - t0
          s.rows += rows(a)
        }))
    })
  const countedStore = Layer.effect(DeliveryStore, Effect.map(Effect.service(DeliveryStore), (store) =>
    DeliveryStore.of({
      ...store,
      fanOut: (limit) => timed("fanOut", store.fanOut(limit), (n) => n),
      claimDue: (limit, leaseMs, share) => timed("claimDue", store.claimDue(limit, leaseMs, share), (ds) => ds.length),
      record: (attempts) => timed("record", store.record(attempts), (n) => n)
    })))
  let dispatcher: Scope.Closeable | undefined
  const startDispatcher = async () => {
    if (dispatcher !== undefined) throw new Error("the dispatcher is already running")
    const child = Effect.runSync(Scope.fork(scope))
    await run(Layer.buildWithScope(WebhookDispatcher.layerConfig.pipe(Layer.provide(countedStore)), child))
    dispatcher = child
    return Date.now()
  }
  const stopDispatcher = async () => {
    const d = dispatcher
    dispatcher = undefined
    if (d !== undefined) await Effect.runPromise(Scope.close(d, Exit.void))
  }

  const address = new URL(await run(Effect.map(Effect.service(HttpServer.HttpServer), (s) => HttpServer.formatAddress(s.address))))
  const port = Number(address.port)
  if (!(port > 0)) throw new Error(`expected a TCP address, got ${address.href}`)
  const { apiKey, tenant } = await run(Effect.gen(function*() {
    const tenants = yield* Tenants
    return yield* tenants.create({ name: "Bench Tenant" })
  }))
  const query = (statement: string) =>
    run(Effect.gen(function*() {
      const sql = yield* SqlClient
      return (yield* sql.unsafe(statement)) as ReadonlyArray<Record<string, unknown>>
    }))

  say({
    ready: true,
    port,
    url: `http://127.0.0.1:${port}/functions/v1`,
    key: apiKey,
    tenant: tenant.id,
    db: args.db,
    pid: process.pid
  })

  const lines = createInterface({ input: process.stdin })
  // one command at a time, in order
  let queue: Promise<void> = Promise.resolve()
  lines.on("line", (raw) => {
    queue = queue.then(() => handle(raw.trim()))
  })
  const handle = async (command: string) => {
    try {
      if (command === "analyze") {
        const t0 = performance.now()
        await query("ANALYZE")
        say({ ok: "analyze", ms: Math.round(performance.now() - t0) })
      } else if (command === "counts") {
        const [row] = await query(
          "SELECT (SELECT count(*)::int FROM jobs) AS jobs, (SELECT count(*)::int FROM parts) AS parts, (SELECT count(*)::int FROM operations) AS operations," +
            " (SELECT count(*)::int FROM operations WHERE status = 'completed') AS completed_operations," +
            " (SELECT count(*)::int FROM time_entries) AS time_entries, (SELECT count(*)::int FROM time_entries WHERE end_time IS NULL) AS open_time_entries"
        )
        say({ ok: "counts", ...row })
      } else if (command === "lifecycle") {
        // every completed operation: how many have exactly 2 entries, all ended, and actual_time = their sum
        const [row] = await query(
          `WITH e AS (
             SELECT operation_id, count(*)::int AS n, count(*) FILTER (WHERE end_time IS NULL)::int AS open,
               sum(duration_minutes) AS minutes
             FROM time_entries GROUP BY operation_id
           )
           SELECT count(*)::int AS completed,
             count(*) FILTER (WHERE e.n = 2 AND e.open = 0)::int AS two_ended_entries,
             count(*) FILTER (WHERE e.open > 0)::int AS with_open_entries,
             count(*) FILTER (WHERE e.minutes IS NOT NULL AND o.actual_time = e.minutes)::int AS actual_time_equal,
             coalesce(max(abs(o.actual_time - coalesce(e.minutes, 0))), 0)::float8 AS max_actual_time_diff,
             coalesce(sum(o.actual_time), 0)::float8 AS sum_actual_time_minutes
           FROM operations o LEFT JOIN e ON e.operation_id = o.id
           WHERE o.status = 'completed'`
        )
        say({ ok: "lifecycle", ...row })
      } else if (command === "outbox done") {
        // drops every event so far (written before any webhook existed: nobody to deliver to)
        const rows = await query("DELETE FROM outbox RETURNING id")
        say({ ok: "outbox", marked_dispatched: rows.length })
      } else if (/^outbox \d+$/.test(command)) {
        // N copies of the newest job.created of the tenant (a real payload from POST /api-jobs), each with a
        // fresh event id, job id and job_number WH-000001…; occurred_at = now() (one timestamp for the whole burst)
        const n = Number(command.split(" ")[1])
        const t0 = performance.now()
        const inserted = await query(
          `WITH t AS (
             SELECT data FROM event_log WHERE tenant_id = '${tenant.id}' AND event_type = 'job.created' ORDER BY seq DESC LIMIT 1
           ), g AS (
             SELECT i, gen_random_uuid() AS job_id, 'WH-' || lpad(i::text, 6, '0') AS job_number FROM generate_series(1, ${n}) AS i
           ), ${
            eventWrites(`'${tenant.id}'`, `SELECT mes_uuid7() AS event_id, 'job.created' AS type,
             jsonb_set(jsonb_set(jsonb_set(jsonb_set(t.data::jsonb, '{job_id}', to_jsonb(g.job_id)), '{job_number}', to_jsonb(g.job_number)),
               '{job,id}', to_jsonb(g.job_id)), '{job,job_number}', to_jsonb(g.job_number))::json AS data, g.i AS n
             FROM t, g`)
          }
           SELECT id FROM ev`
        )
        const ms = Math.round(performance.now() - t0)
        const [row] = await query(
          "SELECT count(*)::int AS n, count(*)::int AS pending FROM outbox WHERE event_type = 'job.created'"
        )
        if (inserted.length !== n) throw new Error(`inserted ${inserted.length} outbox rows, expected ${n} (no job.created to copy?)`)
        say({ ok: "outbox", inserted: inserted.length, job_created_events: row!.n, job_created_undispatched: row!.pending, ms })
      } else if (command === "dispatcher start") {
        const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("MES_WEBHOOK_")))
        say({ ok: "dispatcher", started_at_ms: await startDispatcher(), env })
      } else if (command === "dispatcher stop") {
        const t0 = performance.now()
        await stopDispatcher()
        say({ ok: "dispatcher", stopped: true, ms: Math.round(performance.now() - t0) })
      } else if (command === "webhooks") {
        const [row] = await query(
          `SELECT
             (SELECT count(*)::int FROM webhooks) AS webhooks,
             (SELECT count(*)::int FROM webhooks WHERE active) AS active_webhooks,
             (SELECT count(*)::int FROM outbox) AS outbox,
             (SELECT count(*)::int FROM outbox) AS outbox_undispatched,
             (SELECT count(*)::int FROM outbox WHERE event_type = 'job.created') AS job_created_events,
             count(*)::int AS deliveries,
             count(*) FILTER (WHERE d.status = 'pending')::int AS pending,
             count(*) FILTER (WHERE d.status = 'succeeded')::int AS succeeded,
             count(*) FILTER (WHERE d.status = 'failed')::int AS failed,
             count(*) FILTER (WHERE d.attempts <> 1)::int AS not_one_attempt,
             count(*) FILTER (WHERE d.locked_until IS NOT NULL)::int AS leased,
             (extract(epoch FROM min(d.created_at)) * 1000)::float8 AS first_fanout_ms,
             (extract(epoch FROM max(d.updated_at) FILTER (WHERE d.status = 'succeeded')) * 1000)::float8 AS last_succeeded_ms,
             (SELECT count(*)::int FROM webhook_logs) AS logs,
             (SELECT count(*)::int FROM webhook_logs WHERE status = 'succeeded') AS logs_succeeded,
             (SELECT count(*)::int FROM webhook_logs WHERE status <> 'succeeded') AS logs_not_succeeded,
             (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms)::float8 FROM webhook_logs) AS attempt_ms_p50,
             (SELECT percentile_cont(0.99) WITHIN GROUP (ORDER BY duration_ms)::float8 FROM webhook_logs) AS attempt_ms_p99,
             (SELECT max(duration_ms)::int FROM webhook_logs) AS attempt_ms_max
           FROM webhook_deliveries d`
        )
        const errors = await query(
          "SELECT status, status_code, attempt, error, created_at::text AS at FROM webhook_logs WHERE status <> 'succeeded' ORDER BY created_at LIMIT 5"
        )
        const store = Object.fromEntries(Object.entries(storeStats).map(([k, v]) => [k, { ...v, msSum: Math.round(v.msSum) }]))
        say({ ok: "webhooks", ...row, error_samples: errors, store })
      } else if (command === "quit") {
        await close(0)
      } else if (command !== "") {
        say({ error: `unknown command ${command}` })
      }
    } catch (e) {
      say({ error: String(e), command })
    }
  }
  lines.on("close", () => void queue.then(() => close(0)))
}

main().catch((e) => {
  process.stderr.write(`bench server failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`)
  process.exit(1)
})
