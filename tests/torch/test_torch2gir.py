#!/usr/bin/python3
"""Tests of tools/torch2gir: `make check-torch`, or
/usr/bin/python3 tests/torch/test_torch2gir.py from the repository root.
Needs PyTorch and torchvision for /usr/bin/python3
(tools/torch2gir-setup.sh) and ./pcc built; without torch every test is
skipped, and the last line says so.  Prints "torch: N passed, N failed"."""

import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "torch2gir")
PCC = os.path.join(ROOT, "pcc")
HERE = os.path.join(ROOT, "tests", "torch")
CLUSTER = os.path.join(ROOT, "examples", "clusters", "tag-testbed.yaml")

try:
    import torch  # noqa: F401
    import torchvision  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

OP_RE = re.compile(r"^  (%[^=]+?)\s*=\s*([A-Za-z_][A-Za-z0-9_.\-/]*)\((.*?)\)\s*"
                   r"(\{.*\})?\s*:\s*(.+)$")
TYPE_RE = re.compile(r"([a-z0-9]+)\[([0-9,]*)\]")


def parse(text):
    """A small reader of the importer's own output: a list of ops."""
    ops = []
    for line in text.splitlines():
        if not line.startswith("  %"):
            continue
        m = OP_RE.match(line)
        if not m:
            raise AssertionError("unreadable op line: " + line[:200])
        attrs = m.group(4) or ""
        fl = re.search(r"@flops = (\d+)", attrs)
        role = re.search(r"@role = (\w+)", attrs)
        types = [(dt, [int(d) for d in dims.split(",") if d])
                 for dt, dims in TYPE_RE.findall(m.group(5))]
        ops.append({"name": m.group(1).split(",")[0].strip(), "type": m.group(2),
                    "inputs": m.group(3), "attrs": attrs, "line": line,
                    "flops": int(fl.group(1)) if fl else None,
                    "role": role.group(1) if role else None, "types": types,
                    "typestr": m.group(5)})
    return ops


def numel(dims):
    n = 1
    for d in dims:
        n *= d
    return n


_cache = {}


def run_tool(args, cwd=ROOT):
    return subprocess.run([sys.executable, TOOL] + list(args), capture_output=True,
                          text=True, cwd=cwd)


def imported(model, *args):
    key = (model,) + args
    if key not in _cache:
        fd, path = tempfile.mkstemp(suffix=".gir")
        os.close(fd)
        r = run_tool([model, "-o", path] + list(args), cwd=HERE)
        if r.returncode != 0:
            raise AssertionError("torch2gir %s failed: %s" % (model, r.stderr[-2000:]))
        with open(path) as f:
            _cache[key] = (path, f.read())
    return _cache[key]


def params(ops):
    return sum(numel(o["types"][0][1]) for o in ops if o["type"] == "VariableV2")


def flops(ops, roles):
    return sum(o["flops"] for o in ops if o["role"] in roles)


def pcc(*args):
    return subprocess.run([PCC] + list(args), capture_output=True, text=True)


@unittest.skipUnless(HAVE_TORCH, "PyTorch/torchvision not installed for "
                     "/usr/bin/python3 (tools/torch2gir-setup.sh installs them)")
