#!/usr/bin/env python3
"""bench/gpu_measure.py — measure the fidelity table's models on a real GPU.

Runs where a CUDA GPU, PyTorch and torchvision are (a session lent a GPU
through the device tool; nothing in the build or the tests needs one).
Each case is one full training step, as tools/torch2gir imports it: the
forward pass, cross-entropy, the backward pass and plain SGD over every
parameter (torch.optim.SGD's defaults, lr 0.01), on synthetic data.  The
models are torchvision's (weights=None; Inception-v3 without its auxiliary
head, as torch2gir builds it) and tools/zoo_models.py's.

    python3 bench/gpu_measure.py [--out DIR] [--only M,...] [--gemm] [--mem]
                                 [--profile MODEL:BATCH[:PREC]] [--quick]
                                 [--device cpu]

Writes DIR/measured.csv (one row per case: model, batch, precision, step
time, samples/s, peak memory allocated; its header the cost of an empty
op) and prints it as it goes; with --profile also
DIR/profile-MODEL-bBATCH[-PREC].txt, torch.profiler's per-operator table of
one step, then the same by input shape (precision fp32 unless PREC); with --gemm DIR/gemm.csv
(torch.mm alone, for bench/fit.py --gemm) and with --mem DIR/mem.csv
(memory-bound ops alone: the bandwidth they reach).  bench/published.py
reads bench/measured-h100.csv, these files' rows from the H100s.  Precision "fp32" turns TF32 off in cuBLAS and cuDNN (the
device type H100, A100, ...); "tf32" turns it on (H100-TF32, A100-TF32).
cuDNN autotunes (benchmark=True), as tf_cnn_benchmarks' TensorFlow did.
Each figure is the median of three timed runs of STEPS steps after WARMUP
steps, timed with CUDA events.  --quick: tiny batches and steps, to try
the script on a CPU.
"""

import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "tools"))
import zoo_models  # noqa: E402

# (model, batch, precisions): ResNet-50 swept over the batch (small
# per-device batches, issue 15), the others at their published batch.
CASES = [
    ("resnet50", 8, ("fp32",)),
    ("resnet50", 16, ("fp32",)),
    ("resnet50", 32, ("fp32", "tf32")),
    ("resnet50", 64, ("fp32", "tf32")),
    ("resnet50", 128, ("fp32", "tf32")),
    ("resnet50", 256, ("fp32", "tf32")),
    ("resnet152", 64, ("fp32", "tf32")),
    ("vgg16", 64, ("fp32", "tf32")),
    ("alexnet", 512, ("fp32", "tf32")),
    ("inception_v3", 64, ("fp32", "tf32")),
    ("bert_base", 32, ("fp32", "tf32")),
    ("transformer_base", 64, ("fp32", "tf32")),
    ("mlp", 64, ("fp32",)),
    # More transformers (batch sweep, a larger one): held-out rows for the
    # GEMM factor (docs/cost-model.md, "Calibration").
    ("bert_base", 8, ("fp32", "tf32")),
    ("bert_base", 64, ("fp32", "tf32")),
    ("bert_large", 8, ("fp32", "tf32")),
    ("bert_large", 16, ("fp32", "tf32")),
    ("transformer_base", 16, ("fp32", "tf32")),
    ("transformer_base", 128, ("fp32", "tf32")),
    # Models no constant was chosen on (held out whole): depthwise and
    # squeeze-excite convolutions, dense concatenation, a vision
    # transformer.
    ("mobilenet_v2", 64, ("fp32", "tf32")),
    ("efficientnet_b0", 64, ("fp32", "tf32")),
    ("densenet121", 64, ("fp32", "tf32")),
    ("vit_b_16", 64, ("fp32", "tf32")),
]

# GEMM shapes (m, n, k) for --gemm: square ones, and BERT-base's at batch
# 32 x 128 tokens (QKV, attention out, FFN in and out, the vocabulary).
GEMMS = [(n, n, n) for n in (256, 512, 1024, 2048, 4096, 8192)] + [
    (4096, 2304, 768), (4096, 768, 768), (4096, 3072, 768),
    (4096, 768, 3072), (4096, 30522, 768), (64, 4096, 4096)]


