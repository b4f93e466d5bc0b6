// Entry point of the `mes` CLI (bin/mes.js, `pnpm mes <command>`).
// the platform modules by path: the package index would load the HTTP server and client too
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Effect from "effect/Effect"
import { program } from "./cli.ts"
import { teardown } from "./signals.ts"

program.pipe(Effect.provide(NodeServices.layer), NodeRuntime.runMain({ teardown }))
