// GET /api-dashboard-stats: the tenant's floor at a glance (JSON built by the database).
import * as Effect from "effect/Effect"
import { Dashboard } from "@mes/domain"
import { type Handlers, ok } from "../server.ts"

export const dashboardHandlers = Effect.map(
  Effect.service(Dashboard),
  (dashboard): Handlers<never> => ({ "dashboard.stats": () => Effect.map(dashboard.stats, (stats) => ok(stats)) })
)