class MLP(torch.nn.Module):
    """examples/mlp.gir: 784-256-10 with ReLU, no biases."""

    def __init__(self):
        super().__init__()
        self.w1 = torch.nn.Linear(784, 256, bias=False)
        self.w2 = torch.nn.Linear(256, 10, bias=False)

    def forward(self, x):
        return self.w2(torch.relu(self.w1(x)))


def build(name, batch):
    """(model, inputs, labels) on the CPU."""
    if name == "mlp":
        return MLP(), (torch.randn(batch, 784),), torch.randint(0, 10, (batch,))
    if hasattr(zoo_models, name):
        got = getattr(zoo_models, name)(batch=batch)
        model, inputs = got[0], got[1]
        with torch.no_grad():
            out = model(*inputs)
        labels = torch.randint(0, out.shape[-1], out.shape[:-1])
        return model, inputs, labels
    kw = {"weights": None}
    size = 224
    if name == "inception_v3":
        kw.update(aux_logits=False, init_weights=False)
        size = 299
    model = getattr(torchvision.models, name)(**kw)
    return (model, (torch.randn(batch, 3, size, size),),
            torch.randint(0, 1000, (batch,)))


def step(model, inputs, labels, opt):
    opt.zero_grad(set_to_none=True)
    out = model(*inputs)
    loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), labels.reshape(-1))
    loss.backward()
    opt.step()


def on_device(name, batch, dev):
    """One training step of the case on dev, as a function of no
    arguments (model, data and optimizer built once)."""
    model, inputs, labels = build(name, batch)
    model = model.to(dev).train()
    inputs = tuple(t.to(dev) for t in inputs)
    labels = labels.to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    return lambda: step(model, inputs, labels, opt)


def timed(fn, dev, steps):
    """Seconds per call of fn, over steps calls."""
    if dev.type == "cuda":
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(steps):
            fn()
        b.record()
        b.synchronize()
        return a.elapsed_time(b) / 1e3 / steps
    t = time.perf_counter()
    for _ in range(steps):
        fn()
    return (time.perf_counter() - t) / steps


def launch_overhead(dev, n):
    """Seconds per tiny eager op (x.add_(1) on 256 floats): what one op
    costs the framework and the launch when the kernel itself is empty."""
    x = torch.zeros(256, device=dev)
    for _ in range(100):
        x.add_(1)
    return timed(lambda: x.add_(1), dev, n)


