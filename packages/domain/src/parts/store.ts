import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type { SyncAction } from "../ports.ts"
import type * as Effect from "effect/Effect"
import type { Conflict, ValidationFailed } from "../errors.ts"
import type { CheckedReference, NewRow } from "../jobs/store.ts"
import type { ListQuery, Slice } from "../query.ts"
import type { Part, partListSpec } from "./schema.ts"
import type { CreatePlan, Owned, PatchOutcome, RemoveOutcome } from "../crud.ts"

export type PartListQuery = ListQuery<typeof partListSpec["filters"], typeof partListSpec["sort"][number]>

export interface PartSyncPlan {
  readonly part: NewRow<Part>
  readonly jobExternalId: string
  readonly refs: ReadonlyArray<CheckedReference>
  /**
   * The parent a record names (spec 2.2), found by the statement among the parts of its job: by id, else by number;
   * both null clear it. Absent when the record names none.
   */
  readonly parent?: { readonly id: string | null; readonly number: string | null }
}

export type PartSyncOutcome =
  | { readonly _tag: "Synced"; readonly id: string; readonly action: SyncAction }
  | {
    readonly _tag: "Refused"
    readonly noJob: boolean
    readonly elsewhere: boolean
    readonly missingRefs: ReadonlyArray<number>
    /** The name of the part's material_id, when the `material` it gives is another. */
    readonly materialName: string | null
    /** The parent named is no part of the job. */
    readonly noParent: boolean
    /** The parent named has the part in its chain (`parentSelf`: it is the part itself). */
    readonly cycle: boolean
    readonly parentSelf: boolean
  }

/**
 * A part create its statement refused: the references missing (indexes into the plan's), whether the parent named
 * (`parent_part_id`, or the number given) is no part of the job, and whether `material` disagrees with `materialName`,
 * the name of the tenant's material_id (null when there is none).
 */
export class PartRefused extends Data.TaggedError("PartRefused")<{
  readonly missingRefs: ReadonlyArray<number>
  readonly noParent: boolean
  readonly materialDiffers: boolean
  readonly materialName: string | null
}> {}

export class PartStore extends Context.Service<PartStore, {
  /**
   * Create as one statement: the plan's references (the job first) checked; the parent (the row's parent_part_id, or
   * the part of the job numbered `parentNumber`) a part of the job; `material` the name of material_id, taken from it
   * when not given; the part inserted only when all pass, with its usage row (the month's part count) and the plan's
   * events.
   */
  readonly create: (part: NewRow<Part>, plan: CreatePlan, parentNumber: string | undefined) => Effect.Effect<Part, Conflict | PartRefused>
  readonly list: (tenantId: string, query: PartListQuery) => Effect.Effect<Slice<Part>>
  /** One record as the API shows it, with its owner (one query). */
  readonly read: (tenantId: string, id: string) => Effect.Effect<Owned<Part>>
  /**
   * PATCH as one statement: owner, reference checks, the update and part.updated. A parent (`changes.parent_part_id`,
   * or the part numbered `parentNumber`, which then sets it) must be a part of the part's job (`noParent`) whose
   * chain, itself included, does not hold the part (`cycle`; `parentId` the parent found); a `material` given with `material_id` must be its
   * entry's name (`materialDiffers`), and a `material` given as null with it becomes that name (`materialName`);
   * otherwise nothing changes.
   */
  readonly patch: (
    tenantId: string,
    id: string,
    changes: Readonly<Record<string, unknown>>,
    refs: ReadonlyArray<CheckedReference>,
    parentNumber?: string
  ) => Effect.Effect<
    PatchOutcome<Part> & {
      readonly noParent: boolean
      readonly cycle: boolean
      readonly parentId: string | null
      readonly materialDiffers: boolean
      readonly materialName: string | null
    },
    Conflict | ValidationFailed
  >
  /** Hard delete; the part's operations go with it (spec 4.2). */
  readonly remove: (tenantId: string, id: string) => Effect.Effect<RemoveOutcome, Conflict>
  /**
   * PUT sync and bulk-sync as ONE statement: each part under the job synced as `jobExternalId` (same source),
   * upserted by external key (an existing part keeps its id and job), counted when created, with
   * part.created|updated. A parent named is found in the job and checked for a loop there (`parent`), and a
   * material settled against material_id. One outcome per plan, in order; the plans name distinct parts.
   */
  readonly sync: (plans: ReadonlyArray<PartSyncPlan>) => Effect.Effect<ReadonlyArray<PartSyncOutcome>, Conflict>
}>()("mes/domain/PartStore") {}
