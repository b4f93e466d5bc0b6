// The `mes` command tree and the program that runs it on the process arguments.
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import { Command } from "effect/cli"
import { importJobs } from "./commands/import.ts"
import { key } from "./commands/key.ts"
import { mcp } from "./commands/mcp.ts"
import { migrate } from "./commands/migrate.ts"
import { monthlyReset } from "./commands/monthly-reset.ts"
import { profile } from "./commands/profile.ts"
import { serve } from "./commands/serve.ts"
import { tenant } from "./commands/tenant.ts"
import { token } from "./commands/token.ts"

export const VERSION = "0.1.0"

export const mes = Command.make("mes").pipe(
  Command.withDescription("Manufacturing execution service"),
  Command.withExamples([
    { command: "mes serve", description: "the REST API on the embedded database" },
    { command: "mes tenant create --name 'Acme Steel' --json", description: "a tenant and its first API key" },
    { command: "mes import jobs.csv --tenant $TENANT", description: "push a job book through bulk sync" }
  ]),
  Command.withSubcommands([serve, migrate, tenant, key, profile, token, monthlyReset, mcp, importJobs])
)

/** Runs `mes` on the process arguments; logs go to stderr so stdout carries only command output. */
export const program = Command.run(mes, { version: VERSION }).pipe(
  Effect.provideService(Logger.LogToStderr, true)
)

/** Runs `mes` on explicit arguments (e.g. in-process tests); needs the platform services. */
export const runArgs = (args: ReadonlyArray<string>) =>
  Command.runWith(mes, { version: VERSION })(args).pipe(Effect.provideService(Logger.LogToStderr, true))
