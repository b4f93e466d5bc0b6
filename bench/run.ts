// Load benchmark of the HTTP API: scenarios × databases, each against a fresh server process.
//
//   pnpm bench                                   # create+list × pglite+postgres, 10 s each, 1 round
//   pnpm bench --db pglite --scenario list --duration 5 --connections 10
//   pnpm bench --rounds 3 --wait-idle 60 --label skeleton   # → bench/results/<date>-skeleton.json
//
// Options: --db pglite|postgres|all  --scenario create|list|all  --duration 10  --warmup 2
//   --connections 10  --rounds 1 (db order alternates A B / B A)  --seed 200  --wait-idle 0
//   --database-url <admin url, loopback only>  --pglite-dir memory|temp  --pg-pool 10
//   --out <file> | --label <name> | --no-write
//
// For every (round, db, scenario) it
//   1. (postgres) creates a fresh database mes_bench_<ts>_<rand> on the loopback server,
//   2. spawns `node --import tsx --conditions=development bench/server.ts` (a separate process, so the
//      load generator and the server do not share an event loop) and waits for its ready line,
//   3. seeds --seed jobs (5 parts × 4 operations each) through the API, then runs ANALYZE (after seeding,
//      never on empty tables: see /work/shared/STACK.md §11),
//   4. checks one request by hand (status, shape), runs a short warm-up, then measures with autocannon,
//   5. stops the server process (quit on stdin, SIGKILL by pid after 10 s) and drops the database.
// Everything is bounded: fixed durations, fixed seed counts, per-step timeouts and a global watchdog.
// Exit code 1 when any response was non-2xx or any request errored or timed out.
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import os from "node:os"
import { dirname, join, relative, resolve } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import autocannon from "autocannon"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Db } from "@mes/adapters-pg"

const here = dirname(fileURLToPath(import.meta.url))
const root = resolve(here, "..")

// ---------------------------------------------------------------------------------------------
// options

const { values: opt } = parseArgs({
  options: {
    db: { type: "string", default: "pglite,postgres" }, // pglite | postgres | pglite,postgres
    scenario: { type: "string", default: "create,list" }, // create | list | create,list
    duration: { type: "string", default: "10" }, // measured seconds per run
    warmup: { type: "string", default: "2" }, // unmeasured seconds before each run
    connections: { type: "string", default: "10" },
    seed: { type: "string", default: "200" }, // jobs seeded before every run (list needs ≥ 100)
    rounds: { type: "string", default: "1" }, // repetitions; db order alternates (A B, B A, …)
    "database-url": { type: "string" }, // admin URL; default DATABASE_URL or postgres://postgres@127.0.0.1:5432/test
    "pglite-dir": { type: "string", default: "memory" }, // memory | temp
    "pg-pool": { type: "string", default: "10" }, // server's pool size on postgres
    out: { type: "string" }, // results JSON path (default bench/results/<date>-run.json)
    label: { type: "string", default: "run" },
    "wait-idle": { type: "string", default: "0" }, // wait up to N s for the machine to go idle before measuring
    "no-write": { type: "boolean", default: false },
    help: { type: "boolean", default: false }
  }
})

