#!/usr/bin/python3
"""bench/profiled.py [BUILD_DIR] — the simulator given measured op times
(make bench-profiled).

For each H100 profile with a by-shape table (bench/measured-h100-profile-
MODEL-bBATCH[-tf32].txt, written by bench/gpu_measure.py --profile) whose
case bench/measured-h100.csv also timed: import the model as
bench/published.py does, turn the table into a pcc profile of its
convolutions and batch norms (tools/torchprof2pcc), and simulate the
step on the published cluster with and without it.  The measured times
of those ops replace the calibrated model's; everything else (the other
ops, the launches, the schedule) is still pcc's.  What is left between
"with profile" and "measured" is the part of the model no profile
covers.  Figures, never pass/fail; "measured" is measured, the rest
simulated.  KEEP=DIR keeps the imports (as bench-published).
"""

import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import published as P  # noqa: E402

NAME = re.compile(r"measured-h100-profile-(\w+)-b(\d+)(-tf32)?\.txt$")


def measured_steps():
    """{(model, batch, precision): mean step seconds} of measured-h100.csv."""
    steps = {}
    with open(os.path.join(P.ROOT, "bench", "measured-h100.csv")) as f:
        lines = [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]
    head = lines[0].split(",")
    for ln in lines[1:]:
        r = dict(zip(head, ln.split(",")))
        steps.setdefault((r["model"], int(r["batch"]), r["precision"]),
                         []).append(float(r["step_s"]))
    return {k: statistics.mean(v) for k, v in steps.items()}


def step(pcc, gir, yaml, tmp, profile=None):
    stats = os.path.join(tmp, "stats.json")
    cmd = [pcc, "-passes=simplify,annotate,place<algo=dp,sync=ring>,comm,order",
           "--cluster", yaml, gir, "--stats-json", stats, "-o", os.devnull]
    if profile:
        cmd += ["--profile", profile]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        P.die("pcc failed on %s:\n%s" % (gir, r.stderr))
    with open(stats) as f:
        return json.load(f)["makespan_s"]


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    pcc = os.path.join(P.ROOT, build, "pcc")
    if not os.access(pcc, os.X_OK):
        P.die("build %s first" % pcc)
    tool = os.path.join(P.ROOT, "tools", "torchprof2pcc")
    meas = measured_steps()
    rows, none = [], []
    with tempfile.TemporaryDirectory() as tmp:
        cache = os.environ.get("KEEP") or tmp
        os.makedirs(cache, exist_ok=True)
        for path in sorted(glob.glob(os.path.join(
                P.ROOT, "bench", "measured-h100-profile-*.txt"))):
            m = NAME.search(path)
            if not m:
                continue
            with open(path) as f:
                if "By input shape:" not in f.read():
                    continue        # an early profile, without shapes
            model, batch, prec = m.group(1), int(m.group(2)), \
                "tf32" if m.group(3) else "fp32"
            if (model, batch, prec) not in meas or \
                    model not in P.MEASURED_MODELS:
                continue
            machine = P.MEASURED[prec]
            table = P.MEASURED_MODELS[model]
            gir = P.import_model(cache, table, batch)
            yaml = P.cluster(tmp, machine, 1)
            dtype = P.MACHINES[machine][0]
            prof = os.path.join(tmp, "profile.yaml")
            r = subprocess.run([sys.executable, tool, path, gir, "--type",
                                dtype, "-o", prof], capture_output=True,
                               text=True)
            if r.returncode != 0:
                P.die("torchprof2pcc failed on %s:\n%s" % (path, r.stderr))
            timed = re.search(r"(\d+) ops timed \(([0-9.]+) ms", r.stderr)
            t0 = step(pcc, gir, yaml, tmp)
            t1 = step(pcc, gir, yaml, tmp, prof)
            if int(timed.group(1)) == 0:
                none.append("%s on %s" % (table, dtype))
                continue
            rows.append((table, dtype, batch, meas[(model, batch, prec)],
                         t0, t1, int(timed.group(1)), float(timed.group(2))))
    print("| model | GPU | batch | measured step | pcc (simulated) | error "
          "| pcc with the profile (simulated) | error | ops profiled "
          "| their measured time |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for table, dtype, batch, mt, t0, t1, n, ms in rows:
        print("| %s | %s | %d | %.1f ms | %.1f ms | %+.1f %% | %.1f ms | "
              "%+.1f %% | %d | %.1f ms |"
              % (table, dtype, batch, mt * 1e3, t0 * 1e3, (mt / t0 - 1) * 100,
                 t1 * 1e3, (mt / t1 - 1) * 100, n, ms))
    if rows:
        e0 = [abs(r[3] / r[4] - 1) for r in rows]
        e1 = [abs(r[3] / r[5] - 1) for r in rows]
        print()
        print("- %d profiled steps: median |error| %.1f %% with the model, "
              "%.1f %% with the measured convolutions and batch norms "
              "(errors in throughput, as bench-published's)"
              % (len(rows), 100 * statistics.median(e0),
                 100 * statistics.median(e1)))
    if none:
        print("- profiled, but no convolution or batch norm to time: "
              + ", ".join(none))


if __name__ == "__main__":
    main()
