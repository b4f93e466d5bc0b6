import { Layer } from "effect"
import { CellStorePg } from "./stores/cells.ts"
import { JobStorePg } from "./stores/jobs.ts"
import { OperationStorePg } from "./stores/operations.ts"
import { PartStorePg } from "./stores/parts.ts"
import { ProfileStorePg } from "./stores/profiles.ts"
import { ReferencesPg, TxPg } from "./stores/common.ts"
import { TenantStorePg } from "./stores/tenants.ts"

export * as Db from "./client.ts"
export { migrate, splitStatements } from "./migrator.ts"
export { CellStorePg, JobStorePg, OperationStorePg, PartStorePg, ProfileStorePg, ReferencesPg, TenantStorePg, TxPg }

/** Every port implementation over one SqlClient. */
export const StoresPg = Layer.mergeAll(TxPg, ReferencesPg, TenantStorePg, JobStorePg, PartStorePg, OperationStorePg, CellStorePg, ProfileStorePg)
export { testDatabase, testDatabaseKind } from "./testing.ts"
