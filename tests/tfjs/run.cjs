/* run.cjs — runs two TF.js graph models written by `pcc --emit=tf-json`
 * with TensorFlow.js (tfjs-core + tfjs-backend-cpu + tfjs-converter, pinned
 * in package-lock.json) and compares them:
 *
 *   node tests/tfjs/run.cjs SINGLE.json PLAN.json
 *
 * SINGLE is the single-device graph, PLAN a distributed plan of the same
 * graph.  Both get the same input values: each Placeholder of SINGLE gets
 * pseudo-random values seeded by its name; a Placeholder of PLAN with
 * _pcc_origin X and _pcc_shard [begin, size] gets rows begin..begin+size
 * of X's values (docs/plan.md's replicas).  The outputs of SINGLE (nodes
 * with _pcc_output, else the nodes nothing consumes) are compared with
 * PLAN's node of the same name, or with the concatenation, in shard
 * order, of PLAN's replicas of it; the largest difference must be at most
 * 1e-5, and the outputs must not be constant (which zero weights would
 * give).
 *
 * TF.js ignores `device` and reads a control input "^x" as a data input,
 * so control inputs are removed before loading and checked here instead:
 * each names a node on the same device whose _pcc_order (or _priority) is
 * smaller, and the graph with data and control edges is acyclic.
 * Prints one line per check, "ok ..." or "FAIL ...", and exits 1 on any
 * failure. */
'use strict';
const fs = require('fs');
const path = require('path');
const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-cpu');
const { loadGraphModel } = require('@tensorflow/tfjs-converter');

let failures = 0;
function check(ok, what) {
  console.log(`${ok ? 'ok' : 'FAIL'} ${what}`);
  if (!ok) failures++;
}

function attr(node, key) {
  const a = node.attr && node.attr[key];
  if (!a) return undefined;
  if ('s' in a) return Buffer.from(a.s, 'base64').toString();
  if ('i' in a) return Number(a.i);
  if ('b' in a) return a.b;
  if ('f' in a) return a.f;
  if ('list' in a) return (a.list.i || []).map(Number);
  if ('shape' in a) return (a.shape.dim || []).map(d => Number(d.size || 0));
  return undefined;
}

async function load(file) {
  const json = JSON.parse(fs.readFileSync(file, 'utf8'));
  const nodes = json.modelTopology.node;
  const control = [];
  for (const n of nodes) {
    const all = n.input || [];
    n.input = all.filter(s => !s.startsWith('^'));
    for (const s of all)
      if (s.startsWith('^')) control.push([all, n, s.slice(1)]);
  }
  const dir = path.dirname(file);
  const specs = [];
  const bufs = [];
  for (const g of json.weightsManifest) {
    specs.push(...g.weights);
    for (const p of g.paths) bufs.push(fs.readFileSync(path.join(dir, p)));
  }
  const buf = Buffer.concat(bufs);
  const weightData = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  const model = await loadGraphModel(tf.io.fromMemory({
    modelTopology: json.modelTopology, weightSpecs: specs, weightData,
    format: json.format, generatedBy: json.generatedBy, convertedBy: json.convertedBy,
  }));
  const byName = new Map(nodes.map(n => [n.name, n]));
  return { file, json, nodes, byName, control, model };
}

/* Deterministic inputs: mulberry32 seeded by the FNV-1a hash of the name. */
function inputValues(name, size) {
  let h = 0x811c9dc5;
  for (const c of Buffer.from(name)) h = Math.imul(h ^ c, 0x01000193) >>> 0;
  const out = new Float32Array(size);
  for (let i = 0; i < size; i++) {
    h = (h + 0x6d2b79f5) >>> 0;
    let t = h;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  }
  return out;
}

