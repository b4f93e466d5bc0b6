// The tables' columns as the migrations left them, read once when the stores are built: inserts
// name every column (one fixed statement per table, prepared once per connection) and event
// payloads format each field as the table's record JSON does (migration 0010).
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"

export interface Column {
  readonly name: string
  readonly type: string
  /** The column's default expression when it is NOT NULL with a default (applied to an absent value). */
  readonly fallback: string | undefined
}

export class Catalog extends Context.Service<Catalog, {
  readonly columns: (table: string) => ReadonlyArray<Column>
}>()("mes/adapters-pg/Catalog") {
  static readonly layer = Layer.effect(Catalog, Effect.gen(function*() {
    const sql = yield* SqlClient
    const rows = yield* sql<{ table_name: string; name: string; type: string; not_null: boolean; def: string | null }>`
      SELECT c.relname AS table_name, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
             a.attnotnull AS not_null, pg_get_expr(d.adbin, d.adrelid) AS def
      FROM pg_attribute a
      JOIN pg_class c ON c.oid = a.attrelid AND c.relkind = 'r'
      JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE a.attnum > 0 AND NOT a.attisdropped AND a.attidentity = '' AND a.attname <> 'doc'
      ORDER BY c.relname, a.attnum`.pipe(Effect.orDie)
    const byTable = new Map<string, Array<Column>>()
    for (const r of rows) {
      const list = byTable.get(r.table_name) ?? []
      list.push({ name: r.name, type: r.type, fallback: r.not_null && r.def !== null ? r.def : undefined })
      byTable.set(r.table_name, list)
    }
    return Catalog.of({
      columns: (table) => {
        const columns = byTable.get(table)
        if (columns === undefined) throw new Error(`no table ${table} in the database (migrations not applied?)`)
        return columns
      }
    })
  }))
}

/** A value of `alias.column` as JSON text, formatted as the record JSON formats it. */
export const fieldJson = (column: Column, alias: string) =>
  column.type === "timestamp with time zone" ? `to_json(mes_ts(${alias}.${column.name}))::text` : `to_json(${alias}.${column.name})::text`

/** `fieldJson` by column name over the rows `alias` of a table with these columns (event payloads). */
export const fieldOf = (columns: ReadonlyArray<Column>, alias: string) => (name: string) => {
  const column = columns.find((c) => c.name === name)
  if (column === undefined) throw new Error(`no column ${name}`)
  return fieldJson(column, alias)
}

/**
 * `INSERT INTO table (every column) SELECT ... FROM <from>` where `row` names a record of the
 * table's type in `from`: absent values take the column's default (NOT NULL columns), so one
 * statement text serves every input shape. `overrides` replace a column's value expression.
 */
export const insertSelect = (
  columns: ReadonlyArray<Column>,
  table: string,
  o: { readonly from: string; readonly row: string; readonly overrides?: Readonly<Record<string, string>>; readonly where?: string }
) => {
  const names = columns.map((c) => `"${c.name}"`).join(", ")
  const values = columns.map((c) => {
    const value = o.overrides?.[c.name] ?? `(${o.row})."${c.name}"`
    return c.fallback === undefined ? value : `coalesce(${value}, ${c.fallback})`
  }).join(", ")
  return `INSERT INTO ${table} (${names}) SELECT ${values} FROM ${o.from} ${o.where ?? ""}`
}
