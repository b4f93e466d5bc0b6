import * as Layer from "effect/Layer"
import { Batches } from "./batches/service.ts"
import { Export } from "./billing/export.ts"
import { MonthlyReset } from "./billing/monthly-reset.ts"
import { RateLimits } from "./billing/rate-limits.ts"
import { Cells } from "./cells/service.ts"
import { Dashboard } from "./dashboard/service.ts"
import { Issues } from "./issues/service.ts"
import { Jobs } from "./jobs/service.ts"
import { Operations } from "./operations/service.ts"
import { Parts } from "./parts/service.ts"
import { Sync } from "./sync/service.ts"
import { Profiles } from "./profiles/service.ts"
import { Resources } from "./resources/service.ts"
import { Materials } from "./materials/service.ts"
import { Changes } from "./erp-sync/changes.ts"
import { Substeps } from "./substeps/service.ts"
import { Assignments, DowntimeRecords, OeeReports, Quantities, ScrapReasons, TemplateItems, Templates } from "./shop-floor/service.ts"
import { Tenants } from "./tenants/service.ts"
import { TimeEntries } from "./time-entries/service.ts"
import { WebhookLogs, Webhooks } from "./webhooks/service.ts"

/** Every use-case service; needs the ports (stores, Tx, References) from an adapter. */
export const DomainLive = Layer.mergeAll(Tenants.layer, Jobs.layer, Parts.layer, Operations.layer, Sync.layer,
  TimeEntries.layer,
  Batches.layer, Cells.layer, Resources.layer, Materials.layer, Changes.layer, Profiles.layer, Issues.layer, Substeps.layer,
  Webhooks.layer, WebhookLogs.layer, Dashboard.layer, MonthlyReset.layer, Export.layer, RateLimits.layer,
  ScrapReasons.layer, Quantities.layer, Assignments.layer, Templates.layer, TemplateItems.layer, DowntimeRecords.layer, OeeReports.layer)
