// `mes token issue --tenant ID --profile ID --role admin|operator [--ttl S] [--json]` → {"token": "<JWT>"}.
import * as Effect from "effect/Effect"
import { Command, Flag } from "effect/cli"
import { Profiles, Role, secretConfig } from "@mes/domain"
import { withApp } from "../lazy.ts"
import { jsonFlag, output, reportErrors, requireUuid, userError } from "../output.ts"
import { DEFAULT_TOKEN_TTL_SECONDS, MAX_TOKEN_TTL_SECONDS } from "../token-ttl.ts"
import { asTenant } from "./profile.ts"

const JwtSecret = secretConfig("MES_JWT_SECRET", { hmacKey: true })

const issue = Command.make("issue", {
  tenant: Flag.String("tenant").pipe(Flag.withDescription("Tenant id")),
  profile: Flag.String("profile").pipe(Flag.withDescription("Profile id (the token's subject), in that tenant")),
  role: Flag.Literals("role", Role.literals).pipe(Flag.withDescription("Role claim")),
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
    const subject = yield* withApp(
      asTenant(tenantId, Effect.flatMap(Effect.service(Profiles), (profiles) => profiles.get(profileId))).pipe(
        Effect.catchTags({
          NotFound: () => Effect.fail(userError(`Profile ${profileId} not found`)),
          Forbidden: () => Effect.fail(userError(`Profile ${profileId} does not belong to tenant ${tenantId}`))
        })
      )
    )
    if (!subject.parse().active) return yield* userError(`Profile ${profileId} is inactive`)
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
