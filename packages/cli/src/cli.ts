// The `mes` command tree and the program that runs it on the process arguments.
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Stdio from "effect/Stdio"
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

/** The built-in short flags (help, version): alone, still flags wherever they stand. */
const SHORT_FLAGS = new Set(["-h", "-v"])

/**
 * The arguments with a value that starts with `-` joined to the flag before it (`--name -shop` as `--name=-shop`).
 * effect/cli's lexer reads such an argument as short flags (`-s -h -o -p`) whatever comes before it: the flag's
 * value was lost and an `h` or a `v` in it printed the help or the version, exit 0, nothing done. mes has no short
 * flags but `-h` and `-v`, so a `-…` right after a `--flag` is its value (a boolean flag's then refuses it), as
 * getopt takes it; `-h` and `-v` alone, `--…` (more likely the next flag after a forgotten value) and what
 * follows `--` are left as they were.
 */
export const joinDashValues = (args: ReadonlyArray<string>): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--") return [...out, ...args.slice(i)]
    const next = args[i + 1]
    if (/^--[^=]+$/.test(arg) && next !== undefined && /^-[^-]/.test(next) && !SHORT_FLAGS.has(next)) {
      out.push(`${arg}=${next}`)
      i++
    } else out.push(arg)
  }
  return out
}

/** Runs `mes` on explicit arguments (e.g. in-process tests); needs the platform services. */
export const runArgs = (args: ReadonlyArray<string>) =>
  Command.runWith(mes, { version: VERSION })(joinDashValues(args)).pipe(Effect.provideService(Logger.LogToStderr, true))

/** Runs `mes` on the process arguments; logs go to stderr so stdout carries only command output. */
export const program = Stdio.Stdio.use(({ args }) => Effect.flatMap(args, runArgs))
