#!/usr/bin/python3
"""bench/fit.py TYPE [BUILD_DIR] — how a named GPU type's two cost-model
factors were chosen (make bench-fit TYPE=K80).

The cost model (ir/cost.c) gives every GPU the same kernel classes and
memory efficiency; a named type (ir/cluster.c's catalog) may scale them
with `kernel_efficiency` (its compute kernels against the shared classes)
and `mem_efficiency` (the fraction of its data-sheet memory bandwidth the
streaming ops reach).  This script grids both over the *fit* rows of
bench/published.py for TYPE (one-GPU rows only: no network in the fit)
and prints every point's errors and the least-squares point.  The
held-out rows play no part: `make bench-published` reports them after.

    KE=a:b:step  ME=a:b:step  the grid (defaults below)
    KEEP=DIR     keep the imported models there (as bench-published)

Figures, never pass/fail; everything here is simulated against the
published (measured) throughputs.
"""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import published as P  # noqa: E402


def grid(spec, default):
    a, b, st = (float(x) for x in (os.environ.get(spec) or default).split(":"))
    n = int(round((b - a) / st)) + 1
    return [round(a + i * st, 6) for i in range(max(n, 1))]


def main():
    if len(sys.argv) < 2:
        P.die("usage: bench/fit.py TYPE [BUILD_DIR]")
    dtype = sys.argv[1]
    build = sys.argv[2] if len(sys.argv) > 2 else "build"
    pcc = os.path.join(P.ROOT, build, "pcc")
    if not os.access(pcc, os.X_OK):
        P.die("build %s first" % pcc)
    rows = [(m, model, b, figs[1]) for m, model, b, _, figs in P.TABLES
            if P.MACHINES[m][0] == dtype and 1 in figs and (m, model, b, 1) in P.FIT]
    if not rows:
        P.die("no fit rows for device type %s (bench/published.py FIT)" % dtype)
    kes, mes = grid("KE", "0.50:0.64:0.01"), grid("ME", "0.40:0.76:0.02")
    print("fit rows (%s, 1 GPU): %s" % (dtype, ", ".join(
        "%s b%d %g img/s" % (model, b, pub) for _, model, b, pub in rows)))
    print("| kernel_efficiency | mem_efficiency | errors | sum of squares |")
    print("|---|---|---|---|")
    best = None
    with tempfile.TemporaryDirectory() as tmp:
        cache = os.environ.get("KEEP") or tmp
        os.makedirs(cache, exist_ok=True)
        girs = [P.import_model(cache, model, b) for _, model, b, _ in rows]
        for ke in kes:
            for me in mes:
                keys = "kernel_efficiency: %g, mem_efficiency: %g" % (ke, me)
                errs = []
                for (m, _, b, pub), gir in zip(rows, girs):
                    t = P.simulate(pcc, gir, P.cluster(tmp, m, 1, keys), tmp)
                    errs.append((b / t - pub) / pub * 100)
                sq = sum(e * e for e in errs)
                print("| %g | %g | %s | %.2f |" % (ke, me, " ".join(
                    "%+.1f %%" % e for e in errs), sq), flush=True)
                if best is None or sq < best[0]:
                    best = (sq, ke, me, errs)
    sq, ke, me, errs = best
    print()
    print("least squares on %d fit rows: kernel_efficiency %g, mem_efficiency %g "
          "(errors %s; simulated)" % (len(rows), ke, me,
                                      ", ".join("%+.1f %%" % e for e in errs)))


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as e:
        P.die(str(e))
