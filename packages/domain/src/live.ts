import { Layer } from "effect"
import { Cells } from "./cells/service.ts"
import { Jobs } from "./jobs/service.ts"
import { Operations } from "./operations/service.ts"
import { Parts } from "./parts/service.ts"
import { Sync } from "./sync/service.ts"
import { Profiles } from "./profiles/service.ts"
import { Tenants } from "./tenants/service.ts"

/** Every use-case service; needs the ports (stores, Tx, References) from an adapter. */
export const DomainLive = Layer.mergeAll(Tenants.layer, Jobs.layer, Parts.layer, Operations.layer, Sync.layer, Cells.layer, Profiles.layer)
