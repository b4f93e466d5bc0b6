// Profiles (DECISIONS: profiles): plain CRUD; deletes are refused by the RESTRICT foreign keys while referenced.
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { type Profile, type ProfileListQuery, ProfileStore } from "@mes/domain"
import { mapConstraints } from "../constraints.ts"
import { insertRows, updateRow } from "../rows.ts"
import { contains, orderBy } from "./common.ts"

const profileSort = { display_name: "p.display_name", created_at: "p.created_at", role: "p.role" }

export const ProfileStorePg = Layer.effect(ProfileStore, Effect.gen(function*() {
  const sql = yield* SqlClient

  return ProfileStore.of({
    insert: (profile) => insertRows<Profile>(sql, "profiles", [profile]).pipe(Effect.map((rows) => rows[0]!), mapConstraints),

    list: (tenantId, q: ProfileListQuery) =>
      Effect.gen(function*() {
        const f = q.filters
        const where = [sql`p.tenant_id = ${tenantId}`]
        if (f.id !== undefined) where.push(sql`p.id = ${f.id}`)
        if (f.role !== undefined) where.push(sql`p.role = ${f.role}`)
        if (f.active !== undefined) where.push(sql`p.active = ${f.active}`)
        // an email names one person: exact match, case-insensitive like the unique index
        if (f.email !== undefined) where.push(sql`lower(p.email) = lower(${f.email})`)
        if (f.search !== undefined) {
          const s = contains(f.search)
          where.push(sql`(p.display_name ILIKE ${s} OR p.email ILIKE ${s})`)
        }
        const rows = yield* sql<Profile & { total: number }>`
          SELECT p.*, count(*) OVER ()::int AS total FROM profiles p WHERE ${sql.and(where)}
          ${sql.literal(orderBy(profileSort, q.sort, q.order, "p"))} LIMIT ${q.limit} OFFSET ${q.offset}`
        const total = rows.length > 0
          ? rows[0]!.total
          : (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM profiles p WHERE ${sql.and(where)}`)[0]!.n
        return { rows: rows.map(({ total: _t, ...profile }) => profile), total }
      }).pipe(Effect.orDie),

    get: (tenantId, id) =>
      sql<Profile>`SELECT * FROM profiles WHERE tenant_id = ${tenantId} AND id = ${id}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie),

    update: (tenantId, id, changes) => updateRow<Profile>(sql, "profiles", tenantId, id, changes).pipe(mapConstraints),

    remove: (tenantId, id) =>
      sql`DELETE FROM profiles WHERE tenant_id = ${tenantId} AND id = ${id} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        mapConstraints
      ),

    emailTaken: (tenantId, email, exceptId) => {
      const where = [sql`tenant_id = ${tenantId}`, sql`lower(email) = lower(${email})`]
      if (exceptId !== undefined) where.push(sql`id <> ${exceptId}`)
      return sql`SELECT 1 FROM profiles WHERE ${sql.and(where)}`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)
    }
  })
}))
