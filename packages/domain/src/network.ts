// What a failed network call says, for every adapter that makes one (webhook delivery, the MCP server's REST
// backend, the client).

/**
 * What a failed request says: its cause's message or code where it has one ("connect ECONNREFUSED 127.0.0.1:1",
 * where fetch's own error says only "fetch failed"), else its own message.
 */
export const networkFailure = (e: unknown): string => {
  const err = e as { message?: unknown; cause?: { message?: unknown; code?: unknown } }
  const cause = err?.cause
  return typeof cause?.message === "string" && cause.message !== ""
    ? cause.message
    : typeof cause?.code === "string"
    ? cause.code
    : typeof err?.message === "string"
    ? err.message
    : String(e)
}
