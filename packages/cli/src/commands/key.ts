// `mes key create --tenant ID [--test] [--json]` → {"api_key": "svc_test_..." | "svc_live_..."};
// `mes key list --tenant ID` and `mes key revoke --tenant ID --id KEY_ID`: what /api-key-generate does, by tenant id.
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Command, Flag } from "effect/cli"
import { ApiKeyCreate, CurrentTenant, Tenants } from "@mes/domain"
import { withApp } from "../lazy.ts"
import { checkFlag, jsonFlag, output, reportErrors, requireUuid, userError } from "../output.ts"

const create = Command.make("create", {
  tenant: Flag.String("tenant").pipe(Flag.withDescription("Tenant id")),
  test: Flag.Boolean("test").pipe(Flag.withDescription("Issue a test key (svc_test_) instead of a live one"), Flag.withDefault(false)),
  name: Flag.String("name").pipe(Flag.withDescription("A label for the key (1-255 characters)"), Flag.optional),
  json: jsonFlag
}, ({ json, name, tenant, test }) =>
  Effect.gen(function*() {
    const tenantId = yield* requireUuid("tenant", tenant)
    // the bounds POST /api-key-generate answers 422 for (1-255 characters)
    if (Option.isSome(name)) yield* checkFlag("name", "name", ApiKeyCreate.fields.name, name.value)
    const apiKey = yield* withApp(
      Effect.flatMap(Effect.service(Tenants), (tenants) =>
        tenants.createKey(tenantId, { test, ...(Option.isSome(name) ? { name: name.value } : {}) })).pipe(
          Effect.catchTag("NotFound", () => Effect.fail(userError(`Tenant ${tenantId} not found`)))
        )
    )
    yield* output(json, { api_key: apiKey }, `Created ${test ? "test" : "live"} API key for tenant ${tenantId}: ${apiKey}`)
  }).pipe(reportErrors)).pipe(Command.withDescription("Issue another API key for a tenant"), Command.withExamples([{ command: "mes key create --tenant $TENANT --name ERP", description: "a live key" }, { command: "mes key create --tenant $TENANT --test --json", description: "a test key, as JSON" }]))

/** Runs a key use case as the tenant (the operator at the console acts for it). */
const asTenant = (tenantId: string) => <A, E>(effect: Effect.Effect<A, E, CurrentTenant | Tenants>) =>
  withApp(effect.pipe(Effect.provideService(CurrentTenant, { id: tenantId, plan: "enterprise", via: "service" })))

/** What `mes key list` shows of a key. */
interface ListedKey { readonly id: string; readonly name: string | null; readonly prefix: string; readonly revoked_at: string | null; readonly last_used_at: string | null }

/** The most keys the list use case answers at once (the API's largest page). */
const KEY_PAGE = 1000

/**
 * Every key of the tenant, the oldest first, a page of KEY_PAGE at a time: it listed the newest 1,000 alone, without a
 * word. Oldest first, so a key created meanwhile comes after the pages read and moves none of them.
 */
const everyKey = (tenants: Tenants["Service"]) =>
  Effect.gen(function*() {
    const keys: Array<ListedKey> = []
    for (;;) {
      const page = yield* tenants.listKeys({ limit: String(KEY_PAGE), offset: String(keys.length), sort: "created_at", order: "asc" })
      const rows = JSON.parse(JSON.stringify(page.rows)) as Array<ListedKey>
      keys.push(...rows)
      if (rows.length < KEY_PAGE || keys.length >= page.total) return keys
    }
  })

const list = Command.make("list", {
  tenant: Flag.String("tenant").pipe(Flag.withDescription("Tenant id")),
  json: jsonFlag
}, ({ json, tenant }) =>
  Effect.gen(function*() {
    const tenantId = yield* requireUuid("tenant", tenant)
    const keys = yield* asTenant(tenantId)(Effect.flatMap(Effect.service(Tenants), everyKey))
    yield* output(
      json,
      { api_keys: keys },
      keys.length === 0 ? `Tenant ${tenantId} has no API keys` : keys.map((k) =>
        `${k.id}  ${k.prefix}…  ${k.name ?? "(no name)"}  ${k.revoked_at === null ? "active" : `revoked ${k.revoked_at}`}  last used ${k.last_used_at ?? "never"}`
      ).join("\n")
    )
  }).pipe(reportErrors)).pipe(Command.withDescription("List every API key of a tenant, the oldest first (never their secrets)"), Command.withExamples([{ command: "mes key list --tenant $TENANT" }, { command: "mes key list --tenant $TENANT --json" }]))

const revoke = Command.make("revoke", {
  tenant: Flag.String("tenant").pipe(Flag.withDescription("Tenant id")),
  id: Flag.String("id").pipe(Flag.withDescription("Key id (from `mes key list`)")),
  json: jsonFlag
}, ({ id, json, tenant }) =>
  Effect.gen(function*() {
    const tenantId = yield* requireUuid("tenant", tenant)
    const keyId = yield* requireUuid("id", id)
    const revoked = yield* asTenant(tenantId)(Effect.flatMap(Effect.service(Tenants), (t) => t.revokeKey(keyId)).pipe(
      Effect.catchTags({
        NotFound: () => Effect.fail(userError(`API key ${keyId} not found`)),
        Forbidden: () => Effect.fail(userError(`API key ${keyId} belongs to another tenant`))
      })
    ))
    yield* output(json, { api_key: revoked }, `Revoked API key ${keyId}; running servers stop accepting it within MES_AUTH_CACHE_TTL (30 s by default)`)
  }).pipe(reportErrors)).pipe(Command.withDescription("Revoke an API key of a tenant"), Command.withExamples([{ command: "mes key revoke --tenant $TENANT --id $KEY_ID" }]))

export const key = Command.make("key").pipe(
  Command.withDescription("Manage API keys"), Command.withExamples([{ command: "mes key create --tenant $TENANT" }, { command: "mes key list --tenant $TENANT" }]),
  Command.withSubcommands([create, list, revoke])
)
