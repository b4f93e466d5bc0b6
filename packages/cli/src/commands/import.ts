// `mes import <file> --tenant ID`: a JSON or CSV file of jobs through bulk sync (spec 4.1) in chunks of at most
// 1,000 records, with a progress bar on stderr and a summary; a chunk that fails leaves the others' work in place
// and a re-run resumes from the chunks not yet done (a state file beside the input, for the same tenant, source,
// format and database). Exit code 1 when a chunk failed or a record was refused.
import { createHash } from "node:crypto"
import { existsSync, fstatSync, readFileSync, renameSync, rmSync, type Stats, statSync, writeFileSync } from "node:fs"
import { resolve } from "node:path"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Argument, Command, Flag } from "effect/cli"
import { parse } from "csv-parse/sync"
import { type BulkSyncResult, JobSync, plural, Sync, utf8Text } from "@mes/domain"
import { loadApp, withApp } from "../lazy.ts"
import { checkFlag, describe, jsonFlag, output, reportErrors, requireUuid, userError, withoutPassword } from "../output.ts"
import { asTenant } from "./profile.ts"

/** The bulk-sync limit (DECISIONS: ≤ 1,000 records per request). */
const MAX_CHUNK = 1000

/** external_source of records that name none: examples/erp-sync/sync.mjs's, so its README's command runs as it is. */
const DEFAULT_SOURCE = "erp"

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

/** A record the CSV reader refuses itself (naming the line and column): listed with the sync's refusals, never sent. */
export class Refused {
  readonly _tag = "Refused"
  readonly external_id: string | null
  readonly error: string
  constructor(external_id: string | null, error: string) {
    this.external_id = external_id
    this.error = error
  }
}

/** What refuses the record a row belongs to. */
class RowError extends Error {}

const JOB_COLUMNS: Record<string, string> = Object.fromEntries(
  ["external_id", "external_source", "job_number", "customer", "due_date", "priority", "notes"].map((c) => [c, c])
)
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

const KNOWN_COLUMNS = new Set<string>([...Object.keys(JOB_COLUMNS), ...Object.keys(PART_COLUMNS), ...Object.keys(OPERATION_COLUMNS)])

/** Excel's first line naming the separator (`sep=;`), which it writes and reads in place of a header guess. */
const SEP_LINE = /^sep=([^\r\n])\r?(\n|$)/i

/**
 * The separator, and the line the header is on: the one a first line `sep=X` names (Excel's; the header is then on
 * line 2: it was read as the header, a column "sep=;"), else the header line's `;` (Excel's in locales where the
 * comma is the decimal mark) or tab where it holds more of those than commas, else `,`.
 */
const delimiterOf = (text: string): { readonly delimiter: string; readonly fromLine: number } => {
  const sep = SEP_LINE.exec(text)
  if (sep !== null) return { delimiter: sep[1]!, fromLine: 2 }
  const end = text.search(/\r?\n/)
  const header = end === -1 ? text : text.slice(0, end)
  const count = (c: string) => header.split(c).length - 1
  return { delimiter: [";", "\t"].reduce((best, c) => (count(c) > count(best) ? c : best), ","), fromLine: 1 }
}

/** `12`, `12.5`, `-3`: a number as a spreadsheet writes it. */
const DECIMAL = /^[-+]?(\d+(\.\d+)?|\.\d+)$/
/** `12,5` and `1.000,5`: a number written with a decimal comma (and dots between thousands). */
const DECIMAL_COMMA = /^[-+]?(\d+|\d{1,3}(\.\d{3})+),\d+$/
/** `1.000` or `12.500`: a thousand with dots between thousands, or a decimal with a dot, as the reader's locale has it. */
const GROUPED_OR_DECIMAL = /^[-+]?\d{1,3}(\.\d{3})+$/

/** A cell quoted in a message, cut where it is long. */
const quote = (raw: string) => `'${raw.length <= 40 ? raw : `${raw.slice(0, 40)}…`}'`

/**
 * A CSV cell as JSON: numeric columns take decimal text only (Number() read `0x10` as 16 and `1e2` as 100). In a
 * semicolon file (Excel's where the comma is the decimal mark) `12,5` is 12.5 and `1.000,5` is 1000.5; `1.000` is
 * refused, since such a file may mean a thousand and another one 1. Anything else refuses the record.
 */