if (opt.help) {
  console.log(readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n").slice(0, 22).join("\n"))
  process.exit(0)
}

const list = <T extends string>(raw: string, allowed: ReadonlyArray<T>, what: string): Array<T> => {
  const items = raw === "all" ? [...allowed] : raw.split(",").map((s) => s.trim()).filter((s) => s !== "")
  for (const item of items) if (!allowed.includes(item as T)) throw new Error(`unknown ${what} "${item}" (${allowed.join("|")}|all)`)
  return items as Array<T>
}
const int = (name: string, raw: string, min: number, max: number) => {
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer in [${min}, ${max}], got ${raw}`)
  return n
}

type DbKind = "pglite" | "postgres"
type Scenario = "create" | "list"
const dbs = list<DbKind>(opt.db!, ["pglite", "postgres"], "db")
const scenarios = list<Scenario>(opt.scenario!, ["create", "list"], "scenario")
const duration = int("duration", opt.duration!, 1, 600)
const warmup = int("warmup", opt.warmup!, 0, 60)
const connections = int("connections", opt.connections!, 1, 1000)
const seedJobs = int("seed", opt.seed!, 0, 100_000)
const rounds = int("rounds", opt.rounds!, 1, 50)
const pgPool = int("pg-pool", opt["pg-pool"]!, 1, 90)
const waitIdle = int("wait-idle", opt["wait-idle"]!, 0, 600)
if (scenarios.includes("list") && seedJobs < 200) throw new Error("--seed must be ≥ 200 for the list scenario")
const adminUrl = opt["database-url"] ?? (process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test")
{
  const host = new URL(adminUrl).hostname
  if (!["127.0.0.1", "localhost", "[::1]", "::1"].includes(host)) throw new Error(`refusing non-loopback database host ${host}`)
}

const PARTS = 5
const OPS = 4
const LIST_LIMIT = 100

// ---------------------------------------------------------------------------------------------
// helpers

const log = (...parts: ReadonlyArray<unknown>) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}]`, ...parts)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const withTimeout = <A>(what: string, ms: number, p: Promise<A>): Promise<A> =>
  new Promise<A>((res, rej) => {
    const t = setTimeout(() => rej(new Error(`${what}: timed out after ${ms} ms`)), ms)
    p.then((a) => (clearTimeout(t), res(a)), (e) => (clearTimeout(t), rej(e)))
  })
const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

/** The nested create payload: 1 job × 5 parts × 4 operations. */
const job = (jobNumber: string) => ({
  job_number: jobNumber,
  customer: "Bench Customer",
  parts: Array.from({ length: PARTS }, (_, i) => ({
    part_number: `P-${i + 1}`,
    quantity: 2,
    operations: Array.from({ length: OPS }, (_, j) => ({ operation_name: `Op ${j + 1}`, sequence: j + 1 }))
  }))
})

/** Fraction (0..1) of all cores busy over the next `ms`: other work on the machine skews results. */
const cpuBusy = async (ms = 1000) => {
  const snap = () => os.cpus().reduce((a, c) => {
    const t = c.times
    return { busy: a.busy + t.user + t.nice + t.sys + t.irq, total: a.total + t.user + t.nice + t.sys + t.irq + t.idle }
  }, { busy: 0, total: 0 })
  const a = snap()
  await sleep(ms)
  const b = snap()
  return b.total === a.total ? 0 : Math.round((b.busy - a.busy) / (b.total - a.total) * 100) / 100
}
/** Waits (at most `seconds`) until the machine is below 20 % busy; returns the last reading. */
const settle = async (seconds: number) => {
  const until = Date.now() + seconds * 1000
  let busy = await cpuBusy()
  while (busy > 0.2 && Date.now() < until) busy = await cpuBusy()
  return busy
}

// --- admin connection (postgres only): create / drop a fresh database

const admin = <A>(f: (sql: SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(
    Effect.gen(function*() {
      return yield* f(yield* SqlClient)
    }).pipe(Effect.provide(Db.postgres(adminUrl, { maxConnections: 1 })), Effect.scoped) as Effect.Effect<A, unknown>
  )
const createDatabase = async () => {
  const name = `mes_bench_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  await admin((sql) => sql.unsafe(`CREATE DATABASE ${name}`).raw)
  const u = new URL(adminUrl)
  u.pathname = `/${name}`
  return { name, url: u.toString() }
}
const dropDatabase = (name: string) => admin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).raw)
const postgresVersion = () =>
  admin((sql) => sql.unsafe<{ version: string }>("SELECT version() AS version")).then((r) => r[0]!.version, (e) => `unavailable: ${String(e)}`)

// --- the server process

interface Server {
  readonly child: ChildProcess
  readonly url: string
  readonly key: string
  readonly command: (cmd: string) => Promise<Record<string, unknown>>
  readonly stop: () => Promise<void>
  readonly stderrTail: () => string
}

const live = new Set<ChildProcess>()

const startServer = async (db: DbKind, pgUrl?: string): Promise<Server> => {
  const args = ["--import", "tsx", "--conditions=development", join(here, "server.ts"), "--db", db]
  if (db === "postgres") args.push("--url", pgUrl!, "--max-connections", String(pgPool))
  else args.push("--data-dir", opt["pglite-dir"]!)
  // process.execPath is the node binary itself, so child.pid is the server (no npx/tsx wrapper in between)
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, MES_LOG_REQUESTS: "false" },
    stdio: ["pipe", "pipe", "pipe"]
  })
  live.add(child)
  child.on("exit", () => live.delete(child))
  let stderr = ""
  child.stderr!.on("data", (d) => {
    stderr = (stderr + String(d)).slice(-4000)
  })
  const waiting: Array<(msg: Record<string, unknown>) => void> = []
  let onReady: ((msg: Record<string, unknown>) => void) | undefined
  createInterface({ input: child.stdout! }).on("line", (line) => {
    if (!line.startsWith("{")) return // Effect's own log lines ("Listening on …")
    const msg = JSON.parse(line) as Record<string, unknown>
    if (msg.ready === true) onReady?.(msg)
    else waiting.shift()?.(msg)
  })
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)))
  const ready = await withTimeout(
    "server start",
    120_000,
    Promise.race([
      new Promise<Record<string, unknown>>((r) => (onReady = r)),
      exited.then((code) => {
        throw new Error(`server exited with ${code} before ready:\n${stderr}`)
      })
    ])
  )
  const command = (cmd: string) =>
    withTimeout(`server command ${cmd}`, 120_000, new Promise<Record<string, unknown>>((r) => {
      waiting.push(r)
      child.stdin!.write(cmd + "\n")
    })).then((msg) => {
      if (msg.error !== undefined) throw new Error(`server command ${cmd} failed: ${String(msg.error)}`)
      return msg
    })
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.stdin!.end("quit\n")
    const code = await Promise.race([exited, sleep(10_000).then(() => "timeout" as const)])
    if (code === "timeout" && child.pid !== undefined) {
      log(`server pid ${child.pid} did not exit after quit; SIGKILL`)
      process.kill(child.pid, "SIGKILL")
      await withTimeout("server kill", 10_000, exited)
    }
  }
  return { child, url: String(ready.url), key: String(ready.key), command, stop, stderrTail: () => stderr }
}

// --- direct HTTP (seeding and shape checks)

const http = async (server: Server, method: string, path: string, body?: unknown) => {
  const res = await fetch(server.url + path, {
    method,
    headers: { "content-type": "application/json", authorization: `Bearer ${server.key}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000)
  })
  const text = await res.text()
  return { status: res.status, text, json: () => JSON.parse(text) as any }
}

