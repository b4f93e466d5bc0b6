// Bulk sync against a raw insert (issue 11 item 7): 1,000 jobs × 5 parts × 4 operations through
// POST /api-jobs/bulk-sync of the compiled `mes serve`, the same 1,000 again (all unchanged), and the same rows
// inserted by psql in one transaction (three multi-row INSERTs) into a second fresh database. "first import" is the
// same bulk as the very first request of a server on a freshly migrated database (no warm-up, no statistics yet).
// Then, on the measured server, 1,000 parts through POST /api-parts/bulk-sync (5 under each of 200 jobs synced
// without parts) and 1,000 operations through POST /api-operations/bulk-sync (one per part, sequence left to the
// database), each sent twice (created, then unchanged).
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/bulk-sync.ts [rounds=3]
import { execFileSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { databaseUrl, MES_BIN, psql, startMes, tenantDatabase } from "./lib/mes-serve.ts"

const admin = process.env.DATABASE_URL
if (admin === undefined) throw new Error("set DATABASE_URL (a PostgreSQL server; the bench creates and drops its databases)")
const rounds = Number(process.argv[2] ?? 3)
const JOBS = 1000
const tmp = mkdtempSync(join(tmpdir(), "mes-bulk-bench-"))
const dbUrl = (name: string) => databaseUrl(admin, name)

const body = (run: string) => ({
  items: Array.from({ length: JOBS }, (_, j) => ({
    external_id: `${run}-J${j}`,
    external_source: "erp",
    job_number: `${run}-${j}`,
    customer: "Bench Steel",
    parts: Array.from({ length: 5 }, (_, p) => ({
      external_id: `${run}-J${j}-P${p}`,
      part_number: `P-${p}`,
      quantity: 3,
      operations: Array.from({ length: 4 }, (_, o) => ({ external_id: `${run}-J${j}-P${p}-O${o}`, operation_name: `Op ${o}`, sequence: o + 1 }))
    }))
  }))
})

/** A fresh database with a bench tenant and `mes serve` on it; `post` times one bulk-sync request. */
const freshServer = async (name: string) => {
  const { env, tenant } = tenantDatabase(admin, name, ["--name", "Bench", "--plan", "enterprise"])
  const { stop, url } = await startMes(env)
  const post = async (payload: unknown, path = "/api-jobs/bulk-sync") => {
    const text = JSON.stringify(payload)
    const t0 = performance.now()
    const res = await fetch(`${url}${path}`, { method: "POST", headers: { authorization: `Bearer ${tenant.api_key}`, "content-type": "application/json" }, body: text })
    const data = (await res.json()) as { data: Record<string, number> }
    const ms = performance.now() - t0
    if (res.status !== 200) throw new Error(`bulk-sync: ${res.status} ${JSON.stringify(data).slice(0, 300)}`)
    return { ms, data: data.data }
  }
  return { env, post, stop: async () => {
    await stop()
    psql(admin, ["-c", `DROP DATABASE ${name} WITH (FORCE)`])
  } }
}

/** 1,000 parts and then 1,000 operations bulk-synced under 200 jobs, each bulk twice: the four times. */
const partsAndOperations = async (post: Awaited<ReturnType<typeof freshServer>>["post"], run: string) => {
  const JOBS_OF_PARTS = 200
  await post({ cells: [{ external_id: `${run}-cell`, external_source: "erp", name: "Bench cell" }] }, "/api-cells/bulk-sync")
  await post({ items: Array.from({ length: JOBS_OF_PARTS }, (_, j) => ({ external_id: `${run}-K${j}`, external_source: "erp", job_number: `${run}-K${j}` })) })
  const parts = Array.from({ length: JOBS_OF_PARTS * 5 }, (_, i) => ({
    external_id: `${run}-Q${i}`, external_source: "erp", job_external_id: `${run}-K${Math.floor(i / 5)}`, part_number: `P-${i % 5}`, quantity: 3
  }))
  const operations = parts.map((p, i) => ({
    external_id: `${run}-S${i}`, external_source: "erp", part_external_id: p.external_id, cell_name: "Bench cell", operation_name: "Cut"
  }))
  const timed = async (path: string, key: string, items: ReadonlyArray<object>, expect: "created" | "unchanged") => {
    const r = await post({ [key]: items }, path)
    if (r.data[expect] !== items.length) throw new Error(`${path}: ${JSON.stringify(r.data).slice(0, 300)}`)
    return Math.round(r.ms)
  }
  return {
    "parts 1,000 ms": await timed("/api-parts/bulk-sync", "parts", parts, "created"),
    "parts again ms": await timed("/api-parts/bulk-sync", "parts", parts, "unchanged"),
    "operations 1,000 ms": await timed("/api-operations/bulk-sync", "operations", operations, "created"),
    "operations again ms": await timed("/api-operations/bulk-sync", "operations", operations, "unchanged")
  }
}

const results: Array<Record<string, number | string>> = []
for (let round = 1; round <= rounds; round++) {
  const name = `mes_bulk_bench_${Date.now().toString(36)}`
  const firstServer = await freshServer(`${name}_first`)
  const firstImport = await firstServer.post(body(`f${round}`))
  await firstServer.stop()
  if (firstImport.data.created !== JOBS) throw new Error(`first import: ${JSON.stringify(firstImport.data).slice(0, 300)}`)

  const { env, post, stop } = await freshServer(name)
  // warm the server's statements on another run's records, then measure
  await post({ items: body(`warm${round}`).items.slice(0, 20) })
  // a serving mes analyzes each table once it holds data (PlannerStatistics, rounds of 1 s): measure what a
  // running deployment does, not a first-ever import into empty tables
  await new Promise((r) => setTimeout(r, 2500))
  const first = await post(body(`r${round}`))
  const again = await post(body(`r${round}`))
  if (first.data.created !== JOBS || again.data.unchanged !== JOBS) throw new Error(`unexpected results ${JSON.stringify([first.data.created, again.data.unchanged])}`)
  const records = await partsAndOperations(post, `s${round}`)
  await stop()

  // the same rows, inserted raw in one transaction into a fresh database with mes's schema
  const rawName = `${name}_raw`
  psql(admin, ["-c", `CREATE DATABASE ${rawName}`])
  execFileSync(process.execPath, [MES_BIN, "migrate", "--json"], { env: { ...env, DATABASE_URL: dbUrl(rawName) } })
  const tid = randomUUID()
  const jobs: Array<string> = []
  const parts: Array<string> = []
  const ops: Array<string> = []
  for (const j of body(`r${round}`).items) {
    const jid = randomUUID()
    jobs.push(`('${tid}','${jid}','${j.job_number}','${j.customer}','${j.external_id}','erp')`)
    for (const p of j.parts) {
      const pid = randomUUID()
      parts.push(`('${tid}','${pid}','${jid}','${p.part_number}',${p.quantity},'${p.external_id}','erp')`)
      for (const o of p.operations) ops.push(`('${tid}','${randomUUID()}','${pid}','${o.operation_name}',${o.sequence},'${o.external_id}','erp')`)
    }
  }
  const file = join(tmp, "raw.sql")
  writeFileSync(file, [
    `INSERT INTO tenants (id, name) VALUES ('${tid}', 'raw');`,
    "\\timing on",
    "BEGIN;",
    `INSERT INTO jobs (tenant_id, id, job_number, customer, external_id, external_source) VALUES ${jobs.join(",")};`,
    `INSERT INTO parts (tenant_id, id, job_id, part_number, quantity, external_id, external_source) VALUES ${parts.join(",")};`,
    `INSERT INTO operations (tenant_id, id, part_id, operation_name, sequence, external_id, external_source) VALUES ${ops.join(",")};`,
    "COMMIT;"
  ].join("\n"))
  const timing = execFileSync("psql", [dbUrl(rawName), "-v", "ON_ERROR_STOP=1", "-q", "-f", file], { encoding: "utf8" })
  const rawMs = [...timing.matchAll(/Time: ([\d.]+) ms/g)].reduce((a, m) => a + Number(m[1]), 0)
  psql(admin, ["-c", `DROP DATABASE ${rawName} WITH (FORCE)`])

  results.push({
    round,
    "first import ms": Math.round(firstImport.ms),
    "bulk-sync create ms": Math.round(first.ms),
    "re-sync unchanged ms": Math.round(again.ms),
    "raw insert ms": Math.round(rawMs),
    "bulk ÷ raw": +(first.ms / rawMs).toFixed(2),
    ...records
  })
  console.log(JSON.stringify(results.at(-1)))
}
console.table(results)
rmSync(tmp, { recursive: true, force: true })
