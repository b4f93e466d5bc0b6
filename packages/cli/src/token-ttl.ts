/** Default lifetime of a session token: 12 hours (spec 5.4). */
export const DEFAULT_TOKEN_TTL_SECONDS = 12 * 60 * 60