const seed = async (server: Server, n: number) => {
  let next = 0
  const worker = async () => {
    while (next < n) {
      const i = next++
      const r = await http(server, "POST", "/api-jobs", job(`SEED-${String(i).padStart(6, "0")}`))
      if (r.status !== 201) throw new Error(`seed POST /api-jobs answered ${r.status}: ${r.text.slice(0, 500)}`)
    }
  }
  await Promise.all(Array.from({ length: 4 }, worker))
}

// --- one measured run

interface Sample {
  status: number
  body: string
}
interface RunResult {
  round: number
  db: DbKind
  scenario: Scenario
  reqPerSec: number
  reqPerSecStddev: number
  latencyMs: { p50: number; p90: number; p99: number; max: number; avg: number }
  requests: number
  ok2xx: number
  non2xx: number
  errors: number
  timeouts: number
  statusCodes: Record<string, number>
  non2xxSamples: ReadonlyArray<Sample>
  throughputBytesPerSec: number
  warmup: { requests: number; non2xx: number; errors: number }
  check: Record<string, unknown>
  rowsAfter: Record<string, unknown>
  setupMs: { start: number; seed: number; analyze: number }
  /** Machine CPU busy fraction in the second before measuring (server idle): foreign load. */
  cpuBusyBefore: number
}

