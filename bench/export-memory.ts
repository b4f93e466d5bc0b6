// Memory of GET /api-export as the tenant grows (issue 10 item 3: "memory stays flat on a tenant with
// 100,000 operations"). Runs the compiled `mes serve` as a child process, seeds one tenant through the API
// in steps (10,000 → 100,000 operations), and after each step exports as an admin (operations as JSON,
// operations as CSV, all entities as JSON) while sampling the server's resident memory (/proc/<pid>/status).
//
//   npx tsx bench/export-memory.ts                       # embedded PGlite in a temporary directory
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/export-memory.ts   # a fresh database there
//
// Prints one row per (size, export): response bytes, seconds, RSS before and peak RSS during the export.
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { mesJson, startMes } from "./lib/mes-serve.ts"

const SECRET = "export-memory-bench-secret-0123456789abcdef"
const STEPS = [10_000, 50_000, 100_000]
const OPS_PER_JOB = 100 // 10 parts × 10 operations

const admin = process.env.DATABASE_URL
const tmp = mkdtempSync(join(tmpdir(), "mes-export-bench-"))
const env: NodeJS.ProcessEnv = { ...process.env, MES_JWT_SECRET: SECRET, MES_DATA_DIR: join(tmp, "data"), MES_MONTHLY_RESET: "off" }
delete env.DATABASE_URL
let dbName: string | undefined
if (admin !== undefined) {
  dbName = `mes_export_bench_${Date.now().toString(36)}`
  execFileSync("psql", [admin, "-qc", `CREATE DATABASE ${dbName}`])
  const u = new URL(admin)
  u.pathname = `/${dbName}`
  env.DATABASE_URL = u.toString()
}

const mes = (args: Array<string>) => mesJson(args, env)
const tenant = mes(["tenant", "create", "--name", "Export bench", "--plan", "enterprise"])
const profile = mes(["profile", "create", "--tenant", tenant.tenant_id, "--name", "Bench admin", "--role", "admin"])
const { token } = mes(["token", "issue", "--tenant", tenant.tenant_id, "--profile", profile.profile_id, "--role", "admin"])

const { server, stop, url } = await startMes(env)

const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, "utf8"))![1]) / 1024

const job = (n: number) => ({
  job_number: `EXP-${n}`,
  customer: "Bench Steel",
  parts: Array.from({ length: 10 }, (_, p) => ({
    part_number: `P-${p}`,
    quantity: 5,
    operations: Array.from({ length: 10 }, (_, o) => ({ operation_name: `Operation ${o}`, sequence: o + 1, estimated_time: 30 }))
  }))
})

let created = 0
const seedTo = async (operations: number) => {
  const target = operations / OPS_PER_JOB
  const next = async () => {
    while (created < target) {
      const n = created++
      const res = await fetch(`${url}/api-jobs`, {
        method: "POST",
        headers: { authorization: `Bearer ${tenant.api_key}`, "content-type": "application/json" },
        body: JSON.stringify(job(n))
      })
      if (res.status !== 201) throw new Error(`seed: ${res.status} ${await res.text()}`)
      await res.arrayBuffer()
    }
  }
  await Promise.all(Array.from({ length: 8 }, next))
}

/** Exports `query`, reading the body as it streams; the server's RSS sampled every 10 ms. */
const measure = async (query: string) => {
  global.gc?.()
  await new Promise((r) => setTimeout(r, 500))
  const before = rssMb()
  let peak = before
  const timer = setInterval(() => (peak = Math.max(peak, rssMb())), 10)
  const t0 = performance.now()
  const res = await fetch(`${url}/api-export?${query}`, { headers: { authorization: `Bearer ${token}` } })
  if (res.status !== 200) throw new Error(`export ${query}: ${res.status} ${await res.text()}`)
  let bytes = 0
  for await (const chunk of res.body!) bytes += (chunk as Uint8Array).length
  const seconds = (performance.now() - t0) / 1000
  clearInterval(timer)
  return { bytes, seconds, before, peak }
}

const rows: Array<Record<string, string | number>> = []
try {
  for (const operations of STEPS) {
    await seedTo(operations)
    for (const query of ["entities=operations&format=json", "entities=operations&format=csv", "entities=all&format=json"]) {
      const m = await measure(query)
      rows.push({
        operations,
        export: query,
        "MB sent": +(m.bytes / 1e6).toFixed(1),
        seconds: +m.seconds.toFixed(2),
        "RSS before MB": Math.round(m.before),
        "peak RSS MB": Math.round(m.peak),
        "growth MB": Math.round(m.peak - m.before)
      })
      console.log(JSON.stringify(rows.at(-1)))
    }
  }
  console.log(`\n${admin === undefined ? "embedded PGlite" : "PostgreSQL"}, node ${process.version}`)
  console.table(rows)
} finally {
  await stop()
  if (admin !== undefined && dbName !== undefined) {
    execFileSync("psql", [admin, "-qc", `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`])
  }
  rmSync(tmp, { recursive: true, force: true })
}