class TestTorch2Gir(unittest.TestCase):
    def well_formed(self, ops, batch):
        """Every op typed, with @flops and @role; inputs with @batch_dim;
        one update per parameter, of its shape; the loss marked."""
        names = [o["name"] for o in ops]
        self.assertEqual(len(names), len(set(names)))
        for o in ops:
            self.assertIsNotNone(o["flops"], o["line"][:200])
            self.assertIn(o["role"], ("input", "param", "fwd", "bwd", "loss", "update"),
                          o["line"][:200])
            if o["type"] not in ("ApplyGradientDescent", "ApplyAdam"):
                self.assertTrue(o["types"], o["line"][:200])
        ph = [o for o in ops if o["type"] == "Placeholder"]
        self.assertTrue(ph)
        for p in ph:
            self.assertIn("@batch_dim = 0", p["attrs"])
            self.assertEqual(p["role"], "input")
            self.assertEqual(p["types"][0][1][0], batch)
        var = [o for o in ops if o["type"] == "VariableV2"]
        upd = [o for o in ops if o["role"] == "update"]
        self.assertEqual(len(var), len(upd))
        self.assertTrue(all(v["role"] == "param" for v in var))
        for u in upd:
            v = u["inputs"].split(",")[0].strip()
            self.assertTrue(u["name"].startswith(v + "/Apply"), u["name"])
        loss = [o for o in ops if o["role"] == "loss"]
        self.assertIn("SparseSoftmaxCrossEntropyWithLogits", {o["type"] for o in loss})
        self.assertIn("Mean", {o["type"] for o in loss})

    def test_source_kernels(self):
        """@kernel marks the ops one ATen operator became: BERT's GELU
        (erf form) is Mul, Erf, AddV2, Mul, Mul under one number, used by
        no other op; every group has two ops or more and no constant.  A
        cluster with 'kernels: source' costs the step less than one
        without it (one launch and one pass over memory per group)."""
        path, text = imported("zoo_models:bert_tiny", "--batch", "4")
        ops = parse(text)
        groups = {}
        for o in ops:
            k = re.search(r"@kernel = (\d+)", o["attrs"])
            if k:
                self.assertNotEqual(o["type"], "Const", o["line"][:200])
                groups.setdefault(int(k.group(1)), []).append(o["type"])
        self.assertTrue(groups)
        self.assertTrue(all(len(g) >= 2 for g in groups.values()), groups)
        erf = [o for o in ops if o["type"] == "Erf" and o["role"] == "fwd"]
        self.assertTrue(erf)
        for e in erf:
            k = int(re.search(r"@kernel = (\d+)", e["attrs"]).group(1))
            self.assertEqual(sorted(groups[k]), ["AddV2", "Erf", "Mul", "Mul", "Mul"])
        times = []
        with tempfile.TemporaryDirectory() as tmp:
            for kernels in ("ops", "source"):
                y = os.path.join(tmp, kernels + ".yaml")
                with open(y, "w") as f:
                    f.write("device_types: {G: {flops: 10 TFLOPS, memory: 16 GiB, "
                            "mem_bw: 900 GB/s, kernels: %s}}\nmachines: [{name: m0, "
                            "type: G, count: 1}]\n" % kernels)
                st = os.path.join(tmp, kernels + ".json")
                r = pcc("-passes=simplify,annotate,place<algo=single>,comm,order",
                        path, "--cluster", y, "--stats-json", st, "-o", os.devnull)
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(st) as f:
                    times.append(json.load(f)["makespan_s"])
        self.assertLess(times[1], times[0])

    def costs(self, path, yaml_text, profile=None):
        """{(op, device type): seconds} from pcc --print-costs."""
        import csv
        with tempfile.TemporaryDirectory() as tmp:
            y, c = os.path.join(tmp, "c.yaml"), os.path.join(tmp, "c.csv")
            with open(y, "w") as f:
                f.write(yaml_text)
            r = pcc("-passes=", path, "--cluster", y, "--print-costs", c,
                    "-o", os.devnull, *(["--profile", profile] if profile else []))
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(c) as f:
                return {("%" + row["op"], row["device_type"]): float(row["time_s"])
                        for row in csv.DictReader(f)}

    def test_batch_norm_cudnn(self):
        """torch2gir's batch norms are what 'batch_norm: cudnn' costs
        (docs/cost-model.md, "Batch normalisation"): the zoo's tiny CNN at
        batch 64 has 8 channels of 64 x 16 x 16 = 16,384 elements, so on a
        type of 64 SMs the forward pass moves one more pass of its
        524,288-byte input and the gradient 4.5 more, all at 8/64 of the
        bandwidth.  BERT's layer norm (a FusedBatchNormV3 with a channel
        per row of 16) is read once: the same cost either way."""
        keys = "memory: 16 GiB, mem_bw: 1 TB/s, overhead: 0 s, mem_efficiency: 1"
        yaml_text = ("device_types: {F: {flops: 10 TFLOPS, %s, sms: 64}, "
                     "C: {flops: 10 TFLOPS, %s, sms: 64, batch_norm: cudnn}}\n"
                     "machines: [{name: m0, type: F, count: 1}, "
                     "{name: m1, type: C, count: 1}]\n"
                     "network: {bandwidth: 1 GB/s}\n" % (keys, keys))
        path, text = imported("zoo_models:tiny", "--batch", "64")
        bn = [o for o in parse(text) if o["type"].startswith("FusedBatchNorm")]
        self.assertEqual(sorted(o["type"] for o in bn),
                         ["FusedBatchNormGradV3", "FusedBatchNormV3"])
        t = self.costs(path, yaml_text)
        xb = 64 * 8 * 16 * 16 * 4
        for o in bn:
            extra = 4.5 if o["type"] == "FusedBatchNormGradV3" else 1
            fused = t[(o["name"], "F")]          # its own bytes at 1 TB/s
            self.assertGreater(fused, 0)
            want = (fused * 1e12 + extra * xb) * 8 / 1e12
            self.assertAlmostEqual(t[(o["name"], "C")] / want, 1, places=6)
        path, text = imported("zoo_models:bert_tiny", "--batch", "4")
        ln = [o for o in parse(text) if o["type"].startswith("FusedBatchNorm")]
        self.assertTrue(ln)
        t = self.costs(path, yaml_text)
        for o in ln:
            self.assertEqual(t[(o["name"], "C")], t[(o["name"], "F")], o["name"])

    def gpu_measure(self, out, *args):
        """bench/gpu_measure.py on the CPU, --quick, writing to out."""
        r = subprocess.run(
            [sys.executable, os.path.join(ROOT, "bench", "gpu_measure.py"),
             "--device", "cpu", "--quick", "--out", out] + list(args),
            capture_output=True, text=True, timeout=600)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])

    def test_gpu_measure_quick(self):
        """bench/gpu_measure.py, as a lent GPU runs it, on the CPU with
        --quick: a row per case and precision, and a profile of the
        precision asked for, by operator and by input shape."""
        with tempfile.TemporaryDirectory() as tmp:
            self.gpu_measure(tmp, "--only", "mlp", "--profile", "mlp:2:tf32")
            with open(os.path.join(tmp, "measured.csv")) as f:
                rows = [ln.strip().split(",") for ln in f
                        if ln.strip() and not ln.startswith("#")]
            self.assertEqual(rows[0], ["model", "batch", "precision", "step_s",
                                       "samples_per_s", "peak_mem_bytes"])
            self.assertEqual([(x[0], x[1], x[2]) for x in rows[1:]],
                             [("mlp", "2", "fp32")])
            self.assertGreater(float(rows[1][3]), 0)
            with open(os.path.join(tmp, "profile-mlp-b2-tf32.txt")) as f:
                prof = f.read()
            self.assertIn("By input shape:", prof)
            self.assertIn("aten::mm", prof)

    def test_tools_write_whole_files(self):
        """tools/pccfile.py, which torch2gir, tfprofile and torchprof2pcc
        write their outputs with: the whole text or nothing, the old
        file's mode kept, a device written in place, a failure leaving
        no temporary."""
        sys.path.insert(0, os.path.join(ROOT, "tools"))
        import pccfile
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "g.gir")
            with open(out, "w") as f:
                f.write("old\n")
            os.chmod(out, 0o600)
            pccfile.write_text(out, "new\n")
            with open(out) as f:
                self.assertEqual(f.read(), "new\n")
            self.assertEqual(os.stat(out).st_mode & 0o777, 0o600)
            link = os.path.join(tmp, "link.gir")
            os.symlink("g.gir", link)
            pccfile.write_text(link, "via link\n")
            self.assertTrue(os.path.islink(link))
            with open(out) as f:
                self.assertEqual(f.read(), "via link\n")
            os.unlink(link)
            pccfile.write_text(os.devnull, "x")
            self.assertFalse(os.path.isfile(os.devnull))
            with self.assertRaises(OSError):
                pccfile.write_text(os.path.join(tmp, "no", "g.gir"), "x")
            self.assertEqual(sorted(os.listdir(tmp)), ["g.gir"])
            # torch2gir says so, exit 1, when it cannot write
            r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "torch2gir"),
                                "resnet18", "--batch", "1", "-o",
                                os.path.join(tmp, "no", "r.gir")],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 1)
            self.assertIn("torch2gir: cannot write", r.stderr)

    def test_torchprof2pcc_by_hand(self):
        """tools/torchprof2pcc matches a profile's rows to the graph's ops
        by shape: a stride-2 convolution that torch2gir pads in front
        (PyTorch's row names the unpadded input), its two gradients by
        the weight and input they share with it, the backward row's
        1.2 ms split 3 : 1 by their @flops; a batch norm by its input.
        CUDA time per call where there is one, else CPU time."""
        table = textwrap.dedent("""\
            By input shape:
            ----  ----
                                                Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg     Self CUDA   Self CUDA %    CUDA total  CUDA time avg    # of Calls  Input Shapes
            ----  ----
                             aten::cudnn_convolution         1.00%      10.000us         1.00%      10.000us      10.000us     500.000us        10.00%     500.000us     500.000us             1  [[8, 3, 32, 32], [16, 3, 3, 3], [], [], [], [], [], [], []]
                          aten::convolution_backward         1.00%      10.000us         1.00%      10.000us      10.000us       2.400ms        10.00%       2.400ms       1.200ms             2  [[8, 16, 16, 16], [8, 3, 32, 32], [16, 3, 3, 3], [], [], [], [], [], [], [], []]
                             aten::native_batch_norm         1.00%      10.000us         1.00%     300.000us     300.000us       0.000us         0.00%       0.000us       0.000us             1  [[8, 16, 16, 16], [16], [16], [16], [16], [], [], []]
                                          aten::relu         1.00%      10.000us         1.00%      10.000us      10.000us       9.000ms        10.00%       9.000ms       9.000ms             1  [[8, 16, 16, 16]]
            """)
        gir = textwrap.dedent("""\
            gir 1
            graph g {
              %x = Placeholder() {@batch_dim = 0} : f32[8,3,32,32]
              %w = VariableV2() {shape = [3, 3, 3, 16]} : f32[3,3,3,16]
              %p = Const() {value = [[0, 0], [0, 0], [0, 1], [0, 1]]} : i32[4,2]
              %xp = Pad(%x, %p) : f32[8,3,33,33]
              %c = Conv2D(%xp, %w) {strides = [1, 1, 2, 2], padding = "VALID", data_format = "NCHW", @flops = 100} : f32[8,16,16,16]
              %s = Const() {value = [8, 3, 33, 33]} : i32[4]
              %bi = Conv2DBackpropInput(%s, %w, %c) {strides = [1, 1, 2, 2], padding = "VALID", data_format = "NCHW", @flops = 100} : f32[8,3,33,33]
              %fs = Const() {value = [3, 3, 3, 16]} : i32[4]
              %bf = Conv2DBackpropFilter(%xp, %fs, %c) {strides = [1, 1, 2, 2], padding = "VALID", data_format = "NCHW", @flops = 300} : f32[3,3,3,16]
              %b = FusedBatchNormV3(%c, %w, %w, %w, %w) {data_format = "NCHW"} : (f32[8,16,16,16], f32[16], f32[16], f32[16], f32[16], f32[0])
              %r = Relu(%c) : f32[8,16,16,16]
            }
            """)
        with tempfile.TemporaryDirectory() as tmp:
            t, g = os.path.join(tmp, "t.txt"), os.path.join(tmp, "g.gir")
            with open(t, "w") as f:
                f.write(table)
            with open(g, "w") as f:
                f.write(gir)
            r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "torchprof2pcc"),
                                t, g, "--type", "G"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("3 of 3 rows matched, 4 ops timed", r.stderr)
            got = dict(re.findall(r"^  (\S+): \{G: ([0-9.]+) us\}$", r.stdout, re.M))
            self.assertEqual(got, {"c": "500.000", "bi": "300.000",
                                   "bf": "900.000", "b": "300.000"})

    def test_torchprof2pcc_cpu(self):
        """The profile path end to end on the CPU: bench/gpu_measure.py
        profiles the zoo's tiny CNN, torchprof2pcc times its convolution
        (the first layer has no input gradient), its filter gradient and
        its two batch norms, and pcc --profile costs those ops at exactly
        those times."""
        path, _ = imported("zoo_models:tiny", "--batch", "2")
        with tempfile.TemporaryDirectory() as tmp:
            self.gpu_measure(tmp, "--only", "none", "--profile", "tiny:2")
            prof = os.path.join(tmp, "p.yaml")
            r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "torchprof2pcc"),
                                os.path.join(tmp, "profile-tiny-b2.txt"), path,
                                "--type", "C", "-o", prof],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(prof) as f:
                got = dict(re.findall(r"^  (\S+): \{C: ([0-9.]+) us\}$", f.read(), re.M))
            self.assertEqual(sorted(n.split("/")[-1] for n in got),
                             ["Conv2D", "Conv2DBackpropFilter",
                              "FusedBatchNormGradV3", "FusedBatchNormV3"])
            t = self.costs(path, "device_types: {C: {flops: 1 TFLOPS, memory: 1 GiB}}\n"
                           "machines: [{name: m0, type: C, count: 1}]\n", prof)
            for n, us in got.items():
                self.assertAlmostEqual(t[("%" + n, "C")], float(us) * 1e-6, places=9)

    def test_resnet50_known_answers(self):
        """25.6 M parameters, 4.1 GMACs per image forward (8.2 GFLOP), a
        step about 3 times the forward."""
        path, text = imported("resnet50", "--batch", "32")
        ops = parse(text)
        self.well_formed(ops, 32)
        self.assertEqual(params(ops), 25557032)
        self.assertIn("# 25557032 trainable parameters in 161 tensors", text)
        fwd = flops(ops, ("fwd",)) / 32
        self.assertLess(abs(fwd - 8.2e9) / 8.2e9, 0.02, fwd)
        step = flops(ops, ("fwd", "loss", "bwd"))
        self.assertTrue(2.8 <= step / (fwd * 32) <= 3.2, step / (fwd * 32))
        types = {o["type"] for o in ops}
        for t in ("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter",
                  "FusedBatchNormV3", "FusedBatchNormGradV3", "Relu", "ReluGrad",
                  "MaxPool", "MaxPoolGrad", "MatMul", "BiasAdd", "Mean",
                  "SparseSoftmaxCrossEntropyWithLogits", "ApplyGradientDescent"):
            self.assertIn(t, types)
        self.assertFalse([t for t in types if t.startswith("aten.")])
        self.assertEqual(len([o for o in ops if o["type"] == "VariableV2"]), 161)
        self.assertIn("%layer1.0.conv1/weight", {o["name"] for o in ops})
        self.assertIn("%layer1.0.conv1/Conv2D", {o["name"] for o in ops})
        # conv1: 7x7/2 over 224x224x3 -> 112x112x64 at batch 32.
        c1 = [o for o in ops if o["name"] == "%conv1/Conv2D"][0]
        self.assertEqual(c1["types"][0], ("f32", [32, 64, 112, 112]))
        self.assertEqual(c1["flops"], 2 * 32 * 112 * 112 * 64 * 7 * 7 * 3)
        self.assertIn("strides = [1, 1, 2, 2]", c1["attrs"])
        # PyTorch's padding 3 (TensorFlow's SAME would pad 2, 3): a Pad
        # op, then VALID (TensorFlow's CPU backprops refuse EXPLICIT)
        self.assertIn('padding = "VALID"', c1["attrs"])
        self.assertIn("%conv1/Pad", c1["inputs"])
        pad = [o for o in ops if o["name"] == "%conv1/Pad"][0]
        self.assertEqual(pad["types"][0], ("f32", [32, 3, 229, 229]))
        self.assertFalse([o for o in ops if "EXPLICIT" in o["attrs"]])
        w = [o for o in ops if o["name"] == "%conv1/weight"][0]
        self.assertEqual(w["types"][0], ("f32", [7, 7, 3, 64]))   # HWIO

    def test_vgg19_known_answers(self):
        """143.7 M parameters, 19.6 GMACs per image forward."""
        path, text = imported("vgg19", "--batch", "2")
        ops = parse(text)
        self.well_formed(ops, 2)
        self.assertEqual(params(ops), 143667240)
        fwd = flops(ops, ("fwd",)) / 2
        self.assertLess(abs(fwd - 2 * 19.6e9) / (2 * 19.6e9), 0.02, fwd)

    def test_header_and_names(self):
        path, text = imported("zoo_models:tiny", "--batch", "4")
        lines = text.splitlines()
        self.assertTrue(lines[0].startswith("# generated by: torch2gir zoo_models:tiny"))
        self.assertIn("gir 1", lines)
        self.assertTrue(any(l.startswith("graph tiny {batch = 4} {") for l in lines))
        ops = parse(text)
        self.well_formed(ops, 4)
        for o in ops:
            self.assertRegex(o["name"], r"^%[A-Za-z0-9_.\-/]+$")
        ph = [o for o in ops if o["type"] == "Placeholder"]
        self.assertEqual([p["types"][0] for p in ph],
                         [("f32", [4, 3, 16, 16]), ("i64", [4])])
        # Conv 3x3 pad 1 stride 1 is TF's SAME; filter in HWIO.
        conv = [o for o in ops if o["type"] == "Conv2D"][0]
        self.assertIn('padding = "SAME"', conv["attrs"])
        w = [o for o in ops if o["name"] == "%0/weight"][0]
        self.assertEqual(w["types"][0], ("f32", [3, 3, 3, 8]))
        # Linear 512 -> 10: forward MatMul 2*4*10*512 FLOPs.
        mm = [o for o in ops if o["type"] == "MatMul" and o["role"] == "fwd"][0]
        self.assertEqual(mm["flops"], 2 * 4 * 10 * 512)
        self.assertIn("transpose_b = true", mm["attrs"])
        self.assertEqual(len([o for o in ops if o["role"] == "update"]), 6)
        # BatchNorm running statistics are constants of the forward.
        rm = [o for o in ops if o["name"] == "%1/running_mean"][0]
        self.assertEqual((rm["type"], rm["role"], rm["flops"]), ("Const", "fwd", 0))
        # with their values: 8 zeros (running_var: 8 ones)
        self.assertIn("value = [" + ", ".join(["0.0"] * 8) + "]", rm["attrs"])
        rv = [o for o in ops if o["name"] == "%1/running_var"][0]
        self.assertIn("value = [" + ", ".join(["1.0"] * 8) + "]", rv["attrs"])

    def test_adam(self):
        path, text = imported("zoo_models:tiny", "--batch", "4", "--optimizer", "adam")
        ops = parse(text)
        upd = [o for o in ops if o["role"] == "update"]
        self.assertEqual(len(upd), 6)
        self.assertTrue(all(o["type"] == "ApplyAdam" for o in upd))
        w = [o for o in upd if o["name"] == "%5/weight/ApplyAdam"][0]
        self.assertEqual(w["flops"], 10 * 5120)
        self.assertIn("@mem = 40960B", w["attrs"])     # m and v: 2 * 4 B each
        # PyTorch's defaults; --adam-eps sets epsilon on every update
        self.assertIn("lr = 0.01, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-08", w["attrs"])
        path, text = imported("zoo_models:tiny", "--batch", "4", "--optimizer", "adam",
                              "--adam-eps", "0.001")
        upd = [o for o in parse(text) if o["role"] == "update"]
        self.assertEqual(len(upd), 6)
        self.assertTrue(all("epsilon = 0.001," in o["attrs"] for o in upd))
        r = run_tool(["zoo_models:tiny", "--optimizer", "adam", "--adam-eps", "-1"], cwd=HERE)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--adam-eps must be a non-negative number", r.stderr)

    def test_transformer(self):
        """Encoder-decoder base: the parameter count worked out by hand;
        attention's split, masks and embedding gradients mapped."""
        path, text = imported("zoo_models:transformer_base", "--batch", "2")
        ops = parse(text)
        self.well_formed(ops, 2)
        d, f, V = 512, 2048, 37000
        enc = 4 * d * d + 4 * d + 2 * d * f + f + d + 2 * 2 * d
        dec = 8 * d * d + 8 * d + 2 * d * f + f + d + 3 * 2 * d
        want = 6 * enc + 6 * dec + 2 * 2 * d + 2 * V * d + d * V + V
        self.assertEqual(params(ops), want)
        self.assertEqual(want, 101009544)
        types = {o["type"] for o in ops}
        for t in ("BatchMatMulV2", "SplitV", "UnsortedSegmentSum", "Softmax",
                  "GatherV2", "ConcatV2"):
            self.assertIn(t, types)
        self.assertNotIn("aten.baddbmm", types)
        self.assertNotIn("aten.split", types)
        self.assertNotIn("aten.embedding_dense_backward", types)
        ph = [o for o in ops if o["type"] == "Placeholder"]
        self.assertEqual([(p["name"], p["types"][0]) for p in ph],
                         [("%source", ("i64", [2, 128])), ("%target", ("i64", [2, 128])),
                          ("%labels", ("i64", [2, 128]))])
        # the embedding gradient: [V, d], partial sums over the batch
        seg = [o for o in ops if o["type"] == "UnsortedSegmentSum"]
        self.assertEqual(len(seg), 2)
        self.assertEqual(seg[0]["types"][0], ("f32", [V, d]))
        # no aten op is left: layer norm (fused: FusedBatchNormV3 with a
        # channel per token), dropout (its mask scaled by a SelectV2) and
        # softmax's backward are TensorFlow core ops
        self.assertEqual([t for t in types if t.startswith("aten.")], [])
        for t in ("FusedBatchNormV3", "FusedBatchNormGradV3", "RandomUniform",
                  "GreaterEqual", "SelectV2"):
            self.assertIn(t, types)
        # 62 dropout masks, each RandomUniform with seed 1 and its own seed2
        ru = [o for o in ops if o["type"] == "RandomUniform"]
        self.assertEqual(len(ru), 62)
        self.assertTrue(all("seed = 1," in o["attrs"] for o in ru))
        seeds = {re.search(r"seed2 = (\d+)", o["attrs"]).group(1) for o in ru}
        self.assertEqual(len(seeds), 62)
        # 32 layer norms: each parameter gradient is a Sum over [batch, seq]
        lnw = [o for o in ops if o["type"] == "Sum" and o["role"] == "bwd" and
               o["types"][0] == ("f32", [d])]
        self.assertEqual(len(lnw), 2 * 32)

    def test_module_function(self):
        """MODULE:FUNCTION with two inputs and labels; a frozen layer is
        constant; a head the loss does not use gets no update."""
        path, text = imported("custom_models:two_heads", "--batch", "4")
        ops = parse(text)
        self.well_formed(ops, 4)
        by = {o["name"]: o for o in ops}
        self.assertEqual(by["%x"]["types"][0], ("f32", [4, 6]))
        self.assertEqual(by["%scale"]["types"][0], ("f32", [4, 1]))
        self.assertEqual(by["%labels"]["types"][0], ("i64", [4]))
        self.assertEqual(by["%frozen/weight"]["type"], "Const")
        self.assertNotIn("%aux/weight", by)
        self.assertEqual(params(ops), 6 * 16 + 16 + 16 * 5 + 5)
        self.assertIn("# 197 trainable parameters in 4 tensors", text)

    def test_bad_specs(self):
        for spec, msg in (("no_such_model_xyz", "unknown model"),
                          ("resnet5", "did you mean 'resnet50'?"),
                          ("custom_models:not_a_model", "must return"),
                          ("custom_models:nosuch", "has no attribute 'nosuch'"),
                          ("nosuchmodule_xyz:f", "No module named")):
            r = run_tool([spec, "-o", os.devnull], cwd=HERE)
            self.assertEqual(r.returncode, 1, spec)
            self.assertIn(msg, r.stderr, spec)
            self.assertNotIn("Traceback", r.stderr, spec)
        r = run_tool(["resnet18", "--batch", "0"])
        self.assertEqual(r.returncode, 2)

    @unittest.skipUnless(os.path.exists(PCC), "./pcc not built")
    def test_pcc_verifies_and_round_trips(self):
        for model, args in (("resnet50", ["--batch", "32"]),
                            ("zoo_models:tiny", ["--batch", "4"]),
                            ("zoo_models:tiny", ["--batch", "4", "--optimizer", "adam"]),
                            ("zoo_models:transformer_base", ["--batch", "2"]),
                            ("custom_models:two_heads", ["--batch", "4"]),
                            ("mobilenet_v2", ["--batch", "2"]),
                            ("inception_v3", ["--batch", "2"]),
                            ("vgg19", ["--batch", "2"])):
            path, text = imported(model, *args)
            with tempfile.TemporaryDirectory() as d:
                a, b = os.path.join(d, "a.gir"), os.path.join(d, "b.gir")
                r = pcc("-passes=simplify,annotate", "--verify-each", path,
                        "--cluster", CLUSTER, "-o", os.devnull)
                self.assertEqual(r.returncode, 0, model + ": " + r.stderr[:2000])
                r = pcc("-passes=", path, "-o", a)
                self.assertEqual(r.returncode, 0, model + ": " + r.stderr[:2000])
                r = pcc("-passes=", a, "-o", b)
                self.assertEqual(r.returncode, 0, model + ": " + r.stderr[:2000])
                with open(a) as fa, open(b) as fb:
                    self.assertEqual(fa.read(), fb.read(), model)

    @unittest.skipUnless(os.path.exists(PCC), "./pcc not built")
    def test_issue_command(self):
        """tools/torch2gir densenet121 --batch 32 -o d.gir &&
        ./pcc -passes=simplify,annotate d.gir --cluster tag-testbed.yaml
        (and -O1, whatever it holds today)."""
        with tempfile.TemporaryDirectory() as d:
            g = os.path.join(d, "d.gir")
            r = run_tool(["densenet121", "--batch", "32", "-o", g])
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(g) as f:
                ops = parse(f.read())
            self.well_formed(ops, 32)
            self.assertEqual(params(ops), 7978856)
            for flags in (["-passes=simplify,annotate", "--verify-each"], ["-O1"]):
                r = pcc(*flags, g, "--cluster", CLUSTER, "-o", os.path.join(d, "p.gir"))
                self.assertEqual(r.returncode, 0, " ".join(flags) + ": " + r.stderr[:2000])


