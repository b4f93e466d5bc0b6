// Reusable pieces of the CLI: the command tree, the program and the layers it composes.
export { mes, program, runArgs, VERSION } from "./cli.ts"
export { AppLive, DatabaseConfig, DatabaseLive, DEFAULT_DATA_DIR, lockDataDir, withLayer } from "./app.ts"
export { DEFAULT_HOST, DEFAULT_PORT, publicUrl, ServeLive } from "./commands/serve.ts"
export { asTenant } from "./commands/profile.ts"
export { DEFAULT_TOKEN_TTL_SECONDS, type SessionClaims, type SessionRole, signSessionToken } from "./token.ts"
export { teardown } from "./signals.ts"
