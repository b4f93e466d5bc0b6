// Small helpers of the runner: paths, logging, timeouts, the machine's own load, and statistics.
import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import os from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

/** bench/ */
export const benchDir = resolve(dirname(fileURLToPath(import.meta.url)), "..")
/** the repository */
export const root = resolve(benchDir, "..")

/**
 * The reference bench (`compare.sh`, the hand-written baseline, `load.mjs`): `../shared/bench` beside the
 * repository, or `MES_SHARED_BENCH` (for a clone elsewhere, e.g. a clean clone under /tmp), installed (`npm ci`).
 */
export const sharedBench = (): string => {
  const dir = resolve(process.env.MES_SHARED_BENCH ?? join(root, "../shared/bench"))
  if (!existsSync(join(dir, "node_modules"))) throw new Error(`${dir}: run npm ci there first (or set MES_SHARED_BENCH)`)
  return dir
}
/** `require` of the reference bench's own dependencies (`pg`). */
export const requireShared = (id: string): unknown => createRequire(join(sharedBench(), "package.json"))(id)

export const log = (...parts: ReadonlyArray<unknown>) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}]`, ...parts)
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
export const withTimeout = <A>(what: string, ms: number, p: Promise<A>): Promise<A> =>
  new Promise<A>((res, rej) => {
    const t = setTimeout(() => rej(new Error(`${what}: timed out after ${ms} ms`)), ms)
    p.then((a) => (clearTimeout(t), res(a)), (e) => (clearTimeout(t), rej(e)))
  })

/**
 * The whole machine's CPU time so far, in ms: busy (user, nice, system, irq, softirq) and idle (idle, iowait).
 * From /proc/stat where there is one (`os.cpus()` leaves softirq out, which loopback TCP is much of), else `os.cpus()`.
 */
export const cpuTimes = (): { readonly busy: number; readonly idle: number } => {
  if (existsSync("/proc/stat")) {
    // the first line sums every core, in USER_HZ ticks (1/100 s)
    const f = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/).slice(1).map(Number)
    return { busy: (f[0]! + f[1]! + f[2]! + f[5]! + f[6]!) * 10, idle: (f[3]! + f[4]!) * 10 }
  }
  return os.cpus().reduce((a, { times: t }) => ({ busy: a.busy + t.user + t.nice + t.sys + t.irq, idle: a.idle + t.idle }), { busy: 0, idle: 0 })
}

/** Fraction (0..1) of all cores busy over the next `ms`: other work on the machine skews results. */
const cpuBusy = async (ms = 1000) => {
  const a = cpuTimes()
  await sleep(ms)
  const b = cpuTimes()
  const busy = b.busy - a.busy, total = busy + b.idle - a.idle
  return total === 0 ? 0 : Math.round(busy / total * 100) / 100
}
/**
 * Waits (at most `seconds`) until the machine is below 20 % busy; returns the last reading, and warns when it is
 * still busy before `what` (the server is idle then, so this is everyone else's load).
 */
export const settle = async (seconds: number, what: string) => {
  const until = Date.now() + seconds * 1000
  let busy = await cpuBusy()
  while (busy > 0.2 && Date.now() < until) busy = await cpuBusy()
  if (busy > 0.2) log(`warning: machine ${Math.round(busy * 100)}% busy before ${what} (other processes)`)
  return busy
}

/** One decimal (two with `digits` 2); null stays null. */
export const roundTo = <N extends number | null>(x: N, digits = 1): N =>
  (x === null ? x : Math.round(x * 10 ** digits) / 10 ** digits) as N
export const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}
export const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.ceil(p / 100 * sorted.length) - 1)]!
/** Evenly spaced sample of `k` items (first and last included). */
export const sampleOf = <A>(xs: ReadonlyArray<A>, k: number): Array<A> =>
  xs.length <= k ? [...xs] : Array.from({ length: k }, (_, i) => xs[Math.round(i * (xs.length - 1) / (k - 1))]!)

export interface Stats {
  n: number
  min: number | null
  p50: number | null
  p90: number | null
  p99: number | null
  max: number | null
  avg: number | null
}
export const stats = (xs: ReadonlyArray<number>): Stats => {
  const s = [...xs].sort((a, b) => a - b)
  return {
    n: s.length,
    min: roundTo(s[0] ?? null),
    p50: roundTo(percentile(s, 50)),
    p90: roundTo(percentile(s, 90)),
    p99: roundTo(percentile(s, 99)),
    max: roundTo(s[s.length - 1] ?? null),
    avg: roundTo(s.length === 0 ? null : s.reduce((a, x) => a + x, 0) / s.length)
  }
}
