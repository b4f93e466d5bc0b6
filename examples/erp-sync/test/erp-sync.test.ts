// The script as a process against a real mes: the sample CSV synced, then again (all unchanged), then a refusal.
import { execFile } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, expect, it } from "vitest"
import { type Harness, startServer } from "../../../packages/adapters-http/test/harness.ts"
import { scratchDir } from "../../../packages/adapters-http/test/scratch.ts"

const script = fileURLToPath(new URL("../sync.mjs", import.meta.url))
const sample = fileURLToPath(new URL("../jobs.csv", import.meta.url))
let h: Harness
let key = ""
beforeAll(async () => {
  h = await startServer()
  ;({ key } = await h.as("ERP"))
})
afterAll(() => h.close())

const run = (file: string) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(process.execPath, [script, file], { env: { ...process.env, MES_URL: h.url, MES_API_KEY: key } }, (error, stdout, stderr) =>
      resolve({ code: error ? (error as { code?: number }).code ?? 1 : 0, stdout, stderr }))
    void child
  })

it("syncs the sample, then finds it unchanged, with a progress bar and per-record results", async () => {
  const first = await run(sample)
  expect(first.code, first.stderr).toBe(0)
  expect(first.stdout.split("\n").filter(Boolean)).toEqual(["SO-1001\tcreated", "SO-1002\tcreated", "2 jobs: 2 created, 0 updated, 0 unchanged, 0 errors"])
  expect(first.stderr).toContain("[##############################] 2/2 jobs")
  const jobs = (await (await fetch(`${h.url}/api-jobs?sort=job_number&order=asc`, { headers: { authorization: `Bearer ${key}` } })).json()) as any
  expect(jobs.data.jobs.map((j: any) => [j.job_number, j.parts.length])).toEqual([["J-1001", 1], ["J-1002", 1]])
  const again = await run(sample)
  expect(again.stdout).toContain("2 jobs: 0 created, 0 updated, 2 unchanged, 0 errors")
})

it("prints a refused record's reason and exits 1", async () => {
  const file = join(scratchDir("erp-sync-"), "bad.csv")
  writeFileSync(file, "external_id,job_number,part_external_id,part_number,quantity\nSO-9,J-1001,SO-9-1,X,0\n")
  const res = await run(file)
  expect(res.code).toBe(1)
  expect(res.stdout).toMatch(/SO-9\terror\t/)
  expect(res.stdout).toContain("1 jobs: 0 created, 0 updated, 0 unchanged, 1 errors")
})
