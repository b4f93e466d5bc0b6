// The least a server can do per create and still write what mes writes and answer what mes answers: a bound on
// issue 7's create ratio, measured rather than computed. At start it captures mes's create statement and its
// 201 answer from one POST /api-jobs of the load's body (`lib/capture.ts`: `mes serve` behind a recording proxy,
// in a tenant of its own), then serves `POST …/api-jobs` with `node:http` and `pg` (the baseline's driver):
// it parses the body, takes its job_number, gives the captured plan fresh ids and that job number by string
// replacement, coalesces concurrent creates into one execution of the statement as mes does (adapters-pg's
// `batchDue` and `CoalescingConfig`), keeps planner statistics with mes's own watcher (`PlannerStatistics`), and
// answers the captured bytes with the same ids (a GET, which `load.mjs` asks for the total before and after a run,
// gets the count of the capture tenant's jobs). It does no authentication, validation, planning or JSON building:
// those are what mes's server does beyond it.
//
// `--stack effect` serves the same work on the project's stack instead: Effect's HTTP router on
// `@effect/platform-node`, and `@effect/sql-pg` through mes's own client (`Db.postgres`), coalescing
// (`coalescing`) and connections (`onOwnConnection`), the answer rows read into slabs and given back as mes
// does. Between the two stacks lies what the libraries cost; between `--stack effect` and `mes serve`, what
// mes's own request path costs (authentication, validation, planning, building the answer).
//
//   root=$PWD; (cd ../shared/bench && \
//     B_SETUP="cd $root && node packages/cli/bin/mes.js migrate >&2 && node packages/cli/bin/mes.js tenant create --name bench --json" \
//     B_SERVE="cd $root && exec node --import tsx bench/ideal-server.ts --port \$PORT [--stack effect]" \
//     ROUNDS=5 ./compare.sh servers create)
//
// Needs the compiled `mes` (`pnpm build`) and `../shared/bench` installed (`npm ci` there: `pg`). For a clone
// elsewhere (a clean clone under /tmp, say), name the reference bench: `B_SERVE="cd $root && MES_SHARED_BENCH=$PWD exec …"`.
import { batchDue, coalescing, CoalescingConfig, Db, giveBack, onOwnConnection, type PageChunk, PlannerStatistics } from "@mes/adapters-pg"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { createServer, type ServerResponse } from "node:http"
import { parseArgs } from "node:util"
import { createTemplates } from "./lib/capture.ts"
import { requireShared } from "./lib/util.ts"

interface PgClient {
  connect(): Promise<void>
  query(q: string | { readonly name: string; readonly text: string; readonly values: ReadonlyArray<unknown> }): Promise<{ rows: Array<any> }>
  end(): Promise<void>
}

const { values: args } = parseArgs({
  options: { port: { type: "string" }, host: { type: "string", default: "127.0.0.1" }, stack: { type: "string", default: "node" } }
})
const databaseUrl = process.env.DATABASE_URL
if (databaseUrl === undefined || args.port === undefined) throw new Error("set DATABASE_URL and --port")
if (args.stack !== "node" && args.stack !== "effect") throw new Error("--stack node|effect")
const port = Number(args.port)
// the server's coalescing settings (MES_DB_WRITE_*, same defaults)
const options = Effect.runSync(CoalescingConfig)
const create = await createTemplates(databaseUrl)
/** $1 of one statement: the plans of a batch. */
const plans = (batch: ReadonlyArray<string>) => `[${batch.join(",")}]`
// `load.mjs` asks `GET …/api-jobs?limit=1` for the total before and after a run (the capture tenant's live jobs)
const TOTAL = "SELECT count(*)::int AS n FROM jobs WHERE tenant_id = $1 AND deleted_at IS NULL"
const totalBody = (n: number) => JSON.stringify({ success: true, data: { jobs: [], pagination: { limit: 1, offset: 0, total: n } } })
const PATH = "/functions/v1/api-jobs"

// the planner statistics, kept by a serving mes's own watcher (adapters-pg statistics.ts, on a connection of its own):
// without it the key checks kept plans made for empty tables and this server fell to a fifth of its rate within seconds
const Statistics = PlannerStatistics.layer.pipe(Layer.provide(Db.postgres(databaseUrl, { maxConnections: 1 })))

