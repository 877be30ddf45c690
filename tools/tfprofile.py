"""tools/tfprofile's body (run through tools/tfpython): measures a gir
graph's op times on one TensorFlow device and writes pcc's --profile YAML;
optionally measures this machine as a cluster of local tasks and writes a
cluster YAML.  docs/cost-model.md ("Profiling with tfprofile") describes
the method:

  * the graph at each batch size: pcc -passes='rebatch<batch=B>,simplify'
    --emit=tf (passes/rebatch.c);
  * one task of a local cluster (tools/pcctf.py), intra- and inter-op
    threads as given (default 1 and 1), --warmup untraced steps, then
    --steps steps with FULL_TRACE; an op's time is the median over the
    steps of its nodes' times in RunMetadata.step_stats, mapped back to
    gir names (_pcc_name, pieces NAME/...);
  * with one inter-op thread a node's time is its occupancy: from its
    start to the next node's start on the device (the kernel plus the
    executor's per-node overhead), so the ops' times add up to the traced
    span; the rest of the step's wall time (Session.run, feeding, fetching)
    is the step overhead (one figure for all batches, pooled over them: it
    hardly depends on the batch), charged to the graph's largest Placeholder
    (inputs start every step; one of them, so that no plan pays it in
    parallel on two devices); --no-overhead leaves both out;
  * an op TensorFlow ran no node of (grappler fused it into a neighbour,
    as MatMul + BiasAdd + Relu into _FusedMatMul) gets 0: its time is in
    the node that absorbed it;
  * the fit t = a + b*batch is pcc's (docs/cost-model.md); this writes the
    times at every batch and pcc fits them.

Cluster (--cluster-out): device throughput from a MatMul (FLOP/s) and an
element-wise add (bytes/s) on one task with the same threads; the link from
transfers of 2^k float32 bytes between two tasks (a reduction on the
receiver, minus the same graph without the transfer), fitted to
t = latency + bytes/bandwidth by least squares on the relative error (TAG
4.1.2, FastT 4); the same for a 2-task CollectiveReduce (t = 2 latency +
bytes/bandwidth), written as the network's collective_bandwidth and
collective_latency (--network both, the default; --network collective:
that fit for everything, --network transfer: the transfers' fit).
Figures are measured; they vary with the machine's load (printed)."""
import argparse
import csv
import io
import math
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pcctf  # noqa: E402
import pccfile  # noqa: E402
from tfrun import positive  # noqa: E402  (tfrun's option checker)


def log(msg):
    print('tfprofile: ' + msg, file=sys.stderr, flush=True)


def median(xs):
    s = sorted(xs)
    n = len(s)
    if not n:
        return 0.0
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def fmt_time(t):
    """Seconds as a YAML time pcc reads: '12.345 us'."""
    return '%.6g us' % (t * 1e6)


def yaml_key(s):
    """A YAML plain scalar when safe, else a double-quoted string."""
    plain = s and all(c.isalnum() or c in '_./-' for c in s) and s[0] not in '-.'
    if plain and s.lower() not in ('true', 'false', 'null', 'yes', 'no', 'on', 'off', '~'):
        return s
    return '"%s"' % s.replace('\\', '\\\\').replace('"', '\\"')


# ---- pcc --------------------------------------------------------------------

