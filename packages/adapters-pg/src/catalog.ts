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

/**
 * A table's columns in table order, without `doc`. A table that keeps its record JSON in a `doc`
 * column (jobs, parts: migration 0010) also says so: `record` is its name, the type of
 * `<record>_json(r)`, and `attributes` every column in table order, `doc` included, the order of a
 * row constructor of that type.
 */
export interface TableColumns extends ReadonlyArray<Column> {
  readonly record?: { readonly table: string; readonly attributes: ReadonlyArray<string> }
}

export class Catalog extends Context.Service<Catalog, {
  readonly columns: (table: string) => TableColumns
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
      WHERE a.attnum > 0 AND NOT a.attisdropped AND a.attidentity = ''
      ORDER BY c.relname, a.attnum`.pipe(Effect.orDie)
    const grouped = new Map<string, Array<(typeof rows)[number]>>()
    for (const r of rows) {
      const list = grouped.get(r.table_name)
      if (list === undefined) grouped.set(r.table_name, [r])
      else list.push(r)
    }
    const byTable = new Map<string, TableColumns>()
    for (const [table, attributes] of grouped) {
      const columns = attributes.filter((r) => r.name !== "doc")
        .map((r): Column => ({ name: r.name, type: r.type, fallback: r.not_null && r.def !== null ? r.def : undefined }))
      byTable.set(
        table,
        columns.length === attributes.length
          ? columns
          : Object.assign(columns, { record: { table, attributes: attributes.map((r) => r.name) } })
      )
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

/**
 * `fieldJson` by column name over the rows `alias` of a table with these columns (event payloads); a field that is no
 * column (an assignment's `target_type`, a quantity's `job_id`) is read from `json`, the record's JSON text, if given.
 */
export const fieldOf = (columns: ReadonlyArray<Column>, alias: string, json?: string) => (name: string) => {
  const column = columns.find((c) => c.name === name)
  if (column !== undefined) return fieldJson(column, alias)
  if (json === undefined) throw new Error(`no column ${name}`)
  return `(${json}::json -> '${name}')::text`
}

/**
 * `INSERT INTO table (every column) SELECT ... FROM <from>` where `row` names a record of the
 * table's type in `from`: absent values take the column's default (NOT NULL columns), so one
 * statement text serves every input shape. `overrides` replace a column's value expression.
 * A table with a stored record JSON gets it here, from the very values inserted, so its insert
 * trigger (which fills `doc` only when a row comes without one, migration 0025) does not run: a
 * PL/pgSQL call per row cost ≈ 6 % of a nested create's PostgreSQL time.
 */
export const insertSelect = (
  columns: TableColumns,
  table: string,
  o: { readonly from: string; readonly row: string; readonly overrides?: Readonly<Record<string, string>>; readonly where?: string }
) => {
  const names = columns.map((c) => `"${c.name}"`).join(", ")
  const values = columns.map((c) => {
    const value = o.overrides?.[c.name] ?? `(${o.row})."${c.name}"`
    return c.fallback === undefined ? value : `coalesce(${value}, ${c.fallback})`
  })
  const { record } = columns
  if (record === undefined) return `INSERT INTO ${table} (${names}) SELECT ${values.join(", ")} FROM ${o.from} ${o.where ?? ""}`
  // OFFSET 0 keeps the subquery whole: each value is computed once, for the row and its JSON alike
  const row = record.attributes.map((a) => (a === "doc" ? "NULL::text" : `s."${a}"`)).join(", ")
  return `INSERT INTO ${table} (${names}, "doc")
  SELECT s.*, ${record.table}_json(ROW(${row})::${record.table})
  FROM (SELECT ${values.map((v, i) => `${v} AS "${columns[i]!.name}"`).join(", ")} FROM ${o.from} ${o.where ?? ""} OFFSET 0) s`
}
