#!/usr/bin/env node
// The `mes` executable: runs the production bundle of the compiled CLI (dist/bundle/, made by `pnpm build` from
// dist/ — `tsc -b` — by scripts/bundle.mjs; `pnpm install` builds it in a checkout). The TypeScript sources run
// directly only in tests and `pnpm mes:dev`.
import { existsSync } from "node:fs"

const main = new URL("../dist/bundle/main.js", import.meta.url)
if (!existsSync(main)) {
  console.error("mes is not built: run `pnpm build` in the repository (or `npx pnpm@10.20.0 build`)")
  process.exit(1)
}
await import(main.href)