let jobCounter = 0
const runId = Date.now().toString(36)

const cannon = (server: Server, scenario: Scenario, seconds: number, samples: Array<Sample>) =>
  new Promise<autocannon.Result>((res, rej) => {
    const base = new URL(server.url)
    const headers = { "content-type": "application/json", authorization: `Bearer ${server.key}` }
    const onResponse = (status: number, body: string) => {
      // up to 3 distinct bodies per status, 10 in all
      if (status >= 200 && status < 300 || samples.length >= 10) return
      const text = String(body).slice(0, 1000)
      if (samples.filter((x) => x.status === status).length < 3 && !samples.some((x) => x.status === status && x.body === text)) {
        samples.push({ status, body: text })
      }
    }
    const request: autocannon.Request = scenario === "create"
      ? {
        method: "POST",
        path: `${base.pathname}/api-jobs`,
        headers,
        // a fresh body per request: unique job_number (run id + global counter)
        setupRequest: (req: autocannon.Request) => ({ ...req, body: JSON.stringify(job(`B-${runId}-${++jobCounter}`)) }),
        onResponse
      }
      : { method: "GET", path: `${base.pathname}/api-jobs?limit=${LIST_LIMIT}`, headers, onResponse }
    const instance = autocannon({
      url: base.origin,
      connections,
      pipelining: 1,
      duration: seconds,
      timeout: 10,
      requests: [request]
    }, (err: unknown, result: autocannon.Result) => (err ? rej(err) : res(result)))
    // bounded even if autocannon misbehaves
    const guard = setTimeout(() => instance.stop(), (seconds + 30) * 1000)
    instance.on("done", () => clearTimeout(guard))
  })

