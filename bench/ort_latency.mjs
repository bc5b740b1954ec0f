// Times one ONNX model with ONNX Runtime (onnxruntime-node, CPU) and prints the latencies as JSON
// in the shape of `switchyard run --json` (latency_ms.median, .runs, ...).
//
// Usage: node ort_latency.mjs --node-modules DIR --model M.onnx --input NAME=FILE.npy ...
//                             [--threads T] [--warmup W] [--repeat R]
// Session: CPU, graphOptimizationLevel 'all', executionMode 'sequential',
// intraOpNumThreads T, interOpNumThreads 1.

import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';

function parseArgs(argv) {
  const args = { threads: 1, warmup: 5, repeat: 30, inputs: [] };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`flag ${flag} needs a value`);
    if (flag === '--node-modules') args.nodeModules = value;
    else if (flag === '--model') args.model = value;
    else if (flag === '--input') args.inputs.push(value);
    else if (['--threads', '--warmup', '--repeat'].includes(flag)) args[flag.slice(2)] = Number(value);
    else throw new Error(`unknown flag ${flag}`);
  }
  if (!args.nodeModules || !args.model) throw new Error('--node-modules and --model are required');
  return args;
}

// Minimal .npy reader: little-endian float32/int64/int32, C order.
function readNpy(path) {
  const buf = readFileSync(path);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${path}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12);
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${path}: Fortran order unsupported`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').filter((s) => s.trim()).map(Number);
  const types = { '<f4': ['float32', Float32Array], '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array] };
  if (!types[descr]) throw new Error(`${path}: dtype ${descr} unsupported`);
  const [type, Ctor] = types[descr];
  const bytes = buf.subarray(start + headerLen);
  const data = new Ctor(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  return { type, data, shape };
}

function stats(runs) {
  const sorted = [...runs].sort((a, b) => a - b);
  const n = sorted.length;
  const median = n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  return { median, min: sorted[0], max: sorted[n - 1],
           p90: sorted[Math.min(n - 1, Math.ceil(0.9 * n) - 1)],
           mean: runs.reduce((a, b) => a + b, 0) / n, runs };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const require = createRequire(join(resolve(args.nodeModules), 'noop.js'));
  const ort = require('onnxruntime-node');
  const session = await ort.InferenceSession.create(args.model, {
    executionProviders: ['cpu'], graphOptimizationLevel: 'all', executionMode: 'sequential',
    intraOpNumThreads: args.threads, interOpNumThreads: 1,
  });
  const feeds = {};
  for (const spec of args.inputs) {
    const eq = spec.indexOf('=');
    const { type, data, shape } = readNpy(spec.slice(eq + 1));
    feeds[spec.slice(0, eq)] = new ort.Tensor(type, data, shape);
  }
  for (let i = 0; i < args.warmup; i++) await session.run(feeds);
  const runs = [];
  for (let i = 0; i < args.repeat; i++) {
    const t0 = performance.now();
    await session.run(feeds);
    runs.push(performance.now() - t0);
  }
  const version = require('onnxruntime-node/package.json').version;
  console.log(JSON.stringify({ executor: `onnxruntime-node ${version}`, threads: args.threads,
                               warmup: args.warmup, repeat: args.repeat, latency_ms: stats(runs) }));
}

main().catch((err) => { console.error(`ort_latency: error: ${err.message}`); process.exit(1); });
