// Runs the numbered .sql files of ../migrations (beside src and dist) in order, once each, on PostgreSQL and PGlite alike.
// @effect/sql-pg speaks only the extended protocol, so each file is split into single statements.
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import * as Migrator from "effect/sql/Migrator"
import { SqlClient } from "effect/sql/SqlClient"
import { PlannerStatistics } from "./statistics.ts"

const dir = fileURLToPath(new URL("../migrations/", import.meta.url))

/** Splits SQL text into statements, respecting quotes, dollar-quoted bodies and comments. */
export const splitStatements = (text: string): Array<string> => {
  const out: Array<string> = []
  let start = 0
  let i = 0
  const n = text.length
  while (i < n) {
    const c = text[i]
    if (c === "-" && text[i + 1] === "-") {
      const e = text.indexOf("\n", i)
      i = e === -1 ? n : e + 1
    } else if (c === "/" && text[i + 1] === "*") {
      const e = text.indexOf("*/", i + 2)
      i = e === -1 ? n : e + 2
    } else if (c === "'" || c === "\"") {
      let j = i + 1
      while (j < n && !(text[j] === c && text[j + 1] !== c)) j += text[j] === c ? 2 : 1
      i = j + 1
    } else if (c === "$") {
      const m = /^\$[A-Za-z_]*\$/.exec(text.slice(i))
      if (m) {
        const e = text.indexOf(m[0], i + m[0].length)
        i = e === -1 ? n : e + m[0].length
      } else i++
    } else if (c === ";") {
      out.push(text.slice(start, i))
      start = ++i
    } else i++
  }
  out.push(text.slice(start))
  return out
    .map((s) => s.trim())
    .filter((s) => s.replace(/--[^\n]*/g, "").trim() !== "")
}

const migrationFiles = () =>
  readdirSync(dir)
    .map((file) => /^(\d{4})_(.+)\.sql$/.exec(file))
    .filter((m): m is RegExpExecArray => m !== null)
    .sort((a, b) => Number(a[1]) - Number(b[1]))

/** The number of the newest migration this build carries. */
export const latestMigration = (): number => Number(migrationFiles().at(-1)?.[1] ?? 0)

const loader: Migrator.Loader = Effect.sync(() =>
  migrationFiles()
    .map((m): Migrator.ResolvedMigration => [
      Number(m[1]),
      m[2]!,
      // the loader yields the migration program itself (Migrator imports modules the same way)
      Effect.succeed(Effect.gen(function*() {
        const sql = yield* SqlClient
        for (const statement of splitStatements(readFileSync(dir + m[0], "utf8"))) {
          yield* sql.unsafe(statement).raw
        }
      }))
    ])
)

/**
 * Applies pending migrations (a second run is a no-op), then analyzes the tables that were never analyzed
 * (statistics.ts: the first import of a fresh database would otherwise plan its checks as if every index were alike).
 */
export const migrate = Migrator.make({})({ loader, table: "mes_migrations" }).pipe(
  Effect.tap(() => PlannerStatistics.analyzeFresh)
)
