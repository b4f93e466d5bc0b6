// `mes tenant create --name NAME [--plan P] [--json]` → {"tenant_id", "api_key"} (first live key, shown once).
import * as Effect from "effect/Effect"
import { Command, Flag } from "effect/cli"
import { Plan, Tenants } from "@mes/domain"
import { withApp } from "../lazy.ts"
import { jsonFlag, output, reportErrors, userError } from "../output.ts"

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
  }).pipe(reportErrors)).pipe(Command.withDescription("Create a tenant with a first live API key"))

export const tenant = Command.make("tenant").pipe(
  Command.withDescription("Manage tenants"),
  Command.withSubcommands([create])
)
