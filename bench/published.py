#!/usr/bin/python3
"""bench/published.py BUILD_DIR — pcc's simulated training throughput held
against published GPU measurements (make bench-published).

Every row is a measured training throughput (images or sequences per
second) of a model on real GPUs: published ones (torchvision models), and
this project's own on an H100 (bench/measured-h100.csv, written by
bench/gpu_measure.py on a GPU lent through the device tool; PyTorch
eager).  The model is imported with tools/torch2gir at the row's
per-GPU batch size and optimizer, planned by pcc's data-parallel
pipeline (-O0: place<algo=dp>; rows of several machines with
place<sync=hier>, the structure of the published distributed_replicated)
on a cluster shaped like the published machine (named device types,
docs/cluster.md), and simulated; pcc's
figure is count x batch / simulated iteration time.  Prints a Markdown
table (docs/cost-model.md, "Fidelity") and the summary: median and
largest |error| over all rows, over the rows the constants were chosen on
("fit") and over the others ("held out"), and data-parallel scaling
efficiency at 8 GPUs, published against simulated, and for the rows
measured here peak memory, measured against simulated.  Figures, never
pass/fail.

    ROWS=fit  only the fit rows;  KEEP=DIR  keep the imported models there
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TF = ("tensorflow/tensorflow tensorflow/docs_src/performance/benchmarks.md "
      "@5984ffef")
DLE = ("NVIDIA/DeepLearningExamples TensorFlow/Classification/ConvNets/"
       "resnet50v1.5/README.md @1d4211fe")

# Machines shaped like the published ones: (named device type, link
# bandwidth and latency between two GPUs of the box, how collectives
# share the GPU, and for an engine that is not TensorFlow's, more keys
# of the device type).  tf_cnn_benchmarks (TensorFlow 1.x, 2017) aggregates
# gradients inside the step's graph, so the all-reduce holds the GPU
# ('blocking'); NVIDIA's ResNet-50 runs Horovod, which all-reduces in the
# background while the backward pass goes on ('overlap').  Sources and
# assumptions: docs/cost-model.md, "Fidelity".
MACHINES = {
    "DGX-1 P100": ("P100", "20 GB/s", "2 us", "blocking", ""),     # NVLink 1
    "GCE K80": ("K80", "6 GB/s", "5 us", "blocking", ""),          # PCIe 3
    "AWS K80": ("K80", "6 GB/s", "5 us", "blocking", ""),          # p2.8xlarge
    "AWS K80 x8": ("K80", "6 GB/s", "5 us", "blocking", ""),       # 8 of them
    "DGX-1 V100": ("V100", "25 GB/s", "2 us", "overlap", ""),      # NVLink 2
    "DGX A100": ("A100-TF32", "300 GB/s", "2 us", "overlap", ""),  # NVLink 3
    # bench/measured-h100.csv: one GPU, so no link is used.  PyTorch
    # eager ran those rows: one kernel per PyTorch operator, which
    # torch2gir's @kernel marks ("kernels: source"), each launched by
    # the host ahead of the GPU in 28.5 us ("launch", fitted on ResNet-50
    # at batch 8: docs/cost-model.md, "Source kernels"), its batch norms
    # cuDNN's ("batch_norm: cudnn": docs/cost-model.md, "Batch
    # normalisation").
    "H100 fp32": ("H100", "450 GB/s", "2 us", "overlap",
                  "kernels: source, launch: 28.5 us, batch_norm: cudnn"),
    "H100 tf32": ("H100-TF32", "450 GB/s", "2 us", "overlap",
                  "kernels: source, launch: 28.5 us, batch_norm: cudnn"),
}

# torchvision name, image size
MODELS = {
    "InceptionV3": ("inception_v3", 299),
    "ResNet-50": ("resnet50", 224),
    "ResNet-152": ("resnet152", 224),
    "AlexNet": ("alexnet", 224),
    "VGG16": ("vgg16", 224),
    "ResNet-50 v1.5": ("resnet50", 224),
    "BERT-base": ("zoo_models:bert_base", None),
    "BERT-large": ("zoo_models:bert_large", None),
    "Transformer-base": ("zoo_models:transformer_base", None),
    "MobileNetV2": ("mobilenet_v2", 224),
    "EfficientNet-B0": ("efficientnet_b0", 224),
    "DenseNet-121": ("densenet121", 224),
    "ViT-B/16": ("vit_b_16", 224),
}

# Published rows: machine, model, per-GPU batch, optimizer, {GPUs: img/s},
# precision, source and where in it.
TABLES = [
    ("DGX-1 P100", "InceptionV3", 64, "sgd", {1: 142, 2: 284, 4: 569, 8: 1131}),
    ("DGX-1 P100", "ResNet-50", 64, "sgd", {1: 219, 2: 422, 4: 852, 8: 1734}),
    ("DGX-1 P100", "ResNet-152", 64, "sgd", {1: 91.8, 2: 181, 4: 356, 8: 716}),
    ("DGX-1 P100", "AlexNet", 512, "sgd", {1: 2987, 2: 5658, 4: 10509, 8: 17822}),
    ("DGX-1 P100", "VGG16", 64, "sgd", {1: 154, 2: 295, 4: 584, 8: 1081}),
    ("DGX-1 P100", "InceptionV3", 32, "sgd", {1: 128, 2: 259, 4: 520, 8: 995}),
    ("DGX-1 P100", "ResNet-50", 32, "sgd", {1: 195, 2: 368, 4: 768, 8: 1485}),
    ("DGX-1 P100", "ResNet-152", 32, "sgd", {1: 82.7, 2: 160, 4: 317, 8: 632}),
    ("DGX-1 P100", "VGG16", 32, "sgd", {1: 144, 2: 281, 4: 549, 8: 820}),
    ("GCE K80", "InceptionV3", 64, "sgd", {1: 30.5, 2: 57.8, 4: 116, 8: 227}),
    ("GCE K80", "ResNet-50", 64, "sgd", {1: 51.9, 2: 99.0, 4: 195, 8: 387}),
    ("GCE K80", "ResNet-152", 32, "sgd", {1: 20.0, 2: 38.2, 4: 75.8, 8: 148}),
    ("GCE K80", "AlexNet", 512, "sgd", {1: 656, 2: 1209, 4: 2328, 8: 4640}),
    ("GCE K80", "VGG16", 32, "sgd", {1: 35.4, 2: 64.8, 4: 120, 8: 234}),
    ("GCE K80", "InceptionV3", 32, "sgd", {1: 29.3, 2: 55.0, 4: 109, 8: 216}),
    ("GCE K80", "ResNet-50", 32, "sgd", {1: 49.5, 2: 95.4, 4: 183, 8: 362}),
    ("AWS K80", "InceptionV3", 64, "sgd", {1: 30.8, 2: 58.7, 4: 117, 8: 230}),
    ("AWS K80", "ResNet-50", 64, "sgd", {1: 51.5, 2: 98.0, 4: 195, 8: 384}),
    ("AWS K80", "ResNet-152", 32, "sgd", {1: 19.7, 2: 37.6, 4: 74.9, 8: 149}),
    ("AWS K80", "AlexNet", 512, "sgd", {1: 684, 2: 1244, 4: 2479, 8: 4853}),
    ("AWS K80", "VGG16", 32, "sgd", {1: 36.3, 2: 69.4, 4: 141, 8: 260}),
    ("AWS K80", "InceptionV3", 32, "sgd", {1: 29.9, 2: 57.5, 4: 114, 8: 216}),
    ("AWS K80", "ResNet-50", 32, "sgd", {1: 49.0, 2: 94.1, 4: 184, 8: 355}),
    ("AWS K80 x8", "InceptionV3", 64, "sgd",
     {1: 29.7, 8: 229, 16: 459, 32: 902, 64: 1783}),
    ("AWS K80 x8", "ResNet-50", 64, "sgd",
     {1: 52.4, 8: 378, 16: 751, 32: 1388, 64: 2744}),
    ("AWS K80 x8", "ResNet-152", 32, "sgd",
     {1: 19.4, 8: 146, 16: 291, 32: 565, 64: 981}),
    ("AWS K80 x8", "InceptionV3", 32, "sgd",
     {1: 29.2, 8: 219, 16: 427, 32: 820, 64: 1608}),
    ("AWS K80 x8", "ResNet-50", 32, "sgd",
     {1: 48.4, 8: 333, 16: 667, 32: 1180, 64: 2315}),
    ("DGX-1 V100", "ResNet-50 v1.5", 128, "momentum", {1: 412, 8: 3170}),
    ("DGX A100", "ResNet-50 v1.5", 256, "momentum", {1: 909, 8: 7000}),
]

WHERE = {
    "DGX-1 P100": "TF, DGX-1 P100 synthetic",
    "GCE K80": "TF, GCE K80 synthetic",
    "AWS K80": "TF, EC2 p2.8xlarge K80 synthetic",
    "AWS K80 x8": "TF, EC2 distributed K80 synthetic",
    "DGX-1 V100": "DLE, DGX-1 V100 FP32+XLA",
    "DGX A100": "DLE, DGX A100 TF32+XLA",
    "H100 fp32": "here, H100 SXM5 FP32, PyTorch eager",
    "H100 tf32": "here, H100 SXM5 TF32, PyTorch eager",
}
SOURCES = [("TF", TF + ", Training synthetic data tables (batch 32: "
            "Other Results)"),
           ("DLE", DLE + ", Training performance results"),
           ("here", "measured by this project on a lent H100 "
            "(bench/gpu_measure.py; bench/measured-h100.csv says how)")]

# The rows the constants of ir/cost.c were chosen on; every other row is
# held out: single-GPU rows of ResNet-50, VGG16 and AlexNet on the P100
# (ResNet-50 at two batch sizes) and on the K80.
FIT = {("DGX-1 P100", "ResNet-50", 64, 1), ("DGX-1 P100", "ResNet-50", 32, 1),
       ("DGX-1 P100", "VGG16", 64, 1), ("DGX-1 P100", "AlexNet", 512, 1),
       ("GCE K80", "ResNet-50", 64, 1), ("GCE K80", "VGG16", 32, 1),
       ("GCE K80", "AlexNet", 512, 1)}

# Rows this project measured (bench/gpu_measure.py on a GPU lent through
# the device tool): a torchvision model name or a zoo_models builder, and
# the precision, to this table's machine and model.
MEASURED = {"fp32": "H100 fp32", "tf32": "H100 tf32"}
MEASURED_MODELS = {"resnet50": "ResNet-50", "resnet152": "ResNet-152",
                   "vgg16": "VGG16", "alexnet": "AlexNet",
                   "inception_v3": "InceptionV3", "bert_base": "BERT-base",
                   "bert_large": "BERT-large",
                   "transformer_base": "Transformer-base",
                   "mobilenet_v2": "MobileNetV2",
                   "efficientnet_b0": "EfficientNet-B0",
                   "densenet121": "DenseNet-121", "vit_b_16": "ViT-B/16"}
# Their fit rows, as on the P100 and the K80: ResNet-50, VGG16 and AlexNet
# at one batch each.  The rest of the batch sweep (but LAUNCH_FIT, below),
# ResNet-152, Inception-v3, the transformers and the four models measured
# last (MobileNetV2, EfficientNet-B0, DenseNet-121, ViT-B/16) are held out.
for _m in MEASURED.values():
    FIT |= {(_m, "ResNet-50", 64, 1), (_m, "VGG16", 64, 1),
            (_m, "AlexNet", 512, 1)}
# The row that fits the host's launch time per kernel (the clusters'
# "launch"): ResNet-50 at batch 8, where the host, not the GPU, sets the
# step.  A fit row, but not one of the factors' (bench/fit.py).
LAUNCH_FIT = ("H100 fp32", "ResNet-50", 8, 1)
FIT.add(LAUNCH_FIT)


def measured_rows(path):
    """TABLES rows from a bench/gpu_measure.py CSV, a case's mean step time
    over the runs that measured it (models the table has no import for,
    such as its MLP, are left out)."""
    steps, peaks = {}, {}
    with open(path) as f:
        lines = [ln for ln in f if ln.strip() and not ln.startswith("#")]
    head = lines[0].strip().split(",")
    for ln in lines[1:]:
        r = dict(zip(head, ln.strip().split(",")))
        if r["model"] in MEASURED_MODELS and r["precision"] in MEASURED:
            key = (r["precision"], r["model"], int(r["batch"]))
            steps.setdefault(key, []).append(float(r["step_s"]))
            peaks[(MEASURED[r["precision"]], MEASURED_MODELS[r["model"]],
                   int(r["batch"]))] = int(r["peak_mem_bytes"])
    MEASURED_PEAK.update(peaks)
    return [(MEASURED[prec], MEASURED_MODELS[model], batch, "sgd",
             {1: round(batch / statistics.mean(t), 1)})
            for (prec, model, batch), t in steps.items()]


# (machine, model, batch): torch.cuda.max_memory_allocated of the step.
MEASURED_PEAK = {}
TABLES += measured_rows(os.path.join(ROOT, "bench", "measured-h100.csv"))


def die(msg):
    print("bench/published.py: " + msg, file=sys.stderr)
    sys.exit(2)


def import_model(cache, model, batch):
    name, size = MODELS[model]
    path = os.path.join(cache, "%s-b%d.gir" % (name.split(":")[-1], batch))
    if not os.path.exists(path):
        # torch2gir has no momentum optimizer: SGD stands in (the update
        # is one memory-bound op per parameter either way).
        cmd = ["/usr/bin/python3", os.path.join(ROOT, "tools/torch2gir"),
               name, "--batch", str(batch), "--optimizer", "sgd", "-o", path]
        if size:
            cmd += ["--image-size", str(size)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            die("torch2gir %s failed:\n%s" % (name, r.stderr))
    return path


def cluster(tmp, machine, count, keys=""):
    """A cluster YAML shaped like machine with count GPUs; keys: more
    device-type keys ("kernel_efficiency: 0.6, ..."; bench/fit.py)."""
    dtype, bw, lat, coll, engine = MACHINES[machine]
    path = os.path.join(tmp, "%s-%d.yaml" % (machine.replace(" ", "_"), count))
    per = min(count, 8)
    more = "".join(", " + k for k in (engine, keys) if k)
    with open(path, "w") as f:
        f.write("# %s, %d GPU(s)\ndevice_types:\n  %s: {collectives: %s%s}\n"
                "machines:\n" % (machine, count, dtype, coll, more))
        for k in range((count + per - 1) // per):
            f.write("  - {name: m%d, type: %s, count: %d, link: {bandwidth: "
                    "%s, latency: %s}}\n" % (k, dtype, per, bw, lat))
        # p2.8xlarge: 10 Gbit/s Ethernet; the latency is our assumption.
        f.write("network: {bandwidth: 10 Gbps, latency: 10 us}\n")
    return path


def simulate(pcc, gir, yaml, tmp, sync="ring"):
    """-O0's data parallelism; sync: its AllReduce (place<sync=...>)."""
    return simulate_stats(pcc, gir, yaml, tmp, sync)["makespan_s"]


