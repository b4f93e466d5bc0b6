const mb = (n) => (n / 1048576).toFixed(1)
const show = (label) => { const m = process.memoryUsage(); console.log(label.padEnd(12), "rss", mb(m.rss), "heapUsed", mb(m.heapUsed), "heapTotal", mb(m.heapTotal), "ext", mb(m.external), "ab", mb(m.arrayBuffers)) }
process.argv.push("serve", "--port", "8798")
setTimeout(() => { show("idle"); global.gc(); show("after gc"); }, 4000)
setTimeout(() => process.exit(0), 4500)
await import("./dist/main.js")
