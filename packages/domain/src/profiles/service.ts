// Profiles: standard CRUD for operators and users (DECISIONS: profiles); emails are unique per tenant.
import * as Context from "effect/Context"
import { type Crud, type CrudStore, crudLayer } from "../crud.ts"
import { Profile, ProfileCreate, profileListSpec, ProfilePatch } from "./schema.ts"

export class ProfileStore extends Context.Service<ProfileStore, CrudStore<Profile>>()("mes/domain/ProfileStore") {}

/** Deletes are refused (409) while operations or time entries reference the profile. */
export class Profiles extends Context.Service<Profiles, Crud<Profile>>()("mes/domain/Profiles") {
  static readonly layer = crudLayer(Profiles, ProfileStore, {
    entity: "profile",
    table: "profiles",
    create: ProfileCreate,
    record: Profile,
    patch: ProfilePatch,
    listSpec: profileListSpec,
    unique: "email"
  })
}
