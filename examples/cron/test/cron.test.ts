// Each schedule runs `mes monthly-reset` at 00:00 UTC on the 1st, and that command works.
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { expect, it } from "vitest"
import { parse } from "yaml"
import { scratchDir } from "../../../packages/adapters-http/test/scratch.ts"

const file = (path: string) => readFileSync(fileURLToPath(new URL(`../${path}`, import.meta.url)), "utf8")
const MES = fileURLToPath(new URL("../../../packages/cli/bin/mes.js", import.meta.url))

it("the crontab line runs mes monthly-reset at 00:00 on the 1st, in UTC", () => {
  const lines = file("crontab").split("\n").filter((l) => l.trim() !== "" && !l.startsWith("#"))
  expect(lines).toContain("CRON_TZ=UTC")
  const job = lines.find((l) => l.includes("monthly-reset"))!
  expect(job.split(/\s+/).slice(0, 5)).toEqual(["0", "0", "1", "*", "*"])
  expect(job).toMatch(/\/mes monthly-reset --json/)
})

it("the systemd timer fires on the 1st at midnight UTC and starts a oneshot service running the command", () => {
  const unit = (text: string) => Object.fromEntries(text.split("\n").filter((l) => l.includes("=")).map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]))
  const timer = unit(file("systemd/mes-monthly-reset.timer"))
  expect(timer.OnCalendar).toBe("*-*-01 00:00:00 UTC")
  expect(timer.Persistent).toBe("true")
  const service = unit(file("systemd/mes-monthly-reset.service"))
  expect(service.Type).toBe("oneshot")
  expect(service.ExecStart).toBe("/usr/local/bin/mes monthly-reset --json")
})

it("the Kubernetes CronJob runs the command monthly in UTC, never two at once", () => {
  const job = parse(file("kubernetes/cronjob.yaml"))
  expect(job.kind).toBe("CronJob")
  expect(job.spec).toMatchObject({ schedule: "0 0 1 * *", timeZone: "Etc/UTC", concurrencyPolicy: "Forbid" })
  const container = job.spec.jobTemplate.spec.template.spec.containers[0]
  expect([...container.command, ...container.args]).toEqual(["mes", "monthly-reset", "--json"])
})

it("the command they run works: a summary on stdout, exit code 0", () => {
  const env = { ...process.env, MES_DATA_DIR: join(scratchDir("cron-"), "data"), DATABASE_URL: "" }
  const out = JSON.parse(execFileSync(process.execPath, [MES, "monthly-reset", "--json"], { env, encoding: "utf8" }))
  expect(out.summary).toMatchObject({ failed_resets: 0 })
  expect(out.message).toContain("Monthly reset completed")
})
