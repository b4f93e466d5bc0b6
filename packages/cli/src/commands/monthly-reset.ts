// `mes monthly-reset [--json]`: the monthly reset of spec 4.13 against the database, for crontab or a
// Kubernetes CronJob; prints the HTTP task's summary and exits 1 when any tenant failed.
import * as Effect from "effect/Effect"
import { Command } from "effect/cli"
import { MonthlyReset } from "@mes/domain"
import { withApp } from "../lazy.ts"
import { jsonFlag, output, reportErrors, userError } from "../output.ts"

export const monthlyReset = Command.make("monthly-reset", { json: jsonFlag }, ({ json }) =>
  Effect.gen(function*() {
    const report = yield* withApp(Effect.flatMap(Effect.service(MonthlyReset), (r) => r.run("cli")))
    const { summary } = report
    yield* output(
      json,
      report,
      `${report.message} (${summary.successful_resets} succeeded, ${summary.failed_resets} failed, ${summary.duration_ms} ms)`
    )
    if (summary.failed_resets > 0) {
      return yield* userError(`${summary.failed_resets} tenant(s) could not be reset: ${
        report.reset_details.filter((d) => !d.reset_successful).map((d) => d.tenant_id).join(", ")
      }`)
    }
  }).pipe(reportErrors)).pipe(
  Command.withDescription("Reset every active tenant's monthly parts count now (spec 4.13); exit code 1 if any tenant failed"), Command.withExamples([{ command: "mes monthly-reset", description: "from cron on the 1st (examples/cron)" }, { command: "mes monthly-reset --json" }])
)