def simulate_stats(pcc, gir, yaml, tmp, sync="ring"):
    """simulate's whole --stats-json."""
    stats = os.path.join(tmp, "stats.json")
    passes = ("-passes=simplify,annotate,place<algo=dp,sync=%s>,comm,order"
              % sync)
    r = subprocess.run([pcc, passes, "--cluster", yaml, gir, "--stats-json",
                        stats, "-o", os.devnull], capture_output=True, text=True)
    if r.returncode != 0:
        die("pcc failed on %s with %s:\n%s" % (gir, yaml, r.stderr))
    with open(stats) as f:
        return json.load(f)


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    pcc = os.path.join(ROOT, build, "pcc")
    if not os.access(pcc, os.X_OK):
        die("build %s first" % pcc)
    only_fit = os.environ.get("ROWS") == "fit"
    keep = os.environ.get("KEEP")
    with tempfile.TemporaryDirectory() as tmp:
        cache = keep or tmp
        os.makedirs(cache, exist_ok=True)
        rows = []
        for machine, model, batch, opt, figs in TABLES:
            for n, pub in sorted(figs.items()):
                key = (machine, model, batch, n)
                if only_fit and key not in FIT:
                    continue
                # pcc's data-parallel plan shards the graph's batch over
                # the devices: the graph holds all n GPUs' images.
                gir = import_model(cache, model, n * batch)
                # Several machines: tf_cnn_benchmarks' distributed_replicated
                # sums each machine's gradients on its GPUs, then exchanges
                # the sums over the network through parameter servers on
                # every instance: a hierarchical AllReduce.
                st = simulate_stats(pcc, gir, cluster(tmp, machine, n), tmp,
                                    "hier" if n > 8 else "ring")
                sim = n * batch / st["makespan_s"]
                rows.append(dict(machine=machine, model=model, batch=batch,
                                 opt=opt, n=n, pub=pub, sim=sim,
                                 err=(sim - pub) / pub, fit=key in FIT,
                                 peak=max(d["peak_mem_bytes"]
                                          for d in st["devices"])))
    print("| model | GPU | GPUs | batch/GPU | optimizer | published "
          "samples/s (measured) | pcc samples/s (simulated) | error | set "
          "| source |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %d | %d | %s | %g | %.1f | %+.1f %% | %s | %s |"
              % (r["model"], MACHINES[r["machine"]][0], r["n"], r["batch"],
                 r["opt"], r["pub"], r["sim"], 100 * r["err"],
                 "fit" if r["fit"] else "held out", WHERE[r["machine"]]))
    print()
    for k, v in SOURCES:
        print("- %s: %s" % (k, v))
    print()

    def summary(name, sel):
        if not sel:
            return
        e = [abs(r["err"]) * 100 for r in sel]
        print("- %s: %d rows, median |error| %.1f %%, max %.1f %%"
              % (name, len(sel), statistics.median(e), max(e)))
    summary("all rows", rows)
    summary("fit rows", [r for r in rows if r["fit"]])
    summary("held-out rows", [r for r in rows if not r["fit"]])
    here = set(MEASURED.values())
    summary("published rows", [r for r in rows if r["machine"] not in here])
    summary("rows measured here (H100), fit", [r for r in rows if r["fit"]
                                              and r["machine"] in here])
    summary("rows measured here (H100), held out",
            [r for r in rows if not r["fit"] and r["machine"] in here])
    print()
    print("Data-parallel scaling efficiency at the largest GPU count, "
          "throughput(n) / (n x throughput(1)):")
    print()
    print("| model | GPU | batch/GPU | GPUs | published | pcc (simulated) "
          "| difference |")
    print("|---|---|---|---|---|---|---|")
    for machine, model, batch, _, figs in TABLES:
        one = [r for r in rows if (r["machine"], r["model"], r["batch"], r["n"])
               == (machine, model, batch, 1)]
        n = max(figs)
        if n == 1:
            continue
        many = [r for r in rows if (r["machine"], r["model"], r["batch"], r["n"])
                == (machine, model, batch, n)]
        if not one or not many:
            continue
        pe = many[0]["pub"] / (n * one[0]["pub"]) * 100
        se = many[0]["sim"] / (n * one[0]["sim"]) * 100
        print("| %s | %s | %d | %d | %.1f %% | %.1f %% | %+.1f points |"
              % (model, MACHINES[machine][0], batch, n, pe, se, se - pe))
    memory_table(rows)


