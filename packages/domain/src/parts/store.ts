import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Conflict } from "../errors.ts"
import type { NewRow } from "../jobs/store.ts"
import type { ListQuery, Slice } from "../query.ts"
import type { Part, partListSpec } from "./schema.ts"
import type { Owned } from "../crud.ts"

export type PartListQuery = ListQuery<typeof partListSpec["filters"], typeof partListSpec["sort"][number]>

export interface Upserted<T> {
  readonly row: T
  readonly inserted: boolean
}

export class PartStore extends Context.Service<PartStore, {
  readonly insert: (part: NewRow<Part>) => Effect.Effect<Part, Conflict>
  readonly list: (tenantId: string, query: PartListQuery) => Effect.Effect<Slice<Part>>
  /** One record as the API shows it, with its owner (one query). */
  readonly read: (tenantId: string, id: string) => Effect.Effect<Owned<Part>>
  readonly get: (tenantId: string, id: string) => Effect.Effect<Part | undefined>
  readonly update: (tenantId: string, id: string, changes: Readonly<Record<string, unknown>>) => Effect.Effect<Part | undefined, Conflict>
  /** Hard delete; the part's operations go with it (spec 4.2). */
  readonly remove: (tenantId: string, id: string) => Effect.Effect<boolean, Conflict>
  readonly hasChildren: (tenantId: string, id: string) => Effect.Effect<boolean>
  /** Part ids by part_number within a job. */
  readonly idsByNumber: (tenantId: string, jobId: string, numbers: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, string>>
  /** The chain of ancestors of a part, nearest first (for cycle checks). */
  readonly ancestors: (tenantId: string, id: string) => Effect.Effect<ReadonlyArray<string>>
  /**
   * Inserts or updates parts by (external_source, external_id); a row that exists under another
   * job is left alone and missing from the result.
   */
  readonly upsert: (rows: ReadonlyArray<NewRow<Part>>) => Effect.Effect<ReadonlyArray<Upserted<Part>>, Conflict>
  /**
   * Part status from its operations (spec 3.4, issue roll-up): completed when all are, in_progress
   * once one has started. Returns the parts whose status changed, with the status they left.
   */
  readonly rollUp: (tenantId: string, partIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Part & { readonly previous: string }>>
  /** Parts by (external_source, external_id) of the tenant. */
  readonly byExternalIds: (tenantId: string, source: string, externalIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Part>>
}>()("mes/domain/PartStore") {}
