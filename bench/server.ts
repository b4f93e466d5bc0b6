// Benchmark target: the real HTTP server over a migrated database, in its own process.
//
//   node --import tsx --conditions=development bench/server.ts --db pglite
//   node --import tsx --conditions=development bench/server.ts --db postgres --url postgres://postgres@127.0.0.1:5432/mes_bench_x
//
// Listens on 127.0.0.1 with a free port, creates one tenant, then prints ONE JSON line on stdout:
//   {"ready":true,"port":40123,"url":"http://127.0.0.1:40123/functions/v1","key":"...","db":"pglite"}
// Afterwards it reads line commands on stdin and answers each with one JSON line:
//   analyze  → runs ANALYZE                     → {"ok":"analyze","ms":12}
//   counts   → row counts of jobs/parts/ops     → {"ok":"counts","jobs":200,"parts":1000,"operations":4000,
//                                                   "completed_operations":0,"time_entries":0,"open_time_entries":0}
//   lifecycle → whole-table invariants of completed operations (lifecycle scenario), see below
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
import { HttpServerLive } from "@mes/adapters-http"
import { Db, StoresPg } from "@mes/adapters-pg"
import { DomainLive, Tenants, UrlGuard } from "@mes/domain"

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
  // Webhooks are not part of the benchmark: no webhook is registered, the dispatcher does not run, and the
  // SSRF guard (MES_DEPLOYMENT=cloud in `mes serve`) is the allow-all one.
  const app = HttpServerLive({ port: 0, host: "127.0.0.1" }, { logRequests: false }).pipe(
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

  const address = new URL(await run(Effect.map(Effect.service(HttpServer.HttpServer), (s) => HttpServer.formatAddress(s.address))))
  const port = Number(address.port)
  if (!(port > 0)) throw new Error(`expected a TCP address, got ${address.href}`)
  const { apiKey } = await run(Effect.gen(function*() {
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