# pcc_seed_hash of backend/runtime/seed.c, for the C runtime's inputs,
# labels and RandomUniform streams.
M64 = (1 << 64) - 1
PHI = 0x9E3779B97F4A7C15


def seed_hash(name, seed, index):
    h = 0xcbf29ce484222325
    for ch in name.encode():
        h = ((h ^ ch) * 0x100000001b3) & M64
    z = ((h ^ (seed * PHI & M64)) + ((index + 1) * PHI & M64)) & M64
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M64
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M64
    return z ^ (z >> 31)


def runtime_lib():
    """The C runtime library that ./pcc --runtime-flags names, or ''."""
    try:
        r = subprocess.run([PCC, "--runtime-flags"], capture_output=True, text=True)
    except OSError:
        return ""
    libs = [w for w in r.stdout.split() if w.endswith(".a")]
    return libs[0] if libs else ""


RT_LIB = runtime_lib()
ONE_CPU = os.path.join(ROOT, "tests", "ctests", "one-cpu.yaml")
LR = 64.0    # so that the step's change shows each gradient to ~1e-8


def to_torch(flat, gshape, tshape, filt):
    """A parameter's values in gir's layout as a tensor of PyTorch's
    shape; filt: gir holds it as a convolution's filter (HWIO, depthwise
    [kh, kw, C, mult]), which its shape alone cannot tell (a [4, 4, 4, 4]
    weight is both)."""
    import torch
    t = torch.tensor(flat, dtype=torch.float32)
    if filt:
        o, i, kh, kw = tshape
        return t.reshape(kh, kw, i, o).permute(3, 2, 0, 1).contiguous()
    return t.reshape(tshape)


