import { Context, type Effect } from "effect"
import type { Conflict } from "../errors.ts"
import type { ListQuery, Slice } from "../query.ts"
import type { NewRow } from "../jobs/store.ts"
import type { Cell, cellListSpec } from "./schema.ts"

type CellListSpec = typeof cellListSpec
export type CellListQuery = ListQuery<CellListSpec["filters"], CellListSpec["sort"][number]>

export class CellStore extends Context.Service<CellStore, {
  readonly insert: (cell: NewRow<Cell>) => Effect.Effect<Cell, Conflict>
  readonly list: (tenantId: string, query: CellListQuery) => Effect.Effect<Slice<Cell>>
  readonly get: (tenantId: string, id: string) => Effect.Effect<Cell | undefined>
  /** Undefined when no row matched. */
  readonly update: (tenantId: string, id: string, changes: Readonly<Record<string, unknown>>) => Effect.Effect<Cell | undefined, Conflict>
  /** False when no row matched; Conflict while jobs, parts or operations reference the cell. */
  readonly remove: (tenantId: string, id: string) => Effect.Effect<boolean, Conflict>
  /** True when another cell of the tenant has this name. */
  readonly nameTaken: (tenantId: string, name: string, exceptId?: string) => Effect.Effect<boolean>
}>()("mes/domain/CellStore") {}
