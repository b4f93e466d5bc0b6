// Start-up and idle memory of the compiled `mes` (issue 7 item 7): `mes --help` wall time, time until
// /functions/v1/health answers after `mes serve` starts on an existing embedded data directory, and the resident
// memory of an idle `mes serve` on PostgreSQL and on the embedded database, 30 s after it started (V8's memory
// reducer runs ≈ 10 s after start).
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/startup.ts [runs=3]
//     [--node <node binary>]  the Node.js that runs mes (default: the one running this script)
//     [--bin <mes.js>]        another tree's bin, to compare it in the same hour (default: this checkout's)
//     [--ready-only]          only `--help` and the embedded start's ready time: no idle waits, no PostgreSQL
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { databaseUrl, MES_BIN, psql } from "./lib/mes-serve.ts"

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: { node: { type: "string" }, bin: { type: "string" }, "ready-only": { type: "boolean", default: false } }
})
const node = args.node ?? process.execPath
const bin = args.bin ?? MES_BIN
const readyOnly = args["ready-only"]
const runs = Number(positionals[0] ?? 3)
const admin = process.env.DATABASE_URL
if (admin === undefined && !readyOnly) throw new Error("set DATABASE_URL (a PostgreSQL server; the bench creates and drops its database)")
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const rssMb = (pid: number) => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024)

/** Starts `mes serve`, waits until health answers; resolves with ms to ready and RSS (MB) after `idleMs`. */
const serve = async (env: NodeJS.ProcessEnv, port: number, idleMs: number) => {
  const t0 = performance.now()
  const child = spawn(node, [bin, "serve", "--port", String(port), "--host", "127.0.0.1"], { env, stdio: "ignore" })
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}/functions/v1/health`).then((r) => r.ok, () => false)
    if (ok) break
    if (performance.now() - t0 > 30_000) throw new Error("mes serve did not answer within 30 s")
    await sleep(20)
  }
  const readyMs = performance.now() - t0
  await sleep(Math.max(0, idleMs - readyMs))
  const rss = rssMb(child.pid!)
  child.kill("SIGTERM")
  await new Promise((r) => child.once("exit", r))
  return { readyMs: Math.round(readyMs), rss }
}

const help: Array<number> = []
for (let i = 0; i < runs; i++) {
  const t0 = performance.now()
  execFileSync(node, [bin, "--help"], { stdio: "ignore" })
  help.push(Math.round(performance.now() - t0))
}

// the servers' data and their image storage (which `serve` makes at start, beside the data directory unless named)
const tmp = mkdtempSync(join(tmpdir(), "mes-startup-"))
const storage = join(tmp, "storage")
const embedded = { ...process.env, DATABASE_URL: "", MES_DATA_DIR: join(tmp, "data"), MES_STORAGE_DIR: storage, MES_MONTHLY_RESET: "off" }
// the first start creates and migrates the data directory; the measured starts find it existing
await serve(embedded, 48731, 0)
const embeddedRuns = []
for (let i = 0; i < runs; i++) embeddedRuns.push(await serve(embedded, 48731, readyOnly ? 0 : 30_000))
const report: Record<string, unknown> = {
  node: execFileSync(node, ["-v"], { encoding: "utf8" }).trim(),
  bin,
  "mes --help ms": help,
  "embedded: ready ms": embeddedRuns.map((r) => r.readyMs)
}
if (admin !== undefined && !readyOnly) {
  report["embedded: idle RSS MB at 30 s"] = embeddedRuns.map((r) => r.rss)
  const db = `mes_startup_${Date.now().toString(36)}`
  psql(admin, ["-c", `CREATE DATABASE ${db}`])
  const pg = { ...process.env, DATABASE_URL: databaseUrl(admin, db), MES_STORAGE_DIR: storage, MES_MONTHLY_RESET: "off" }
  execFileSync(node, [bin, "migrate"], { env: pg, stdio: "ignore" })
  const pgRuns = []
  for (let i = 0; i < runs; i++) pgRuns.push(await serve(pg, 48732, 30_000))
  psql(admin, ["-c", `DROP DATABASE ${db} WITH (FORCE)`])
  report["PostgreSQL: ready ms"] = pgRuns.map((r) => r.readyMs)
  report["PostgreSQL: idle RSS MB at 30 s"] = pgRuns.map((r) => r.rss)
}
rmSync(tmp, { recursive: true, force: true })
// --ready-only: one line, to collect runs as JSON lines
console.log(JSON.stringify(report, null, readyOnly ? undefined : 2))
