// The database's share of a nested create, with no HTTP server and no load generator (issue 7's bound on the
// create ratio). mes's create statement is captured from a running `mes serve` (a loopback proxy between the
// server and PostgreSQL records its Parse and Bind), then pgbench replays it with fresh ids and job numbers,
// 1, 7 or 16 creates per statement, beside the hand-written baseline's own SQL (`../shared/bench/pgbench/create.sql`
// with `-M extended` as `compare.sh limit` runs it, at 32 clients and at the baseline server's pool of 10), on fresh
// copies of one database, in alternating rounds. For each it reports creates/s and the machine's CPU per create
// (all cores, from /proc/stat; pgbench's own share is printed apart).
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/sql-limit.ts [rounds=5] [seconds=10]
//
// SQL_LIMIT_VARIANT="<SQL>" adds a side: mes's statement, 7 × 5, on a copy of its database altered by that SQL (a
// schema change measured beside the schema as it is, e.g. "DROP INDEX jobs_id_key"). SQL_LIMIT_SIDES="<text>" runs
// only the sides whose label contains the text (e.g. "7 creates", to profile PostgreSQL under one of them).
//
// Needs the compiled `mes` (`pnpm build`), pgbench (PGBENCH, default the PostgreSQL 15 path), psql, and
// `../shared/bench` installed (`npm ci` there; its baseline creates the baseline's schema and tenant).
import { execFileSync, spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Captured, captureCreate, ID_PREFIX, withIdPrefix } from "./lib/capture.ts"
import { databaseUrl, psql } from "./lib/mes-serve.ts"
import { cpuTimes, median, settle, sharedBench } from "./lib/util.ts"

const admin = process.env.DATABASE_URL
if (admin === undefined) throw new Error("set DATABASE_URL (a PostgreSQL server; the bench creates and drops its databases)")
const rounds = Number(process.argv[2] ?? 5)
const seconds = Number(process.argv[3] ?? 10)
const PGBENCH = process.env.PGBENCH ?? "/usr/lib/postgresql/15/bin/pgbench"
const shared = sharedBench()
const tmp = mkdtempSync(join(tmpdir(), "mes-sql-limit-"))
const name = `mes_sql_limit_${Date.now().toString(36)}`
const url = (db: string) => databaseUrl(admin, db)
// The server turns JIT off on its connections (adapters-pg client.ts); pgbench gets the same for both sides.
const env = { ...process.env, PGOPTIONS: "-c jit=off" }

/**
 * A pgbench script running `statement` with `plans` creates in its first parameter, each with fresh ids (the
 * captured ids get one common 12-digit prefix, which the script replaces by a random one per create) and a fresh
 * job number. The other parameters are inlined as literals, so pgbench's prepared mode keeps one plan, as the
 * server's named statement does. JSON is re-spaced because pgbench reads `:word` as a variable.
 */
const script = ({ marker, statement, tenantId }: Captured, plans: number) => {
  const [plan] = JSON.parse(statement.params[0]!) as Array<unknown>
  const text = withIdPrefix(JSON.stringify(plan, null, 1).replace(/\n */g, " "), tenantId)
  const lit = (s: string) => `'${s.replaceAll("'", "''")}'`
  const one = `replace(replace(${lit(text)}, '${ID_PREFIX}', (SELECT substr(h, 1, 8) || '-' || substr(h, 9, 4) FROM md5(random()::text) h)), ${lit(marker)}, md5(random()::text))`
  const param = `('[' || ${Array.from({ length: plans }, () => one).join(" || ',' || ")} || ']')`
  // the text as captured, lines and comments included: pgbench reads a command up to its semicolon
  const sql = statement.text
    .replace(/\$(\d+)(?!\d)/g, (_, n: string) => (n === "1" ? param : lit(statement.params[Number(n) - 1] ?? "")))
  const file = join(tmp, `mes-${plans}.sql`)
  writeFileSync(file, `${sql.trim()};\n`)
  return file
}

/** CPU seconds of this process's waited-for children (pgbench), from /proc/self/stat. */
const childCpu = () => {
  const f = readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ")
  return (Number(f[13]) + Number(f[14])) / 100
}

interface Side {
  readonly label: string
  readonly template: string
  readonly file: string
  readonly plans: number
  readonly clients: number
  readonly args: ReadonlyArray<string>
}
interface Run {
  readonly round: number
  readonly label: string
  readonly creates_per_s: number
  readonly machine_ms_per_create: number
  readonly pgbench_ms_per_create: number
  readonly idle_pct: number
}

const pgbench = (side: Side, db: string, secs: number) => {
  const r = spawnSync(PGBENCH, [...side.args, "-n", "-c", String(side.clients), "-j", "1", "-T", String(secs), "-f", side.file, url(db)], { env, encoding: "utf8" })
  const failed = Number(/number of failed transactions: (\d+)/.exec(r.stdout)?.[1] ?? 0)
  const tps = Number(/^tps = ([\d.]+)/m.exec(r.stdout)?.[1])
  if (r.status !== 0 || failed > 0 || !(tps > 0)) throw new Error(`pgbench ${side.label}: ${r.stdout}${r.stderr}`.slice(0, 2000))
  return tps
}

