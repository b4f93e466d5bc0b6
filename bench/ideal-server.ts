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
//   root=$PWD; (cd ../shared/bench && \
//     B_SETUP="cd $root && node packages/cli/bin/mes.js migrate >&2 && node packages/cli/bin/mes.js tenant create --name bench --json" \
//     B_SERVE="cd $root && exec node --import tsx bench/ideal-server.ts --port \$PORT" \
//     ROUNDS=5 ./compare.sh servers create)
//
// Needs the compiled `mes` (`pnpm build`) and `../shared/bench` installed (`npm ci` there: `pg`). For a clone
// elsewhere (a clean clone under /tmp, say), name the reference bench: `B_SERVE="cd $root && MES_SHARED_BENCH=$PWD exec …"`.
import { batchDue, CoalescingConfig, Db, PlannerStatistics } from "@mes/adapters-pg"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { randomBytes } from "node:crypto"
import { createServer, type ServerResponse } from "node:http"
import { parseArgs } from "node:util"
import { captureCreate, ID_PREFIX, withIdPrefix } from "./lib/capture.ts"
import { requireShared } from "./lib/util.ts"

interface PgClient {
  connect(): Promise<void>
  query(q: string | { readonly name: string; readonly text: string; readonly values: ReadonlyArray<unknown> }): Promise<{ rows: Array<any> }>
  end(): Promise<void>
}
const pg = requireShared("pg") as { Client: new (o: object) => PgClient }

const { values: args } = parseArgs({ options: { port: { type: "string" }, host: { type: "string", default: "127.0.0.1" } } })
const databaseUrl = process.env.DATABASE_URL
if (databaseUrl === undefined || args.port === undefined) throw new Error("set DATABASE_URL and --port")
// the server's coalescing settings (MES_DB_WRITE_*, same defaults)
const coalescing = Effect.runSync(CoalescingConfig)

const { statement, tenantId, marker, answer } = await captureCreate(databaseUrl)
const plan = withIdPrefix(JSON.stringify((JSON.parse(statement.params[0]!) as Array<unknown>)[0]), tenantId)
const answerTemplate = withIdPrefix(answer, tenantId)
if (!plan.includes(ID_PREFIX) || !answerTemplate.includes(ID_PREFIX) || !answer.includes(marker)) {
  throw new Error("the captured plan or answer has no ids or no job number to replace")
}
const rest = statement.params.slice(1)

// the server's connections turn JIT off (adapters-pg client.ts)
const idle: Array<PgClient> = []
for (let i = 0; i < Math.max(coalescing.slots, 1); i++) {
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
const due = () => batchDue(coalescing, busy, items, queue.length)
const launch = () => {
  const batch = queue.splice(0, coalescing.max)
  const client = idle.pop()!
  busy++
  items += batch.length
  client.query({ name: "mes_create", text: statement.text, values: [`[${batch.map((w) => w.plan).join(",")}]`, ...rest] }).then(
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

const escaped = (s: string) => JSON.stringify(s).slice(1, -1)
// a connection beside the statement's: `load.mjs` asks `GET …/api-jobs?limit=1` for the total before and after a run
// (the capture tenant's live jobs)
const side = new pg.Client({ connectionString: databaseUrl })
await side.connect()
const total = (res: ServerResponse) =>
  side.query({ name: "total", text: "SELECT count(*)::int AS n FROM jobs WHERE tenant_id = $1 AND deleted_at IS NULL", values: [tenantId] })
    .then((r) => {
      const body = JSON.stringify({ success: true, data: { jobs: [], pagination: { limit: 1, offset: 0, total: r.rows[0].n } } })
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body)
    }, () => void res.writeHead(500).end())

// the planner statistics, kept by a serving mes's own watcher (adapters-pg statistics.ts, on a connection of its own):
// without it the key checks kept plans made for empty tables and this server fell to a fifth of its rate within seconds
const statistics = Effect.runFork(Layer.launch(PlannerStatistics.layer.pipe(Layer.provide(Db.postgres(databaseUrl, { maxConnections: 1 })))))

const server = createServer((req, res) => {
  if (req.method === "GET") return void total(res)
  const chunks: Array<Buffer> = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    let jobNumber: string
    try {
      jobNumber = escaped(String((JSON.parse(Buffer.concat(chunks).toString("utf8")) as { job_number: unknown }).job_number))
    } catch {
      res.writeHead(400).end()
      return
    }
    const h = randomBytes(6).toString("hex")
    const prefix = `${h.slice(0, 8)}-${h.slice(8)}`
    queue.push({
      plan: plan.replaceAll(ID_PREFIX, prefix).replaceAll(marker, jobNumber),
      done: (ok) => {
        if (!ok) return void res.writeHead(500).end()
        const body = answerTemplate.replaceAll(ID_PREFIX, prefix).replaceAll(marker, jobNumber)
        res.writeHead(201, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body)
      }
    })
    if (due()) launch()
  })
})
server.listen(Number(args.port), args.host, () => console.error(`ideal server listening on ${args.host}:${args.port} (pid ${process.pid})`))
const stop = () =>
  server.close(() => Promise.all([...idle, side].map((c) => c.end())).then(() => Effect.runPromise(Fiber.interrupt(statistics))).then(() => process.exit(0)))
process.on("SIGTERM", stop).on("SIGINT", stop)