const value = (column: string, field: string, raw: string, decimalComma: boolean, line: number): unknown => {
  if (!NUMERIC.has(field)) return raw
  if (decimalComma && DECIMAL_COMMA.test(raw)) return Number(raw.replaceAll(".", "").replace(",", "."))
  if (decimalComma && GROUPED_OR_DECIMAL.test(raw)) {
    throw new RowError(`line ${line}, column ${column}: ${quote(raw)} may be a thousand or a decimal: write it without the dot`)
  }
  if (DECIMAL.test(raw)) return Number(raw)
  throw new RowError(`line ${line}, column ${column}: ${quote(raw)} is not a decimal number`)
}

interface Cell { readonly column: string; readonly field: string; readonly raw: string; readonly value: unknown; readonly line: number }

/** The row's non-empty cells of `columns`. */
const cellsOf = (row: Row, columns: Readonly<Record<string, string>>, decimalComma: boolean, line: number): Array<Cell> =>
  Object.entries(columns).flatMap(([column, field]) => {
    const raw = row[column]
    return raw === undefined || raw === "" ? [] : [{ column, field, raw, value: value(column, field, raw, decimalComma, line), line }]
  })

/** The cells the rows of one job (or part) gave it, by column. */
type Seen = Map<string, Cell>

/**
 * Adds a row's cells to those earlier rows of the same job or part gave (an empty cell is one not repeated); a
 * cell that says otherwise refuses the record, where the first row's value was kept without a word.
 */
const absorb = (seen: Seen, cells: ReadonlyArray<Cell>, of: string): Seen => {
  for (const cell of cells) {
    const earlier = seen.get(cell.column)
    if (earlier === undefined) seen.set(cell.column, cell)
    else if (earlier.raw !== cell.raw) {
      throw new RowError(`line ${cell.line}, column ${cell.column}: ${quote(cell.raw)} where line ${earlier.line} of the same ${of} has ${quote(earlier.raw)}`)
    }
  }
  return seen
}

/** The fields of what `seen` holds, in the columns' order. */
const fieldsOf = (seen: Seen, columns: Readonly<Record<string, string>>): Record<string, unknown> =>
  Object.fromEntries(Object.keys(columns).flatMap((c) => (seen.has(c) ? [[columns[c]!, seen.get(c)!.value]] : [])))

/** A header naming an imported column twice: which of its cells counts would be a guess (the last one did). */
const twiceNamed = (header: ReadonlyArray<string>) =>
  [...new Set(header.filter((c, i) => KNOWN_COLUMNS.has(c) && header.indexOf(c) !== i))].map((c) =>
    `${c} (columns ${header.flatMap((h, i) => (h === c ? [i + 1] : [])).join(" and ")})`
  )

interface JobRows {
  readonly key: string
  readonly job: Seen
  readonly parts: Array<{ readonly key: string; readonly part: Seen; readonly operations: Array<Record<string, unknown>> }>
  refused?: string
}

/**
 * Jobs from CSV rows: one row per job, or one per operation (job columns repeated), grouped by the job's
 * external_id, then the part's; see docs/DECISIONS.md "mes import" for the columns. A record whose rows cannot be
 * read as they stand (a cell that is not a number, an operation without its part, rows of one job that disagree)
 * is a Refused naming the line and column.
 */