def set_precision(prec):
    tf32 = prec == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=".")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--profile", action="append", default=[],
                    help="MODEL:BATCH[:PREC] to profile (PREC fp32 or tf32; "
                    "fp32 unless given), repeatable")
    ap.add_argument("--only", help="comma list of models to run")
    ap.add_argument("--gemm", action="store_true",
                    help="also time GEMMs alone (DIR/gemm.csv)")
    ap.add_argument("--mem", action="store_true",
                    help="also time memory-bound ops alone (DIR/mem.csv)")
    args = ap.parse_args()
    dev = torch.device(args.device)
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    warm, steps = (1, 2) if args.quick else (5, 15)
    os.makedirs(args.out, exist_ok=True)
    csv = open(os.path.join(args.out, "measured.csv"), "w")

    def emit(line):
        print(line, flush=True)
        csv.write(line + "\n")
        csv.flush()

    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    emit("# device: %s; torch %s; torchvision %s; cudnn %s; %s" % (
        name, torch.__version__, torchvision.__version__,
        torch.backends.cudnn.version(), time.strftime("%Y-%m-%d")))
    emit("# launch overhead: %.2f us per tiny eager op"
         % (1e6 * launch_overhead(dev, 200 if args.quick else 5000)))
    emit("model,batch,precision,step_s,samples_per_s,peak_mem_bytes")
    only = set(args.only.split(",")) if args.only else None
    for model_name, batch, precs in CASES:
        if only and model_name not in only:
            continue
        if args.quick:
            batch = 2
        for prec in precs:
            set_precision(prec)
            one = on_device(model_name, batch, dev)
            if dev.type == "cuda":
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats(dev)
            for _ in range(warm):
                one()
            runs = [timed(one, dev, steps)
                    for _ in range(1 if args.quick else 3)]
            t = statistics.median(runs)
            peak = (torch.cuda.max_memory_allocated(dev)
                    if dev.type == "cuda" else 0)
            emit("%s,%d,%s,%.6f,%.1f,%d"
                 % (model_name, batch, prec, t, batch / t, peak))
            del one
            if dev.type == "cuda":
                torch.cuda.empty_cache()
    if args.gemm:
        with open(os.path.join(args.out, "gemm.csv"), "w") as g:
            g.write("m,n,k,precision,seconds,tflops\n")
            for prec in ("fp32", "tf32"):
                set_precision(prec)
                for m, n, k in GEMMS:
                    if args.quick:
                        m, n, k = min(m, 64), min(n, 64), min(k, 64)
                    a = torch.randn(m, k, device=dev)
                    b = torch.randn(k, n, device=dev)
                    for _ in range(3):
                        torch.mm(a, b)
                    t = timed(lambda: torch.mm(a, b), dev,
                              2 if args.quick else 20)
                    line = "%d,%d,%d,%s,%.9f,%.2f" % (
                        m, n, k, prec, t, 2.0 * m * n * k / t / 1e12)
                    print("gemm " + line, flush=True)
                    g.write(line + "\n")
                    g.flush()
                    del a, b
    if args.mem:
        # Memory-bound ops on ResNet-50's first stage at batch 64 (64 x 256
        # x 56 x 56 floats, 205 MB): bytes = what the op reads and writes,
        # as pcc's cost model counts them (inputs and outputs once).
        shape = (4, 8, 16, 16) if args.quick else (64, 256, 56, 56)
        x = torch.randn(shape, device=dev)
        y = torch.randn(shape, device=dev)
        o = torch.empty_like(x)
        bn = torch.nn.BatchNorm2d(shape[1]).to(dev).train()
        nb = x.numel() * 4
        ops = [("copy", lambda: o.copy_(x), 2 * nb),
               ("relu", lambda: torch.relu(x), 2 * nb),
               ("add", lambda: torch.add(x, y), 3 * nb),
               ("threshold_backward",
                lambda: torch.ops.aten.threshold_backward(y, x, 0.0), 3 * nb),
               ("batch_norm", lambda: bn(x), 2 * nb)]
        with open(os.path.join(args.out, "mem.csv"), "w") as g:
            g.write("op,bytes,seconds,gb_per_s\n")
            for name_, fn, nbytes in ops:
                with torch.no_grad():
                    for _ in range(3):
                        fn()
                    t = timed(fn, dev, 2 if args.quick else 50)
                line = "%s,%d,%.9f,%.1f" % (name_, nbytes, t, nbytes / t / 1e9)
                print("mem " + line, flush=True)
                g.write(line + "\n")
        del x, y, o, bn
    for spec in args.profile:
        model_name, batch, prec = (spec.split(":") + ["fp32"])[:3]
        batch = 2 if args.quick else int(batch)
        set_precision(prec)
        one = on_device(model_name, batch, dev)
        for _ in range(warm):
            one()
        acts = [torch.profiler.ProfilerActivity.CPU]
        if dev.type == "cuda":
            acts.append(torch.profiler.ProfilerActivity.CUDA)
            torch.cuda.synchronize()
        with torch.profiler.profile(activities=acts,
                                    record_shapes=True) as prof:
            one()
            if dev.type == "cuda":
                torch.cuda.synchronize()
        key = "cuda_time_total" if dev.type == "cuda" else "cpu_time_total"
        with open(os.path.join(args.out, "profile-%s-b%d%s.txt"
                               % (model_name, batch,
                                  "" if prec == "fp32" else "-" + prec)),
                  "w") as f:
            f.write(prof.key_averages().table(sort_by=key, row_limit=60))
            f.write("\n\nBy input shape:\n")
            f.write(prof.key_averages(group_by_input_shape=True).table(
                sort_by=key, row_limit=150, max_name_column_width=40,
                max_shapes_column_width=120))
    csv.close()


if __name__ == "__main__":
    main()
