// `mes profile create --tenant ID --name N [--role admin|operator] [--email E] [--json]` → {"profile_id": "..."}.
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Command, Flag } from "effect/cli"
import { CurrentTenant, Profiles, Role, type Tenant, Tenants } from "@mes/domain"
import { withApp } from "../lazy.ts"
import { describe, jsonFlag, output, reportErrors, requireUuid, userError } from "../output.ts"

/** Runs what `f` makes of the tenant as the tenant (a CLI operator acts as a user of that tenant); unknown tenant → error. */
export const asTenantWith = <A, E, R>(tenantId: string, f: (tenant: Tenant) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const tenants = yield* Tenants
    const tenant = yield* tenants.get(tenantId).pipe(
      Effect.catchTag("NotFound", () => Effect.fail(userError(`Tenant ${tenantId} not found`)))
    )
    return yield* Effect.provideService(f(tenant), CurrentTenant, { id: tenant.id, plan: tenant.plan, via: "user" })
  })

/** Runs `effect` as the tenant (a CLI operator acts as a user of that tenant); unknown tenant → error. */
export const asTenant = <A, E, R>(tenantId: string, effect: Effect.Effect<A, E, R>) => asTenantWith(tenantId, () => effect)

const create = Command.make("create", {
  tenant: Flag.String("tenant").pipe(Flag.withDescription("Tenant id")),
  name: Flag.String("name").pipe(Flag.withDescription("Display name")),
  role: Flag.Literals("role", Role.literals).pipe(Flag.withDescription("Role"), Flag.withDefault("operator" as const)),
  email: Flag.String("email").pipe(Flag.withDescription("Email (unique in the tenant)"), Flag.optional),
  json: jsonFlag
}, ({ email, json, name, role, tenant }) =>
  Effect.gen(function*() {
    const tenantId = yield* requireUuid("tenant", tenant)
    const profile = yield* withApp(
      asTenant(
        tenantId,
        Effect.flatMap(Effect.service(Profiles), (profiles) =>
          profiles.create({ display_name: name, role, ...(Option.isSome(email) ? { email: email.value } : {}) })).pipe(
            Effect.catchTag("ValidationFailed", (e) =>
              Effect.fail(userError(
                [e.message, ...e.details.map((d) => `${d.field === "display_name" ? "--name" : `--${d.field}`}: ${d.message}`)].join("; ")
              ))),
            Effect.catchTag("Conflict", (e) => Effect.fail(userError(describe(e))))
          )
      )
    )
    yield* output(
      json,
      { profile_id: profile.id },
      `Created profile ${profile.id} (${profile.display_name}, ${profile.role}) in tenant ${tenantId}`
    )
  }).pipe(reportErrors)).pipe(Command.withDescription("Create a profile (an operator or user) in a tenant"), Command.withExamples([{ command: "mes profile create --tenant $TENANT --name 'Ann Operator'" }, { command: "mes profile create --tenant $TENANT --name Boss --role admin --email boss@example.com --json" }]))

export const profile = Command.make("profile").pipe(
  Command.withDescription("Manage profiles"), Command.withExamples([{ command: "mes profile create --tenant $TENANT --name 'Ann Operator'" }]),
  Command.withSubcommands([create])
)
