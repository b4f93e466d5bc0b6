// What the results record about where they come from: the machine, the package versions, the commit, and a
// fingerprint of the code under test taken at the start and at the end of the recording.
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import os from "node:os"
import { dirname, join } from "node:path"
import { postgresVersion } from "./database.ts"
import { dbs } from "./options.ts"
import { log, root } from "./util.ts"

const git = (...args: Array<string>) => {
  try {
    return execFileSync("git", args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim()
  } catch {
    return undefined
  }
}
const packageVersion = (from: string, name: string) => {
  try {
    // the entry point, then up to the package's own package.json (some packages do not export it)
    let dir = dirname(createRequire(join(root, from, "package.json")).resolve(name))
    for (let i = 0; i < 6; i++, dir = dirname(dir)) {
      try {
        const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string; version: string }
        if (pkg.name === name) return pkg.version
      } catch {
        // keep walking up
      }
    }
    return undefined
  } catch {
    return undefined
  }
}

/**
 * A fingerprint of the code under test: the contents of every file (tracked or untracked, not ignored) under
 * packages/, bench/*.ts and the lockfile. Others edit the same working tree, and every run starts a fresh server
 * from it, so a change in the middle of a recording is flagged. Commits alone do not change it.
 */
const treeState = () => {
  const files = git("ls-files", "--cached", "--others", "--exclude-standard", "--", "packages", "bench/*.ts", "pnpm-lock.yaml")
  if (files === undefined) return undefined
  const hash = createHash("sha256")
  for (const file of [...new Set(files.split("\n").filter((f) => f !== ""))].sort()) {
    hash.update(file + "\0")
    try {
      hash.update(readFileSync(join(root, file)))
    } catch {
      hash.update("(missing)")
    }
    hash.update("\0")
  }
  return hash.digest("hex").slice(0, 12)
}

const loadavg = () => os.loadavg().map((x) => Math.round(x * 100) / 100)

/** Taken before the first run. */
export const provenanceAtStart = () => ({ treeAtStart: treeState(), commitAtStart: git("rev-parse", "HEAD"), loadAtStart: loadavg() })

/** The results' `machine` and `git`, after the last run; warns when the code changed during the recording. */
export const provenanceAtEnd = async ({ treeAtStart, commitAtStart, loadAtStart }: ReturnType<typeof provenanceAtStart>) => {
  const commit = git("rev-parse", "HEAD")
  const dirty = git("status", "--porcelain")
  const treeAtEnd = treeState()
  if (treeAtStart !== treeAtEnd) log(`warning: the working tree changed during the run (${treeAtStart} → ${treeAtEnd}); runs may have tested different code`)
  return {
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      memGiB: Math.round(os.totalmem() / 2 ** 30 * 10) / 10,
      // 1/5/15-minute load averages: anything else busy on the 2 cores skews the numbers
      loadavgAtStart: loadAtStart,
      loadavgAtEnd: loadavg(),
      platform: `${os.type()} ${os.release()}`,
      node: process.version,
      postgres: dbs.includes("postgres") ? await postgresVersion() : undefined,
      versions: {
        autocannon: packageVersion("bench", "autocannon"),
        effect: packageVersion("bench", "effect"),
        "@effect/sql-pg": packageVersion("packages/adapters-pg", "@effect/sql-pg"),
        "@electric-sql/pglite": packageVersion("packages/adapters-pg", "@electric-sql/pglite")
      }
    },
    git: {
      commit,
      ...(commitAtStart === commit ? {} : { commitAtStart }),
      dirtyFiles: dirty === undefined ? undefined : dirty.split("\n").filter((l) => l !== "").length,
      treeAtStart,
      treeAtEnd,
      changedDuringRun: treeAtStart !== treeAtEnd
    }
  }
}
