// `mes tenant create --name NAME [--plan P] [--json]` → {"tenant_id", "api_key"} (first live key, shown once);
// `mes tenant list [--json]` lists every tenant (an id lost is found again, also on the embedded database, which has no
// psql); `mes tenant set-plan --tenant ID --plan P` changes the plan (cloud mode limits requests by it, spec 8).
import * as Effect from "effect/Effect"
import { Command, Flag } from "effect/cli"
import { Plan, plural, TenantCreate, Tenants } from "@mes/domain"
import { withApp } from "../lazy.ts"
import { checkFlag, jsonFlag, output, reportErrors, requireUuid, userError } from "../output.ts"

const create = Command.make("create", {
  name: Flag.String("name").pipe(Flag.withDescription("Tenant name: one line of 1-255 characters (blanks around it are dropped)")),
  plan: Flag.Literals("plan", Plan.literals).pipe(Flag.withDescription("Plan"), Flag.withDefault("free" as const)),
  json: jsonFlag
}, ({ json, name, plan }) =>
  Effect.gen(function*() {
    // the domain's rule for a tenant's name, the blanks around it dropped
    const trimmed = name.trim()
    yield* checkFlag("name", "name", TenantCreate.fields.name, trimmed)
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

const list = Command.make("list", { json: jsonFlag }, ({ json }) =>
  Effect.gen(function*() {
    const tenants = yield* withApp(Effect.flatMap(Effect.service(Tenants), (t) => t.list()))
    yield* output(
      json,
      { tenants: tenants.map(({ created_at, current_month_parts, id, name, plan, status }) => ({ id, name, plan, status, current_month_parts, created_at })) },
      tenants.length === 0
        ? "No tenants yet: mes tenant create --name NAME makes one"
        : tenants.map((t) => `${t.id}  ${t.name}  plan ${t.plan}  ${t.status}  ${plural(t.current_month_parts, "part")} this month  created ${t.created_at}`).join("\n")
    )
  }).pipe(reportErrors)).pipe(
    Command.withDescription("List the database's tenants (their ids, for the other commands' --tenant)"),
    Command.withExamples([{ command: "mes tenant list" }, { command: "mes tenant list --json" }])
  )

export const tenant = Command.make("tenant").pipe(
  Command.withDescription("Manage tenants"), Command.withExamples([{ command: "mes tenant create --name 'Acme Steel'" }, { command: "mes tenant list" }, { command: "mes tenant set-plan --tenant $TENANT --plan pro" }]),
  Command.withSubcommands([create, list, setPlan])
)
