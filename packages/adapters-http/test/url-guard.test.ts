// The SSRF guard's address rule, without network access: literal IPs, `localhost`, and a stub resolver.
import { ConfigProvider, Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { UrlGuard } from "@mes/domain"
import { checkCloudUrl, classifyAddress, guardedLookup, parseIPv6, UrlGuardLive } from "../src/index.ts"

const refused = [
  ["127.0.0.1", "loopback"],
  ["127.255.10.3", "loopback"],
  ["::1", "loopback"],
  ["0:0:0:0:0:0:0:1", "loopback"],
  ["10.0.0.1", "private"],
  ["10.255.255.255", "private"],
  ["172.16.0.1", "private"],
  ["172.31.255.254", "private"],
  ["192.168.1.10", "private"],
  ["fc00::1", "private"],
  ["fd12:3456:789a::1", "private"],
  ["169.254.0.1", "link-local"],
  ["fe80::1", "link-local"],
  ["fe80::1%eth0", "link-local"],
  ["febf:ffff::1", "link-local"],
  ["0.0.0.0", "unspecified"],
  ["::", "unspecified"],
  ["0.1.2.3", "reserved"],
  ["100.64.0.1", "carrier-grade NAT"],
  ["100.127.255.255", "carrier-grade NAT"],
  ["100.100.100.200", "carrier-grade NAT"],
  ["169.254.169.254", "metadata"],
  ["fd00:ec2::254", "metadata"],
  ["::ffff:127.0.0.1", "loopback"],
  ["::ffff:7f00:1", "loopback"],
  ["::ffff:10.1.2.3", "private"],
  ["::ffff:169.254.169.254", "metadata"],
  ["::ffff:0.0.0.0", "unspecified"],
  ["::127.0.0.1", "loopback"],
  ["64:ff9b::192.168.0.1", "private"],
  ["2002:c0a8:0101::1", "private"],
  ["224.0.0.1", "multicast"],
  ["ff02::1", "multicast"],
  ["255.255.255.255", "reserved"],
  ["240.0.0.1", "reserved"]
] as const

const allowed = [
  "8.8.8.8",
  "1.1.1.1",
  "93.184.216.34",
  "172.15.255.255",
  "172.32.0.1",
  "192.169.0.1",
  "100.63.255.255",
  "100.128.0.1",
  "169.253.255.255",
  "2606:4700:4700::1111",
  "2001:4860:4860::8888",
  "::ffff:8.8.8.8",
  "64:ff9b::8.8.8.8"
]

describe("classifyAddress", () => {
  it.each(refused)("refuses %s as %s", (address, kind) => {
    expect(classifyAddress(address)).toContain(kind)
  })

  it.each(allowed)("allows the public address %s", (address) => {
    expect(classifyAddress(address)).toBeUndefined()
  })

  it("refuses what is not an IP address", () => {
    expect(classifyAddress("example.com")).toBeDefined()
    expect(classifyAddress("1.2.3.256")).toBeDefined()
    expect(classifyAddress("1::2::3")).toBeDefined()
  })

  it("parses IPv6 forms into eight groups", () => {
    expect(parseIPv6("::")).toEqual([0, 0, 0, 0, 0, 0, 0, 0])
    expect(parseIPv6("[::ffff:127.0.0.1]")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x7f00, 1])
    expect(parseIPv6("1:2:3:4:5:6:7:8")).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    expect(parseIPv6("1:2:3:4:5:6:7:8:9")).toBeUndefined()
    expect(parseIPv6("1:2:3:4:5:6:7:8::")).toBeUndefined()
    expect(parseIPv6("12345::")).toBeUndefined()
  })
})

/** A resolver that must not be called (literal hosts are judged without a lookup). */
const noLookup = () => Promise.reject(new Error("lookup not expected"))

