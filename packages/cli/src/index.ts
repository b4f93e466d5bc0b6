// Reusable pieces of the CLI: the command tree, the program and the layers it composes.
export { mes, program, runArgs, VERSION } from "./cli.ts"
export { AppLive, DatabaseConfig, DatabaseLive, DEFAULT_DATA_DIR, lockDataDir, withLayer } from "./app.ts"
export { DEFAULT_HOST, DEFAULT_PORT } from "./commands/serve.ts"
export { publicUrl, runServer, ServeLive } from "./serve-live.ts"
export { asTenant } from "./commands/profile.ts"
export { type SessionClaims, type SessionRole, signSessionToken } from "./token.ts"
export { DEFAULT_TOKEN_TTL_SECONDS } from "./token-ttl.ts"
export { teardown } from "./signals.ts"
