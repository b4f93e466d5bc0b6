// API keys (spec 5.1-5.3): `svc_live_`/`svc_test_` prefixes, stored as SHA-256, compared in constant time.
import { describe, expect, it } from "vitest"
import { constantTimeEqual, generateApiKey, KEY_PATTERN, keyPrefix, sha256Hex } from "../src/index.ts"

describe("generateApiKey", () => {
  it("live keys match KEY_PATTERN with the svc_live_ prefix", () => {
    const key = generateApiKey("live")
    expect(key.startsWith("svc_live_")).toBe(true)
    expect(key).toMatch(KEY_PATTERN)
    expect(key).toHaveLength("svc_live_".length + 40)
  })

  it("test keys match KEY_PATTERN with the svc_test_ prefix", () => {
    const key = generateApiKey("test")
    expect(key.startsWith("svc_test_")).toBe(true)
    expect(key).toMatch(KEY_PATTERN)
  })

  it("keys are distinct", () => {
    const keys = Array.from({ length: 500 }, (_, i) => generateApiKey(i % 2 === 0 ? "live" : "test"))
    expect(new Set(keys).size).toBe(500)
    expect(new Set(keys.map((k) => k.slice(9))).size).toBe(500)
  })

  it("the secret part uses the whole base62 alphabet", () => {
    const chars = new Set(Array.from({ length: 200 }, () => generateApiKey("live").slice(9)).join(""))
    expect(chars.size).toBe(62)
  })

  it("keyPrefix is the first 16 characters", () => {
    const key = generateApiKey("live")
    expect(keyPrefix(key)).toBe(key.slice(0, 16))
    expect(keyPrefix(key)).toHaveLength(16)
  })
})

describe("KEY_PATTERN", () => {
  const secret = "A".repeat(40)
  it("rejects other prefixes, wrong lengths and other characters", () => {
    expect(KEY_PATTERN.test(`svc_live_${secret}`)).toBe(true)
    expect(KEY_PATTERN.test(`svc_prod_${secret}`)).toBe(false)
    expect(KEY_PATTERN.test(`svc_live_${secret.slice(1)}`)).toBe(false)
    expect(KEY_PATTERN.test(`svc_live_${secret}A`)).toBe(false)
    expect(KEY_PATTERN.test(`svc_live_${secret.slice(1)}-`)).toBe(false)
    expect(KEY_PATTERN.test(` svc_live_${secret}`)).toBe(false)
  })
})

describe("constantTimeEqual", () => {
  it("is true exactly for equal strings", () => {
    expect(constantTimeEqual("abc", "abc")).toBe(true)
    expect(constantTimeEqual("", "")).toBe(true)
    expect(constantTimeEqual("abc", "abd")).toBe(false)
    expect(constantTimeEqual("abc", "Abc")).toBe(false)
    expect(constantTimeEqual("abc", "abcd")).toBe(false)
    expect(constantTimeEqual("abcd", "abc")).toBe(false)
    expect(constantTimeEqual("", "a")).toBe(false)
    expect(constantTimeEqual("a\u0000", "a")).toBe(false)
  })

  it("agrees with === on hashes", async () => {
    const a = await sha256Hex("one")
    const b = await sha256Hex("two")
    expect(constantTimeEqual(a, a.slice())).toBe(true)
    expect(constantTimeEqual(a, b)).toBe(false)
    expect(constantTimeEqual(a, a.slice(0, -1) + (a.endsWith("0") ? "1" : "0"))).toBe(false)
  })
})

describe("sha256Hex", () => {
  it("matches the known vectors", async () => {
    expect(await sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    expect(await sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
  })

  it("hashes the UTF-8 bytes of the text", async () => {
    // sha256 of c3 a9, the UTF-8 encoding of "é" (computed with node:crypto)
    expect(await sha256Hex("\u00e9")).toBe("4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c")
  })
})
