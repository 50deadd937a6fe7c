#!/usr/bin/env node
// One model through ONNX Runtime's CPU execution provider (onnxruntime-node),
// for bench/model_bench.py's ORT column.
//
// Usage: NODE_PATH=<dir holding onnxruntime-node> node bench/ort_run.js SPEC
// SPEC is a JSON object: {"model": "model.onnx", "inputs": {"name": "x.npy", ...},
//   "expect": "expected_0.npy", "output": "output_0", "rtol": 1e-3, "atol": 1e-4,
//   "runs": 20, "threads": 2}
// The session: CPU EP, intraOpNumThreads = threads, interOpNumThreads 1,
// sequential execution, graph optimization level "all". One warm-up run,
// whose output is checked against SPEC.expect elementwise
// (|ort - expected| <= atol + rtol * |expected|), then `runs` timed runs.
// Prints one JSON line: {"ok", "median_ms", "min_ms", "max_abs_err", "bad", "error"}.
// Exit codes: 0 ran and matched, 1 mismatch or ORT error, 2 bad SPEC.
'use strict';
const fs = require('fs');

// .npy (format 1.0/2.0/3.0, C order, little-endian) -> {dtype, shape, data}
const NPY_TYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '<i8': ['int64', BigInt64Array],
  '<i4': ['int32', Int32Array], '|b1': ['bool', Uint8Array], '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array],
};

function readNpy(path) {
  const buf = fs.readFileSync(path);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${path}: not a .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + hlen;
  const header = buf.toString('latin1', major === 1 ? 10 : 12, start);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const order = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !order || !shape) throw new Error(`${path}: unreadable header ${header}`);
  if (order[1] === 'True') throw new Error(`${path}: Fortran order`);
  const type = NPY_TYPES[descr[1]];
  if (!type) throw new Error(`${path}: dtype ${descr[1]} not handled`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  const bytes = count * type[1].BYTES_PER_ELEMENT;
  if (buf.length < start + bytes) throw new Error(`${path}: short data`);
  // A copy into a fresh (aligned) ArrayBuffer.
  const data = new type[1](buf.buffer.slice(buf.byteOffset + start, buf.byteOffset + start + bytes));
  return {dtype: type[0], shape: dims, data};
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function compare(got, want, rtol, atol) {
  if (got.data.length !== want.data.length) {
    return {maxErr: Infinity, bad: -1, why: `output has ${got.data.length} elements, expected ${want.data.length}`};
  }
  let maxErr = 0;
  let bad = 0;
  for (let i = 0; i < want.data.length; i++) {
    const g = Number(got.data[i]);
    const w = Number(want.data[i]);
    const err = Math.abs(g - w);
    if (!(err <= atol + rtol * Math.abs(w))) bad++;
    if (!(err <= maxErr)) maxErr = err;  // NaN counts as the worst
  }
  return {maxErr, bad, why: bad ? `${bad} of ${want.data.length} elements beyond tolerance` : ''};
}

async function main() {
  let spec;
  try {
    spec = JSON.parse(process.argv[2]);
  } catch (e) {
    console.log(JSON.stringify({ok: false, error: `bad SPEC: ${e.message}`}));
    return 2;
  }
  const ort = require('onnxruntime-node');
  const session = await ort.InferenceSession.create(spec.model, {
    executionProviders: ['cpu'], intraOpNumThreads: spec.threads, interOpNumThreads: 1,
    executionMode: 'sequential', graphOptimizationLevel: 'all',
  });
  const feeds = {};
  for (const [name, path] of Object.entries(spec.inputs)) {
    const x = readNpy(path);
    feeds[name] = new ort.Tensor(x.dtype, x.data, x.shape);
  }
  const first = await session.run(feeds);  // warm-up, and the check
  const want = readNpy(spec.expect);
  const got = first[spec.output];
  if (!got) throw new Error(`no output named ${spec.output}`);
  const cmp = compare(got, want, spec.rtol, spec.atol);
  if (cmp.bad) {
    console.log(JSON.stringify({ok: false, max_abs_err: cmp.maxErr, bad: cmp.bad, error: cmp.why}));
    return 1;
  }
  const times = [];
  for (let i = 0; i < spec.runs; i++) {
    const s = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - s) / 1e6);
  }
  console.log(JSON.stringify({ok: true, median_ms: times.length ? median(times) : null,
                              min_ms: times.length ? Math.min(...times) : null, max_abs_err: cmp.maxErr, bad: 0}));
  return 0;
}

main().then((rc) => process.exit(rc), (e) => {
  console.log(JSON.stringify({ok: false, error: String(e && e.message ? e.message : e).split('\n')[0]}));
  process.exit(1);
});
