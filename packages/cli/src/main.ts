// Entry point of the `mes` CLI (bin/mes.js, `pnpm mes <command>`).
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Effect } from "effect"
import { program } from "./cli.ts"
import { teardown } from "./signals.ts"

program.pipe(Effect.provide(NodeServices.layer), NodeRuntime.runMain({ teardown }))
