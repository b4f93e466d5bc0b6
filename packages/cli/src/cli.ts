// The `mes` command tree and the program that runs it on the process arguments.
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Stdio from "effect/Stdio"
import { CliError, CliOutput, Command, TerminalCapabilities } from "effect/cli"
import { importJobs } from "./commands/import.ts"
import { key } from "./commands/key.ts"
import { mcp } from "./commands/mcp.ts"
import { migrate } from "./commands/migrate.ts"
import { monthlyReset } from "./commands/monthly-reset.ts"
import { profile } from "./commands/profile.ts"
import { serve } from "./commands/serve.ts"
import { tenant } from "./commands/tenant.ts"
import { token } from "./commands/token.ts"
import { userError } from "./output.ts"

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

/**
 * The first argument, among what `joinDashValues` left, that effect/cli would split into short flags (`-shop` as
 * `-s -h -o -p`): mes has none but `-h` and `-v`, so it is refused, where its `h` printed the help (or its `v` the
 * version) with exit 0 and nothing done. A lone `-` (stdin), a negative number and what follows `--` are values.
 */
const strayShortFlags = (args: ReadonlyArray<string>): string | undefined => {
  for (const arg of args) {
    if (arg === "--") return undefined
    if (/^-[^-]./.test(arg) && !/^-(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(arg)) return arg
  }
  return undefined
}

/** The command an argument list names (`["mes", "tenant", "create"]`), as far as its leading words name one. */
const commandPathOf = (args: ReadonlyArray<string>): Array<string> => {
  const path: Array<string> = [mes.name]
  let command: Command.Command.Any = mes
  for (const arg of args) {
    const next = command.subcommands.flatMap((g) => g.commands).find((c) => c.name === arg)
    if (next === undefined) break
    path.push(next.name)
    command = next
  }
  return path
}

/** The formatter effect/cli's own output uses: one installed, else the default, in colour where the terminal has it. */
const formatter: Effect.Effect<CliOutput.Formatter> = Effect.contextWith((context: Context.Context<never>) =>
  Effect.succeed(
    Context.getOrUndefined(context, CliOutput.Formatter) ??
      CliOutput.defaultFormatter({ colors: Context.get(context, TerminalCapabilities.TerminalCapabilities).canColor })
  )
)

const helpHint = (commandPath: ReadonlyArray<string>) => `  Run '${commandPath.join(" ")} --help' for its flags and examples.`

/**
 * effect/cli's output, but a usage error (an unknown flag, a flag without its value, a value refused) goes to stderr
 * with the command's usage line and where its help is: it printed the whole help on stdout, before the error on
 * stderr, so a script reading stdout took the help for the command's output and the error scrolled out of sight.
 * The exit code stays 1. `--help`, `--version` and a group named without its command (`mes tenant`) print on stdout.
 */
const presenter: CliOutput.Presenter = {
  present: (event) =>
    event._tag !== "InvalidInvocation"
      ? CliOutput.defaultPresenter.present(event)
      : Effect.flatMap(formatter, (f) =>
        Console.error(`${f.formatErrors(event.errors)}\n\nUSAGE\n  ${event.helpDoc.usage}\n\n${helpHint(event.commandPath)}`))
}

/** Refuses a stray `-abc` (see `strayShortFlags`) as effect/cli refuses an unknown flag: on stderr, exit 1. */
const refuseStray = (arg: string, args: ReadonlyArray<string>) => {
  const commandPath = commandPathOf(args)
  const error = new CliError.UnrecognizedOption({ option: arg, command: commandPath, suggestions: [] })
  const message = `${error.message}: mes has no short flags but -h (help) and -v (version); a value that starts with - ` +
    `goes right after its flag (as in --name ${arg}), or after --`
  return Effect.flatMap(formatter, (f) => Console.error(`${f.formatError(userError(message))}\n\n${helpHint(commandPath)}`)).pipe(
    Effect.andThen(Effect.fail(new CliError.ShowHelp({ commandPath, errors: [error] })))
  )
}

/** Runs `mes` on explicit arguments (e.g. in-process tests); needs the platform services. */
export const runArgs = (args: ReadonlyArray<string>) => {
  const joined = joinDashValues(args)
  const stray = strayShortFlags(joined)
  return (stray === undefined ? Command.runWith(mes, { version: VERSION })(joined) : refuseStray(stray, joined)).pipe(
    Effect.provideService(CliOutput.Presenter, presenter),
    Effect.provideService(Logger.LogToStderr, true)
  )
}

/** Runs `mes` on the process arguments; logs go to stderr so stdout carries only command output. */
export const program = Stdio.Stdio.use(({ args }) => Effect.flatMap(args, runArgs))