export const jobsFromCsv = (text: string, source: string, ignored: (columns: ReadonlyArray<string>) => void = () => {}): Array<Job | Refused> => {
  const { delimiter, fromLine } = delimiterOf(text)
  const decimalComma = delimiter === ";"
  const rows = parse(text, {
    // column names in any case (`External_ID`, `JOB_NUMBER`, as spreadsheets title them): they were ignored
    columns: (header: Array<string>) => {
      const names = header.map((c) => c.toLowerCase())
      const twice = twiceNamed(names)
      if (twice.length > 0) throw new Error(`the header names ${twice.join(", ")} more than once: keep one of each`)
      const unknown = header.filter((_, i) => !KNOWN_COLUMNS.has(names[i]!))
      if (unknown.length > 0) ignored(unknown)
      return names
    },
    delimiter,
    from_line: fromLine,
    skip_empty_lines: true,
    trim: true,
    bom: true,
    info: true
  }) as Array<{ record: Row; info: { lines: number } }>
  const byKey = new Map<string, JobRows>()
  const order: Array<JobRows> = []
  for (const { info: { lines: line }, record: row } of rows) {
    const key = row.external_id ?? ""
    let rec = key === "" ? undefined : byKey.get(key)
    if (rec === undefined) {
      rec = { key, job: new Map(), parts: [] }
      if (key !== "") byKey.set(key, rec)
      order.push(rec)
    }
    if (rec.refused !== undefined) continue
    try {
      absorb(rec.job, cellsOf(row, JOB_COLUMNS, decimalComma, line), `job (external_id ${key})`)
      const partCells = cellsOf(row, PART_COLUMNS, decimalComma, line)
      const operation = cellsOf(row, OPERATION_COLUMNS, decimalComma, line)
      if (partCells.length === 0) {
        if (operation.length > 0) {
          throw new RowError(`line ${line}: an operation (${operation.map((c) => c.column).join(", ")}) without its part: give the part's part_number on the row`)
        }
        continue
      }
      const partKey = row.part_external_id ?? ""
      let target = partKey === "" ? undefined : rec.parts.find((p) => p.key === partKey)
      if (target === undefined) rec.parts.push(target = { key: partKey, part: absorb(new Map(), partCells, "part"), operations: [] })
      else absorb(target.part, partCells, `part (part_external_id ${partKey})`)
      if (operation.length > 0) target.operations.push(fieldsOf(new Map(operation.map((c) => [c.column, c])), OPERATION_COLUMNS))
    } catch (e) {
      if (!(e instanceof RowError)) throw e
      rec.refused = e.message
    }
  }
  return order.map((rec) => {
    if (rec.refused !== undefined) return new Refused(rec.key === "" ? null : rec.key, rec.refused)
    const job: Job = fieldsOf(rec.job, JOB_COLUMNS)
    job.external_source ??= source
    if (rec.parts.length > 0) {
      job.parts = rec.parts.map((p) => ({ ...fieldsOf(p.part, PART_COLUMNS), ...(p.operations.length > 0 ? { operations: p.operations } : {}) }))
    }
    return job
  })
}

/** Jobs from JSON: an array of job sync records, or an object carrying one under `jobs` or `items`. */
export const jobsFromJson = (text: string, source: string): Array<Job> => {
  const body = JSON.parse(text) as unknown
  const items = Array.isArray(body) ? body : (body as { jobs?: unknown; items?: unknown } | null)?.jobs ?? (body as { items?: unknown } | null)?.items
  if (!Array.isArray(items)) throw new Error("the JSON must be an array of jobs or an object with a 'jobs' (or 'items') array")
  return items.map((j) => (j !== null && typeof j === "object" && !("external_source" in j) ? { ...j, external_source: source } : j))
}

/**
 * The run a state file belongs to: the input (its size and mtime), how it is cut and read, and where it goes. A
 * state of another run is not resumed: its chunks were done for another tenant, source or database.
 */
interface ImportRun {
  readonly size: number
  readonly mtimeMs: number
  readonly chunkSize: number
  readonly format: string
  readonly tenant: string
  readonly source: string
  /** DATABASE_URL without its password, or the embedded database's directory. */
  readonly database: string
}

/** What a run remembers between attempts: the run and the chunks done. */
interface ImportState extends ImportRun {
  readonly done: ReadonlyArray<number>
}

/** The state's fields that tell one run from another, as a message names them. */
const RUN_FIELDS: Record<keyof ImportRun, string> = {
  size: "file size or time", mtimeMs: "file size or time", chunkSize: "chunk size", format: "format", tenant: "tenant", source: "source", database: "database"
}