const runOne = async (round: number, db: DbKind, scenario: Scenario): Promise<RunResult> => {
  let database: { name: string; url: string } | undefined
  let server: Server | undefined
  try {
    const t0 = performance.now()
    if (db === "postgres") database = await createDatabase()
    server = await startServer(db, database?.url)
    const t1 = performance.now()
    await seed(server, seedJobs)
    const t2 = performance.now()
    await server.command("analyze")
    const t3 = performance.now()
    const seeded = await server.command("counts")
    if (Number(seeded.jobs) !== seedJobs) throw new Error(`expected ${seedJobs} seeded jobs, found ${JSON.stringify(seeded)}`)

    // one request by hand: status and shape
    let check: Record<string, unknown>
    if (scenario === "list") {
      const r = await http(server, "GET", `/api-jobs?limit=${LIST_LIMIT}`)
      if (r.status !== 200) throw new Error(`GET /api-jobs?limit=${LIST_LIMIT} answered ${r.status}: ${r.text.slice(0, 500)}`)
      const jobs = r.json().data?.jobs
      if (!Array.isArray(jobs)) throw new Error(`list reply has no data.jobs: ${r.text.slice(0, 500)}`)
      const parts = jobs.map((j: any) => (Array.isArray(j.parts) ? j.parts.length : null))
      check = {
        status: r.status,
        jobs: jobs.length,
        partsPerJob: [...new Set(parts)],
        opsPerPart: [...new Set(jobs.flatMap((j: any) => (j.parts ?? []).map((p: any) => (Array.isArray(p.operations) ? p.operations.length : null))))],
        responseBytes: Buffer.byteLength(r.text),
        pagination: r.json().data?.pagination
      }
      if (jobs.length !== LIST_LIMIT) throw new Error(`list returned ${jobs.length} jobs, expected ${LIST_LIMIT}`)
    } else {
      const r = await http(server, "POST", "/api-jobs", job(`CHECK-${runId}-${round}`))
      if (r.status !== 201) throw new Error(`POST /api-jobs answered ${r.status}: ${r.text.slice(0, 500)}`)
      const parts = r.json().data?.parts
      check = {
        status: r.status,
        parts: Array.isArray(parts) ? parts.length : null,
        opsPerPart: Array.isArray(parts) ? [...new Set(parts.map((p: any) => p.operations?.length))] : null,
        requestBytes: Buffer.byteLength(JSON.stringify(job("B-xxxxxxxx-000000"))),
        responseBytes: Buffer.byteLength(r.text)
      }
    }

    // the server is idle here, so this is everyone else's load on the machine
    const busyBefore = await settle(waitIdle)
    if (busyBefore > 0.2) log(`warning: machine ${Math.round(busyBefore * 100)}% busy before warm-up (other processes)`)
    const samples: Array<Sample> = []
    let warm = { requests: 0, non2xx: 0, errors: 0 }
    if (warmup > 0) {
      const w = await cannon(server, scenario, warmup, samples)
      warm = { requests: w.requests.total, non2xx: w.non2xx, errors: w.errors + w.timeouts }
    }
    log(`${db}/${scenario} round ${round}: measuring ${duration}s, ${connections} connections`)
    const r = await cannon(server, scenario, duration, samples)
    const rowsAfter = await server.command("counts")
    const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([k, v]) => [k, (v as { count: number }).count]))
    const result: RunResult = {
      round,
      db,
      scenario,
      reqPerSec: r.requests.average,
      reqPerSecStddev: r.requests.stddev,
      latencyMs: { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max, avg: r.latency.average },
      requests: r.requests.total,
      ok2xx: r["2xx"],
      non2xx: r.non2xx,
      errors: r.errors,
      timeouts: r.timeouts,
      statusCodes,
      non2xxSamples: samples,
      throughputBytesPerSec: r.throughput.average,
      warmup: warm,
      check,
      rowsAfter: { jobs: rowsAfter.jobs, parts: rowsAfter.parts, operations: rowsAfter.operations },
      setupMs: { start: Math.round(t1 - t0), seed: Math.round(t2 - t1), analyze: Math.round(t3 - t2) },
      cpuBusyBefore: busyBefore
    }
    log(
      `${db}/${scenario} round ${round}: ${result.reqPerSec.toFixed(1)} req/s, p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms,` +
        ` non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts}`
    )
    if (samples.length > 0) log(`non-2xx samples:`, JSON.stringify(samples, null, 1))
    return result
  } catch (e) {
    if (server !== undefined) log(`server stderr (tail):\n${server.stderrTail()}`)
    throw e
  } finally {
    if (server !== undefined) await server.stop().catch((e) => log(`stop failed: ${String(e)}`))
    if (database !== undefined) await dropDatabase(database.name).catch((e) => log(`drop ${database!.name} failed: ${String(e)}`))
  }
}

// ---------------------------------------------------------------------------------------------
// main

const killAll = () => {
  for (const child of live) if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, "SIGKILL")
}
const budgetMs = rounds * dbs.length * scenarios.length * (duration + warmup + waitIdle + 300) * 1000
const watchdog = setTimeout(() => {
  log(`watchdog: exceeded ${budgetMs / 1000}s, killing the server and exiting`)
  killAll()
  process.exit(2)
}, budgetMs)
watchdog.unref()
process.on("SIGINT", () => {
  killAll()
  process.exit(130)
})

const git = (...args: Array<string>) => {
  try {
    return execFileSync("git", args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim()
  } catch {
    return undefined
  }
}
const packageVersion = (from: string, name: string) => {
  try {
    // the entry point, then up to the package's own package.json (some packages do not export it)
    let dir = dirname(createRequire(join(root, from, "package.json")).resolve(name))
    for (let i = 0; i < 6; i++, dir = dirname(dir)) {
      try {
        const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string; version: string }
        if (pkg.name === name) return pkg.version
      } catch {
        // keep walking up
      }
    }
    return undefined
  } catch {
    return undefined
  }
}