if (args.stack === "effect") {
  const Routes = HttpRouter.use(Effect.fnUntraced(function*(router) {
    const sql = yield* SqlClient
    const own = onOwnConnection(sql)
    const write = coalescing(options, (_key: string, batch: ReadonlyArray<string>) =>
      own(sql.unsafe<{ json: PageChunk | null }>(create.text, [plans(batch), ...create.rest])).pipe(
        Effect.map((rows) => {
          giveBack(rows.map((r) => r.json))
          return batch.map(() => Exit.void)
        }),
        Effect.catchCause((cause) => Effect.succeed(batch.map(() => Exit.failCause(cause))))
      ))
    yield* router.add("POST", PATH, Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const made = create.fresh(yield* request.text)
      if (made === undefined) return HttpServerResponse.empty({ status: 400 })
      yield* write("create", made.plan)
      return HttpServerResponse.text(made.answer, { status: 201, contentType: "application/json" })
    }).pipe(Effect.catchCause((cause) => Effect.as(Effect.logError(cause), HttpServerResponse.empty({ status: 500 })))))
    yield* router.add("GET", PATH, sql.unsafe<{ n: number }>(TOTAL, [create.tenantId]).pipe(
      Effect.map((rows) => HttpServerResponse.text(totalBody(rows[0]!.n), { contentType: "application/json" })),
      Effect.orDie
    ))
  }))
  const Serve = Layer.unwrap(Effect.map(HttpRouter.toHttpEffect(Routes), (app) =>
    Layer.effectDiscard(HttpServer.serveEffect(app)).pipe(Layer.provideMerge(NodeHttpServer.layer(createServer, { port, host: args.host })))))
  console.error(`ideal server (effect) listening on ${args.host}:${port} (pid ${process.pid})`)
  NodeRuntime.runMain(Layer.launch(Layer.mergeAll(Serve, Statistics).pipe(Layer.provide(Db.postgres(databaseUrl)))))
} else {
  const pg = requireShared("pg") as { Client: new (o: object) => PgClient }
  // the server's connections turn JIT off (adapters-pg client.ts)
  const idle: Array<PgClient> = []
  for (let i = 0; i < Math.max(options.slots, 1); i++) {
    const c = new pg.Client({ connectionString: databaseUrl, options: "-c jit=off" })
    await c.connect()
    idle.push(c)
  }

  interface Waiting {
    readonly plan: string
    readonly done: (ok: boolean) => void
  }
  const queue: Array<Waiting> = []
  let busy = 0
  let items = 0
  const due = () => batchDue(options, busy, items, queue.length)
  const launch = () => {
    const batch = queue.splice(0, options.max)
    const client = idle.pop()!
    busy++
    items += batch.length
    client.query({ name: "mes_create", text: create.text, values: [plans(batch.map((w) => w.plan)), ...create.rest] }).then(
      () => true,
      (e: unknown) => (console.error(e), false)
    ).then((ok) => {
      idle.push(client)
      busy--
      items -= batch.length
      for (const w of batch) w.done(ok)
      if (due()) launch()
    })
  }

  // a connection beside the statement's, for the total
  const side = new pg.Client({ connectionString: databaseUrl })
  await side.connect()
  const total = (res: ServerResponse) =>
    side.query({ name: "total", text: TOTAL, values: [create.tenantId] }).then((r) => {
      const body = totalBody(r.rows[0].n)
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body)
    }, () => void res.writeHead(500).end())

  const statistics = Effect.runFork(Layer.launch(Statistics))

  const server = createServer((req, res) => {
    if (req.method === "GET") return void total(res)
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const made = create.fresh(Buffer.concat(chunks).toString("utf8"))
      if (made === undefined) return void res.writeHead(400).end()
      queue.push({
        plan: made.plan,
        done: (ok) => {
          if (!ok) return void res.writeHead(500).end()
          res.writeHead(201, { "content-type": "application/json", "content-length": Buffer.byteLength(made.answer) }).end(made.answer)
        }
      })
      if (due()) launch()
    })
  })
  server.listen(port, args.host, () => console.error(`ideal server listening on ${args.host}:${port} (pid ${process.pid})`))
  const stop = () =>
    server.close(() => Promise.all([...idle, side].map((c) => c.end())).then(() => Effect.runPromise(Fiber.interrupt(statistics))).then(() => process.exit(0)))
  process.on("SIGTERM", stop).on("SIGINT", stop)
}
