// `mes tenant create --name NAME [--plan P] [--json]` → {"tenant_id", "api_key"} (first live key, shown once);
// `mes tenant set-plan --tenant ID --plan P` changes the plan (cloud mode limits requests by it, spec 8).
import * as Effect from "effect/Effect"
import { Command, Flag } from "effect/cli"
import { Plan, Tenants } from "@mes/domain"
import { withApp } from "../lazy.ts"
import { jsonFlag, output, reportErrors, requireUuid, userError } from "../output.ts"

const create = Command.make("create", {
  name: Flag.String("name").pipe(Flag.withDescription("Tenant name (1-255 characters)")),
  plan: Flag.Literals("plan", Plan.literals).pipe(Flag.withDescription("Plan"), Flag.withDefault("free" as const)),
  json: jsonFlag
}, ({ json, name, plan }) =>
  Effect.gen(function*() {
    const trimmed = name.trim()
    if (trimmed === "" || trimmed.length > 255) return yield* userError("--name must be 1-255 characters")
    const { apiKey, tenant } = yield* withApp(
      Effect.flatMap(Effect.service(Tenants), (tenants) => tenants.create({ name: trimmed, plan }))
    )
    yield* output(
      json,
      { tenant_id: tenant.id, api_key: apiKey },
      `Created tenant ${tenant.id} (${tenant.name}, plan ${tenant.plan}). API key (shown once): ${apiKey}`
    )
  }).pipe(reportErrors)).pipe(Command.withDescription("Create a tenant with a first live API key"), Command.withExamples([{ command: "mes tenant create --name 'Acme Steel'" }, { command: "mes tenant create --name 'Acme Steel' --plan pro --json" }]))

const setPlan = Command.make("set-plan", {
  tenant: Flag.String("tenant").pipe(Flag.withDescription("Tenant id")),
  plan: Flag.Literals("plan", Plan.literals).pipe(Flag.withDescription("Plan (cloud mode: free 100, pro 1,000, premium 10,000 requests a day, enterprise unlimited)")),
  json: jsonFlag
}, ({ json, plan, tenant }) =>
  Effect.gen(function*() {
    const tenantId = yield* requireUuid("tenant", tenant)
    const updated = yield* withApp(Effect.flatMap(Effect.service(Tenants), (t) => t.setPlan(tenantId, plan)).pipe(
      Effect.catchTag("NotFound", () => Effect.fail(userError(`Tenant ${tenantId} not found`)))
    ))
    yield* output(json, { tenant_id: updated.id, plan: updated.plan }, `Tenant ${updated.id} (${updated.name}) is on plan ${updated.plan}`)
  }).pipe(reportErrors)).pipe(Command.withDescription("Change a tenant's plan"), Command.withExamples([{ command: "mes tenant set-plan --tenant $TENANT --plan premium" }]))

export const tenant = Command.make("tenant").pipe(
  Command.withDescription("Manage tenants"), Command.withExamples([{ command: "mes tenant create --name 'Acme Steel'" }, { command: "mes tenant set-plan --tenant $TENANT --plan pro" }]),
  Command.withSubcommands([create, setPlan])
)
