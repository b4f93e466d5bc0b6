// Profiles: standard CRUD for operators and users (DECISIONS: profiles); emails are unique per tenant.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type Crud, type CrudStore, makeCrud } from "../crud.ts"
import { References } from "../ports.ts"
import { Profile, ProfileCreate, profileListSpec, ProfilePatch } from "./schema.ts"

export class ProfileStore extends Context.Service<ProfileStore, CrudStore<Profile>>()("mes/domain/ProfileStore") {}

/** Deletes are refused (409) while operations or time entries reference the profile. */
export class Profiles extends Context.Service<Profiles, Crud<Profile>>()("mes/domain/Profiles") {
  static readonly layer = Layer.effect(Profiles, Effect.gen(function*() {
    return Profiles.of(makeCrud({
      entity: "profile",
      table: "profiles",
      create: ProfileCreate,
      record: Profile,
      patch: ProfilePatch,
      listSpec: profileListSpec,
      unique: "email",
      store: yield* ProfileStore,
      references: yield* References
    }))
  }))
}
