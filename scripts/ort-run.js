// Runs an ONNX model with onnxruntime-node (the peer in scripts/bench-ort.sh):
//   node scripts/ort-run.js MODEL INPUT_NAME INPUT.bin D0,D1,... OUT.bin REPEAT
// INPUT.bin holds raw little-endian float32 values. The first output is
// written to OUT.bin the same way; the median time of REPEAT calls
// (after a warm-up) goes to stdout as JSON.
const fs = require("fs");
const ort = require("onnxruntime-node");

async function main() {
  const [model, name, input, dims, out, repeat] = process.argv.slice(2);
  const shape = dims.split(",").map(Number);
  const buf = fs.readFileSync(input);
  const data = new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: "sequential"});
  const feeds = {[name]: new ort.Tensor("float32", data, shape)};
  let result = await session.run(feeds);
  const times = [];
  for (let i = 0; i < Number(repeat); ++i) {
    const t = process.hrtime.bigint();
    result = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  const first = result[session.outputNames[0]];
  fs.writeFileSync(out, Buffer.from(first.data.buffer, first.data.byteOffset,
                                    first.data.byteLength));
  console.log(JSON.stringify({median_ms: times[Math.floor(times.length / 2)],
                              dims: first.dims}));
}
main().catch((e) => { console.error("ort-run: error: " + e.message); process.exit(1); });