function checkControl(m) {
  const order = n => {
    const o = attr(n, '_pcc_order');
    return o !== undefined ? o : attr(n, '_priority');
  };
  for (const [all, n, src] of m.control) {
    const s = m.byName.get(src);
    const tail = all.slice(all.findIndex(x => x.startsWith('^')));
    check(s !== undefined && s.device === n.device && order(s) < order(n) &&
          tail.every(x => x.startsWith('^')),
          `${path.basename(m.file)}: control input ^${src} of ${n.name}: same device, ` +
          `earlier @order, after the data inputs`);
  }
  /* Kahn over data and control edges */
  const indeg = new Map(m.nodes.map(n => [n.name, 0]));
  const users = new Map(m.nodes.map(n => [n.name, []]));
  for (const n of m.nodes) {
    const ins = n.input.concat(m.control.filter(c => c[1] === n).map(c => c[2]));
    for (const s of ins) {
      const src = s.split(':')[0];
      indeg.set(n.name, indeg.get(n.name) + 1);
      users.get(src).push(n.name);
    }
  }
  const queue = [...indeg].filter(([, d]) => d === 0).map(([k]) => k);
  let seen = 0;
  while (queue.length) {
    const v = queue.pop();
    seen++;
    for (const u of users.get(v)) {
      indeg.set(u, indeg.get(u) - 1);
      if (indeg.get(u) === 0) queue.push(u);
    }
  }
  check(seen === m.nodes.length,
        `${path.basename(m.file)}: acyclic with ${m.control.length} control edges`);
}

async function main() {
  const [singleFile, planFile] = process.argv.slice(2);
  tf.enableProdMode();   /* no console banner */
  await tf.setBackend('cpu');
  const single = await load(singleFile);
  const plan = await load(planFile);
  checkControl(single);
  checkControl(plan);

  /* inputs */
  const values = new Map();
  const feedSingle = {};
  for (const n of single.nodes.filter(n => n.op === 'Placeholder')) {
    const shape = attr(n, 'shape');
    const v = inputValues(n.name, shape.reduce((a, b) => a * b, 1));
    values.set(n.name, { shape, v });
    feedSingle[n.name] = tf.tensor(v, shape, 'float32');
  }
  const feedPlan = {};
  for (const n of plan.nodes.filter(n => n.op === 'Placeholder')) {
    const origin = attr(n, '_pcc_origin') || n.name;
    const full = values.get(origin);
    if (!full) {
      check(false, `${n.name}: no input of the single-device graph named ${origin}`);
      continue;
    }
    let t = tf.tensor(full.v, full.shape, 'float32');
    const shard = attr(n, '_pcc_shard');
    if (shard) {
      const dim = attr(n, '_pcc_batch_dim') || 0;
      const begin = full.shape.map(() => 0);
      const size = full.shape.slice();
      begin[dim] = shard[0];
      size[dim] = shard[1];
      t = tf.slice(t, begin, size);
    }
    feedPlan[n.name] = t;
  }

  /* outputs */
  const consumed = new Set();
  for (const n of single.nodes)
    for (const s of n.input) consumed.add(s.split(':')[0]);
  let outs = single.nodes.filter(n => attr(n, '_pcc_output') === true);
  if (!outs.length) outs = single.nodes.filter(n => !consumed.has(n.name));
  for (const o of outs) {
    const want = single.model.execute(feedSingle, o.name);
    let got;
    if (plan.byName.has(o.name)) {
      got = plan.model.execute(feedPlan, o.name);
    } else {
      const reps = plan.nodes.filter(n => attr(n, '_pcc_origin') === o.name &&
                                          attr(n, '_pcc_shard'));
      reps.sort((a, b) => attr(a, '_pcc_shard')[0] - attr(b, '_pcc_shard')[0]);
      let next = 0;
      for (const r of reps) {
        check(attr(r, '_pcc_shard')[0] === next, `${o.name}: replica ${r.name} starts at row ${next}`);
        next += attr(r, '_pcc_shard')[1];
      }
      if (!reps.length) {
        check(false, `${o.name}: the plan has neither the node nor its replicas`);
        continue;
      }
      const parts = plan.model.execute(feedPlan, reps.map(r => r.name));
      got = tf.concat(Array.isArray(parts) ? parts : [parts], 0);
    }
    const diff = tf.max(tf.abs(tf.sub(want, got))).dataSync()[0];
    const spread = tf.moments(want).variance.dataSync()[0];
    check(want.shape.join() === got.shape.join() && diff <= 1e-5,
          `${o.name}: shape [${want.shape}] = [${got.shape}], max |single - plan| = ${diff.toExponential(2)} <= 1e-5`);
    check(spread > 1e-8, `${o.name}: the output is not constant (variance ${spread.toExponential(2)})`);
  }
  process.exit(failures ? 1 : 0);
}

if (require.main === module) {
  main().catch(e => {
    console.log(`FAIL ${e && e.stack ? e.stack : e}`);
    process.exit(1);
  });
}

module.exports = { check, load, inputValues, failures: () => failures };
