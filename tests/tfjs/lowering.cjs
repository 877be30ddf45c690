/* lowering.cjs — the core-op lowerings of TF.js's ops (docs/backends.md)
 * against TF.js's own kernels for those ops:
 *
 *   node tests/tfjs/lowering.cjs MODEL.json
 *
 * MODEL is tests/tfjs/lowering.gir emitted with --emit=tf-json (generated
 * weights).  Each lowered op's output, run by TensorFlow.js from the
 * model, must equal to 1e-5 what tf.prelu, tf.fused.conv2d,
 * tf.fused.depthwiseConv2d or tf.fused.matMul computes from the same
 * inputs (the model's values of the op's inputs), and must not be
 * constant; the model must indeed hold no Prelu or fused node but those
 * TensorFlow's kernels implement.  Prints "ok ..." or "FAIL ..." lines
 * and exits 1 on any failure. */
'use strict';
const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-cpu');
const { check, load, inputValues, failures } = require('./run.cjs');

async function main() {
  tf.enableProdMode();
  await tf.setBackend('cpu');
  const m = await load(process.argv[2]);
  const x = m.byName.get('x');
  const shape = x.attr.shape.shape.dim.map(d => Number(d.size));
  const feed = { x: tf.tensor(inputValues('x', shape.reduce((a, b) => a * b, 1)), shape) };
  const ev = name => m.model.execute(feed, name);
  const ops = new Map(m.nodes.map(n => [n.name, n.op]));
  const lowered = ['Prelu', 'FusedDepthwiseConv2dNative', '_FusedConv2D', '_FusedMatMul'];
  const left = m.nodes.filter(n => lowered.includes(n.op)).map(n => n.name);
  check(left.join() === 'lin', `only lin, a combination TensorFlow's kernels implement, ` +
        `stays fused (${left.join(', ')})`);
  const cases = [
    ['convp', () => tf.fused.conv2d({x: ev('x'), filter: ev('f'), strides: 1, pad: 'same',
                                     bias: ev('fb'), activation: 'prelu',
                                     preluActivationWeights: ev('alpha')})],
    ['bn', () => tf.tanh(tf.batchNorm(tf.conv2d(ev('x'), ev('f'), 1, 'same'), ev('mu'),
                                      ev('var'), ev('of'), ev('sc'), 0.001))],
    ['dw', () => tf.fused.depthwiseConv2d({x: ev('convp'), filter: ev('dwf'), strides: 2,
                                           pad: 'valid', bias: ev('dwb'), activation: 'relu6'})],
    ['dwl', () => tf.fused.depthwiseConv2d({x: ev('bn'), filter: ev('dwf'), strides: 1,
                                            pad: 'same', bias: ev('dwb'),
                                            activation: 'leakyrelu', leakyreluAlpha: 0.3})],
    ['lin', () => tf.fused.matMul({a: ev('flat'), b: ev('k'), bias: ev('kb')})],
    ['fc', () => tf.fused.matMul({a: ev('flat'), b: ev('k'), bias: ev('kb'),
                                  activation: 'sigmoid'})],
    ['pr', () => tf.prelu(ev('lin'), ev('a2'))],
  ];
  for (const [name, ref] of cases) {
    const want = ref(), got = ev(name);
    const diff = tf.max(tf.abs(tf.sub(want, got))).dataSync()[0];
    const spread = tf.moments(want).variance.dataSync()[0];
    check(want.shape.join() === got.shape.join() && diff <= 1e-5,
          `${name} (${ops.get(name)}): shape [${got.shape}], max |TF.js kernel - lowering| = ` +
          `${diff.toExponential(2)} <= 1e-5`);
    check(spread > 1e-8, `${name}: not constant (variance ${spread.toExponential(2)})`);
  }
  process.exit(failures() ? 1 : 0);
}

main().catch(e => {
  console.log(`FAIL ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});
