import * as Layer from "effect/Layer"
import { Catalog } from "./catalog.ts"
import { BatchStorePg } from "./stores/batches.ts"
import { RecordSyncStorePg, ResourceStorePg } from "./stores/resources.ts"
import { MaterialStorePg } from "./stores/materials.ts"
import { ChangeFeedStorePg, SyncRecordStorePg, SyncRunStorePg } from "./stores/changes.ts"
import { ExportStorePg, MonthlyResetStorePg, RequestCounterPg } from "./stores/billing.ts"
import { CellStorePg } from "./stores/cells.ts"
import { DeliveryStorePg } from "./stores/deliveries.ts"
import { IssueStorePg } from "./stores/issues.ts"
import { JobStorePg } from "./stores/jobs.ts"
import { OperationStorePg } from "./stores/operations.ts"
import { PartStorePg } from "./stores/parts.ts"
import { ProfileStorePg } from "./stores/profiles.ts"
import { ReferencesPg, TxPg } from "./stores/common.ts"
import { ReadinessPg } from "./readiness.ts"
import { DashboardStorePg } from "./stores/dashboard.ts"
import { IdempotencyPg } from "./idempotency.ts"
import { SubstepStorePg } from "./stores/substeps.ts"
import { ShopFloorStoresPg } from "./stores/shop-floor.ts"
import { PartImageStorePg } from "./stores/part-images.ts"
import { TenantStorePg } from "./stores/tenants.ts"
import { TimeEntryStorePg } from "./stores/time-entries.ts"
import { WebhookLogStorePg, WebhookStorePg } from "./stores/webhooks.ts"

export * as Db from "./client.ts"
export { makeDirectory, unusableDirectory } from "./directory.ts"
export type { Database } from "./client.ts"
export { latestMigration, migrate, splitStatements } from "./migrator.ts"
export { IdempotencyPg, ReadinessPg }
export { DeliveryStorePg }
export { eventWrites } from "./events.ts"
export { WebhookLogStorePg, WebhookStorePg }
export { CellStorePg, IssueStorePg, JobStorePg, OperationStorePg, PartStorePg, ProfileStorePg, ReferencesPg, TenantStorePg, TxPg, SubstepStorePg }

/** Every port implementation over one SqlClient (the catalog is read once, when they are built). */
export const StoresPg = Layer.mergeAll(TxPg, ReferencesPg, ReadinessPg, IdempotencyPg, DashboardStorePg, DeliveryStorePg, TenantStorePg, TimeEntryStorePg, BatchStorePg, JobStorePg, PartStorePg, OperationStorePg, CellStorePg, ProfileStorePg, IssueStorePg, SubstepStorePg,
  WebhookStorePg, WebhookLogStorePg, MonthlyResetStorePg, ExportStorePg, RequestCounterPg,
  ResourceStorePg, RecordSyncStorePg, MaterialStorePg, ChangeFeedStorePg, SyncRunStorePg, SyncRecordStorePg,
  ShopFloorStoresPg, PartImageStorePg).pipe(Layer.provide(Catalog.layer))
export { PlannerStatistics } from "./statistics.ts"
// building blocks of the stores, for a store of one's own (and the bench's stack server)
export { batchDue, coalescing, CoalescingConfig } from "./coalesce.ts"
export { onOwnConnection } from "./connection.ts"
export { giveBack, type PageChunk } from "./page-bytes.ts"
export { testDatabase, testDatabaseKind } from "./testing.ts"
