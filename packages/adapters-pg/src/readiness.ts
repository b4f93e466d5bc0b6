// GET /ready on PostgreSQL and PGlite: the database answers, and holds every migration of this build.
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { durationConfig, Readiness, type ReadinessReport } from "@mes/domain"
import { latestMigration } from "./migrator.ts"

const UNREACHABLE: ReadinessReport = { database: "unreachable", migrations: "unknown" }

/** Asks the database once per check, bounded by MES_READY_TIMEOUT (default 2 s). */
export const ReadinessPg = Layer.effect(Readiness, Effect.gen(function*() {
  const sql = yield* SqlClient
  const timeout = yield* durationConfig("MES_READY_TIMEOUT", Duration.seconds(2), { positive: true })
  const latest = latestMigration()
  return Readiness.of({
    check: sql<{ v: number }>`SELECT coalesce(max(migration_id), 0)::int AS v FROM mes_migrations`.pipe(
      Effect.map(([row]): ReadinessReport => ({ database: "ok", migrations: (row?.v ?? 0) >= latest ? "ok" : "pending" })),
      // no migrations table yet: the database answers, nothing is migrated
      Effect.catch((e) => Effect.succeed(e.reason._tag === "SqlSyntaxError" ? { database: "ok", migrations: "pending" } as const : UNREACHABLE)),
      Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.succeed(UNREACHABLE) }),
      Effect.catchCause(() => Effect.succeed(UNREACHABLE))
    )
  })
}))
