// CPU per nested create, by process: every `postgres` process and the server's pid, from /proc/<pid>/stat
// (utime + stime, 100 ticks a second) before and after one 10 s `load.mjs --scenario create` run.
//   KEEP=out.json node pgcpu.mjs URL KEY SERVER_PID      (KEEP, optional: where load.mjs's JSON line goes)
import { execFileSync } from "node:child_process"
import { appendFileSync, readdirSync, readFileSync } from "node:fs"

const [url, key, serverPid] = process.argv.slice(2)
/** Ticks used so far by every process, by pid (per pid: a backend that exits during the run is not subtracted). */
const snap = () => {
  const m = new Map()
  for (const p of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8")
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"))
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      m.set(p, { comm, ticks: Number(f[11]) + Number(f[12]) })
    } catch {
      // gone meanwhile
    }
  }
  return m
}
const a = snap()
const out = execFileSync("node", ["load.mjs", "--url", url, "--key", key, "--scenario", "create", "--duration", "10", "--warmup", "0"], {
  cwd: "/work/shared/bench",
  encoding: "utf8"
})
const b = snap()
let pg = 0
for (const [p, x] of b) if (x.comm === "postgres") pg += x.ticks - (a.get(p)?.ticks ?? 0)
const srv = b.get(serverPid).ticks - a.get(serverPid).ticks
const n = Number(/"requests":(\d+)/.exec(out)[1])
if (process.env.KEEP) appendFileSync(process.env.KEEP, out)
console.log(`requests ${n}, ${(n / 10).toFixed(0)}/s; postgres ${(pg * 10 / n).toFixed(2)} ms/req; server ${(srv * 10 / n).toFixed(2)} ms/req`)
