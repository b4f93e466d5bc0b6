#!/usr/bin/env node
// The `mes` executable: runs the production bundle of the compiled CLI (dist/bundle/, made by `pnpm build` from
// dist/ — `tsc -b` — by scripts/bundle.mjs; `pnpm install` builds it in a checkout). The TypeScript sources run
// directly only in tests and `pnpm mes:dev`.
import { existsSync } from "node:fs"
import module from "node:module"

const main = new URL("../dist/bundle/main.js", import.meta.url)
if (!existsSync(main)) {
  console.error("mes is not built: run `pnpm build` in the repository (or `npx pnpm@10.20.0 build`)")
  process.exit(1)
}
// Node 22.1+ keeps V8's compiled code of the bundle (and PGlite's module) on disk, in NODE_COMPILE_CACHE or else
// os.tmpdir()/node-compile-cache, so later starts skip compiling it (docs/DECISIONS.md, "compile cache"); Node 20 has
// no such cache and runs as before. NODE_DISABLE_COMPILE_CACHE=1 turns it off. Node writes the cache at exit; a
// server (`mes serve`, `mes mcp`) may never exit normally, so it is also written once the start is well over.
if (module.enableCompileCache?.().directory !== undefined) {
  setTimeout(() => {
    try {
      module.flushCompileCache?.()
    } catch {
      // a cache that cannot be written costs the next start its compile, nothing else
    }
  }, 10_000).unref()
}
await import(main.href)
