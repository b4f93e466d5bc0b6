import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Conflict } from "../errors.ts"
import type { NewRow } from "../jobs/store.ts"
import type { Stamp } from "../lifecycle.ts"
import type { ListQuery, Slice } from "../query.ts"
import type { Issue, IssueListSpec, IssueRow } from "./schema.ts"
import type { Owned } from "../crud.ts"

export type IssueListQuery = ListQuery<IssueListSpec["filters"], IssueListSpec["sort"][number]>

/** Timestamps a write sets in the same statement (`verified_at`, `resolved_at`). */
export type IssueStamps = Readonly<Partial<Record<"verified_at" | "resolved_at", Stamp>>>

export class IssueStore extends Context.Service<IssueStore, {
  /** Inserts one issue; a duplicate ncr_number of the tenant is a Conflict. */
  readonly insert: (issue: NewRow<IssueRow>, stamps: IssueStamps) => Effect.Effect<IssueRow, Conflict>
  /** Issues of the tenant whose operation is in a live (not soft-deleted) job. */
  readonly list: (tenantId: string, query: IssueListQuery) => Effect.Effect<Slice<Issue>>
  /** One record as the API shows it, with its owner (one query). */
  readonly read: (tenantId: string, id: string) => Effect.Effect<Owned<Issue>>
  readonly get: (tenantId: string, id: string) => Effect.Effect<IssueRow | undefined>
  /** Updates columns and applies the stamps in one statement; undefined when no live row matched. */
  readonly update: (
    tenantId: string,
    id: string,
    changes: Readonly<Record<string, unknown>>,
    stamps: IssueStamps
  ) => Effect.Effect<IssueRow | undefined, Conflict>
  /**
   * Bumps the tenant's NCR counter for `year` and returns the new value (1 for the first NCR of the
   * year). Atomic: concurrent callers get distinct values; inside a transaction the bump rolls back with it.
   */
  readonly nextNcrNumber: (tenantId: string, year: number) => Effect.Effect<number>
  /** True when another issue of the tenant has this ncr_number. */
  readonly ncrNumberTaken: (tenantId: string, ncrNumber: string, exceptId?: string) => Effect.Effect<boolean>
}>()("mes/domain/IssueStore") {}
