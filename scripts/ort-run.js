// Runs an ONNX model with onnxruntime-node, the peer tile-quant is compared
// against (python/tq/ort.py drives it):
//   node scripts/ort-run.js SPEC.json
// SPEC: {"model": PATH, "runs": [[{"name", "dtype", "dims", "file"}...]...],
//        "outdir": DIR, "repeat": N, "threads": T}
// Each run is one set of inputs for one session. Each input file holds raw
// little-endian values of `dtype` (float32, int64, int32 or bool). Output
// i of run r is written to DIR/<r>_<i>.bin the same way. stdout is one
// JSON line: the outputs' names, dtypes and dims of each run, and the
// median time of `repeat` calls of the first run after a warm-up (0: no
// timing).
const fs = require("fs");
const path = require("path");
const ort = require("onnxruntime-node");

const ARRAYS = {float32: Float32Array, int64: BigInt64Array,
                int32: Int32Array, bool: Uint8Array};

function tensorOf(input) {
  const buf = fs.readFileSync(input.file);
  const Type = ARRAYS[input.dtype];
  if (!Type) throw new Error(`input '${input.name}': dtype ${input.dtype}`);
  const copy = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length);
  return new ort.Tensor(input.dtype, new Type(copy), input.dims);
}

async function main() {
  const spec = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
  const threads = spec.threads || 1;
  const session = await ort.InferenceSession.create(spec.model, {
    intraOpNumThreads: threads, interOpNumThreads: 1,
    executionMode: "sequential"});
  const runs = [];
  const times = [];
  for (const [r, inputs] of spec.runs.entries()) {
    const feeds = {};
    for (const input of inputs) feeds[input.name] = tensorOf(input);
    let result = await session.run(feeds);
    for (let i = 0; r === 0 && i < (spec.repeat || 0); ++i) {
      const t = process.hrtime.bigint();
      result = await session.run(feeds);
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    runs.push(session.outputNames.map((name, i) => {
      const t = result[name];
      fs.writeFileSync(path.join(spec.outdir, `${r}_${i}.bin`),
                       Buffer.from(t.data.buffer, t.data.byteOffset,
                                   t.data.byteLength));
      return {name, dtype: t.type, dims: t.dims};
    }));
  }
  times.sort((a, b) => a - b);
  const median = times.length ? times[Math.floor(times.length / 2)] : null;
  console.log(JSON.stringify({runs, median_ms: median}));
}
main().catch((e) => {
  console.error("ort-run: error: " + e.message);
  process.exit(1);
});
