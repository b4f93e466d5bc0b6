// The SSRF guard behind the UrlGuard port (issue: webhooks). `MES_DEPLOYMENT=cloud`: a webhook URL
// whose host is, or resolves to, a loopback, private, link-local, unspecified, carrier-grade NAT,
// multicast/reserved or cloud-metadata address is refused (IPv4-mapped, IPv4-compatible, NAT64
// and 6to4 IPv6 forms are judged by the IPv4 address they carry). Every resolved address must pass,
// and a host that does not resolve is refused. `self-hosted` (the default) allows everything.
import { lookup as dnsLookupCallback, type LookupAddress } from "node:dns"
import { lookup as dnsLookup } from "node:dns/promises"
import type { LookupFunction } from "node:net"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type Deployment, DeploymentConfig, UrlGuard } from "@mes/domain"

export type { Deployment }

/** Host names that reach a cloud provider's instance metadata service. */
export const METADATA_HOSTS: ReadonlyArray<string> = ["metadata.google.internal", "metadata.goog"]

/** `a.b.c.d` (decimal, no leading zeros) as four octets. */
export const parseIPv4 = (s: string): [number, number, number, number] | undefined => {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s)
  if (m === null) return undefined
  const octets = m.slice(1).map(Number)
  if (octets.some((o, i) => o > 255 || (m[i + 1]!.length > 1 && m[i + 1]!.startsWith("0")))) return undefined
  return octets as [number, number, number, number]
}

/** An IPv6 address (brackets, a zone and an IPv4 tail allowed) as eight 16-bit groups. */
export const parseIPv6 = (input: string): Array<number> | undefined => {
  let s = input.startsWith("[") && input.endsWith("]") ? input.slice(1, -1) : input
  const zone = s.indexOf("%")
  if (zone !== -1) s = s.slice(0, zone)
  if (!s.includes(":")) return undefined
  const lastColon = s.lastIndexOf(":")
  const tail = s.slice(lastColon + 1)
  if (tail.includes(".")) {
    const v4 = parseIPv4(tail)
    if (v4 === undefined) return undefined
    s = `${s.slice(0, lastColon + 1)}${((v4[0] << 8) | v4[1]).toString(16)}:${((v4[2] << 8) | v4[3]).toString(16)}`
  }
  const halves = s.split("::")
  if (halves.length > 2) return undefined
  const groupsOf = (h: string) => (h === "" ? [] : h.split(":"))
  const head = groupsOf(halves[0]!)
  const rest = halves.length === 2 ? groupsOf(halves[1]!) : []
  if (![...head, ...rest].every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return undefined
  const filled = halves.length === 2 ? 8 - head.length - rest.length : 0
  if (halves.length === 2 ? filled < 1 : head.length !== 8) return undefined
  return [...head, ...Array<string>(filled).fill("0"), ...rest].map((g) => parseInt(g, 16))
}

const classifyIPv4 = ([a, b, c, d]: readonly [number, number, number, number]): string | undefined => {
  if (a === 169 && b === 254 && c === 169 && d === 254) return "a cloud metadata address"
  if (a === 0) return b === 0 && c === 0 && d === 0 ? "the unspecified address" : "a reserved address (0.0.0.0/8)"
  if (a === 127) return "a loopback address"
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return "a private address"
  if (a === 169 && b === 254) return "a link-local address"
  if (a === 100 && b >= 64 && b <= 127) return "a carrier-grade NAT address"
  if (a === 192 && b === 0 && c === 0) return "a reserved address (192.0.0.0/24)"
  if (a >= 224 && a <= 239) return "a multicast address"
  if (a >= 240) return "a reserved address (240.0.0.0/4)"
  return undefined
}

const v4Of = (hi: number, lo: number): [number, number, number, number] => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]

const classifyIPv6 = (g: ReadonlyArray<number>): string | undefined => {
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0)
  if (zeroUpTo(8)) return "the unspecified address"
  if (zeroUpTo(7) && g[7] === 1) return "a loopback address"
  const embedded = (v4: [number, number, number, number], form: string) => {
    const reason = classifyIPv4(v4)
    return reason === undefined ? undefined : `${reason} (${form} ${v4.join(".")})`
  }
  if (zeroUpTo(5) && g[5] === 0xffff) return embedded(v4Of(g[6]!, g[7]!), "IPv4-mapped")
  if (zeroUpTo(6)) return embedded(v4Of(g[6]!, g[7]!), "IPv4-compatible")
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return embedded(v4Of(g[6]!, g[7]!), "NAT64")
  if (g[0] === 0x2002) return embedded(v4Of(g[1]!, g[2]!), "6to4")
  if (g[0] === 0xfd00 && g[1] === 0x0ec2 && g.slice(2, 7).every((x) => x === 0) && g[7] === 0x254) {
    return "a cloud metadata address"
  }
  if ((g[0]! & 0xfe00) === 0xfc00) return "a private address (unique local)"
  if ((g[0]! & 0xffc0) === 0xfe80) return "a link-local address"
  if ((g[0]! & 0xffc0) === 0xfec0) return "a private address (site-local)"
  if ((g[0]! & 0xff00) === 0xff00) return "a multicast address"
  return undefined
}

