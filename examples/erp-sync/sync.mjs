// Pushes a CSV of jobs from an ERP export through mes's bulk sync, 1,000 records per request, with a progress bar
// on stderr, and prints every record's result.
//   MES_URL=http://127.0.0.1:8787/functions/v1 MES_API_KEY=svc_live_… node sync.mjs jobs.csv [--source erp]
// CSV: a header row; one row per operation (job and part columns repeated) or per job. Columns: external_id,
// job_number, customer, due_date, priority, part_external_id, part_number, quantity, material,
// operation_external_id, operation_name, sequence, cell_name.
import { readFileSync } from "node:fs"
import { parse } from "csv-parse/sync"

const CHUNK = 1000
const NUMBERS = new Set(["priority", "quantity", "sequence"])
const value = (column, raw) => (NUMBERS.has(column) && raw !== "" && Number.isFinite(Number(raw)) ? Number(raw) : raw)
const pick = (row, columns) =>
  Object.fromEntries(Object.entries(columns).flatMap(([column, field]) => (row[column] ? [[field, value(field, row[column])]] : [])))

/** Rows grouped into job sync records (job → parts → operations), in file order. */
export const jobsOf = (csv, source) => {
  const jobs = new Map()
  for (const row of parse(csv, { columns: true, skip_empty_lines: true, trim: true, bom: true })) {
    let job = jobs.get(row.external_id)
    if (job === undefined) {
      job = { external_source: source, ...pick(row, { external_id: "external_id", job_number: "job_number", customer: "customer", due_date: "due_date", priority: "priority" }) }
      jobs.set(row.external_id, job)
    }
    const part = pick(row, { part_external_id: "external_id", part_number: "part_number", quantity: "quantity", material: "material" })
    if (Object.keys(part).length === 0) continue
    job.parts ??= []
    let target = job.parts.find((p) => p.external_id === part.external_id)
    if (target === undefined) job.parts.push(target = part)
    const operation = pick(row, { operation_external_id: "external_id", operation_name: "operation_name", sequence: "sequence", cell_name: "cell_name" })
    if (Object.keys(operation).length > 0) (target.operations ??= []).push(operation)
  }
  return [...jobs.values()]
}

const bar = (done, total, width = 30) => {
  const filled = Math.round((done / Math.max(total, 1)) * width)
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total} jobs`
}

export const push = async ({ url, key, jobs, out = process.stdout, err = process.stderr }) => {
  const totals = { created: 0, updated: 0, unchanged: 0, errors: 0 }
  for (let i = 0; i < jobs.length; i += CHUNK) {
    const chunk = jobs.slice(i, i + CHUNK)
    const res = await fetch(`${url}/api-jobs/bulk-sync`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ jobs: chunk })
    })
    const body = await res.json()
    if (!body.success) throw new Error(`bulk sync refused the chunk at ${i}: ${body.error.code} ${body.error.message}`)
    for (const k of Object.keys(totals)) totals[k] += body.data[k]
    for (const r of body.data.results) out.write(`${r.external_id}\t${r.action}${r.error ? `\t${r.error}` : ""}\n`)
    err.write(`\r${bar(Math.min(i + CHUNK, jobs.length), jobs.length)}${i + CHUNK >= jobs.length ? "\n" : ""}`)
  }
  out.write(`${jobs.length} jobs: ${totals.created} created, ${totals.updated} updated, ${totals.unchanged} unchanged, ${totals.errors} errors\n`)
  return totals
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, ...rest] = process.argv.slice(2)
  const url = process.env.MES_URL ?? "http://127.0.0.1:8787/functions/v1"
  const key = process.env.MES_API_KEY
  if (!file || !key) {
    console.error("usage: MES_API_KEY=… [MES_URL=…] node sync.mjs jobs.csv [--source erp]")
    process.exit(2)
  }
  const source = rest[rest.indexOf("--source") + 1] && rest.includes("--source") ? rest[rest.indexOf("--source") + 1] : "erp"
  const totals = await push({ url, key, jobs: jobsOf(readFileSync(file, "utf8"), source) })
  process.exit(totals.errors > 0 ? 1 : 0)
}
