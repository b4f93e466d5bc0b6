// Pieces every store's list and plain CRUD share: one paged query with its total, and a generic
// store for resources without rules of their own (cells, profiles).
import { Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { Fragment } from "effect/sql/Statement"
import type { CrudStore, FilterKind, ListQuery, Slice } from "@mes/domain"
import { mapConstraints } from "../constraints.ts"
import { deleteRow, insertRows, updateRow } from "../rows.ts"
import { orderBy } from "./common.ts"

/** `SELECT alias.* FROM table alias WHERE ... ORDER BY ... LIMIT/OFFSET` plus the total of matches. */
export const listPage = <T extends object>(
  sql: SqlClient,
  o: {
    readonly table: string
    readonly alias: string
    readonly where: ReadonlyArray<Fragment>
    readonly sort: Readonly<Record<string, string>>
    readonly query: { readonly sort: string; readonly order: "asc" | "desc"; readonly limit: number; readonly offset: number }
    /** Extra select-list expressions, e.g. a child-id array. */
    readonly extra?: string
  }
): Effect.Effect<Slice<T>> =>
  Effect.gen(function*() {
    const from = sql.literal(`${o.table} ${o.alias}`)
    const where = sql.and(o.where)
    const rows = yield* sql<T & { _total: number }>`
      SELECT ${sql.literal(o.alias)}.*${sql.literal(o.extra === undefined ? "" : `, ${o.extra}`)}, count(*) OVER ()::int AS _total
      FROM ${from} WHERE ${where}
      ${sql.literal(orderBy(o.sort, o.query.sort, o.query.order, o.alias))} LIMIT ${o.query.limit} OFFSET ${o.query.offset}`
    // past the last page the window count has no row to ride on
    const total = rows.length > 0
      ? rows[0]!._total
      : (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ${from} WHERE ${where}`)[0]!.n
    return { rows: rows.map(({ _total, ...row }) => row as unknown as T), total }
  }).pipe(Effect.orDie)

export const crudStorePg = <T extends { readonly id: string }>(
  sql: SqlClient,
  o: {
    readonly table: string
    readonly alias: string
    readonly sort: Readonly<Record<string, string>>
    /** WHERE fragments for the list filters (the tenant condition is added here). */
    readonly filters: (f: Readonly<Record<string, unknown>>) => ReadonlyArray<Fragment>
    /** The condition "this row has the unique value", for the 409-before-422 check. */
    readonly unique: (value: string) => Fragment
  }
): CrudStore<T> => ({
  insert: (row) => insertRows<T>(sql, o.table, [row]).pipe(Effect.map((rows) => rows[0]!), mapConstraints),
  list: (tenantId, q: ListQuery<Record<string, FilterKind>, string>) =>
    listPage<T>(sql, {
      table: o.table,
      alias: o.alias,
      where: [sql`${sql.literal(o.alias)}.tenant_id = ${tenantId}`, ...o.filters(q.filters)],
      sort: o.sort,
      query: q
    }),
  get: (tenantId, id) =>
    sql<T>`SELECT * FROM ${sql.literal(o.table)} WHERE tenant_id = ${tenantId} AND id = ${id}`.pipe(
      Effect.map((rows) => rows[0]),
      Effect.orDie
    ),
  update: (tenantId, id, changes) => updateRow<T>(sql, o.table, tenantId, id, changes).pipe(mapConstraints),
  remove: (tenantId, id) => deleteRow(sql, o.table, tenantId, id).pipe(mapConstraints),
  taken: (tenantId, value, exceptId) => {
    const where = [sql`tenant_id = ${tenantId}`, o.unique(value)]
    if (exceptId !== undefined) where.push(sql`id <> ${exceptId}`)
    return sql`SELECT 1 FROM ${sql.literal(o.table)} WHERE ${sql.and(where)}`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)
  }
})
