// The MCP server's stdio transport: one JSON-RPC message per line on stdin, one per line on stdout. Unlike the SDK's
// StdioServerTransport, a line that is not a message is answered as JSON-RPC 2.0 asks (-32700 for a line that is not
// JSON, -32600 for JSON that is not a message, with the request's id when it has one), so a client that sent a
// request with a bad field hears why instead of waiting for ever; and a line over the limit is answered and skipped
// instead of closing the server. When stdin ends (`mes mcp < requests.jsonl`), a last line without a newline is
// still read, and the transport closes once every request read has been answered (or cancelled), not before.
import type { Readable, Writable } from "node:stream"
import { serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { ErrorCode, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { utf8Text } from "@mes/domain"
import { type ErrorAnswer, errorAnswer, messageOf } from "./messages.ts"

/** The longest line read as one message (the SDK's own default). */
export const MAX_LINE_BYTES = 10 * 1024 * 1024

const NEWLINE = 0x0a

export class LineTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  /** the start of a line whose newline has not come yet */
  private pending: Array<Buffer> = []
  private pendingBytes = 0
  /** inside a line already answered as too long: dropped up to its newline */
  private skipping = false
  /** ids of the requests read and not answered yet */
  private readonly inFlight = new Set<string | number>()
  private ended = false
  private closed = false

  private readonly stdin: Readable
  private readonly stdout: Writable
  private readonly maxLineBytes: number

  constructor(stdin: Readable = process.stdin, stdout: Writable = process.stdout, maxLineBytes: number = MAX_LINE_BYTES) {
    this.stdin = stdin
    this.stdout = stdout
    this.maxLineBytes = maxLineBytes
  }

  private readonly ondata = (chunk: Buffer) => {
    let from = 0
    for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, from)) {
      const piece = chunk.subarray(from, at)
      from = at + 1
      if (this.skipping) {
        this.skipping = false
        continue
      }
      const line = this.pending.length === 0 ? piece : Buffer.concat([...this.pending, piece])
      this.pending = []
      this.pendingBytes = 0
      if (line.length > this.maxLineBytes) this.tooLong()
      else this.receive(line)
    }
    const rest = chunk.subarray(from)
    if (this.skipping || rest.length === 0) return
    if (this.pendingBytes + rest.length > this.maxLineBytes) {
      // answered now, not when (if ever) its newline comes: nothing of it is kept
      this.pending = []
      this.pendingBytes = 0
      this.skipping = true
      this.tooLong()
      return
    }
    this.pending.push(rest)
    this.pendingBytes += rest.length
  }

  private readonly onStdinError = (error: Error) => this.onerror?.(error)

  private readonly onend = () => {
    this.ended = true
    if (!this.skipping && this.pending.length > 0) this.receive(Buffer.concat(this.pending))
    this.pending = []
    this.closeWhenAnswered()
  }

  private closeWhenAnswered() {
    if (this.ended && this.inFlight.size === 0) void this.close()
  }

  private tooLong() {
    this.answer(null, ErrorCode.ParseError, `Parse error: a line is longer than ${this.maxLineBytes} bytes`)
  }

  private receive(bytes: Buffer) {
    // MCP's stdio is UTF-8
    const text = utf8Text(bytes)
    if (text === undefined) return this.answer(null, ErrorCode.ParseError, "Parse error: the line is not UTF-8")
    const line = text.endsWith("\r") ? text.slice(0, -1) : text
    if (line.trim() === "") return
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch (e) {
      return this.answer(null, ErrorCode.ParseError, `Parse error: the line is not JSON (${(e as Error).message})`)
    }
    const read = messageOf(value)
    if ("refused" in read) return this.refuse(read.refused)
    const message = read.message
    if ("method" in message) {
      if ("id" in message) this.inFlight.add(message.id)
      // a cancelled request is not answered
      else if (message.method === "notifications/cancelled") this.inFlight.delete(message.params?.requestId as string | number)
    }
    this.onmessage?.(message)
  }

  private answer(id: string | number | null, code: number, message: string) {
    this.refuse(errorAnswer(id, code, message))
  }

  private refuse(answer: ErrorAnswer) {
    // the SDK's type has no room for id null
    void this.send(answer as unknown as JSONRPCMessage)
  }

  async start(): Promise<void> {
    this.stdin.on("data", this.ondata)
    this.stdin.on("error", this.onStdinError)
    this.stdin.on("end", this.onend)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.stdin.off("data", this.ondata)
    this.stdin.off("error", this.onStdinError)
    this.stdin.off("end", this.onend)
    if (this.stdin.listenerCount("data") === 0) this.stdin.pause()
    this.pending = []
    this.onclose?.()
  }

  async send(message: JSONRPCMessage): Promise<void> {
    await new Promise<void>((resolve) => {
      if (this.stdout.write(serializeMessage(message))) resolve()
      else this.stdout.once("drain", resolve)
    })
    // an answer (a request of the server's own has a method)
    if ("id" in message && !("method" in message) && message.id !== undefined && this.inFlight.delete(message.id)) this.closeWhenAnswered()
  }
}