def run_pcc(pcc, args):
    r = subprocess.run([pcc] + args, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError('pcc %s: exit %d\n%s' % (' '.join(args), r.returncode, r.stderr.strip()))
    return r


def graph_ops(pcc, gir, cluster):
    """(batch, [(name, type)], {name: output bytes}) of the simplified
    graph, from --print-costs."""
    with tempfile.TemporaryDirectory() as d:
        csvp = os.path.join(d, 'c.csv')
        girp = os.path.join(d, 'g.gir')
        run_pcc(pcc, ['-passes=simplify', gir, '--cluster', cluster,
                      '--print-costs=' + csvp, '-o', girp])
        with open(csvp) as f:
            rows = list(csv.DictReader(f))
        batch = 0
        with open(girp) as f:
            for line in f:
                if line.startswith('graph ') and 'batch =' in line:
                    batch = int(line.split('batch =')[1].split('}')[0].split(',')[0])
                    break
    seen, ops, size = set(), [], {}
    for r in rows:
        if r['op'] not in seen:
            seen.add(r['op'])
            ops.append((r['op'], r['type']))
            size[r['op']] = int(r.get('out_bytes') or 0)
    return batch, ops, size


def overhead_op(ops, size):
    """The Placeholder that carries the step overhead: the largest (the
    first of the largest).  A step pays the overhead once, whichever
    devices its inputs go to; shared among several Placeholders, a plan
    that put them on different devices would pay it in parallel (-O2 put
    ResNet-18's labels on a task of their own for half of it)."""
    best = None
    for n, t in ops:
        if t == 'Placeholder' and (best is None or size.get(n, 0) > size.get(best, 0)):
            best = n
    return best


def emit_at(pcc, gir, cluster, batch, out):
    run_pcc(pcc, ['-passes=rebatch<batch=%d>,simplify' % batch, gir, '--cluster', cluster,
                  '--emit=tf', '-o', out])


def one_device_cluster(path, dtype):
    with open(path, 'w') as f:
        f.write('name: profile\ndevice_types:\n  %s: {flops: 1 TFLOPS, memory: 1 TiB}\n'
                'machines:\n  - {name: m0, type: %s, count: 1}\n' % (yaml_key(dtype), yaml_key(dtype)))


# ---- op times ---------------------------------------------------------------

def gir_name_of(node_names, gd, ops):
    """{TensorFlow node name: gir op name} for the nodes that stand for an
    op: _pcc_name (a mangled name), the name itself, or the longest '/'
    prefix that is an op's node (a lowering's pieces, NAME/conv)."""
    opset = set(ops)
    by_node = {}
    for n in gd.node:
        g = pcctf._attr_s(n, '_pcc_name') or n.name
        if g in opset:
            by_node[n.name] = g
    out = {}
    for name in node_names:
        if name in by_node:
            out[name] = by_node[name]
            continue
        parts = name.split('/')
        for k in range(len(parts) - 1, 0, -1):
            p = '/'.join(parts[:k])
            if p in by_node:
                out[name] = by_node[p]
                break
    return out


def step_times(meta, sequential):
    """{node name: seconds} of one traced step, and the traced span."""
    nodes = []
    for d in meta.step_stats.dev_stats:
        for n in d.node_stats:
            if n.node_name == '_SOURCE':
                continue
            start = n.all_start_nanos or n.all_start_micros * 1000
            t0 = start + (n.op_start_rel_nanos or n.op_start_rel_micros * 1000)
            t1 = start + (n.op_end_rel_nanos or n.op_end_rel_micros * 1000)
            end = start + (n.all_end_rel_nanos or n.all_end_rel_micros * 1000)
            nodes.append((start, t0, t1, end, n.node_name))
    if not nodes:
        return {}, 0.0
    nodes.sort()
    times = {}
    for i, (start, t0, t1, end, name) in enumerate(nodes):
        if sequential:
            nxt = nodes[i + 1][0] if i + 1 < len(nodes) else end
            t = max(nxt - start, t1 - t0)
        else:
            t = t1 - t0
        times[name] = times.get(name, 0) + t * 1e-9
    span = (max(x[3] for x in nodes) - nodes[0][0]) * 1e-9
    return times, span


def profile_batch(cluster, path, ops, a, batch):
    gd = pcctf.load(path)
    pcctf.prepare(gd, 1)
    traces = []
    pcctf.run_plan(cluster, gd, steps=a.warmup, seed=a.seed)
    res = pcctf.run_plan(cluster, gd, steps=a.steps, seed=a.seed, traces=traces)
    names = set()
    for m in traces:
        for d in m.step_stats.dev_stats:
            names.update(n.node_name for n in d.node_stats)
    to_gir = gir_name_of(names, gd, [o[0] for o in ops])
    per_op = {o[0]: [] for o in ops}
    spans = []
    seq = a.inter == 1 and not a.no_overhead
    for m in traces:
        t, span = step_times(m, seq)
        spans.append(span)
        acc = {}
        for node, x in t.items():
            g = to_gir.get(node)
            if g is not None:
                acc[g] = acc.get(g, 0.0) + x
        for g in per_op:
            per_op[g].append(acc.get(g, 0.0))
    ran = {to_gir[n] for n in names if n in to_gir}
    stat = min if a.stat == 'min' else median
    times = {g: stat(v) for g, v in per_op.items()}
    # The median (min) of a sum is not the sum of the medians (mins): load
    # from other processes hits a few random ops of every step, which the
    # per-op statistic drops but the step keeps.  Scale the ops' times to
    # add up to the span's statistic, in proportion to their length (the
    # chance of being preempted grows with it).
    total, span = sum(times.values()), stat(spans)
    if seq and total > 0 and span > 0:
        times = {g: t * span / total for g, t in times.items()}
    # untraced wall times: enough steps to last --wall-window seconds (a
    # burst of load from other processes lasts longer than a few small
    # steps), at least --steps, at most 2000
    n = max(a.steps, min(2000, int(a.wall_window / max(span, 1e-6))))
    wall = pcctf.run_plan(cluster, gd, steps=n, seed=a.seed).times
    return times, ran, span, wall


def fit_untraced(res, overhead):
    """A traced step can take longer than an untraced one (graphs of many
    ops on large tensors: a third longer at the small Transformer's batch
    16).  Where a batch's span exceeds its untraced step ('wall') less the
    step overhead, its ops are scaled to that, as they run untraced; res
    ({batch: {'times', 'span', 'wall'}}) is changed in place.  Returns the
    batches scaled."""
    done = []
    for b in sorted(res):
        r = res[b]
        want = r['wall'] - overhead
        if 0 < want < r['span']:
            r['times'] = {g: t * want / r['span'] for g, t in r['times'].items()}
            r['span'] = want
            done.append(b)
    return done


def fit(points):
    """Least squares t = a + b*batch (pcc's fit), for the summary."""
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    if len(xs) < 2:
        return 0.0, ys[0] / xs[0] if xs else 0.0
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    return my - b * mx, b


def rel_fit(points):
    """t = a + b*x minimising the relative error (weights 1/t^2), so that
    small transfers, whose time is mostly latency, weigh as much as large
    ones (sizes span four orders of magnitude)."""
    pts = [(x, y) for x, y in points if y > 0]
    if len(pts) < 2:
        return fit(points)
    w = [1.0 / (y * y) for _, y in pts]
    sw = sum(w)
    mx = sum(wi * x for wi, (x, _) in zip(w, pts)) / sw
    my = sum(wi * y for wi, (_, y) in zip(w, pts)) / sw
    sxx = sum(wi * (x - mx) ** 2 for wi, (x, _) in zip(w, pts))
    b = sum(wi * (x - mx) * (y - my) for wi, (x, y) in zip(w, pts)) / sxx if sxx else 0.0
    return my - b * mx, b


def write_profile(out, a, ops, batches, res, model):
    lines = ['# Measured by tools/tfprofile (TensorFlow %s) on %s: %s' % (
        pcctf._tf().__version__, os.uname().nodename, model),
        '# device type %s: one task, %d intra-op and %d inter-op thread(s); '
        '%s of %d traced steps' % (a.type, a.intra, a.inter, a.stat, a.steps),
        '# load average at the start: %s' % a.load]
    for t, q in sorted(a.quotas.items()):
        if t == 0:
            lines.append('# device type %s: a CPU quota of %d us per %d us (%.3g CPU)' % (
                a.type, q.quota_us, q.period_us, q.fraction))
    for b in batches:
        r = res[b]
        lines.append('# batch %d: traced span %s%s, step wall time %s (%s)' % (
            b, fmt_time(r['traced']), ' (ops scaled to %s: the untraced step less the '
            'step overhead)' % fmt_time(r['span']) if r['span'] < r['traced'] else '',
            fmt_time(r['wall']), a.stat))
    if not a.no_overhead:
        lines.append('# step overhead (%s of wall - span over all steps): %s, on the '
                     'largest Placeholder (%s)' % (a.stat, fmt_time(a.overhead),
                                                   getattr(a, 'overhead_op', None) or 'none'))
    lines.append('batch_sizes: [%s]' % ', '.join(str(b) for b in batches))
    lines.append('ops:')
    for name, typ in ops:
        pts = [res[b]['times'][name] for b in batches]
        note = ''
        if name == getattr(a, 'overhead_op', None) and not a.no_overhead:
            note = '  # fed: the step overhead (Session.run, feeds, fetches)'
        elif all(name not in res[b]['ran'] for b in batches):
            note = '  # no node of its own ran (fused into another, or nothing to run)'
        lines.append('  %s:%s' % (yaml_key(name), note))
        lines.append('    %s: [%s]' % (yaml_key(a.type), ', '.join(fmt_time(t) for t in pts)))
    if a.merge:
        lines = merge_profile(a.merge, lines)
    text = '\n'.join(lines) + '\n'
    if out in (None, '-'):
        sys.stdout.write(text)
    else:
        pccfile.write_text(out, text)   # never half a profile


def _blocks(lines):
    """A profile tfprofile wrote: (comments, batch_sizes line, {op key:
    [its lines]}, [op keys in order])."""
    head, batches, ops, order, cur = [], None, {}, [], None
    for x in lines:
        if x.startswith('batch_sizes:'):
            batches = x
        elif x.startswith('#') or x == 'ops:' or not x.strip():
            if x.startswith('#'):
                head.append(x)
        elif x.startswith('    ') and cur is not None:
            ops[cur].append(x)
        elif x.startswith('  ') and not x.startswith('    '):
            cur = x.strip().split(':')[0] if not x.strip().startswith('"') else \
                x.strip()[:x.strip().index('":') + 1]
            ops[cur] = [x]
            order.append(cur)
        else:
            raise ValueError('not a profile tfprofile wrote: %r' % x)
    return head, batches, ops, order


def merge_profile(path, lines):
    """The lines of the profile at path (tfprofile's, other device types)
    with this run's entries added: the same model and batch sizes."""
    with open(path) as f:
        old = f.read().split('\n')
    h0, b0, ops0, order0 = _blocks(old)
    h1, b1, ops1, order1 = _blocks(lines)
    if b0 != b1:
        raise ValueError('its %s, this run\'s %s' % (b0, b1))
    if set(order0) != set(order1):
        raise ValueError('another graph (%d ops, this one %d)' % (len(order0), len(order1)))
    out = h0 + h1 + [b1, 'ops:']
    for k in order0:
        out += ops0[k] + ops1[k][1:]
    return out


# ---- this machine as a cluster ------------------------------------------------

def traced_run(sess, fetch):
    """One run of fetch with FULL_TRACE: its RunMetadata."""
    tf = pcctf._tf()
    meta = tf.compat.v1.RunMetadata()
    sess.run(fetch, options=tf.compat.v1.RunOptions(
        trace_level=tf.compat.v1.RunOptions.FULL_TRACE), run_metadata=meta)
    return meta


def kernel_time(sess, fetch, node, n):
    """Median over n traced runs of the kernel time of node (the step's
    own overhead left out)."""
    ts = []
    for _ in range(n):
        meta = traced_run(sess, fetch)
        t = 0
        for d in meta.step_stats.dev_stats:
            for x in d.node_stats:
                if x.node_name == node:
                    t += (x.op_end_rel_nanos - x.op_start_rel_nanos) or \
                        (x.op_end_rel_micros - x.op_start_rel_micros) * 1000
        ts.append(t * 1e-9)
    return median(ts)


CHAIN = 64   # MatMuls (and CHAIN/4 adds) timed together on a throttled task
SEND_CHAIN = 24   # MatMuls queued on the sender in the send measurement
RECV_CHAIN = 4    # and on the receiver after the tensor (short: one quota period)
SEND_IDLE = 0.5   # more of the receiver's chain than this after the sender's: sends: idle


def traced_span(sess, fetch, n):
    """Median over n traced runs of the span of the run's nodes."""
    return median([step_times(traced_run(sess, fetch), False)[1] for _ in range(n)])
    return median(ts)


def coll_chain(size):
    """How many CollectiveReduces of size bytes are timed in a row: 16
    up to 1 MiB; above it as many as move 16 MiB in all, at least 2 (4
    of 4 MiB, 2 of 16 MiB), so that the largest sizes take seconds, not
    minutes, on a throttled task."""
    return max(2, min(16, (16 << 20) // max(size, 1)))


def wall_time(sess, fetch, n):
    """Median wall time of n runs of fetch."""
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        sess.run(fetch)
        ts.append(time.perf_counter() - t0)
    return median(ts)


def paired_difference(sess, a, b, n):
    """Median of wall(a) - wall(b) over n back-to-back pairs."""
    ds = []
    for _ in range(n):
        t0 = time.perf_counter()
        sess.run(a)
        t1 = time.perf_counter()
        sess.run(b)
        t2 = time.perf_counter()
        ds.append((t1 - t0) - (t2 - t1))
    return median(ds)


def measure_cluster(cluster, a):
    tf = pcctf._tf()
    dev = ['/job:worker/replica:0/task:%d/device:CPU:0' % i for i in range(cluster.ntasks)]
    res = {}
    g = tf.Graph()
    # the device throughput of each type on its first task
    firsts = {}
    for i in range(cluster.ntasks):
        firsts.setdefault(a.task_types[i], i)
    speed = {}
    with g.as_default():
        n = a.matmul
        m = a.bw_elems
        for typ, i in firsts.items():
            with tf.device(dev[i]):
                x = tf.Variable(tf.random.uniform([n, n], seed=1), name='mm_x%d' % i)
                mm_op = tf.linalg.matmul(x, x)
                u = tf.Variable(tf.random.uniform([m], seed=2), name='bw_u%d' % i)
                v = tf.Variable(tf.random.uniform([m], seed=3), name='bw_v%d' % i)
                add_op = u + v
                speed[typ] = (tf.reduce_sum(mm_op), mm_op.op.name,
                              tf.reduce_sum(add_op), add_op.op.name)
                if i in cluster.quotas:
                    # one kernel fits in a quota's period and runs at full
                    # speed; a chain of them lasting many periods runs at
                    # the quota's pace: its traced span per link
                    y, w = x, x
                    for k in range(CHAIN):
                        y = tf.linalg.matmul(y, w) * (1.0 / n)
                    z = u
                    for k in range(CHAIN // 4):
                        z = z + v
                    speed[typ] = (tf.reduce_sum(y), tf.reduce_sum(z))
        sizes = [1024 * 2 ** k for k in range(a.max_size_log2 - 9)]
        xfer, local = {}, {}
        for s in sizes:
            with tf.device(dev[0]):
                w = tf.Variable(tf.random.uniform([s // 4], seed=4), name='x%d' % s)
                local[s] = tf.reduce_sum(tf.identity(w))
            with tf.device(dev[1]):
                xfer[s] = tf.reduce_sum(tf.identity(w))
                if a.network == 'both':
                    # the baseline on task 1 itself: its step pays the
                    # call to task 1 too, so the difference is the
                    # transfer alone (the call is the dispatch latency)
                    w1 = tf.Variable(tf.random.uniform([s // 4], seed=4), name='y%d' % s)
                    local[s] = tf.reduce_sum(tf.identity(w1))
        # a step's call to another task: one scalar op on task 0, on task 1
        disp = []
        for i in (0, 1):
            with tf.device(dev[i]):
                disp.append(tf.random.uniform([]) + 1.0)
        # a ring AllReduce of 2 tasks: CollectiveReduce as pcc emits it,
        # coll_chain(sz) of them one after another (each reduces the
        # last one's result), as a data-parallel plan runs its gradients'
        # AllReduces: a throttled task in such a run has used its quota,
        # where one collective alone finds it refilled (the chain is
        # 1.26x slower per 1 KB collective, 1.16x at 4 MB there; about
        # the same on tasks without a quota)
        coll, cloc = {}, {}
        csizes = [1024 * 4 ** k for k in range(max(1, (a.max_size_log2 - 8) // 2))]
        key = 0
        for sz in csizes:
            w = [None, None]
            for i in (0, 1):
                with tf.device(dev[i]):
                    w[i] = tf.Variable(tf.random.uniform([sz // 4], seed=5 + i), name='c%d_%d' % (sz, i))
            x = [tf.identity(w[0]), tf.identity(w[1])]
            for _ in range(coll_chain(sz)):
                key += 1
                for i in (0, 1):
                    with tf.device(dev[i]):
                        x[i] = tf.raw_ops.CollectiveReduce(
                            input=x[i], group_size=2, group_key=1, instance_key=key,
                            merge_op='Add', final_op='Id', subdiv_offsets=[0])
            outs, locs = [], []
            for i in (0, 1):
                with tf.device(dev[i]):
                    outs.append(tf.reduce_sum(x[i]))
                    locs.append(tf.reduce_sum(tf.identity(w[i])))
            coll[sz], cloc[sz] = outs, locs
        # a send while the sender has work queued: task 0 computes m0,
        # then a small slice of it goes to task 1, which needs it before
        # a short chain of its own, while task 0 goes on with a long
        # chain after m0.  A send that leaves at once overlaps the short
        # chain with the long one (the step takes the long one); one that
        # waits for task 0's executor to idle runs the short chain after
        # it.  The sender is task 0, the task of the first type; the
        # receiver's chain is short enough to run within one period of a
        # throttled task's quota, so that it takes as long after the wait
        # as alone.
        def chain(x, w, k):
            for _ in range(k):
                x = tf.linalg.matmul(x, w) * (1.0 / n)
            return x
        with tf.device(dev[0]):
            ws = tf.Variable(tf.random.uniform([n, n], seed=6), name='s_ws')
            m0 = tf.linalg.matmul(ws, ws) * (1.0 / n)
            sent = m0[0:1, 0:4] + 1.0
            queued = tf.reduce_sum(chain(m0, ws, SEND_CHAIN))
        with tf.device(dev[1]):
            wr = tf.Variable(tf.random.uniform([n, n], seed=7), name='s_wr')
            after = tf.reduce_sum(chain(wr + tf.reduce_sum(sent), wr, RECV_CHAIN))
            alone1 = tf.reduce_sum(chain(wr, wr, RECV_CHAIN))
        with tf.device(dev[0]):
            alone0 = tf.reduce_sum(chain(m0, ws, SEND_CHAIN))
        sends = ((after, queued), alone0, alone1)
        init = tf.compat.v1.global_variables_initializer()
    with tf.compat.v1.Session(cluster.target, graph=g, config=cluster.config) as s:
        s.run(init)
        res['types'] = {}
        for typ, f in speed.items():
            for x in f[::2] if len(f) == 4 else f:
                s.run(x)
            if len(f) == 4:
                # kernel times from the trace: MatMul 2n^3 FLOPs; the add
                # reads two vectors and writes one
                t_mm = kernel_time(s, f[0], f[1], a.repeat)
                t_add = kernel_time(s, f[2], f[3], a.repeat)
            else:
                t_mm = traced_span(s, f[0], a.repeat) / CHAIN
                t_add = traced_span(s, f[1], a.repeat) / (CHAIN // 4)
            res['types'][typ] = (2.0 * n ** 3 / max(t_mm, 1e-9), 3 * 4.0 * m / max(t_add, 1e-9))
        pts = []
        for sz in sizes:
            s.run(xfer[sz])
            s.run(local[sz])
            pts.append((sz, paired_difference(s, xfer[sz], local[sz], a.repeat)))
        cpts = []
        for sz in csizes:
            s.run(coll[sz])
            s.run(cloc[sz])
            cpts.append((sz, paired_difference(s, coll[sz], cloc[sz], a.repeat) / coll_chain(sz)))
        for x in disp:
            s.run(x)
        # there and back: half of it each way
        res['dispatch'] = max(paired_difference(s, disp[1], disp[0], max(a.repeat, 51)), 0.0) / 2
        for x in sends:
            s.run(x)
        both, t0, t1 = (wall_time(s, x, a.repeat) for x in sends)
        # the receiver's chain after the sender's: 1 when the send waited
        # for all of task 0's queued work, 0 when it left at once
        res['send_wait'] = (both - max(t0, t1)) / max(min(t0, t1), 1e-9)
        res['send_times'] = (both, t0, t1)
    res['flops'], res['mem_bw'] = res['types'][a.task_types[0]]
    lat, inv_bw = rel_fit(pts)
    if inv_bw <= 0:
        inv_bw = 1e-12
    res['latency'] = max(lat, 0.0)
    res['bandwidth'] = 1.0 / inv_bw
    res['points'] = pts
    # 2 tasks: t = 2 (lat + (B/2)/bw) = 2 lat + B/bw (docs/cost-model.md)
    clat2, cinv = rel_fit(cpts)
    res['coll_latency'] = max(clat2 / 2, 0.0)
    res['coll_bandwidth'] = 1.0 / cinv if cinv > 0 else 1e12
    res['coll_points'] = cpts
    return res


def write_cluster(out, a, m):
    mem = 0
    try:
        with open('/proc/meminfo') as f:
            for line in f:
                if line.startswith('MemTotal:'):
                    mem = int(line.split()[1]) * 1024
    except OSError:
        pass
    mem = mem // a.tasks if mem else 2 ** 30
    lines = [
        '# This machine as a cluster of %d local TensorFlow tasks, measured by' % a.tasks,
        '# tools/tfprofile (TensorFlow %s, %d intra-op / %d inter-op thread(s) per task)' % (
            pcctf._tf().__version__, a.intra, a.inter),
        '# on %s; load average at the start: %s.' % (os.uname().nodename, a.load),
        '# flops: a %dx%d float32 MatMul; mem_bw: a %d-element add%s;' % (
            a.matmul, a.matmul, a.bw_elems,
            ' (on the first task of each type)' if len(m['types']) > 1 else ''),
        '# on a throttled task the traced span of a chain of %d MatMuls and %d adds'
        % (CHAIN, CHAIN // 4) if a.quotas else '# (kernel times from the trace)',
    ]
    for t, q in sorted(a.quotas.items()):
        lines.append('# task %d (%s): a CPU quota of %d us per %d us (%.3g CPU)' % (
            t, a.task_types[t], q.quota_us, q.period_us, q.fraction))
    lines += [
        '# network: t = latency + bytes/bandwidth fitted to transfers between task 0 and 1%s:'
        % (' (less the same reduction on task 1: the call to task 1 is the dispatch latency)'
           if a.network == 'both' else ''),
    ]
    for sz, t in m['points']:
        lines.append('#   %10d B  %s' % (sz, fmt_time(t)))
    lines.append('# a 2-task CollectiveReduce (ring: t = 2 latency + bytes/bandwidth), each timed '
                 'in a chain of them (%d, fewer above 1 MiB), of:' % coll_chain(0))
    for sz, t in m['coll_points']:
        lines.append('#   %10d B  %s' % (sz, fmt_time(t)))
    lines.append('#   fitted: bandwidth %.6g MB/s, latency %.6g us per ring step%s' % (
        m['coll_bandwidth'] / 1e6, m['coll_latency'] * 1e6,
        {'collective': ' (used below: --network collective)',
         'both': " (used below: the network's collective_bandwidth and collective_latency)"}
        .get(a.network, '')))
    lines.append('# dispatch: a scalar op on task 1 less the same on task 0, halved '
                 '(a step\'s call there and back): %s%s' % (
                     fmt_time(m['dispatch']),
                     " (used below: the network's dispatch_latency)" if a.network == 'both' else ''))
    lines += [
        'name: %s' % yaml_key(a.cluster_name),
        'device_types:',
    ]
    # collectives: blocking -- a CPU task's collectives run on the same
    # cores as its kernels (there is no copy engine to overlap them with:
    # a CollectiveReduce's copies, reductions and RPCs take CPU time), so
    # a task's compute waits while one runs (docs/cluster.md)
    lines.append('# collectives: blocking: a CPU task reduces on the cores that run its ops')
    both, t0, t1 = m['send_times']
    waited = int(round(100 * m['send_wait']))
    idle = waited > 100 * SEND_IDLE
    lines.append('# sends: a tensor sent from task 0 while it has %d MatMuls queued, to task 1 '
                 'that needs it before %d of its own: %s (the chains alone: %s and %s), so '
                 '%d %% of task 1\'s chain came after task 0\'s: %s' % (
                     SEND_CHAIN, RECV_CHAIN, fmt_time(both), fmt_time(t0), fmt_time(t1),
                     waited,
                     'sends: idle (it leaves when the task has nothing ready to run)' if idle
                     else 'sends leave at once (the default)'))
    for typ, (flops, bw) in m['types'].items():
        lines.append('  %s: {flops: %.6g GFLOPS, memory: %d B, mem_bw: %.6g GB/s, '
                     'collectives: blocking%s}' % (yaml_key(typ), flops / 1e9, mem, bw / 1e9,
                                                   ', sends: idle' if idle else ''))
    lines.append('machines:')
    for i in range(a.tasks):
        lines.append('  - {name: t%d, type: %s, count: 1}' % (i, yaml_key(a.task_types[i])))
    key = 'coll_' if a.network == 'collective' else ''
    coll = ''
    if a.network == 'both':
        coll = (', collective_bandwidth: %.6g MB/s, collective_latency: %.6g us, '
                'dispatch_latency: %.6g us' % (m['coll_bandwidth'] / 1e6,
                                               m['coll_latency'] * 1e6, m['dispatch'] * 1e6))
    lines.append('network: {bandwidth: %.6g MB/s, latency: %.6g us%s}' % (
        m[key + 'bandwidth'] / 1e6, m[key + 'latency'] * 1e6, coll))
    pccfile.write_text(out, '\n'.join(lines) + '\n')


# ---- main -------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(
        prog='tfprofile', description="Measures a gir graph's op times on one TensorFlow "
        "device at several batch sizes and writes pcc's --profile YAML; with "
        "--cluster-out also measures this machine as a cluster of local tasks.")
    ap.add_argument('model', nargs='?', help='the training graph (.gir)')
    ap.add_argument('-t', '--type', default='CPU', help='device type name (CPU)')
    ap.add_argument('-o', '--output', help='profile YAML (default: stdout)')
    ap.add_argument('--batches', help='batch sizes, comma-separated (default: B/2, B, 2B '
                    'for the graph\'s batch B)')
    ap.add_argument('--steps', type=positive, default=15, help='traced steps per batch (15)')
    ap.add_argument('--warmup', type=positive, default=3, help='untraced steps first (3)')
    ap.add_argument('--intra', type=positive, default=1, help='intra-op threads (1)')
    ap.add_argument('--inter', type=positive, default=1, help='inter-op threads (1)')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--stat', choices=('median', 'min'), default='median',
                    help="an op's time over the steps: median (default) or min (the "
                    "machine without the load of other processes)")
    ap.add_argument('--pcc', default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                 '..', 'pcc'), help='the pcc binary (./pcc)')
    ap.add_argument('--wall-window', type=float, default=1.0, metavar='S',
                    help='untraced steps for the step overhead: about S seconds of them (1)')
    ap.add_argument('--no-overhead', action='store_true',
                    help='kernel times only: no executor gaps, no step overhead on the Placeholders')
    ap.add_argument('--cluster-out', metavar='FILE', help='also measure this machine as a '
                    'cluster of --tasks local tasks and write its YAML')
    ap.add_argument('--tasks', type=positive, default=2, help='tasks of that cluster (2)')
    ap.add_argument('--network', choices=('both', 'transfer', 'collective'), default='both',
                    help="the cluster's network from point-to-point transfers with a "
                    "collective's ring step from 2-task CollectiveReduces (both, the default), "
                    "or one of the two for everything")
    ap.add_argument('--cluster-name', default='local', help='its name (local)')
    ap.add_argument('--matmul', type=positive, default=256, help='MatMul size for flops (256)')
    ap.add_argument('--bw-elems', type=positive, default=1 << 23,
                    help='vector length for mem_bw (2^23)')
    ap.add_argument('--max-size-log2', type=int, default=24,
                    help='largest transfer: 2^N bytes (24 = 16 MiB; from 1 KiB)')
    ap.add_argument('--repeat', type=positive, default=21, help='runs per measured point (21)')
    ap.add_argument('--task-type', action='append', metavar='TASK=TYPE', default=[],
                    help="the device type of task TASK in the cluster YAML (default: -t's); "
                    "each type's throughput is measured on its first task (repeatable)")
    ap.add_argument('--process-per-task', action='store_true',
                    help='each task a process of its own (default: all in this one)')
    ap.add_argument('--throttle', action='append', metavar='TASK=FRACTION',
                    help="run task TASK in a cgroup with a CPU quota of FRACTION of one CPU "
                    "(as tools/tfrun; a model is profiled on task 0; repeatable)")
    ap.add_argument('--merge', metavar='PROFILE.yaml',
                    help="a profile tfprofile wrote for other device types (same model and "
                    "batch sizes): the output holds its entries and this run's")
    a = ap.parse_args()
    if not a.model and not a.cluster_out:
        ap.error('give a model to profile, --cluster-out, or both')
    if a.cluster_out and a.tasks < 2:
        ap.error('--cluster-out needs --tasks of at least 2')
    if a.max_size_log2 < 10 or a.max_size_log2 > 30:
        ap.error('--max-size-log2 must be in 10..30')
    a.load = ' '.join(open('/proc/loadavg').read().split()[:3]) if os.path.exists('/proc/loadavg') else '?'
    a.pcc = os.path.normpath(a.pcc)
    ntasks = max(a.tasks if a.cluster_out else 1, 1)
    a.task_types = [a.type] * ntasks
    for it in a.task_type:
        task, eq, typ = it.partition('=')
        if not eq or not task.isdigit() or int(task) >= ntasks or not typ:
            ap.error("--task-type '%s': want TASK=TYPE with TASK in 0 .. %d" % (it, ntasks - 1))
        a.task_types[int(task)] = typ
    if a.merge and not a.model:
        ap.error('--merge needs a model to profile')
    try:
        throttle = pcctf.parse_throttle(a.throttle, ntasks)
        cluster = pcctf.Cluster(ntasks, 1, a.intra, a.inter, a.process_per_task, throttle)
    except pcctf.QuotaError as e:
        log('error: %s' % e)
        return 4
    except pcctf.PlanError as e:
        log('error: %s' % e)
        return 2
    a.quotas = cluster.quotas
    for t, q in sorted(a.quotas.items()):
        log('task %d: CPU quota %d us per %d us (%.3g CPU), cgroup %s'
            % (t, q.quota_us, q.period_us, q.fraction, q.path))
    tf = pcctf._tf()
    if a.model:
        with tempfile.TemporaryDirectory() as d:
            cl = os.path.join(d, 'one.yaml')
            one_device_cluster(cl, a.type)
            try:
                batch, ops, size = graph_ops(a.pcc, a.model, cl)
                if a.batches:
                    batches = sorted({int(x) for x in a.batches.split(',')})
                    if not batches or batches[0] < 1:
                        ap.error('--batches: positive integers')
                elif batch > 0:
                    batches = sorted({max(1, batch // 2), batch, 2 * batch})
                else:
                    ap.error('the graph has no batch; give --batches')
                res = {}
                for b in batches:
                    p = os.path.join(d, 'b%d.pbtxt' % b)
                    emit_at(a.pcc, a.model, cl, b, p)
                    times, ran, span, walls = profile_batch(cluster, p, ops, a, b)
                    stat = min if a.stat == 'min' else median
                    wall = stat(walls)
                    res[b] = {'times': times, 'ran': ran, 'span': span, 'traced': span,
                              'wall': wall, 'walls': walls}
                    log('batch %d: %d ops, traced span %s, step %s (%s)' % (
                        b, len(ops), fmt_time(span), fmt_time(wall), a.stat))
                if not a.no_overhead:
                    # One step overhead for all batches: it hardly depends
                    # on the batch, and a burst of load during one batch
                    # must not tilt the Placeholders' fit; the median
                    # (or min) of every untraced step's wall time less its
                    # batch's traced span, pooled over the batches.
                    stat = min if a.stat == 'min' else median
                    a.overhead = max(stat([w - r['span'] for r in res.values()
                                           for w in r['walls']]), 0.0)
                    if a.inter == 1:
                        for b in fit_untraced(res, a.overhead):
                            log('batch %d: ops scaled to the untraced step less the overhead: %s'
                                % (b, fmt_time(res[b]['span'])))
                    ph = overhead_op(ops, size)
                    a.overhead_op = ph
                    for r in res.values():
                        if ph is not None:
                            r['times'][ph] = r['times'].get(ph, 0.0) + a.overhead
            except RuntimeError as e:
                log('error: %s' % e)
                return 1
            except (pcctf.PlanError, tf.errors.OpError) as e:
                msg = str(e).split('Original stack trace')[0]
                lines = [x.strip() for x in msg.split('\n') if x.strip() and
                         not x.startswith(('Graph execution error', 'Detected at', '\t'))]
                log('error: TensorFlow: %s' % ' | '.join(lines[-2:]))
                return 3
        try:
            write_profile(a.output, a, ops, batches, res, os.path.basename(a.model))
        except ValueError as e:
            log('error: --merge %s: %s' % (a.merge, e))
            return 1
    if a.cluster_out:
        m = measure_cluster(cluster, a)
        write_cluster(a.cluster_out, a, m)
        log('cluster: %.3g GFLOP/s, %.3g GB/s memory, link %.3g MB/s + %.3g us, '
            'collective step %.3g MB/s + %.3g us' % (
                m['flops'] / 1e9, m['mem_bw'] / 1e9, m['bandwidth'] / 1e6, m['latency'] * 1e6,
                m['coll_bandwidth'] / 1e6, m['coll_latency'] * 1e6))
        for typ, (flops, bw) in list(m['types'].items())[1:]:
            log('cluster: device type %s: %.3g GFLOP/s, %.3g GB/s memory' % (typ, flops / 1e9, bw / 1e9))
    return 0


if __name__ == '__main__':
    sys.exit(main())
