// Profiles (DECISIONS: profiles): plain CRUD; deletes are refused by the RESTRICT foreign keys while referenced.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { type Profile, ProfileStore } from "@mes/domain"
import { Catalog } from "../catalog.ts"
import { contains } from "./common.ts"
import { crudStorePg } from "./crud.ts"

export const ProfileStorePg = Layer.effect(ProfileStore, Effect.gen(function*() {
  const sql = yield* SqlClient
  const catalog = yield* Catalog
  return ProfileStore.of(crudStorePg<Profile>(sql, {
    table: "profiles",
    columns: catalog.columns("profiles"),
    alias: "p",
    sort: { display_name: "p.display_name", created_at: "p.created_at", role: "p.role" },
    filters: (f) => [
      ...(f.id !== undefined ? [sql`p.id = ${f.id as string}`] : []),
      ...(f.role !== undefined ? [sql`p.role = ${f.role as string}`] : []),
      ...(f.active !== undefined ? [sql`p.active = ${f.active as boolean}`] : []),
      // an email names one person: exact match, case-insensitive like the unique index
      ...(f.email !== undefined ? [sql`lower(p.email) = lower(${f.email as string})`] : []),
      ...(f.search !== undefined
        ? [sql`(p.display_name ILIKE ${contains(f.search as string)} OR p.email ILIKE ${contains(f.search as string)})`]
        : [])
    ],
    unique: (email) => sql`lower(email) = lower(${email})`
  }))
}))
