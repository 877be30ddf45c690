"""Runs the plans of tests/run-tfreal.sh on real TensorFlow in one
process (TensorFlow starts once; one local cluster of 4 tasks serves every
plan): reads lines `GRAPH NAME PBTXT [CEXPECTED]` from the file argv[1];
the first plan of each GRAPH is its one-device reference, run for one step
from the seeded initial values; each other plan must end with every
variable within TOL (relative above 1) of it.  The reference's step must
move some variable by more than 10 x TOL (so the tolerance could tell a wrong
gradient), its checkpoint (save/) restored into the GRAPH's next plan
must give its variables exactly, and where CEXPECTED (the C runtime's NAME SUM L2 lines) is given,
the reference's sums and norms must agree with it within TOL.  Prints `ok
GRAPH/NAME ...` or `FAIL ...` per check and `tfreal: N passed, N failed, 0
skipped`."""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tools'))
import numpy as np  # noqa: E402
import pcctf  # noqa: E402

TOL = 1e-4


def main():
    rows = [line.split() for line in open(sys.argv[1]) if line.strip()]
    plans = []
    for r in rows:
        gd = pcctf.load(r[2])
        plans.append((r[0], r[1], gd, r[3] if len(r) > 3 else None))
    if not plans:
        print('tfreal: 0 passed, 0 failed, 0 skipped')
        return 0
    need = [pcctf.device_map(p[2]) for p in plans]
    cluster = pcctf.Cluster(max(4, max(n[1] for n in need)), max(n[2] for n in need))
    import tensorflow as tf
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        print(('ok ' if ok else 'FAIL ') + what, flush=True)
        if ok:
            passed += 1
        else:
            failed += 1

    ref = {}
    restored = set()
    tmp = tempfile.mkdtemp()
    for graph, name, gd, cexp in plans:
        what = '%s/%s' % (graph, name)
        try:
            pcctf.prepare(gd, cluster.ntasks)
            masks = pcctf.dropout_masks(gd) if graph not in ref else {}
            ckpt = os.path.join(tmp, graph) if graph not in ref else None
            r = pcctf.run_plan(cluster, gd, 1, 0, save=ckpt,
                               fetch=list(masks) + sorted(set(masks.values())))
            back = None
            if graph in ref and graph not in restored:
                # the reference's checkpoint, restored into the graph's
                # first other plan (once per graph: sessions cost time)
                restored.add(graph)
                back = pcctf.run_plan(cluster, gd, 0, 1, restore=os.path.join(tmp, graph))
            if graph not in ref:
                init = pcctf.run_plan(cluster, gd, 0, 0)
        except (pcctf.PlanError, tf.errors.OpError, ValueError) as e:
            check(False, '%s: %s' % (what, pcctf.error_line(e)))
            continue
        if graph not in ref:
            ref[graph] = r.values
            # dropout keeps each element with probability 1 - rate: within
            # 5 standard deviations of the binomial (seeded: deterministic)
            for m in sorted(masks):
                rate = float(r.fetched[masks[m]])
                keep = r.fetched[m]
                frac, n = float(np.mean(keep)), keep.size
                sd = (rate * (1 - rate) / n) ** 0.5
                check(0 < rate < 1 and abs(frac - (1 - rate)) <= 5 * sd,
                      '%s: dropout %s keeps %.3f of %d (rate %g)' % (what, m, frac, n, rate))
            moved = max((pcctf.max_difference(r.values[k], init.values[k])
                         for k in init.values if k in r.values and r.values[k].size), default=None)
            if not any(n.op.startswith(('Apply', 'ResourceApply')) for n in gd.node):
                # an inference graph: its outputs must not be all zeros
                big = max((float(np.max(np.abs(v))) for v in r.values.values() if v.size), default=0)
                check(big > 10 * TOL, '%s: no variables; %d outputs, largest |value| %.3g'
                      % (what, len(r.values), big))
            else:
                check(moved > 10 * TOL and not r.copies_differ,
                      '%s: the step moves a variable by %.3g (> 10 x tolerance)' % (what, moved))
            if cexp:
                want = {}
                for line in open(cexp):
                    f = line.split()
                    if len(f) == 3:
                        want[f[0]] = (float(f[1]), float(f[2]))
                got = {line.split()[0]: tuple(map(float, line.split()[1:]))
                       for line in pcctf.summary_lines(r.values)}
                common = sorted(set(want) & set(got))
                worst = max((abs(a - b) / max(1.0, abs(b)) for k in common
                             for a, b in zip(got[k], want[k])), default=float('inf'))
                check(worst <= TOL and common,
                      '%s: the C runtime agrees on %d variables: %.3g' % (what, len(common), worst))
            continue
        if back is not None:
            vars_ref = {k: v for k, v in ref[graph].items() if k in back.values}
            dr, wr = pcctf.largest_difference(back.values, vars_ref)
            check(dr == 0 and set(back.values) == set(vars_ref),
                  '%s: the reference checkpoint restores into it: difference %.3g (%s)'
                  % (what, dr, wr))
        d, where = pcctf.largest_difference(r.values, ref[graph])
        missing = sorted(set(ref[graph]) - set(r.values))
        check(d <= TOL and not missing and not r.copies_differ,
              '%s: largest difference %.3g (%s)%s%s' % (
                  what, d, where, ' missing ' + ' '.join(missing) if missing else '',
                  ' copies differ: %s' % r.copies_differ if r.copies_differ else ''))
    shutil.rmtree(tmp, ignore_errors=True)
    print('tfreal: %d passed, %d failed, 0 skipped' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
