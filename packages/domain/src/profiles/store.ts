import { Context, type Effect } from "effect"
import type { Conflict } from "../errors.ts"
import type { ListQuery, Slice } from "../query.ts"
import type { NewRow } from "../jobs/store.ts"
import type { Profile, profileListSpec } from "./schema.ts"

type ProfileListSpec = typeof profileListSpec
export type ProfileListQuery = ListQuery<ProfileListSpec["filters"], ProfileListSpec["sort"][number]>

export class ProfileStore extends Context.Service<ProfileStore, {
  readonly insert: (profile: NewRow<Profile>) => Effect.Effect<Profile, Conflict>
  readonly list: (tenantId: string, query: ProfileListQuery) => Effect.Effect<Slice<Profile>>
  readonly get: (tenantId: string, id: string) => Effect.Effect<Profile | undefined>
  /** Undefined when no row matched. */
  readonly update: (
    tenantId: string,
    id: string,
    changes: Readonly<Record<string, unknown>>
  ) => Effect.Effect<Profile | undefined, Conflict>
  /** False when no row matched; Conflict while operations or time entries reference the profile. */
  readonly remove: (tenantId: string, id: string) => Effect.Effect<boolean, Conflict>
  /** True when another profile of the tenant has this email (case-insensitive). */
  readonly emailTaken: (tenantId: string, email: string, exceptId?: string) => Effect.Effect<boolean>
}>()("mes/domain/ProfileStore") {}