/** The chunks an earlier run of the same import did, and why one that was left is not resumed. */
const earlierRun = (path: string, run: ImportRun): { readonly done: ReadonlyArray<number>; readonly note?: string } => {
  if (!existsSync(path)) return { done: [] }
  try {
    const state = JSON.parse(readFileSync(path, "utf8")) as Partial<ImportState>
    const other = [...new Set((Object.keys(RUN_FIELDS) as Array<keyof ImportRun>).filter((k) => state[k] !== run[k]).map((k) => RUN_FIELDS[k]))]
    if (other.length > 0) return { done: [], note: `starting over: ${path} records another run (different ${other.join(", ")})` }
    return { done: Array.isArray(state.done) ? state.done.filter(Number.isInteger) : [] }
  } catch (e) {
    return { done: [], note: `starting over: cannot read ${path} (${describe(e)})` }
  }
}

/** The database the environment names, as a state file records it (never a password). */
const databaseOf = Effect.gen(function*() {
  const { dataDir, url } = yield* (yield* loadApp).DatabaseConfig
  if (Option.isNone(url)) return `embedded ${resolve(dataDir)}`
  return withoutPassword(url.value) ?? `DATABASE_URL sha256:${createHash("sha256").update(url.value).digest("hex")}`
})

/** A file system error without the path its message repeats ("EACCES: permission denied"). */
const reasonOf = (e: unknown) => describe(e).replace(/, \w+ '[^']*'$/, "")