describe("checkCloudUrl", () => {
  it("refuses literal private hosts without resolving them", async () => {
    expect(await checkCloudUrl("http://127.0.0.1:9/x", noLookup)).toMatch(/loopback/)
    expect(await checkCloudUrl("http://169.254.169.254/latest/meta-data", noLookup)).toMatch(/metadata/)
    expect(await checkCloudUrl("http://[::1]:8080/", noLookup)).toMatch(/loopback/)
    expect(await checkCloudUrl("http://[::ffff:127.0.0.1]/", noLookup)).toMatch(/loopback/)
    expect(await checkCloudUrl("https://10.0.0.5/hook", noLookup)).toMatch(/private/)
  })

  it("sees through the shorthand IPv4 forms the URL parser normalizes", async () => {
    expect(await checkCloudUrl("http://2130706433/", noLookup)).toMatch(/loopback/)
    expect(await checkCloudUrl("http://0x7f.1/", noLookup)).toMatch(/loopback/)
    expect(await checkCloudUrl("http://127.1/", noLookup)).toMatch(/loopback/)
    expect(await checkCloudUrl("http://0/", noLookup)).toMatch(/unspecified/)
  })

  it("allows a literal public address", async () => {
    expect(await checkCloudUrl("https://93.184.216.34/hook", noLookup)).toBeUndefined()
    expect(await checkCloudUrl("https://[2606:4700:4700::1111]/hook", noLookup)).toBeUndefined()
  })

  it("refuses localhost and metadata host names", async () => {
    expect(await checkCloudUrl("http://localhost:3000/", noLookup)).toMatch(/loopback/)
    expect(await checkCloudUrl("http://LOCALHOST./", noLookup)).toMatch(/loopback/)
    expect(await checkCloudUrl("http://api.localhost/", noLookup)).toMatch(/loopback/)
    expect(await checkCloudUrl("http://metadata.google.internal/computeMetadata/v1/", noLookup)).toMatch(/metadata/)
  })

  it("refuses a name when any address it resolves to is refused", async () => {
    const resolve = (addresses: ReadonlyArray<string>) => () => Promise.resolve(addresses)
    expect(await checkCloudUrl("https://hooks.example.com/x", resolve(["93.184.216.34"]))).toBeUndefined()
    expect(await checkCloudUrl("https://hooks.example.com/x", resolve(["93.184.216.34", "10.0.0.7"]))).toMatch(/10\.0\.0\.7.*private/)
    expect(await checkCloudUrl("https://hooks.example.com/x", resolve(["::ffff:192.168.0.1"]))).toMatch(/private/)
  })

  it("refuses a name that does not resolve (error, no address, or timeout)", async () => {
    expect(await checkCloudUrl("https://nowhere.invalid/", () => Promise.reject(new Error("ENOTFOUND")))).toMatch(/could not be resolved/)
    expect(await checkCloudUrl("https://nowhere.invalid/", () => Promise.resolve([]))).toMatch(/could not be resolved/)
    expect(await checkCloudUrl("https://slow.example/", () => new Promise(() => {}), 20)).toMatch(/could not be resolved/)
  })

  it("refuses what is not an http(s) URL", async () => {
    expect(await checkCloudUrl("not a url", noLookup)).toBeDefined()
    expect(await checkCloudUrl("ftp://93.184.216.34/", noLookup)).toBeDefined()
  })
})

describe("guardedLookup (the delivery's own lookup at connect)", () => {
  const lookup = (check: (address: string) => string | undefined, all: boolean) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: unknown; family?: number | undefined }>((resolve) =>
      guardedLookup(check)("localhost", { all }, (error, address, family) => resolve({ error, address, family }))
    )

  it("answers as dns.lookup does, one address or all, when every address passes", async () => {
    const one = await lookup(() => undefined, false)
    expect(one.error).toBeNull()
    expect(["127.0.0.1", "::1"]).toContain(one.address)
    expect([4, 6]).toContain(one.family)
    const all = await lookup(() => undefined, true)
    expect(all.error).toBeNull()
    expect((all.address as Array<{ address: string }>).map((a) => a.address)).toContain(one.address)
  })

  it("fails the connect when an address of the name is refused, naming it and why", async () => {
    for (const all of [false, true]) {
      const r = await lookup(classifyAddress, all)
      expect(r.error?.message).toMatch(/^localhost resolves to (127\.0\.0\.1|::1), a loopback address$/)
    }
  })
})

describe("UrlGuardLive", () => {
  const guardWith = (env: Record<string, string>) =>
    Effect.runPromise(
      Effect.gen(function*() {
        const guard = yield* UrlGuard
        return yield* guard.check("http://127.0.0.1:9/x")
      }).pipe(Effect.provide(UrlGuardLive.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env))))))
    )

  it("allows everything when self-hosted (the default)", async () => {
    expect(await guardWith({})).toBeUndefined()
    expect(await guardWith({ MES_DEPLOYMENT: "self-hosted" })).toBeUndefined()
  })

  it("refuses private targets in cloud mode, and judges the addresses a delivery connects to", async () => {
    expect(await guardWith({ MES_DEPLOYMENT: "cloud" })).toMatch(/loopback/)
    const checkAddress = (env: Record<string, string>) =>
      Effect.runPromise(Effect.map(Effect.service(UrlGuard), (g) => g.checkAddress).pipe(
        Effect.provide(UrlGuardLive.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env)))))
      ))
    expect((await checkAddress({ MES_DEPLOYMENT: "cloud" }))?.("10.0.0.1")).toMatch(/private/)
    expect(await checkAddress({})).toBeUndefined()
  })
})
