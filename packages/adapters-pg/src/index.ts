import { Layer } from "effect"
import { JobStorePg } from "./stores/jobs.ts"
import { ReferencesPg, TxPg } from "./stores/common.ts"
import { TenantStorePg } from "./stores/tenants.ts"

export * as Db from "./client.ts"
export { migrate, splitStatements } from "./migrator.ts"
export { JobStorePg, ReferencesPg, TenantStorePg, TxPg }

/** Every port implementation over one SqlClient. */
export const StoresPg = Layer.mergeAll(TxPg, ReferencesPg, TenantStorePg, JobStorePg)
export { testDatabase, testDatabaseKind } from "./testing.ts"
