"""tf_run.py GRAPH.pbtxt IN.npz OUT.npz: runs a pcc GraphDef (--emit=tf)
once in TensorFlow, with tools/tfpython, for tests/torch/test_torch2gir.py.

IN.npz holds `names` (the tensors to feed, then the tensors to fetch, as
"node:index" strings) and `nfeed`, then arrays f0, f1, ... fed to the first
nfeed names.  Devices are cleared (one CPU runs every node); the fetched
values go to OUT.npz as r0, r1, ...  Feeding intermediate tensors (a
variable's value, a dropout mask) is what lets the caller compare with
PyTorch without TensorFlow's own initialisers and random streams."""
import sys

import numpy as np
import tensorflow as tf
from google.protobuf import text_format


def main(graph, inp, out):
    gd = tf.compat.v1.GraphDef()
    with open(graph) as f:
        text_format.Parse(f.read(), gd)
    for n in gd.node:
        n.device = ""
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.import_graph_def(gd, name="")
    d = np.load(inp)
    names = [str(x) for x in d["names"]]
    nfeed = int(d["nfeed"])
    feeds = {g.get_tensor_by_name(names[i]): d["f%d" % i] for i in range(nfeed)}
    fetch = [g.get_tensor_by_name(n) for n in names[nfeed:]]
    with tf.compat.v1.Session(graph=g) as s:
        res = s.run(fetch, feeds)
    np.savez(out, **{"r%d" % i: r for i, r in enumerate(res)})


if __name__ == "__main__":
    main(*sys.argv[1:4])