/** Why a webhook may not call this IP address, or undefined for a public unicast address. */
export const classifyAddress = (address: string): string | undefined => {
  const v4 = parseIPv4(address)
  if (v4 !== undefined) return classifyIPv4(v4)
  const v6 = parseIPv6(address)
  if (v6 !== undefined) return classifyIPv6(v6)
  return "not an IP address"
}

export type Resolve = (host: string) => Promise<ReadonlyArray<string>>

const systemResolve: Resolve = async (host) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address)

const withTimeout = <A>(p: Promise<A>, ms: number) =>
  new Promise<A>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("timed out")), ms)
    p.then((v) => (clearTimeout(timer), resolve(v)), (e) => (clearTimeout(timer), reject(e)))
  })

/**
 * The cloud rule for one URL: undefined when it may be called, else why not. A literal IP is
 * judged as is; a name is resolved and every address it has must pass.
 */
export const checkCloudUrl = async (url: string, resolve: Resolve = systemResolve, timeoutMs = 5000): Promise<string | undefined> => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return "it is not a valid URL"
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return "only http and https URLs are allowed"
  const raw = parsed.hostname
  const literal = raw.startsWith("[") ? raw.slice(1, -1) : raw
  if (parseIPv4(literal) !== undefined || literal.includes(":")) {
    const reason = classifyAddress(literal)
    return reason === undefined ? undefined : `${literal} is ${reason}`
  }
  const host = literal.toLowerCase().replace(/\.$/, "")
  if (METADATA_HOSTS.includes(host)) return `${host} is a cloud metadata host`
  if (host === "localhost" || host.endsWith(".localhost")) return `${host} is a loopback host`
  let addresses: ReadonlyArray<string>
  try {
    addresses = await withTimeout(resolve(host), timeoutMs)
  } catch {
    return `host ${host} could not be resolved`
  }
  if (addresses.length === 0) return `host ${host} could not be resolved`
  for (const address of addresses) {
    const reason = classifyAddress(address)
    if (reason !== undefined) return `${host} resolves to ${address}, ${reason}`
  }
  return undefined
}

/**
 * A connect-time name lookup (node:net's `lookup` option) that fails when any address of the name is refused by
 * `checkAddress`: the connection goes only where the lookup it makes itself allows, so the name cannot resolve
 * to a public address for the guard's check and to a private one a moment later for the connect.
 */
export const guardedLookup = (checkAddress: (address: string) => string | undefined): LookupFunction => (hostname, options, callback) =>
  dnsLookupCallback(hostname, { ...options, all: true }, (error, addresses: Array<LookupAddress>) => {
    if (error !== null) return callback(error, "", 0)
    for (const a of addresses) {
      const reason = checkAddress(a.address)
      if (reason !== undefined) {
        return callback(Object.assign(new Error(`${hostname} resolves to ${a.address}, ${reason}`), { code: "EADDRNOTAVAIL" }), "", 0)
      }
    }
    if (options.all === true) return callback(null, addresses)
    const first = addresses[0]
    return first === undefined ? callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0) : callback(null, first.address, first.family)
  })

/** The cloud guard over a resolver (the system's by default). */
export const cloudUrlGuard = (resolve: Resolve = systemResolve) =>
  UrlGuard.of({ check: (url) => Effect.promise(() => checkCloudUrl(url, resolve)), checkAddress: classifyAddress })

/** The guard of a deployment: self-hosted allows every URL, cloud applies the SSRF rule. */
export const urlGuardFor = (deployment: Deployment) =>
  Layer.succeed(UrlGuard, deployment === "cloud" ? cloudUrlGuard() : UrlGuard.allowAll)

/** The guard chosen by `MES_DEPLOYMENT` (default `self-hosted`). */
export const UrlGuardLive = Layer.unwrap(Effect.gen(function*() {
  return urlGuardFor(yield* DeploymentConfig)
}))
