// Profiles: standard CRUD for operators and users (DECISIONS: profiles).
import { Context, Effect, Layer } from "effect"
import { type BadRequest, Conflict, type Forbidden, NotFound, type ValidationFailed } from "../errors.ts"
import { CurrentTenant, newId, References } from "../ports.ts"
import { decodeListQuery, type Page, toPage } from "../query.ts"
import { ensureOwned } from "../references.ts"
import { decodeInput, decodePatchInput } from "../validation.ts"
import { type Profile, ProfileCreate, profileListSpec, ProfilePatch } from "./schema.ts"
import { ProfileStore } from "./store.ts"

type Services = CurrentTenant

export class Profiles extends Context.Service<Profiles, {
  readonly create: (input: unknown) => Effect.Effect<Profile, Conflict | ValidationFailed, Services>
  readonly list: (query: Readonly<Record<string, string>>) => Effect.Effect<Page<Profile>, BadRequest | ValidationFailed, Services>
  readonly get: (id: string) => Effect.Effect<Profile, NotFound | Forbidden, Services>
  readonly update: (id: string, input: unknown) => Effect.Effect<Profile, NotFound | Forbidden | Conflict | ValidationFailed, Services>
  /** Hard delete; 409 while operations or time entries reference the profile (DECISIONS). */
  readonly remove: (id: string) => Effect.Effect<void, NotFound | Forbidden | Conflict, Services>
}>()("mes/domain/Profiles") {
  static readonly layer = Layer.effect(Profiles, Effect.gen(function*() {
    const store = yield* ProfileStore
    const references = yield* References
    const withRefs = Effect.provideService(References, references)
    const decodeCreate = decodeInput(ProfileCreate, "profile")
    const decodePatch = decodePatchInput(ProfilePatch, "profile")

    // spec 7.4 / DECISIONS: a duplicate email is 409 even when other fields are invalid
    const decodeEmailFirst = <A>(decode: (i: unknown) => Effect.Effect<A, ValidationFailed>, input: unknown, exceptId?: string) =>
      Effect.gen(function*() {
        const tenant = yield* CurrentTenant
        return yield* decode(input).pipe(Effect.catchTag("ValidationFailed", (e) => {
          const email = (input as { email?: unknown } | null)?.email
          return typeof email === "string" && email.length > 0 && email.length <= 255
            ? store.emailTaken(tenant.id, email, exceptId).pipe(
              Effect.flatMap((taken) => Effect.fail(taken ? new Conflict({ message: `a profile with email ${email} already exists`, field: "email" }) : e))
            )
            : Effect.fail(e)
        }))
      })

    return Profiles.of({
      create: (raw) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const input = yield* decodeEmailFirst(decodeCreate, raw)
          return yield* store.insert({ ...input, id: newId(), tenant_id: tenant.id })
        }),
      list: (raw) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const q = yield* decodeListQuery(profileListSpec, raw)
          return toPage(q)(yield* store.list(tenant.id, q))
        }),
      get: (id) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          yield* ensureOwned("profiles", id)
          const profile = yield* store.get(tenant.id, id)
          if (profile === undefined) return yield* new NotFound({ entity: "profile", id })
          return profile
        }).pipe(withRefs),
      update: (id, raw) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          yield* ensureOwned("profiles", id)
          const patch = yield* decodeEmailFirst(decodePatch, raw, id)
          const profile = yield* store.update(tenant.id, id, patch)
          if (profile === undefined) return yield* new NotFound({ entity: "profile", id })
          return profile
        }).pipe(withRefs),
      remove: (id) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          yield* ensureOwned("profiles", id)
          if (!(yield* store.remove(tenant.id, id))) return yield* new NotFound({ entity: "profile", id })
        }).pipe(withRefs)
    })
  }))
}