const main = async () => {
  const started = new Date()
  const loadAtStart = os.loadavg().map((x) => Math.round(x * 100) / 100)
  const results: Array<RunResult> = []
  for (let round = 1; round <= rounds; round++) {
    // interleave: A B in odd rounds, B A in even rounds (STACK.md §11: ±15 % noise between runs)
    const order = round % 2 === 1 ? dbs : [...dbs].reverse()
    for (const db of order) for (const scenario of scenarios) results.push(await runOne(round, db, scenario))
  }

  const summary = dbs.flatMap((db) =>
    scenarios.map((scenario) => {
      const rs = results.filter((r) => r.db === db && r.scenario === scenario)
      return {
        db,
        scenario,
        runs: rs.length,
        reqPerSec: Math.round(median(rs.map((r) => r.reqPerSec)) * 10) / 10,
        reqPerSecAll: rs.map((r) => Math.round(r.reqPerSec * 10) / 10),
        p50Ms: median(rs.map((r) => r.latencyMs.p50)),
        p99Ms: median(rs.map((r) => r.latencyMs.p99)),
        requests: rs.reduce((a, r) => a + r.requests, 0),
        non2xx: rs.reduce((a, r) => a + r.non2xx + r.warmup.non2xx, 0),
        errors: rs.reduce((a, r) => a + r.errors + r.timeouts + r.warmup.errors, 0),
        maxCpuBusyBefore: Math.max(...rs.map((r) => r.cpuBusyBefore))
      }
    })
  )

  const commit = git("rev-parse", "HEAD")
  const dirty = git("status", "--porcelain")
  const report = {
    date: started.toISOString(),
    command: `pnpm bench ${process.argv.slice(2).join(" ")}`.trim(),
    settings: {
      dbs,
      scenarios,
      durationSec: duration,
      warmupSec: warmup,
      connections,
      pipelining: 1,
      rounds,
      seedJobs,
      shape: { partsPerJob: PARTS, operationsPerPart: OPS, listLimit: LIST_LIMIT },
      pglite: opt["pglite-dir"] === "temp" ? "temp dataDir" : "in memory",
      postgresPool: pgPool,
      waitIdleSec: waitIdle
    },
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      memGiB: Math.round(os.totalmem() / 2 ** 30 * 10) / 10,
      // 1/5/15-minute load averages: anything else busy on the 2 cores skews the numbers
      loadavgAtStart: loadAtStart,
      loadavgAtEnd: os.loadavg().map((x) => Math.round(x * 100) / 100),
      platform: `${os.type()} ${os.release()}`,
      node: process.version,
      postgres: dbs.includes("postgres") ? await postgresVersion() : undefined,
      versions: {
        autocannon: packageVersion("bench", "autocannon"),
        effect: packageVersion("bench", "effect"),
        "@effect/sql-pg": packageVersion("packages/adapters-pg", "@effect/sql-pg"),
        "@electric-sql/pglite": packageVersion("packages/adapters-pg", "@electric-sql/pglite")
      }
    },
    git: { commit, dirtyFiles: dirty === undefined ? undefined : dirty.split("\n").filter((l) => l !== "").length },
    summary,
    runs: results
  }

  console.log("")
  console.log("| scenario | db | req/s (median) | p50 ms | p99 ms | non-2xx | errors | runs |")
  console.log("|---|---|---:|---:|---:|---:|---:|---:|")
  for (const s of summary) {
    console.log(`| ${s.scenario} | ${s.db} | ${s.reqPerSec} | ${s.p50Ms} | ${s.p99Ms} | ${s.non2xx} | ${s.errors} | ${s.runs} |`)
  }

  if (!opt["no-write"]) {
    const out = resolve(opt.out ?? join(here, "results", `${started.toISOString().slice(0, 10)}-${opt.label}.json`))
    mkdirSync(dirname(out), { recursive: true })
    writeFileSync(out, JSON.stringify(report, null, 2) + "\n")
    log(`wrote ${relative(process.cwd(), out)}`)
  }
  const bad = summary.filter((s) => s.non2xx > 0 || s.errors > 0)
  if (bad.length > 0) {
    log(`FAILED: non-2xx responses or errors in ${bad.map((s) => `${s.db}/${s.scenario}`).join(", ")}`)
    process.exitCode = 1
  }
}

main()
  .catch((e) => {
    log(`failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`)
    killAll()
    process.exitCode = 1
  })
  .finally(() => clearTimeout(watchdog))
