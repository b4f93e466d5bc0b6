// Work cells (spec 4.12): plain CRUD; deletes are refused by the RESTRICT foreign keys while referenced.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { type Cell, CellStore } from "@mes/domain"
import { Catalog } from "../catalog.ts"
import { contains } from "./common.ts"
import { crudStorePg } from "./crud.ts"

export const CellStorePg = Layer.effect(CellStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const catalog = yield* Catalog
  return CellStore.of(crudStorePg<Cell>(sql, {
    table: "cells",
    columns: catalog.columns("cells"),
    alias: "c",
    sort: { name: "c.name", sequence: "c.sequence", created_at: "c.created_at" },
    filters: (f) => [
      ...(f.id !== undefined ? [sql`c.id = ${f.id as string}`] : []),
      ...(f.name !== undefined ? [sql`c.name ILIKE ${contains(f.name as string)}`] : []),
      ...(f.active !== undefined ? [sql`c.active = ${f.active as boolean}`] : []),
      ...(f.search !== undefined
        ? [sql`(c.name ILIKE ${contains(f.search as string)} OR c.external_id ILIKE ${contains(f.search as string)})`]
        : [])
    ],
    unique: (name) => sql`name = ${name}`
  }))
}))
