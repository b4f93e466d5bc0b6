// `mes token issue --tenant ID --profile ID --role admin|operator [--ttl S] [--json]` → {"token": "<JWT>"}.
import * as Effect from "effect/Effect"
import { Command, Flag } from "effect/cli"
import { Profiles, Role, secretConfig } from "@mes/domain"
import { withApp } from "../lazy.ts"
import { jsonFlag, output, reportErrors, requireUuid, userError } from "../output.ts"
import { DEFAULT_TOKEN_TTL_SECONDS, MAX_TOKEN_TTL_SECONDS } from "../token-ttl.ts"
import { asTenantWith } from "./profile.ts"

const JwtSecret = secretConfig("MES_JWT_SECRET", { hmacKey: true })

const issue = Command.make("issue", {
  tenant: Flag.String("tenant").pipe(Flag.withDescription("Tenant id")),
  profile: Flag.String("profile").pipe(Flag.withDescription("Profile id (the token's subject), an active profile of that tenant")),
  role: Flag.Literals("role", Role.literals).pipe(Flag.withDescription("Role claim: admin for an admin profile only; operator for any")),
  ttl: Flag.Int("ttl").pipe(
    Flag.withDescription(`Lifetime in seconds (default ${DEFAULT_TOKEN_TTL_SECONDS}, 12 hours; at most ${MAX_TOKEN_TTL_SECONDS}, 365 days)`),
    Flag.withDefault(DEFAULT_TOKEN_TTL_SECONDS)
  ),
  json: jsonFlag
}, ({ json, profile, role, tenant, ttl }) =>
  Effect.gen(function*() {
    const secret = yield* JwtSecret
    if (secret === undefined) {
      return yield* userError("MES_JWT_SECRET is not set: it is required to sign session tokens")
    }
    if (ttl <= 0 || ttl > MAX_TOKEN_TTL_SECONDS) {
      return yield* userError(`--ttl must be 1 to ${MAX_TOKEN_TTL_SECONDS} seconds (365 days), got ${ttl}`)
    }
    const tenantId = yield* requireUuid("tenant", tenant)
    const profileId = yield* requireUuid("profile", profile)
    const { subject, tenantStatus } = yield* withApp(asTenantWith(tenantId, (tenant) =>
      Effect.flatMap(Effect.service(Profiles), (profiles) => profiles.get(profileId)).pipe(
        Effect.map((found) => ({ subject: found.parse(), tenantStatus: tenant.status })),
        Effect.catchTags({
          NotFound: () => Effect.fail(userError(`Profile ${profileId} not found`)),
          Forbidden: () => Effect.fail(userError(`Profile ${profileId} does not belong to tenant ${tenantId}`))
        })
      )))
    // a token the API would refuse is not signed (DECISIONS, export: the tenant active, the profile active and
    // admin for an admin token): it was, and then answered 401, or 403 where the admin role was wanted
    if (tenantStatus !== "active") {
      return yield* userError(`Tenant ${tenantId} is ${tenantStatus}, not active: the API refuses its session tokens (401)`)
    }
    if (!subject.active) return yield* userError(`Profile ${profileId} is inactive: the API refuses its session tokens (401)`)
    if (role === "admin" && subject.role !== "admin") {
      return yield* userError(
        `Profile ${profileId} is an ${subject.role}, not an admin: a token with --role admin would get no admin rights (403 ` +
          `where they are needed); use --role ${subject.role}, or make the profile an admin first`
      )
    }
    const { exp, token } = yield* Effect.promise(async () =>
      (await import("../token.ts")).signSessionToken({ sub: profileId, tenant_id: tenantId, role }, secret, ttl)
    )
    yield* output(
      json,
      { token },
      `Session token for profile ${profileId} (${role}), expires ${new Date(exp * 1000).toISOString()}: ${token}`
    )
  }).pipe(reportErrors)).pipe(Command.withDescription("Issue a user session token (HS256 JWT signed with MES_JWT_SECRET)"), Command.withExamples([{ command: "MES_JWT_SECRET=… mes token issue --tenant $TENANT --profile $PROFILE --role admin" }]))

export const token = Command.make("token").pipe(
  Command.withDescription("Issue user session tokens"), Command.withExamples([{ command: "MES_JWT_SECRET=… mes token issue --tenant $TENANT --profile $PROFILE --role operator --json" }]),
  Command.withSubcommands([issue])
)
