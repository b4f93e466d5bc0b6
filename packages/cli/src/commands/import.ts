// `mes import <file> --tenant ID`: a JSON or CSV file of jobs through bulk sync (spec 4.1) in chunks of at most
// 1,000 records, with a progress bar on stderr and a summary; a chunk that fails leaves the others' work in place
// and a re-run resumes from the chunks not yet done (a state file beside the input).
import { existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import * as Effect from "effect/Effect"
import { Argument, Command, Flag } from "effect/cli"
import { parse } from "csv-parse/sync"
import { type BulkSyncResult, plural, Sync, utf8Text } from "@mes/domain"
import { withApp } from "../lazy.ts"
import { describe, jsonFlag, output, reportErrors, requireUuid, userError } from "../output.ts"
import { asTenant } from "./profile.ts"

/** The bulk-sync limit (DECISIONS: ≤ 1,000 records per request). */
const MAX_CHUNK = 1000

/**
 * The file's text (a byte order mark dropped). One that is not UTF-8 (a Windows-1252 export's "Müller") is refused
 * with the line of its first such byte, where a lenient read would import it wrong without a word.
 */
const textOf = (bytes: Buffer): string => {
  const text = utf8Text(bytes)
  if (text !== undefined) return text
  const lenient = bytes.toString("utf8")
  const at = lenient.indexOf("\uFFFD")
  let line = 1
  for (let i = lenient.indexOf("\n"); i !== -1 && i < at; i = lenient.indexOf("\n", i + 1)) line++
  throw new Error(`line ${line} has a byte that is not UTF-8: save the file as UTF-8`)
}

type Row = Record<string, string>
type Job = Record<string, unknown> & { external_id?: unknown; parts?: Array<Record<string, unknown>> }

const JOB_COLUMNS = ["external_id", "external_source", "job_number", "customer", "due_date", "priority", "notes"] as const
/** CSV columns of a part (prefixed `part_` where the job has a column of the same name). */
const PART_COLUMNS: Record<string, string> = {
  part_external_id: "external_id", part_number: "part_number", quantity: "quantity", material: "material",
  material_lot: "material_lot", part_notes: "notes"
}
const OPERATION_COLUMNS: Record<string, string> = {
  operation_external_id: "external_id", operation_name: "operation_name", sequence: "sequence", cell_name: "cell_name",
  estimated_time_minutes: "estimated_time_minutes", setup_time_minutes: "setup_time_minutes", operation_notes: "notes"
}
const NUMERIC = new Set(["priority", "quantity", "sequence", "estimated_time_minutes", "setup_time_minutes"])

const KNOWN_COLUMNS = new Set<string>([...JOB_COLUMNS, ...Object.keys(PART_COLUMNS), ...Object.keys(OPERATION_COLUMNS)])

/**
 * The header line's separator: `;` (Excel's in locales where the comma is the decimal mark) or a tab where the
 * header holds more of those than commas, else `,`.
 */
const delimiterOf = (text: string): string => {
  const end = text.search(/\r?\n/)
  const header = end === -1 ? text : text.slice(0, end)
  const count = (c: string) => header.split(c).length - 1
  return [";", "\t"].reduce((best, c) => (count(c) > count(best) ? c : best), ",")
}

/** `12,5` and `1.000,5`: a number written with a decimal comma (and dots between thousands). */
const DECIMAL_COMMA = /^[-+]?(\d+|\d{1,3}(\.\d{3})+),\d+$/
/** `1.000` or `12.500`: a thousand with dots between thousands, or a decimal with a dot, as the reader's locale has it. */
const GROUPED_OR_DECIMAL = /^[-+]?\d{1,3}(\.\d{3})+$/

/**
 * A CSV value as JSON: numeric columns are numbers when they read as one, else the text (refused by the sync with
 * the column's name and the value). In a semicolon file (Excel's where the comma is the decimal mark) `12,5` is
 * 12.5 and `1.000,5` is 1000.5; `1.000` is left as text, since such a file may mean a thousand and another one 1.
 */
const value = (column: string, raw: string, decimalComma: boolean): unknown => {
  if (!NUMERIC.has(column)) return raw
  if (decimalComma && DECIMAL_COMMA.test(raw)) return Number(raw.replaceAll(".", "").replace(",", "."))
  if (decimalComma && GROUPED_OR_DECIMAL.test(raw)) return raw
  const n = Number(raw)
  return raw.trim() !== "" && Number.isFinite(n) ? n : raw
}

/** The row's cells of `columns` under their fields' names; empty cells are absent. */
const pick = (row: Row, columns: Readonly<Record<string, string>>, decimalComma: boolean) => {
  const out: Record<string, unknown> = {}
  for (const [column, field] of Object.entries(columns)) {
    const raw = row[column]
    if (raw !== undefined && raw !== "") out[field] = value(field, raw, decimalComma)
  }
  return out
}

/**
 * Jobs from CSV rows: one row per job, or one per operation (job columns repeated), grouped by the job's
 * external_id, then the part's; see docs/DECISIONS.md "mes import" for the columns.
 */
export const jobsFromCsv = (text: string, source: string | undefined, ignored: (columns: ReadonlyArray<string>) => void = () => {}): Array<Job> => {
  const delimiter = delimiterOf(text)
  const decimalComma = delimiter === ";"
  const rows = parse(text, {
    columns: (header: Array<string>) => {
      const unknown = header.filter((c) => !KNOWN_COLUMNS.has(c))
      if (unknown.length > 0) ignored(unknown)
      return header
    },
    delimiter,
    skip_empty_lines: true,
    trim: true,
    bom: true
  }) as Array<Row>
  const jobs = new Map<string, Job>()
  const order: Array<Job> = []
  rows.forEach((row, i) => {
    const key = row.external_id ?? ""
    let job = key === "" ? undefined : jobs.get(key)
    if (job === undefined) {
      job = pick(row, Object.fromEntries(JOB_COLUMNS.map((c) => [c, c])), decimalComma)
      if (job.external_source === undefined && source !== undefined) job.external_source = source
      if (key !== "") jobs.set(key, job)
      else job.__row = i + 2
      order.push(job)
    }
    const part = pick(row, PART_COLUMNS, decimalComma)
    if (Object.keys(part).length === 0) return
    job.parts ??= []
    let target = job.parts.find((p) => p.external_id !== undefined && p.external_id === part.external_id)
    if (target === undefined) {
      target = part
      job.parts.push(target)
    }
    const operation = pick(row, OPERATION_COLUMNS, decimalComma)
    if (Object.keys(operation).length > 0) ((target.operations ??= []) as Array<unknown>).push(operation)
  })
  return order.map(({ __row: _row, ...job }) => job)
}

/** Jobs from JSON: an array of job sync records, or an object carrying one under `jobs` or `items`. */
export const jobsFromJson = (text: string, source: string | undefined): Array<Job> => {
  const body = JSON.parse(text) as unknown
  const items = Array.isArray(body) ? body : (body as { jobs?: unknown; items?: unknown } | null)?.jobs ?? (body as { items?: unknown } | null)?.items
  if (!Array.isArray(items)) throw new Error("the JSON must be an array of jobs or an object with a 'jobs' (or 'items') array")
  return items.map((j) =>
    source !== undefined && j !== null && typeof j === "object" && !("external_source" in j) ? { ...j, external_source: source } : j
  )
}

/** What a run remembers between attempts: the input it belongs to and the chunks done. */
interface ImportState {
  readonly size: number
  readonly mtimeMs: number
  readonly chunkSize: number
  readonly done: ReadonlyArray<number>
}

const readState = (path: string, file: { size: number; mtimeMs: number }, chunkSize: number): ReadonlyArray<number> => {
  if (!existsSync(path)) return []
  try {
    const state = JSON.parse(readFileSync(path, "utf8")) as ImportState
    // another input, or other chunks: start over
    return state.size === file.size && state.mtimeMs === file.mtimeMs && state.chunkSize === chunkSize ? state.done : []
  } catch {
    return []
  }
}

const bar = (done: number, total: number, width = 30) => {
  const filled = total === 0 ? width : Math.round((done / total) * width)
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}]`
}

/** The progress line on stderr: redrawn in place on a terminal, one line per chunk otherwise. */
const progress = (line: string, final = false) =>
  Effect.sync(() => {
    if (process.stderr.isTTY) process.stderr.write(`\r${line}${final ? "\n" : ""}`)
    else process.stderr.write(`${line}\n`)
  })

interface Totals { total: number; created: number; updated: number; unchanged: number; errors: number }

export const importJobs = Command.make("import", {
  file: Argument.String("file").pipe(Argument.withDescription("A .json or .csv file of jobs")),
  tenant: Flag.String("tenant").pipe(Flag.withDescription("Tenant id")),
  format: Flag.Literals("format", ["json", "csv"] as const).pipe(Flag.withDescription("File format (default: by extension)"), Flag.optional),
  source: Flag.String("source").pipe(Flag.withDescription("external_source for records that name none"), Flag.optional),
  chunkSize: Flag.Int("chunk-size").pipe(Flag.withDescription(`Records per bulk sync (1-${MAX_CHUNK})`), Flag.withDefault(MAX_CHUNK)),
  restart: Flag.Boolean("restart").pipe(Flag.withDescription("Ignore the progress of an earlier run and start from the first chunk"), Flag.withDefault(false)),
  json: jsonFlag
}, ({ chunkSize, file, format, json, restart, source, tenant }) =>
  Effect.gen(function*() {
    const tenantId = yield* requireUuid("tenant", tenant)
    if (!Number.isInteger(chunkSize) || chunkSize < 1 || chunkSize > MAX_CHUNK) {
      return yield* userError(`--chunk-size must be 1-${MAX_CHUNK}, got ${chunkSize}`)
    }
    if (!existsSync(file)) return yield* userError(`no such file: ${file}`)
    const stat = statSync(file)
    if (stat.isDirectory()) return yield* userError(`${file} is a directory: name a JSON or CSV file of jobs`)
    const kind = format._tag === "Some" ? format.value : file.toLowerCase().endsWith(".csv") ? "csv" : "json"
    const src = source._tag === "Some" ? source.value : undefined
    let ignored: ReadonlyArray<string> = []
    const jobs = yield* Effect.try({
      try: () => {
        const text = textOf(readFileSync(file))
        return kind === "csv" ? jobsFromCsv(text, src, (columns) => (ignored = columns)) : jobsFromJson(text, src)
      },
      catch: (e) => userError(`cannot read ${file} as ${kind.toUpperCase()}: ${describe(e)}`)
    })
    // a misspelt column would otherwise be left out of every record without a word
    if (ignored.length > 0) yield* progress(`ignoring column(s) mes does not import: ${ignored.join(", ")}`, true)
    const chunks = Array.from({ length: Math.ceil(jobs.length / chunkSize) }, (_, i) => jobs.slice(i * chunkSize, (i + 1) * chunkSize))
    const statePath = `${file}.mes-import.json`
    const fingerprint = { size: stat.size, mtimeMs: stat.mtimeMs, chunkSize }
    const done = new Set(restart ? [] : readState(statePath, stat, chunkSize))
    const resumed = done.size
    if (resumed > 0) yield* progress(`resuming: ${resumed} of ${chunks.length} chunks were done by an earlier run`)

    const totals: Totals = { total: 0, created: 0, updated: 0, unchanged: 0, errors: 0 }
    // record: the job's place in the file (1-based), which names it also when it has no external_id
    const recordErrors: Array<{ record: number; chunk: number; external_id: unknown; error: string }> = []
    const failed: Array<{ chunk: number; error: string }> = []
    yield* withApp(asTenant(tenantId, Effect.gen(function*() {
      const sync = yield* Sync
      for (const [i, chunk] of chunks.entries()) {
        if (done.has(i)) continue
        const result = yield* Effect.result(sync.bulk("jobs", { jobs: chunk }).pipe(Effect.catchDefect((d) => Effect.fail(d))))
        if (result._tag === "Success") {
          const r: BulkSyncResult = result.success
          for (const k of ["total", "created", "updated", "unchanged", "errors"] as const) totals[k] += r[k]
          // a bulk sync's results are its records', in their order
          for (const [k, x] of r.results.entries()) {
            if (x.action === "error") recordErrors.push({ record: i * chunkSize + k + 1, chunk: i, external_id: x.external_id, error: x.error })
          }
          done.add(i)
          // written beside and renamed over: a run killed while writing leaves the last whole state, not an empty file
          writeFileSync(`${statePath}.tmp`, JSON.stringify({ ...fingerprint, done: [...done] } satisfies ImportState))
          renameSync(`${statePath}.tmp`, statePath)
        } else {
          failed.push({ chunk: i, error: describe(result.failure) })
        }
        const records = Math.min((i + 1) * chunkSize, jobs.length)
        yield* progress(`${bar(done.size + failed.length, chunks.length)} chunk ${i + 1}/${chunks.length}, ${records}/${jobs.length} jobs`)
      }
    })))
    if (failed.length === 0) rmSync(statePath, { force: true })
    const summary = { file, jobs: jobs.length, chunks: chunks.length, resumed_chunks: resumed, ...totals, failed_chunks: failed, record_errors: recordErrors, ignored_columns: ignored }
    const lines = [
      `Imported ${file}: ${plural(jobs.length, "job")} in ${plural(chunks.length, "chunk")}${resumed > 0 ? ` (${resumed} done by an earlier run)` : ""}: ` +
      `${totals.created} created, ${totals.updated} updated, ${totals.unchanged} unchanged, ${plural(totals.errors, "error")}`,
      ...recordErrors.slice(0, 10).map((e) => `  record ${e.record}${e.external_id === null ? "" : ` (external_id ${String(e.external_id)})`}: ${e.error}`),
      ...(recordErrors.length > 10 ? [`  … and ${recordErrors.length - 10} more (--json lists them all)`] : []),
      ...failed.map((f) => `  chunk ${f.chunk + 1} failed: ${f.error}`),
      ...(failed.length > 0 ? [`Run the same command again to retry the ${failed.length} failed chunk(s); the others are not sent again.`] : [])
    ]
    yield* output(json, summary, lines.join("\n"))
    if (failed.length > 0) return yield* userError(`${failed.length} of ${chunks.length} chunks failed`)
  }).pipe(reportErrors)).pipe(
  Command.withDescription("Import jobs (JSON or CSV) through bulk sync, 1,000 at a time, resumable"),
  Command.withExamples([
    { command: "mes import jobs.csv --tenant 0190c3e2-7d1a-7c3e-9a57-2f1e3d4c5b6a --source erp", description: "a CSV, one row per job or per operation" },
    { command: "mes import jobs.json --tenant 0190c3e2-7d1a-7c3e-9a57-2f1e3d4c5b6a --json", description: "a JSON array of job sync records; summary as JSON" }
  ])
)