def conv_filters(ops):
    """The variables gir holds as convolution filters: those that a
    convolution (or its transposed form, Conv2DBackpropInput) reads as its
    filter, its second input."""
    kinds = ("Conv2D", "DepthwiseConv2dNative", "Conv2DBackpropInput",
             "DepthwiseConv2dNativeBackpropInput")
    var = {o["name"] for o in ops if o["type"] == "VariableV2"}
    return {a[1].strip()[1:] for a in (o["inputs"].split(",") for o in ops
                                       if o["type"] in kinds)
            if len(a) > 1 and a[1].strip() in var}


TFPY = os.path.join(ROOT, "tools", "tfpython")
_WORK = []
_prepared = {}


def to_gir(t, gshape):
    """A PyTorch-layout tensor as a flat list in gir's layout."""
    if t.dim() == 4 and tuple(gshape) != tuple(t.shape):
        return t.permute(2, 3, 1, 0).contiguous().flatten().tolist()
    return t.flatten().tolist()


def tf_nodes(pbtxt):
    """(name, op, inputs) of every node of a text GraphDef."""
    out = []
    for m in re.finditer(r'node \{\n  name: "([^"]*)"\n  op: "([^"]*)"\n((?:  input: "[^"]*"\n)*)',
                         pbtxt):
        out.append((m.group(1), m.group(2), re.findall(r'input: "([^"]*)"', m.group(3))))
    return out


