import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Conflict } from "../errors.ts"
import type { NewRow } from "../jobs/store.ts"
import type { Stamp } from "../lifecycle.ts"
import type { ListQuery, Slice } from "../query.ts"
import type { Issue, IssueListSpec, IssueRow } from "./schema.ts"
import type { CreatePlan, MissingReferences, Owned, PatchOutcome } from "../crud.ts"
import type { EventPlan } from "../events.ts"
import type { CheckedReference } from "../jobs/store.ts"

export type IssueListQuery = ListQuery<IssueListSpec["filters"], IssueListSpec["sort"][number]>

/** Timestamps a write sets in the same statement (`verified_at`, `resolved_at`). */
export type IssueStamps = Readonly<Partial<Record<"verified_at" | "resolved_at", Stamp>>>

export class IssueStore extends Context.Service<IssueStore, {
  /**
   * Creates one issue as ONE statement, only when `plan.refs` are the tenant's, with its `stamps` and `plan.events`;
   * an NCR without ncr_number takes the next of its tenant's year. A duplicate ncr_number of the tenant is a Conflict.
   */
  readonly insert: (issue: NewRow<IssueRow>, stamps: IssueStamps, plan: CreatePlan) => Effect.Effect<Issue, Conflict | MissingReferences>
  /** Issues of the tenant whose operation is in a live (not soft-deleted) job. */
  readonly list: (tenantId: string, query: IssueListQuery) => Effect.Effect<Slice<Issue>>
  /** One record as the API shows it, with its owner (one query). */
  readonly read: (tenantId: string, id: string) => Effect.Effect<Owned<Issue>>
  readonly get: (tenantId: string, id: string) => Effect.Effect<IssueRow | undefined>
  /**
   * PATCH as one statement: the owner of the id, the references checked, the changes with their stamps, and `events`
   * about the updated record. An NCR's severity is not cleared (nothing is changed then; `current` is the issue's
   * type); ncr.verified is written only for an NCR whose verifier the PATCH changes, after the row lock, so
   * concurrent PATCHes with one verifier write it once. A duplicate ncr_number is a Conflict.
   */
  readonly patch: (
    tenantId: string,
    id: string,
    changes: Readonly<Record<string, unknown>>,
    plan: { readonly refs: ReadonlyArray<CheckedReference>; readonly stamps: IssueStamps; readonly events: ReadonlyArray<EventPlan> }
  ) => Effect.Effect<PatchOutcome<Issue>, Conflict>
  /** True when another issue of the tenant has this ncr_number. */
  readonly ncrNumberTaken: (tenantId: string, ncrNumber: string, exceptId?: string) => Effect.Effect<boolean>
}>()("mes/domain/IssueStore") {}
