#!/usr/bin/env node
// The `mes` executable: runs the TypeScript sources through tsx, resolving workspace packages
// with the `development` export condition (their src/*.ts), from any working directory.
import { register } from "node:module"
import { fileURLToPath } from "node:url"
import { register as registerTsx } from "tsx/esm/api"

registerTsx({ tsconfig: fileURLToPath(new URL("../tsconfig.json", import.meta.url)) })
// Registered after tsx, so it runs first and tsx resolves with the condition added.
register(
  "data:text/javascript," + encodeURIComponent(
    "export async function resolve(specifier, context, next) {" +
      " const conditions = context.conditions.includes('development') ? context.conditions : [...context.conditions, 'development'];" +
      " return next(specifier, { ...context, conditions }) }"
  )
)

await import("../src/main.ts")
