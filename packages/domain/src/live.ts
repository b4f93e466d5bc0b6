import { Layer } from "effect"
import { Jobs } from "./jobs/service.ts"
import { Tenants } from "./tenants/service.ts"

/** Every use-case service; needs the ports (stores, Tx, References) from an adapter. */
export const DomainLive = Layer.mergeAll(Tenants.layer, Jobs.layer)