const measure = async (side: Side, round: number): Promise<Run> => {
  const db = `${name}_run`
  psql(admin, ["-c", "SET client_min_messages = warning", "-c", `DROP DATABASE IF EXISTS ${db}`, "-c", `CREATE DATABASE ${db} TEMPLATE ${side.template}`])
  psql(url(db), ["-c", "CHECKPOINT"])
  await settle(30, side.label)
  // warm-up: shared buffers and the copied tables' pages; the measured run's new connections prepare the statement
  // again, once each (a few ms for mes's)
  pgbench(side, db, 2)
  const c0 = cpuTimes(), p0 = childCpu()
  const tps = pgbench(side, db, seconds)
  const c1 = cpuTimes(), p1 = childCpu()
  psql(admin, ["-c", `DROP DATABASE ${db} WITH (FORCE)`])
  const creates = tps * side.plans * seconds, busy = c1.busy - c0.busy, idle = c1.idle - c0.idle
  const run = {
    round, label: side.label,
    creates_per_s: Math.round(tps * side.plans * 10) / 10,
    machine_ms_per_create: Math.round(busy / creates * 1000) / 1000,
    pgbench_ms_per_create: Math.round((p1 - p0) * 1000 / creates * 1000) / 1000,
    idle_pct: Math.round(idle / (busy + idle) * 1000) / 10
  }
  console.error(JSON.stringify(run))
  return run
}

/** mes's sides: creates per statement and clients (1 × 32 as the load's connections, 7 × 5 as the server coalesces them). */
const SHAPES = [[1, 32], [7, 5], [16, 2]] as const
const variant = process.env.SQL_LIMIT_VARIANT
const templates = [`${name}_mes`, `${name}_base`, ...(variant ? [`${name}_variant`] : [])]
try {
  psql(admin, ["-c", `CREATE DATABASE ${templates[0]}`])
  const captured = await captureCreate(url(templates[0]!))
  const files = new Map(SHAPES.map(([plans]) => [plans, script(captured, plans)]))
  // What a serving mes has by then: about 1,050 jobs written, and the statistics its watcher takes as tables grow
  // (adapters-pg statistics.ts); without them the key checks keep plans made for empty tables
  execFileSync(PGBENCH, ["-M", "prepared", "-n", "-c", "4", "-t", "262", "-f", files.get(1)!, url(templates[0]!)], { env, stdio: "ignore" })
  psql(url(templates[0]!), ["-c", "VACUUM ANALYZE", "-c", "CHECKPOINT"])
  if (variant) {
    psql(admin, ["-c", `CREATE DATABASE ${templates[2]} TEMPLATE ${templates[0]}`])
    psql(url(templates[2]!), ["-c", variant, "-c", "CHECKPOINT"])
  }
  // the baseline's schema and tenant, made by the baseline itself (as compare.sh does)
  psql(admin, ["-c", `CREATE DATABASE ${templates[1]}`])
  const setup = execFileSync(process.execPath, [join(shared, "baseline/server.mjs"), "--database-url", url(templates[1]!), "--setup"], { encoding: "utf8" })
  const baseTenant = String(JSON.parse(setup.trim().split("\n").pop()!).tenant_id)
  const mesSide = (plans: (typeof SHAPES)[number][0], clients: number, template: string, suffix = ""): Side => ({
    label: `mes statement, ${plans} create${plans === 1 ? "" : "s"}, ${clients} clients${suffix}`,
    template, file: files.get(plans)!, plans, clients, args: ["-M", "prepared"]
  })
  const sides: Array<Side> = [
    ...[32, 10].map((clients): Side => ({
      label: `baseline SQL, extended, ${clients} clients`, template: templates[1]!, file: join(shared, "pgbench/create.sql"), plans: 1, clients,
      args: ["-M", "extended", "-D", `tenant_id=${baseTenant}`]
    })),
    ...SHAPES.map(([plans, clients]) => mesSide(plans, clients, templates[0]!)),
    ...(variant ? [mesSide(7, 5, templates[2]!, `, after ${variant}`)] : [])
  ]
  // SQL_LIMIT_SIDES="<text>": only the sides whose label contains it (e.g. "7 creates" with a profiler attached)
  const only = process.env.SQL_LIMIT_SIDES
  if (only) sides.splice(0, sides.length, ...sides.filter((s) => s.label.includes(only)))
  const runs: Array<Run> = []
  for (let round = 1; round <= rounds; round++) {
    // even rounds run the sides in reverse order
    for (const side of round % 2 === 1 ? sides : [...sides].reverse()) runs.push(await measure(side, round))
  }
  console.log("| side | creates/s per round | median | machine ms per create, median | of which pgbench |")
  console.log("|---|---|---|---|---|")
  for (const side of sides) {
    const mine = runs.filter((r) => r.label === side.label)
    console.log(`| ${side.label} | ${mine.map((r) => r.creates_per_s).join(", ")} | ${median(mine.map((r) => r.creates_per_s))} | ${median(mine.map((r) => r.machine_ms_per_create))} | ${median(mine.map((r) => r.pgbench_ms_per_create))} |`)
  }
} finally {
  for (const t of templates) psql(admin, ["-c", `DROP DATABASE IF EXISTS ${t} WITH (FORCE)`])
  rmSync(tmp, { recursive: true, force: true })
}
