// `mes key create --tenant ID [--test] [--json]` → {"api_key": "svc_test_..." | "svc_live_..."}.
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Command, Flag } from "effect/cli"
import { Tenants } from "@mes/domain"
import { withApp } from "../lazy.ts"
import { jsonFlag, output, reportErrors, requireUuid, userError } from "../output.ts"

const create = Command.make("create", {
  tenant: Flag.String("tenant").pipe(Flag.withDescription("Tenant id")),
  test: Flag.Boolean("test").pipe(Flag.withDescription("Issue a test key (svc_test_) instead of a live one"), Flag.withDefault(false)),
  name: Flag.String("name").pipe(Flag.withDescription("A label for the key"), Flag.optional),
  json: jsonFlag
}, ({ json, name, tenant, test }) =>
  Effect.gen(function*() {
    const tenantId = yield* requireUuid("tenant", tenant)
    const apiKey = yield* withApp(
      Effect.flatMap(Effect.service(Tenants), (tenants) =>
        tenants.createKey(tenantId, { test, ...(Option.isSome(name) ? { name: name.value } : {}) })).pipe(
          Effect.catchTag("NotFound", () => Effect.fail(userError(`Tenant ${tenantId} not found`)))
        )
    )
    yield* output(json, { api_key: apiKey }, `Created ${test ? "test" : "live"} API key for tenant ${tenantId}: ${apiKey}`)
  }).pipe(reportErrors)).pipe(Command.withDescription("Issue another API key for a tenant"))

export const key = Command.make("key").pipe(
  Command.withDescription("Manage API keys"),
  Command.withSubcommands([create])
)