def prepared(spec, make, args=(), vocab=2):
    """One model's training step three ways, once per process: torch2gir's
    graph placed on one CPU, emitted as C (run: initial and updated
    parameters, lr LR) and as a TensorFlow GraphDef (not run here);
    PyTorch's step from the C program's initial values, inputs, labels and
    dropout masks.  Returns a dict (see the keys at the end)."""
    key = (spec,) + tuple(args)
    if key in _prepared:
        return _prepared[key]
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    if not _WORK:
        _WORK.append(tempfile.TemporaryDirectory())
    d = tempfile.mkdtemp(dir=_WORK[0].name)
    g, c, exe, tfg = (os.path.join(d, n) for n in ("m.gir", "m.c", "m", "m.pbtxt"))
    r = run_tool([spec, "--batch", "2", "-o", g] + list(args), cwd=HERE)
    assert r.returncode == 0, r.stderr
    with open(g) as f:
        ops = parse(f.read())
    by = {o["name"][1:]: o for o in ops}
    rus = sorted((int(re.search(r"seed2 = (\d+)", o["attrs"]).group(1)), o["name"][1:])
                 for o in ops if o["type"] == "RandomUniform")
    # each mask: RandomUniform -> GreaterEqual (bool)
    ge_of = {}
    for o in ops:
        if o["type"] == "GreaterEqual":
            ru = by.get(o["inputs"].split(",")[0].strip()[1:])
            if ru and ru["type"] == "RandomUniform":
                ge_of[ru["name"][1:]] = o["name"][1:]
    gshape = {o["name"][1:]: o["types"][0][1] for o in ops if o["type"] == "VariableV2"}
    ph = [o for o in ops if o["type"] == "Placeholder"]
    for emit, out in (("--emit=c", c), ("--emit=tf", tfg)):
        r = pcc("-passes=simplify,annotate,place", g, "--cluster", ONE_CPU, emit,
                "--emit-opt=lr=%g" % LR, "-o", out)
        assert r.returncode == 0, r.stderr
    flags = pcc("--runtime-flags").stdout.split()
    r = subprocess.run(["cc", "-O1", c] + flags + ["-o", exe], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    vals = {}
    for which in ("init", "step"):
        r = subprocess.run([exe, "--values"] + (["--init"] if which == "init" else []),
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        for line in r.stdout.splitlines():
            n, i, v = line.split()
            vals.setdefault((which, n), {})[int(i)] = float(v)
    flat = lambda v: [v[i] for i in range(len(v))]
    torch.manual_seed(0)
    model, _ = make()
    gname = lambda k: k[:k.rindex(".")] + "/" + k[k.rindex(".") + 1:] if "." in k else k
    sd = model.state_dict()
    filters = conv_filters(ops)
    for k, p in model.named_parameters():
        if gname(k) not in gshape:
            # frozen: a Const of its values (torch2gir seeds 0 too)
            continue
        sd[k] = to_torch(flat(vals[("init", gname(k))]), gshape[gname(k)], p.shape,
                         gname(k) in filters)
    model.load_state_dict(sd)
    # the C runtime's inputs: f32 U(-1, 1), integers hash mod their range
    # (vocab: the rows of the embedding they index), labels mod classes
    xs = []
    for o in ph:
        nm, (dt, shape) = o["name"][1:], o["types"][0]
        if nm == "labels":
            continue
        if dt == "f32":
            xs.append(torch.tensor([(seed_hash(nm, 0, i) >> 11) * 2.0 ** -52 - 1
                                    for i in range(numel(shape))],
                                   dtype=torch.float32).reshape(shape))
        else:
            xs.append(torch.tensor([seed_hash(nm, 0, i) % vocab
                                    for i in range(numel(shape))]).reshape(shape))
    classes = int(re.search(r"\[\d+,(\d+)\]", [o for o in ops if o["type"] ==
                  "SparseSoftmaxCrossEntropyWithLogits"][0]["typestr"]).group(1))
    lshape = [o for o in ph if o["name"] == "%labels"][0]["types"][0][1]
    labels = torch.tensor([seed_hash("labels", 0, i) % classes
                           for i in range(numel(lshape))]).reshape(lshape)
    masks, draws = [], []

    class Masks(TorchDispatchMode):
        """bernoulli_(p): the C runtime's RandomUniform >= 1 - p;
        native_dropout(x, p): its mask RandomUniform >= p; rand: its
        RandomUniform."""
        k = 0

        def uniform(self, shape, dtype=torch.float32):
            """The C runtime's next RandomUniform, of this shape, and its
            name."""
            assert self.k < len(rus), "more random draws than RandomUniforms"
            seed2, name = rus[self.k]
            self.k += 1
            u = torch.tensor([(seed_hash(name, (1 << 32) ^ seed2, i) >> 40) * 2.0 ** -24
                              for i in range(numel(shape))], dtype=dtype)
            return u.reshape(shape), name

        def mask(self, t, rate):
            u, name = self.uniform(tuple(t.shape))
            m = u >= torch.tensor(rate, dtype=torch.float32)
            masks.append((name, m.float(), 1.0 - rate))
            return m

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func._schema.name in ("aten::rand", "aten::rand_like"):
                # stochastic depth's keep_prob + rand, floored
                shape = list(args[0] if func._schema.name == "aten::rand"
                             else args[0].shape)
                u = self.uniform(shape, (kwargs or {}).get("dtype") or torch.float32)[0]
                draws.append(u)
                return u
            if func._schema.name == "aten::bernoulli_":
                t, p = args[0], args[1]
                t.copy_(self.mask(t, 1.0 - p).float())
                return t
            if func._schema.name == "aten::native_dropout":
                x, p = args[0], args[1]
                m = self.mask(x, p)
                scale = torch.tensor(1.0 / (1.0 - p), dtype=torch.float32)
                return x * m.float() * scale, m
            return func(*args, **(kwargs or {}))
    model.train()
    with Masks() as mode:
        out = model(*xs)
        loss = torch.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]),
                                                 labels.reshape(-1))
    assert mode.k == len(rus)
    loss.backward()
    res = {"ops": ops, "gshape": gshape, "filters": filters, "vals": vals, "xs": xs,
           "labels": labels,
           "xnames": [o["name"][1:] for o in ph if o["name"] != "%labels"],
           "masks": masks, "draws": draws, "ge_of": ge_of,
           "pbtxt": tfg, "dir": d,
           "grads": {gname(k): p.grad.detach().clone() for k, p in model.named_parameters()
                     if p.requires_grad}}
    _prepared[key] = res
    return res


