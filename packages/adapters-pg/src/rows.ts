// Set-based writes: every batch of rows travels as ONE jsonb parameter and is expanded by
// jsonb_populate_recordset, so a statement's size does not grow with the number of rows
// (and never meets the 65535-parameter limit).
import * as Effect from "effect/Effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { givenKeys, ident } from "./sql-text.ts"

export type Defaults = Readonly<Record<string, string>>

/** A row without its stored JSON (`doc`, migration 0010): callers get the columns the API shows. */
export const withoutDoc = <T extends object>(row: T): T => {
  if (!("doc" in row)) return row
  const { doc: _doc, ...rest } = row as T & { doc?: unknown }
  return rest as T
}

const select = (cols: ReadonlyArray<string>, defaults: Defaults) =>
  cols.map((c) => (defaults[c] !== undefined ? `coalesce(r.${ident(c)}, ${defaults[c]})` : `r.${ident(c)}`)).join(", ")

/**
 * INSERT ... SELECT FROM jsonb_populate_recordset(...) r [where] RETURNING *; input order is kept. `where` (a WHERE
 * clause over `r`) can hold rows back: only the inserted ones are answered.
 */
export const insertRows = <T extends { readonly id: string }>(
  sql: SqlClient,
  table: string,
  rows: ReadonlyArray<object>,
  defaults: Defaults = {},
  where = ""
): Effect.Effect<Array<T>, SqlError> =>
  Effect.gen(function*() {
    if (rows.length === 0) return []
    const cols = givenKeys(rows)
    const out = yield* sql.unsafe<T>(
      `INSERT INTO ${ident(table)} (${cols.map(ident).join(", ")})
       SELECT ${select(cols, defaults)} FROM jsonb_populate_recordset(null::${ident(table)}, $1::jsonb) r
       ${where} RETURNING *`,
      [JSON.stringify(rows)]
    )
    const order = new Map(rows.map((r, i) => [(r as { id: string }).id, i]))
    return out.map(withoutDoc).sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0))
  })

/**
 * A query of the ids up a self-reference chain (`parentColumn`) of the tenant `tenant` from `id` (SQL expressions),
 * `id` itself first, with their `depth`; bounded against loops.
 */
export const chainSql = (table: string, parentColumn: string, tenant: string, id: string) =>
  `WITH RECURSIVE chain (id, parent, depth) AS (
       SELECT c0.id, c0.${ident(parentColumn)}, 0 FROM ${ident(table)} c0 WHERE c0.tenant_id = ${tenant} AND c0.id = ${id}
       UNION ALL
       SELECT t.id, t.${ident(parentColumn)}, c.depth + 1 FROM ${ident(table)} t JOIN chain c ON t.tenant_id = ${tenant} AND t.id = c.parent
       WHERE c.depth < 1000
     ) SELECT chain.id, chain.depth FROM chain`

/**
 * The parent rules' lookup (spec 2.2), over SQL expressions: the part of the job `job` (of the tenant `tenant`) with the
 * id `id` when one is given, else with the number `number`.
 */
export const parentIn = (tenant: string, job: string, id: string, number: string) => `SELECT p.id FROM parts p
    WHERE p.tenant_id = ${tenant} AND p.job_id = ${job} AND CASE WHEN ${id} IS NOT NULL THEN p.id = ${id}::uuid ELSE p.part_number = ${number} END`

/** Whether the chain up from `from` (itself included) holds `id`, all SQL expressions: a new parent `from` would close a loop. */
export const chainHolds = (table: string, parentColumn: string, tenant: string, from: string, id: string) =>
  `EXISTS (SELECT 1 FROM (${chainSql(table, parentColumn, tenant, from)}) up WHERE up.id = ${id})`

