/** Default lifetime of a session token: 12 hours (spec 5.4). */
export const DEFAULT_TOKEN_TTL_SECONDS = 12 * 60 * 60

/**
 * The longest lifetime `mes token issue` signs: 365 days, the bound of every duration setting. A session token
 * cannot be revoked before it expires; `--ttl 9999999999999` failed with "Invalid time value".
 */
export const MAX_TOKEN_TTL_SECONDS = 365 * 24 * 60 * 60