def compare_grads(test, got, want, tol):
    """got, want: {param: tensor of PyTorch's shape}; each element within
    tol of the tensor's largest gradient, plus 2e-8.  Returns the largest
    relative error and how many tensors have a gradient above 1e-6."""
    worst, moving = 0.0, 0
    for name, w in want.items():
        gl, wl = got[name].flatten().tolist(), w.flatten().tolist()
        scale = max(abs(v) for v in wl)
        moving += scale > 1e-6
        for i, v in enumerate(wl):
            worst = max(worst, abs(gl[i] - v) / max(scale, 1e-30))
            test.assertLessEqual(abs(gl[i] - v), tol * scale + 2e-8,
                                 "%s[%d]: %r, PyTorch %r" % (name, i, gl[i], v))
    # most gradients are large enough to tell (at 32x32, batch 2, deep in
    # MobileNet they fade: a batch norm's offset before another batch norm
    # gets none)
    test.assertGreater(moving, len(want) // 2)
    return worst


MODELS = {
    "gelu": ("custom_models:lowered", "gelu", ()),
    "gelu_tanh": ("custom_models:lowered_gelu_tanh", "gelu_tanh", ()),
    "silu": ("custom_models:lowered_silu", "silu", ()),
    "hardswish": ("custom_models:lowered_hardswish", "hardswish", ()),
    "hardsigmoid": ("custom_models:lowered_hardsigmoid", "hardsigmoid", ()),
    "adaptive": ("custom_models:adaptive", None, ()),
    "mobilenet_v3_small": ("mobilenet_v3_small", None, ("--image-size", "32")),
    "pools": ("custom_models:pools", None, ()),
    "native_dropout": ("custom_models:native_dropout", None, ()),
    "transformer_tiny": ("zoo_models:transformer_tiny", None, ()),
    "relbias": ("custom_models:relbias", None, ()),
    "swin_tiny": ("custom_models:swin_tiny", None, ()),
    "swin_v2_tiny": ("custom_models:swin_v2_tiny", None, ()),
    "resnet18": ("resnet18", None, ("--image-size", "32")),
}


def model_of(key):
    spec, act, args = MODELS[key]

    def make():
        import custom_models
        import torchvision
        if key == "adaptive":
            return custom_models.adaptive(2)
        if key == "mobilenet_v3_small":
            return torchvision.models.mobilenet_v3_small(weights=None), None
        if key == "resnet18":
            return torchvision.models.resnet18(weights=None), None
        if key == "pools":
            return custom_models.pools(2)
        if key == "native_dropout":
            return custom_models.native_dropout(2)
        if key == "relbias":
            return custom_models.relbias(2)
        if key == "swin_tiny":
            return custom_models.swin_tiny(2)
        if key == "swin_v2_tiny":
            return custom_models.swin_v2_tiny(2)
        if key == "transformer_tiny":
            sys.path.insert(0, os.path.join(ROOT, "tools"))
            import zoo_models
            return zoo_models.transformer_tiny(2)
        return custom_models.lowered(2, act)
    return prepared(spec, make, args, vocab=40)


@unittest.skipUnless(HAVE_TORCH and os.path.exists(PCC) and bool(RT_LIB) and
                     os.path.exists(RT_LIB), "needs PyTorch, ./pcc and its runtime library")
class TestLoweringNumerics(unittest.TestCase):
    """Lowered graphs against PyTorch itself: torch2gir's graph of a model
    runs one SGD step in the C runtime (--emit=c, lr 64); PyTorch runs the
    same step from the same initial values (the C program's --init
    --values, its seeded inputs and labels), its dropout masks being the C
    runtime's (each bernoulli_ filled with RandomUniform >= 1 - p,
    recomputed here from the runtime's documented hash, in seed2 order).
    Every parameter's gradient, (initial - updated) / lr, must agree with
    PyTorch's within 1e-5 of the tensor's largest (MobileNet: 1e-3), plus
    2e-8 for the float32 difference it is read from (with GELU's
    1/sqrt(2 pi) off by 2.5 %, the largest error is 1.1e-4).  Models:
    custom_models.lowered (layer norm, an activation, dropout 0.25,
    attention, softmax and log-softmax along dimension 1) with five
    activations; adaptive average pooling to uneven windows; torchvision's
    MobileNetV3-small at 32x32 (hard-swish, hard-sigmoid,
    squeeze-excitation, batch norm, depthwise convolutions, dropout 0.2)."""

    def check(self, key, tol=1e-5):
        m = model_of(key)
        self.assertEqual([o["type"] for o in m["ops"] if o["type"].startswith("aten.")], [])
        got = {}
        for name, w in m["grads"].items():
            init, step = m["vals"][("init", name)], m["vals"][("step", name)]
            got[name] = to_torch([(init[i] - step[i]) / LR for i in range(len(init))],
                                 m["gshape"][name], w.shape, name in m["filters"])
        compare_grads(self, got, m["grads"], tol)
        return m

    def lowered(self, act):
        m = self.check(act)
        # dropout 0.25 of 32 elements: some dropped, not all
        self.assertEqual(len(m["masks"]), 1)
        dropped = 32 - int(m["masks"][0][1].sum())
        self.assertTrue(2 <= dropped <= 16, dropped)

    def test_gelu_erf(self):
        self.lowered("gelu")

    def test_gelu_tanh(self):
        self.lowered("gelu_tanh")

    def test_silu(self):
        self.lowered("silu")

    def test_hardswish(self):
        self.lowered("hardswish")

    def test_hardsigmoid(self):
        self.lowered("hardsigmoid")

    def test_adaptive_pool_uneven(self):
        self.check("adaptive")

    def test_padding(self):
        m = self.check("pools")
        types = [o["type"] for o in m["ops"]]
        self.assertNotIn('padding = "EXPLICIT"', " ".join(o["attrs"] for o in m["ops"]))
        for t in ("Pad", "PadV2", "Slice", "MaxPoolGrad", "AvgPoolGrad",
                  "DepthwiseConv2dNativeBackpropInput"):
            self.assertIn(t, types)

    def test_resnet18(self):
        self.check("resnet18", tol=1e-3)

    def test_transformer_tiny(self):
        """Embeddings, sinusoidal positions and the causal mask (buffers
        with their values), encoder-decoder attention, layer norm (as
        Keras's fused one: FusedBatchNormV3 and its gradient with a channel
        per token), dropout masks."""
        m = self.check("transformer_tiny", tol=1e-4)
        self.assertGreaterEqual(len(m["masks"]), 7)
        types = {o["type"] for o in m["ops"]}
        for t in ("GatherV2", "UnsortedSegmentSum", "BatchMatMulV2", "Softmax",
                  "FusedBatchNormV3", "FusedBatchNormGradV3"):
            self.assertIn(t, types)
        causal = [o for o in m["ops"] if o["name"] == "%causal"][0]
        # the causal mask keeps its exact -inf (gir spells it)
        self.assertIn("value = [0.0, -inf, -inf", causal["attrs"])

    def test_index(self):
        """A parameter table indexed by a constant buffer: GatherV2, and
        UnsortedSegmentSum for the gradient."""
        m = self.check("relbias")
        types = [o["type"] for o in m["ops"]]
        self.assertEqual(types.count("GatherV2"), 2)
        self.assertEqual(types.count("UnsortedSegmentSum"), 2)

    def test_swin(self):
        """Swin's window ops from core ops: torch.roll as Roll,
        x[:, 0::2] as Pad/Slice/Reshape, negative pads as Slice, the
        shifted-window mask's != 0 and == 0 as NotEqual/Equal."""
        m = self.check("swin_tiny", tol=1e-4)
        types = [o["type"] for o in m["ops"]]
        for t in ("Roll", "ConcatV2", "Pad", "Slice", "NotEqual", "Equal", "GatherV2"):
            self.assertIn(t, types)
        # stochastic depth: two keep masks (attention, MLP) in each block
        # but the first (its probability is 0)
        self.assertEqual(len(m["masks"]), 10)

    def test_swin_v2(self):
        """Swin v2's cosine attention from core ops: the 2-norm as
        Sqrt(Sum(Square)), clamp and clamp_min as Minimum and Maximum,
        where as SelectV2, as_strided of part of a tensor as a Slice."""
        m = self.check("swin_v2_tiny", tol=1e-4)
        types = [o["type"] for o in m["ops"]]
        for t in ("Sqrt", "Square", "Maximum", "Minimum", "SelectV2", "Slice"):
            self.assertIn(t, types)

    def test_native_dropout(self):
        m = self.check("native_dropout")
        self.assertEqual([(t.numel(), p) for _, t, p in m["masks"]], [(32, 0.75)])
        self.assertTrue(2 <= 32 - int(m["masks"][0][1].sum()) <= 16)

    def test_mobilenet_v3_small(self):
        m = self.check("mobilenet_v3_small", tol=1e-3)
        self.assertEqual([(t.numel(), p) for _, t, p in m["masks"]], [(2 * 1024, 0.8)])


def have_tf():
    try:
        r = subprocess.run([TFPY, "-c", "import tensorflow"], capture_output=True,
                           text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


HAVE_TF = HAVE_TORCH and os.path.exists(PCC) and bool(RT_LIB) and os.path.exists(RT_LIB) \
    and have_tf()


@unittest.skipUnless(HAVE_TF, "needs TensorFlow (tools/tfpython: sh tools/setup-debian.sh "
                     "--tf), PyTorch, ./pcc and its runtime library")
class TestLoweringTensorFlow(unittest.TestCase):
    """The same graphs as TestLoweringNumerics, emitted with --emit=tf and
    run by real TensorFlow (tools/tfpython, tests/torch/tf_run.py, oneDNN
    on for NCHW): the variables' values, the input, the labels and each
    dropout mask (the bool GreaterEqual of RandomUniform) are fed, and the
    gradients that reach each ApplyGradientDescent are fetched.  They must
    equal PyTorch's like the C runtime's: TensorFlow's own kernels agree
    with the compositions, layouts (NCHW, HWIO and depthwise filters) and
    attrs pcc emits."""

    def check(self, key, tol=1e-5):
        import numpy as np
        m = model_of(key)
        with open(m["pbtxt"]) as f:
            nodes = tf_nodes(f.read())
        grad_of = {n[2][0]: n[2][2] for n in nodes if n[1] == "ApplyGradientDescent"}
        self.assertEqual(set(grad_of), set(m["grads"]))
        names, arrays = [], []
        for name, w in m["grads"].items():
            names.append(name + ":0")
            init = m["vals"][("init", name)]
            arrays.append(np.array([init[i] for i in range(len(init))],
                                   dtype=np.float32).reshape(m["gshape"][name]))
        names += [n + ":0" for n in m["xnames"]] + ["labels:0"]
        arrays += [x.numpy() for x in m["xs"]] + [m["labels"].numpy()]
        for ru, t, p in m["masks"]:
            names.append(m["ge_of"][ru] + ":0")
            arrays.append(t.numpy().astype(bool))
        nfeed = len(names)
        order = list(m["grads"])
        names += [grad_of[n] if ":" in grad_of[n] else grad_of[n] + ":0" for n in order]
        inp, out = os.path.join(m["dir"], "in.npz"), os.path.join(m["dir"], "out.npz")
        np.savez(inp, names=np.array(names), nfeed=nfeed,
                 **{"f%d" % i: a for i, a in enumerate(arrays)})
        r = subprocess.run([TFPY, os.path.join(HERE, "tf_run.py"), m["pbtxt"], inp, out],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        res = np.load(out)
        got = {}
        for k, name in enumerate(order):
            w = m["grads"][name]
            got[name] = to_torch(res["r%d" % k].flatten().tolist(), m["gshape"][name],
                                 w.shape, name in m["filters"])
        return compare_grads(self, got, m["grads"], tol)

    def test_gelu_erf(self):
        self.check("gelu")

    def test_gelu_tanh(self):
        self.check("gelu_tanh")

    def test_silu(self):
        self.check("silu")

    def test_hardswish(self):
        self.check("hardswish")

    def test_hardsigmoid(self):
        self.check("hardsigmoid")

    def test_adaptive_pool_uneven(self):
        self.check("adaptive")

    def test_padding(self):
        self.check("pools")

    def test_resnet18(self):
        self.check("resnet18", tol=1e-3)

    def test_native_dropout(self):
        self.check("native_dropout")

    def test_swin(self):
        self.check("swin_tiny", tol=1e-4)

    def test_swin_v2(self):
        self.check("swin_v2_tiny", tol=1e-4)

    def test_index(self):
        self.check("relbias")

    def test_transformer_tiny(self):
        self.check("transformer_tiny", tol=1e-4)

    def test_mobilenet_v3_small(self):
        self.check("mobilenet_v3_small", tol=1e-3)

if __name__ == "__main__":
    runner = unittest.TextTestRunner(verbosity=2)
    prog = unittest.main(exit=False, testRunner=runner)
    res = prog.result
    bad = len(res.failures) + len(res.errors)
    skipped = len(res.skipped)
    if not HAVE_TORCH:
        print("torch: 0 passed, 0 failed (skipped: no PyTorch for %s)" % sys.executable)
    else:
        why = sorted({reason for _, reason in res.skipped})
        print("torch: %d passed, %d failed%s" % (
            res.testsRun - bad - skipped, bad,
            ", %d skipped (%s)" % (skipped, "; ".join(why)) if skipped else ""))
    sys.exit(1 if bad else 0)
