// The dashboard (spec 4.14 get_dashboard_stats, served as GET /api-dashboard-stats): a tenant's floor at a
// glance, counted by the database in one statement.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { JsonText } from "../json.ts"
import { CurrentTenant } from "../ports.ts"

const Counts = Schema.Record(Schema.String, Schema.Int)

export const DashboardStats = Schema.Struct({
  jobs_by_status: Counts,
  operations_by_status: Counts,
  overdue_jobs: Schema.Int,
  open_issues_by_severity: Counts,
  open_ncrs_by_severity: Counts,
  operations_in_progress_by_cell: Schema.Array(Schema.Struct({ cell_id: Schema.NullOr(Schema.String), cell_name: Schema.NullOr(Schema.String), operations: Schema.Int })),
  minutes_logged_today: Schema.Number,
  as_of: Schema.String
})
export type DashboardStats = typeof DashboardStats.Type

export class DashboardStore extends Context.Service<DashboardStore, {
  /** The stats of one tenant as JSON built by the database, in one statement; "today" is the UTC day. */
  readonly stats: (tenantId: string) => Effect.Effect<JsonText<DashboardStats>>
}>()("mes/domain/DashboardStore") {}

export class Dashboard extends Context.Service<Dashboard, {
  readonly stats: Effect.Effect<JsonText<DashboardStats>, never, CurrentTenant>
}>()("mes/domain/Dashboard") {
  static readonly layer = Layer.effect(Dashboard, Effect.gen(function*() {
    const store = yield* DashboardStore
    return Dashboard.of({
      stats: Effect.gen(function*() {
        const tenant = yield* CurrentTenant
        return yield* store.stats(tenant.id)
      })
    })
  }))
}