def memory_table(rows):
    """Measured peak memory against pcc's, for the rows that have one."""
    mem = [r for r in rows if (r["machine"], r["model"], r["batch"])
           in MEASURED_PEAK]
    if not mem:
        return
    print()
    print("Peak memory of one GPU, GiB: measured "
          "(torch.cuda.max_memory_allocated, with cuDNN's workspaces and the "
          "allocator's cache) against pcc's simulated peak_mem_bytes:")
    print()
    print("| model | GPU | batch | measured | pcc (simulated) | error |")
    print("|---|---|---|---|---|---|")
    for r in mem:
        m = MEASURED_PEAK[(r["machine"], r["model"], r["batch"])]
        print("| %s | %s | %d | %.2f | %.2f | %+.1f %% |"
              % (r["model"], MACHINES[r["machine"]][0], r["batch"],
                 m / 2 ** 30, r["peak"] / 2 ** 30, (r["peak"] - m) / m * 100))
    # Over a batch sweep: what each sample adds (the memory model's part)
    # and what stays fixed.
    print()
    for machine in sorted({r["machine"] for r in mem}):
        for model in sorted({r["model"] for r in mem}):
            sw = sorted(((r["batch"], r) for r in mem
                         if (r["machine"], r["model"]) == (machine, model)),
                        key=lambda x: x[0])
            if len(sw) < 3:
                continue
            (b0, r0), (b1, r1) = sw[0], sw[-1]
            k0 = MEASURED_PEAK[(machine, model, b0)]
            k1 = MEASURED_PEAK[(machine, model, b1)]
            print("- %s on the %s, batch %d to %d: %.4f GiB per sample "
                  "measured, %.4f simulated; measured less simulated at "
                  "batch %d: %+.2f GiB"
                  % (model, MACHINES[machine][0], b0, b1,
                     (k1 - k0) / (b1 - b0) / 2 ** 30,
                     (r1["peak"] - r0["peak"]) / (b1 - b0) / 2 ** 30, b0,
                     (k0 - r0["peak"]) / 2 ** 30))


if __name__ == "__main__":
    main()
