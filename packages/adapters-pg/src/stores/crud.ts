// Pieces every store's list and plain CRUD share: one paged query whose rows come back as JSON
// built by PostgreSQL (with the total of matches, in the same round trip), and a generic store for
// resources without rules of their own (cells, profiles).
import * as Effect from "effect/Effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { Fragment } from "effect/sql/Statement"
import { type CrudStore, type FilterKind, type JsonChunk, jsonChunks, type ListQuery, type ReferenceTable, type Slice } from "@mes/domain"
import { mapChecks, mapConstraints } from "../constraints.ts"
import { readOwned, recordJson } from "../json.ts"
import type { Column } from "../catalog.ts"
import { recordWrites, type WriteOptions } from "../moves.ts"
import { giveBack, type PageChunk, pageColumn } from "../page-bytes.ts"
import { insertRows } from "../rows.ts"
import { givenKeys, ident } from "../sql-text.ts"

/**
 * INSERT one row and answer the record as the API shows it (its JSON function: extras such as a template's
 * items or an entry's part and job included), parsed for the caller's events.
 */
export const insertRecord = <T>(sql: SqlClient, table: ReferenceTable, row: object) => {
  const cols = givenKeys([row])
  return sql.unsafe<{ json: string }>(
    `INSERT INTO ${ident(table)} AS t (${cols.map(ident).join(", ")})
     SELECT ${cols.map((c) => `r.${ident(c)}`).join(", ")} FROM jsonb_populate_record(null::${ident(table)}, $1::jsonb) r
     RETURNING ${recordJson(table, "t")} AS json`,
    [JSON.stringify(row)]
  ).pipe(Effect.map(([r]) => JSON.parse(r!.json) as T))
}

/** Sort keys whose column is NOT NULL: no NULLS LAST, so a (tenant_id, created_at, id) index serves both orders. */
const NOT_NULL_SORTS = new Set(["created_at"])

const sortKey = (o: { readonly sort: Readonly<Record<string, string>>; readonly alias: string }, sort: string) =>
  o.sort[sort] ?? `${o.alias}.created_at`

const orderBy = (key: string, idColumn: string, sort: string, order: "asc" | "desc") =>
  `ORDER BY ${key} ${order}${NOT_NULL_SORTS.has(sort) ? "" : " NULLS LAST"}, ${idColumn} ${order}`

/**
 * One page of `table` plus the total of matches, in one statement. PostgreSQL builds each record's
 * JSON (`json` over an alias of the table's row type; default: the table's record JSON) for the
 * page's rows only; the page is joined here without parsing anything: concatenating a hundred
 * records in PostgreSQL cost more than the rest of the query. With `children`, each record gets
 * one more key, an array whose elements PostgreSQL joins (a job's parts).
 */
export const listPage = <T>(
  sql: SqlClient,
  o: {
    /** A table or view with a record JSON function (migration 0010). */
    readonly table: ReferenceTable | "material_names"
    readonly alias: string
    readonly where: ReadonlyArray<Fragment>
    readonly sort: Readonly<Record<string, string>>
    readonly query: { readonly sort: string; readonly order: "asc" | "desc"; readonly limit: number; readonly offset: number }
    readonly json?: (alias: string) => string
    /** The column that identifies a row (default `id`; a view may have rows without an id). */
    readonly key?: string
    readonly children?: { readonly key: string; readonly elements: (alias: string) => string }
  }
): Effect.Effect<Slice<T>> =>
  Effect.gen(function*() {
    const from = sql.literal(`${o.table} ${o.alias}`)
    const key = `${o.alias}.${o.key ?? "id"}`
    const where = sql.and(o.where)
    const { sort, order } = o.query
    const json = (o.json ?? ((alias: string) => recordJson(o.table, alias)))("(s.r)")
    // each record's JSON as UTF-8 bytes in a shared slab (page-bytes.ts), spliced into the response as they are and
    // given back once copied: never parsed, never a string (DECISIONS: "A list page's bytes"). The outer LIMIT
    // (never below 1: the count row comes back on an empty page) lets PostgreSQL build each record's JSON after
    // the final sort instead of sorting the built documents (the 100 jobs of a page: 409 → 226 kB sorted,
    // ≈ 7 % of the statement)
    const children = o.children === undefined ? "" : `, ${pageColumn(o.children.elements("(s.r)"))} AS children`
    const rows = yield* sql<{ total: number; json: PageChunk | null; children?: PageChunk | null }>`
      SELECT c.total, CASE WHEN s.id IS NOT NULL THEN ${sql.literal(pageColumn(json))} END AS json ${sql.literal(children)}
      FROM (SELECT count(*)::int AS total FROM ${from} WHERE ${where}) c
      LEFT JOIN LATERAL (
        SELECT ${sql.literal(o.alias)} AS r, ${sql.literal(sortKey(o, sort))} AS k, ${sql.literal(key)} AS id
        FROM ${from} WHERE ${where}
        ${sql.literal(orderBy(sortKey(o, sort), key, sort, order))} LIMIT ${o.query.limit} OFFSET ${o.query.offset}
      ) s ON true
      ${sql.literal(orderBy("s.k", "s.id", sort, order))} LIMIT ${Math.max(1, o.query.limit)}`
    const chunks: Array<JsonChunk> = ["["]
    const lent: Array<PageChunk | null | undefined> = []
    for (const r of rows) {
      if (r.json === null) continue
      if (chunks.length > 1) chunks.push(",")
      if (o.children === undefined) chunks.push(r.json)
      else chunks.push(...withChildren(r.json, o.children.key, r.children ?? ""))
      lent.push(r.json, r.children)
    }
    chunks.push("]")
    return { rows: jsonChunks<ReadonlyArray<T>>(chunks, () => giveBack(lent)), total: rows[0]?.total ?? 0 }
  }).pipe(Effect.orDie)

