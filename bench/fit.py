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

    bench/fit.py TYPE [BUILD_DIR] --gemm CSV PRECISION
fits the type's third factor, `gemm_efficiency` (matrix products alone),
on measured GEMM times instead (bench/gpu_measure.py --gemm; the H100's
are bench/measured-h100-gemm.csv): each row becomes a MatMul of its shape
in one graph, pcc's --print-costs prices them on TYPE, and the grid GE
(default 0.40:3.00:0.02) is searched for the least sum of squared log
errors.  Rows measured under four of the type's per-op overheads are left
out: the host's launch, not the kernel, decides those.

Figures, never pass/fail; everything here is simulated against the
published (measured) throughputs.
"""

import math
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


def fit_gemm(pcc, dtype, csv_path, prec):
    """Least-squares gemm_efficiency of dtype on the CSV's prec rows."""
    with open(csv_path) as f:
        lines = [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]
    head = lines[0].split(",")
    rows = [dict(zip(head, ln.split(","))) for ln in lines[1:]]
    rows = [(int(r["m"]), int(r["n"]), int(r["k"]), float(r["seconds"]))
            for r in rows if r["precision"] == prec]
    if not rows:
        P.die("no %s rows in %s" % (prec, csv_path))
    with tempfile.TemporaryDirectory() as tmp:
        gir = os.path.join(tmp, "gemm.gir")
        with open(gir, "w") as f:
            f.write("gir 1\ngraph gemm {\n")
            for i, (m, n, k, _) in enumerate(rows):
                f.write("  %%a%d = Placeholder() : f32[%d,%d]\n"
                        "  %%b%d = Placeholder() : f32[%d,%d]\n"
                        "  %%c%d = MatMul(%%a%d, %%b%d) : f32[%d,%d]\n"
                        % (i, m, k, i, k, n, i, i, i, m, n))
            f.write("}\n")

        def costs(ge):
            yaml = os.path.join(tmp, "c.yaml")
            with open(yaml, "w") as f:
                f.write("device_types:\n  %s: {gemm_efficiency: %g}\n"
                        "machines:\n  - {name: m0, type: %s}\n"
                        % (dtype, ge, dtype))
            out = subprocess.run([pcc, "-passes=", "--cluster", yaml, gir,
                                  "--print-costs=-", "-o", os.devnull],
                                 capture_output=True, text=True, check=True)
            t = {}
            for ln in out.stdout.splitlines()[1:]:
                f = ln.split(",")
                if f[1] == "MatMul":
                    t[int(f[0][1:])] = float(f[3])
            return [t[i] for i in range(len(rows))]

        # About the per-op overhead: the cheapest row with its arithmetic
        # made free (what is left is the overhead and its memory traffic).
        ovh = min(costs(1e9))
        use = [i for i, r in enumerate(rows) if r[3] >= 4 * ovh]
        print("GEMM rows (%s, %s): %d, %d of them over 4 x %.1f us"
              % (dtype, prec, len(rows), len(use), ovh * 1e6))
        best = None
        for ge in grid("GE", "0.40:3.00:0.02"):
            t = costs(ge)
            sq = sum(math.log(t[i] / rows[i][3]) ** 2 for i in use)
            if best is None or sq < best[0]:
                best = (sq, ge, t)
        sq, ge, t = best
        print("| m | n | k | measured | pcc (simulated) | error | in fit |")
        print("|---|---|---|---|---|---|---|")
        for i, (m, n, k, meas) in enumerate(rows):
            print("| %d | %d | %d | %.1f us | %.1f us | %+.1f %% | %s |"
                  % (m, n, k, meas * 1e6, t[i] * 1e6,
                     (t[i] - meas) / meas * 100, "yes" if i in use else "no"))
        print()
        print("least squares on %d GEMM rows: gemm_efficiency %g (simulated "
              "against measured)" % (len(use), ge))


def main():
    if "--gemm" in sys.argv:
        i = sys.argv.index("--gemm")
        if len(sys.argv) < i + 3 or i < 2:
            P.die("usage: bench/fit.py TYPE [BUILD_DIR] --gemm CSV PRECISION")
        dtype, csv_path, prec = sys.argv[1], sys.argv[i + 1], sys.argv[i + 2]
        build = sys.argv[2] if i > 2 else "build"
        pcc = os.path.join(P.ROOT, build, "pcc")
        if not os.access(pcc, os.X_OK):
            P.die("build %s first" % pcc)
        fit_gemm(pcc, dtype, csv_path, prec)
        return
    if len(sys.argv) < 2:
        P.die("usage: bench/fit.py TYPE [BUILD_DIR]")
    dtype = sys.argv[1]
    build = sys.argv[2] if len(sys.argv) > 2 else "build"
    pcc = os.path.join(P.ROOT, build, "pcc")
    if not os.access(pcc, os.X_OK):
        P.die("build %s first" % pcc)
    rows = [(m, model, b, figs[1]) for m, model, b, _, figs in P.TABLES
            if P.MACHINES[m][0] == dtype and 1 in figs and (m, model, b, 1) in P.FIT
            and (m, model, b, 1) != P.LAUNCH_FIT]
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