const bar = (done: number, total: number, width = 30) => {
  const filled = total === 0 ? width : Math.round((done / total) * width)
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}]`
}

/**
 * Progress on stderr: a bar redrawn in place on a terminal (a line per chunk otherwise) and whole lines, each on a
 * line of its own: a line after a bar (and the summary after the last one) used to run into it.
 */
const stderrProgress = () => {
  const tty = process.stderr.isTTY === true
  let open = false
  const end = () => {
    if (open) process.stderr.write("\n")
    open = false
  }
  return {
    bar: (line: string) => {
      process.stderr.write(tty ? `\r${line}` : `${line}\n`)
      open = tty
    },
    line: (line: string) => {
      end()
      process.stderr.write(`${line}\n`)
    },
    end
  }
}

interface Totals { total: number; created: number; updated: number; unchanged: number; errors: number }

/** A chunk with nothing to send (every record refused while reading). */
const NOTHING_SENT: BulkSyncResult = { total: 0, created: 0, updated: 0, unchanged: 0, errors: 0, results: [] }

/** The FILE that names standard input (`… | mes import - --tenant ID`), as for cat and tar; `./-` is a file named -. */
const STDIN = "-"

/** Inputs read as a stream (stdin, a pipe, /dev/*) have no place beside them for a state, nor one run to resume. */
const keepsState = (file: string, stat: Stats) => file !== STDIN && stat.isFile() && !/^\/(dev|proc)\//.test(resolve(file))

type Format = "json" | "csv"

/** The format a file's name says: `.json`, or `.csv` and `.tsv`; undefined for any other (`.txt`, stdin, a pipe). */
const formatByName = (file: string): Format | undefined => {
  const name = file.toLowerCase()
  return name.endsWith(".json") ? "json" : name.endsWith(".csv") || name.endsWith(".tsv") ? "csv" : undefined
}

/**
 * The format of a text whose name says none: JSON when it starts with `[` or `{` (blanks before it aside), else CSV
 * (a header row, separated by commas, semicolons or tabs). A tab-separated `.txt` was read as JSON and refused.
 */
const formatByContent = (text: string): Format => (/^\s*[[{]/.test(text) ? "json" : "csv")

/** All of standard input, as bytes. */
const readStdin = Effect.tryPromise({
  try: async () => {
    const chunks: Array<Buffer> = []
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
    return Buffer.concat(chunks)
  },
  catch: (e) => userError(`cannot read standard input: ${describe(e)}`, e)
})

export const importJobs = Command.make("import", {
  file: Argument.String("file").pipe(Argument.withDescription("A JSON or CSV file of jobs; - reads standard input")),
  tenant: Flag.String("tenant").pipe(Flag.withDescription("Tenant id")),
  format: Flag.Literals("format", ["json", "csv"] as const).pipe(
    Flag.withDescription("File format (default: .json is JSON, .csv and .tsv CSV; any other name, and -, JSON when it starts with [ or {, else CSV)"),
    Flag.optional
  ),
  source: Flag.String("source").pipe(
    Flag.withDescription("external_source for records that name none (default erp, as examples/erp-sync/sync.mjs)"),
    Flag.withDefault(DEFAULT_SOURCE)
  ),
  chunkSize: Flag.Int("chunk-size").pipe(Flag.withDescription(`Records per bulk sync (1-${MAX_CHUNK})`), Flag.withDefault(MAX_CHUNK)),
  restart: Flag.Boolean("restart").pipe(Flag.withDescription("Ignore the progress of an earlier run and start from the first chunk"), Flag.withDefault(false)),
  json: jsonFlag
}, ({ chunkSize, file, format, json, restart, source, tenant }) =>
  Effect.gen(function*() {
    const tenantId = yield* requireUuid("tenant", tenant)
    if (!Number.isInteger(chunkSize) || chunkSize < 1 || chunkSize > MAX_CHUNK) {
      return yield* userError(`--chunk-size must be 1-${MAX_CHUNK}, got ${chunkSize}`)
    }
    // one every record would be refused for is refused once, before the file is read
    yield* checkFlag("source", "external_source", JobSync.fields.external_source, source)
    const stdin = file === STDIN
    if (!stdin && !existsSync(file)) return yield* userError(`no such file: ${file}`)
    const stat = stdin ? fstatSync(0) : statSync(file)
    if (stat.isDirectory()) return yield* userError(`${file} is a directory: name a JSON or CSV file of jobs`)
    const shown = stdin ? "standard input" : file
    const bytes = stdin ? yield* readStdin : undefined
    let kind: Format | undefined = format._tag === "Some" ? format.value : stdin ? undefined : formatByName(file)
    let ignored: ReadonlyArray<string> = []
    const records = yield* Effect.try({
      try: (): Array<Job | Refused> => {
        const text = textOf(bytes ?? readFileSync(file))
        kind ??= formatByContent(text)
        return kind === "csv" ? jobsFromCsv(text, source, (columns) => (ignored = columns)) : jobsFromJson(text, source)
      },
      catch: (e) => userError(`cannot read ${shown}${kind === undefined ? "" : ` as ${kind.toUpperCase()}`}: ${describe(e)}`)
    })
    const read: Format = kind ?? "json"
    const progress = stderrProgress()
    // a misspelt column would otherwise be left out of every record without a word
    if (ignored.length > 0) progress.line(`ignoring column(s) mes does not import: ${ignored.join(", ")}`)
    const chunks = Array.from({ length: Math.ceil(records.length / chunkSize) }, (_, i) => records.slice(i * chunkSize, (i + 1) * chunkSize))
    const statePath = keepsState(file, stat) ? `${file}.mes-import.json` : undefined
    const run: ImportRun = { size: stat.size, mtimeMs: stat.mtimeMs, chunkSize, format: read, tenant: tenantId, source, database: yield* databaseOf }
    const earlier = restart || statePath === undefined ? { done: [] } : earlierRun(statePath, run)
    if (earlier.note !== undefined) progress.line(earlier.note)
    const done = new Set(earlier.done)
    const resumed = done.size
    if (resumed > 0) progress.line(`resuming: ${resumed} of ${chunks.length} chunks were done by an earlier run`)
    let recording = statePath !== undefined
    /** Notes the chunks done; where that cannot be written the import goes on, said once, without resuming. */
    const record = () => {
      if (!recording) return
      try {
        // written beside and renamed over: a run killed while writing leaves the last whole state, not an empty file
        writeFileSync(`${statePath}.tmp`, JSON.stringify({ ...run, done: [...done] } satisfies ImportState))
        renameSync(`${statePath}.tmp`, statePath!)
      } catch (e) {
        recording = false
        progress.line(`cannot record progress at ${statePath} (${reasonOf(e)}): an interrupted run will start over`)
      }
    }

    const totals: Totals = { total: 0, created: 0, updated: 0, unchanged: 0, errors: 0 }
    // record: the job's place in the file (1-based), which names it also when it has no external_id
    const recordErrors: Array<{ record: number; chunk: number; external_id: unknown; error: string }> = []
    const failed: Array<{ chunk: number; error: string }> = []
    yield* withApp(asTenant(tenantId, Effect.gen(function*() {
      const sync = yield* Sync
      for (const [i, chunk] of chunks.entries()) {
        if (done.has(i)) continue
        const jobs = chunk.filter((r): r is Job => !(r instanceof Refused))
        const result = yield* Effect.result(
          jobs.length === 0 ? Effect.succeed(NOTHING_SENT) : sync.bulk("jobs", { jobs }).pipe(Effect.catchDefect((d) => Effect.fail(d)))
        )
        if (result._tag === "Success") {
          const r: BulkSyncResult = result.success
          const refused = chunk.length - jobs.length
          for (const k of ["created", "updated", "unchanged"] as const) totals[k] += r[k]
          totals.total += r.total + refused
          totals.errors += r.errors + refused
          // a bulk sync's results are its records', in their order
          let sent = 0
          for (const [k, x] of chunk.entries()) {
            const outcome = x instanceof Refused ? x : r.results[sent++]!
            if (outcome instanceof Refused || outcome.action === "error") {
              recordErrors.push({ record: i * chunkSize + k + 1, chunk: i, external_id: outcome.external_id, error: outcome.error })
            }
          }
          done.add(i)
          record()
        } else {
          failed.push({ chunk: i, error: describe(result.failure) })
        }
        const upTo = Math.min((i + 1) * chunkSize, records.length)
        progress.bar(`${bar(done.size + failed.length, chunks.length)} chunk ${i + 1}/${chunks.length}, ${upTo}/${records.length} jobs`)
      }
    })).pipe(Effect.ensuring(Effect.sync(progress.end))))
    if (failed.length === 0 && statePath !== undefined) {
      try {
        rmSync(statePath, { force: true })
      } catch {
        // a directory that takes no state (said above) may hold an earlier one: every chunk of it is done now
      }
    }
    const summary = { file, jobs: records.length, chunks: chunks.length, resumed_chunks: resumed, ...totals, failed_chunks: failed, record_errors: recordErrors, ignored_columns: ignored }
    const lines = [
      `Imported ${shown}: ${plural(records.length, "job")} in ${plural(chunks.length, "chunk")}${resumed > 0 ? ` (${resumed} done by an earlier run)` : ""}: ` +
      `${totals.created} created, ${totals.updated} updated, ${totals.unchanged} unchanged, ${plural(totals.errors, "error")}`,
      ...recordErrors.slice(0, 10).map((e) => `  record ${e.record}${e.external_id === null ? "" : ` (external_id ${String(e.external_id)})`}: ${e.error}`),
      ...(recordErrors.length > 10 ? [`  … and ${recordErrors.length - 10} more (--json lists them all)`] : []),
      ...failed.map((f) => `  chunk ${f.chunk + 1} failed: ${f.error}`),
      ...(failed.length > 0 ? [`Run the same command again to retry the ${failed.length} failed chunk(s); the others are not sent again.`] : [])
    ]
    yield* output(json, summary, lines.join("\n"))
    // exit 1 when anything was not imported, as examples/erp-sync/sync.mjs: a script or cron job sees it
    const problems = [
      ...(failed.length > 0 ? [`${failed.length} of ${chunks.length} chunks failed`] : []),
      ...(recordErrors.length > 0 ? [`${plural(recordErrors.length, "record")} refused`] : [])
    ]
    if (problems.length > 0) return yield* userError(problems.join("; "))
  }).pipe(reportErrors)).pipe(
  Command.withDescription("Import jobs (JSON or CSV, from a file or - for standard input) through bulk sync, 1,000 at a time, resumable; exit 1 if any record is refused"),
  Command.withExamples([
    { command: "mes import jobs.csv --tenant 0190c3e2-7d1a-7c3e-9a57-2f1e3d4c5b6a", description: "a CSV, one row per job or per operation (external_source erp where it names none)" },
    { command: "mes import jobs.json --tenant 0190c3e2-7d1a-7c3e-9a57-2f1e3d4c5b6a --source mrp --json", description: "a JSON array of job sync records; summary as JSON" }
  ])
)