/** `{...,"key":[elements]}` from a record's JSON object and its children's joined JSON, as pieces. */
export const withChildren = (record: PageChunk, key: string, elements: PageChunk): Array<JsonChunk> => [
  typeof record === "string" ? record.slice(0, -1) : record.subarray(0, -1),
  `,"${key}":[`,
  elements,
  "]}"
]

export const crudStorePg = <T extends { readonly id: string }>(
  sql: SqlClient,
  o: {
    readonly table: ReferenceTable
    readonly alias: string
    /** The table's columns (Catalog): PATCH and DELETE are one statement each (moves.ts). */
    readonly columns: ReadonlyArray<Column>
    /** Tables a PATCH may reference (checked in its statement). */
    readonly refTables?: ReadonlyArray<ReferenceTable>
    readonly sort: Readonly<Record<string, string>>
    /** WHERE fragments for the list filters (the tenant condition is added here). */
    readonly filters: (f: Readonly<Record<string, unknown>>) => ReadonlyArray<Fragment>
    /** The condition "this row has the unique value", for the 409-before-422 check. */
    readonly unique: (value: string | number) => Fragment
    /** The column of the parent the unique value is unique within (a template item's `template_id`), if any. */
    readonly uniqueWithin?: string
    /** A create answers the record's JSON (with its extras) instead of the inserted row. */
    readonly insertJson?: boolean
    /** A PATCH whose events depend on the record before it (moves.ts, WriteOptions). */
    readonly previous?: WriteOptions["previous"]
    /** What a create checks in its statement besides its references (moves.ts, WriteOptions). */
    readonly createChecks?: WriteOptions["createChecks"]
  }
): CrudStore<T> => {
  const writes = recordWrites<T>(sql, {
    table: o.table,
    columns: o.columns,
    refTables: o.refTables ?? [],
    ...(o.previous ? { previous: o.previous } : {}),
    ...(o.createChecks ? { createChecks: o.createChecks } : {})
  })
  return {
    // a create with references to check or events to write is one statement with them (moves.ts, createStatement)
    insert: (row, plan) =>
      (plan !== undefined && plan.refs.length + plan.events.length > 0
        ? writes.create(row, plan)
        : o.insertJson === true
        ? insertRecord<T>(sql, o.table, row)
        : insertRows<T>(sql, o.table, [row]).pipe(Effect.map((rows) => rows[0]!))).pipe(mapChecks, mapConstraints),
    list: (tenantId, q: ListQuery<Record<string, FilterKind>, string>) =>
      listPage<T>(sql, {
        table: o.table,
        alias: o.alias,
        where: [sql`${sql.literal(o.alias)}.tenant_id = ${tenantId}`, ...o.filters(q.filters)],
        sort: o.sort,
        query: q
      }),
    read: (tenantId, id) => readOwned<T>(sql, o.table, tenantId, id),
    get: (tenantId, id) =>
      sql<T>`SELECT * FROM ${sql.literal(o.table)} WHERE tenant_id = ${tenantId} AND id = ${id}`.pipe(
        Effect.map((rows) => rows[0]),
        Effect.orDie
      ),
    patch: (tenantId, id, changes, refs, events = []) => writes.patch(tenantId, id, changes, events, refs).pipe(mapChecks, mapConstraints),
    remove: (tenantId, id, events) => writes.remove(tenantId, id, events).pipe(mapConstraints),
    taken: (tenantId, value, exceptId, within) => {
      const where = [sql`tenant_id = ${tenantId}`, o.unique(value)]
      if (exceptId !== undefined) where.push(sql`id <> ${exceptId}`)
      if (o.uniqueWithin !== undefined) {
        // the parent named, else the parent of the record a PATCH changes
        const parent = sql.literal(ident(o.uniqueWithin))
        where.push(
          within !== undefined
            ? sql`${parent} = ${within}`
            : sql`${parent} = (SELECT ${parent} FROM ${sql.literal(o.table)} WHERE tenant_id = ${tenantId} AND id = ${exceptId ?? null})`
        )
      }
      return sql`SELECT 1 FROM ${sql.literal(o.table)} WHERE ${sql.and(where)}`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)
    }
  }
}
