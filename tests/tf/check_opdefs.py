"""check_opdefs.py [--self-test | --check] TABLE.json — holds backend/tfops.def, as pcc parses it
(TABLE.json, written by build/tfopdump), against the op registry of the
TensorFlow this runs in (tools/tfpython: the pinned 2.21).

For every row: the op exists; its input and output args agree one by one
(name, fixed type, type_attr / type_list_attr, number_attr, is_ref); its
attrs agree as sets of names and, attr by attr, in kind, default value,
allowed values and minimum.  Every disagreement is one line
"FAIL Op: what" unless KNOWN below lists it with the reason it is
deliberate; a KNOWN entry that no longer matches a disagreement fails too
(the list cannot go stale).  Prints "tfops: N passed, N failed" (one check
per row, one for the KNOWN list) and exits 1 on a failure.

Type sets are compared over the dtypes pcc can name (TensorFlow's
DataType numbers 1..23, backend/tfopdef.c); newer ones (float8, int4, ...)
are outside pcc's types and ignored.

--self-test instead applies MUTATIONS, one at a time, to a copy of the
table (a default changed, an attr dropped or added, an arg's name, type,
number_attr or is_ref changed, ...) and fails unless every one is reported:
the check can fail. """
import json
import math
import sys

from tensorflow.core.framework import types_pb2
from tensorflow.python.framework import op_def_registry

# Deliberate differences from TensorFlow 2.21: (op, attr) -> reason.  Each
# is an attr 2.21 has with a default that TensorFlow 2.9 lacks; a GraphDef
# that leaves it out loads into both (TensorFlow fills the default, and 2.9
# rejects a NodeDef naming an attr its OpDef lacks: docs/backends.md).
NEWER = "added after TensorFlow 2.9 with a default; left out so the GraphDef also loads into 2.9"
KNOWN = {
    ("BatchMatMul", "grad_x"): NEWER,
    ("BatchMatMul", "grad_y"): NEWER,
    ("BatchMatMulV2", "grad_x"): NEWER,
    ("BatchMatMulV2", "grad_y"): NEWER,
    ("MatMul", "grad_a"): NEWER,
    ("MatMul", "grad_b"): NEWER,
    ("GatherNd", "bad_indices_policy"): NEWER,
    ("TopKV2", "Tk"): NEWER,
    ("TopKV2", "index_type"): NEWER,
    ("VarHandleOp", "debug_name"): NEWER,
}

PCC_DTS = set(range(1, 24))     # TFDT_FLOAT .. TFDT_UINT64


def dt_name(n):
    return types_pb2.DataType.Name(n)


def parse_default(text, kind, is_list):
    """tfops.def's default text -> a Python value comparable with
    tf_default()."""
    t = text.strip()
    if is_list:
        if not (t.startswith("[") and t.endswith("]")):
            raise ValueError("list default %r" % text)
        inner = t[1:-1].strip()
        items = [x.strip() for x in inner.split(",")] if inner else []
        return [parse_default(x, kind, False) for x in items]
    if kind == "type":
        return t
    if kind == "int":
        return int(t)
    if kind == "float":
        return float(t)
    if kind == "bool":
        if t not in ("true", "false"):
            raise ValueError("bool default %r" % text)
        return t == "true"
    if kind == "string":
        if len(t) < 2 or t[0] != "'" or t[-1] != "'":
            raise ValueError("string default %r" % text)
        return t[1:-1]
    if kind == "shape":
        if t != "unknown":
            raise ValueError("shape default %r" % text)
        return "unknown"
    raise ValueError("default of kind %s: %r" % (kind, text))


def tf_default(av, kind, is_list):
    """An AttrValue (a default) -> the same form as parse_default."""
    def one(field_value, k):
        if k == "type":
            return dt_name(field_value)
        if k == "string":
            return field_value.decode()
        return field_value
    if is_list:
        lv = av.list
        field = {"type": lv.type, "int": lv.i, "float": lv.f, "bool": lv.b,
                 "string": lv.s, "shape": lv.shape}[kind]
        return [one(x, kind) for x in field]
    if kind == "shape":
        return "unknown" if av.shape.unknown_rank else str(av.shape)
    field = {"type": "type", "int": "i", "float": "f", "bool": "b",
             "string": "s"}[kind]
    return one(getattr(av, field), kind)


def same_default(a, b, kind):
    if kind == "float":
        fa = a if isinstance(a, list) else [a]
        fb = b if isinstance(b, list) else [b]
        # TensorFlow keeps a float default as a float32
        return len(fa) == len(fb) and all(
            math.isclose(x, y, rel_tol=1e-6, abs_tol=1e-12) for x, y in zip(fa, fb))
    return a == b


def tf_kind(attr_type):
    """'list(int)' -> ('int', True)."""
    if attr_type.startswith("list(") and attr_type.endswith(")"):
        return attr_type[5:-1], True
    return attr_type, False


def check_attr(op, mine, tfa, out):
    name = mine["name"]
    kind, is_list = tf_kind(tfa.type)
    if (mine["kind"], mine["list"]) != (kind, is_list):
        out.append("attr %s is %s%s, TensorFlow's %s" % (
            name, "list of " if mine["list"] else "", mine["kind"], tfa.type))
        return
    has = tfa.HasField("default_value")
    if (mine["default"] is not None) != has:
        out.append("attr %s: %s" % (
            name, "default %s, TensorFlow has none" % mine["default"] if not has
            else "no default, TensorFlow's is %s" % tf_default(tfa.default_value, kind, is_list)))
    elif has:
        try:
            m = parse_default(mine["default"], kind, is_list)
        except ValueError as e:
            out.append("attr %s: unreadable default: %s" % (name, e))
        else:
            t = tf_default(tfa.default_value, kind, is_list)
            if not same_default(m, t, kind):
                out.append("attr %s: default %r, TensorFlow's %r" % (name, m, t))
    allowed = tfa.allowed_values.list if tfa.HasField("allowed_values") else None
    if kind == "type":
        tf_types = None if allowed is None else {t for t in allowed.type if t in PCC_DTS}
        my_types = None if mine["types"] is None else {
            types_pb2.DataType.Value(t) for t in mine["types"]}
        if my_types != tf_types:
            def show(s):
                return "any" if s is None else "{%s}" % ", ".join(sorted(dt_name(t) for t in s))
            if my_types is None or tf_types is None:
                out.append("attr %s allows %s, TensorFlow %s" % (name, show(my_types), show(tf_types)))
            else:
                extra, lack = my_types - tf_types, tf_types - my_types
                out.append("attr %s: types%s%s" % (
                    name, " not in TensorFlow's: " + show(extra) if extra else "",
                    " missing TensorFlow's: " + show(lack) if lack else ""))
    elif kind == "string":
        tf_strs = None if allowed is None else [s.decode() for s in allowed.s]
        if (mine["strs"] is None) != (tf_strs is None) or (
                tf_strs is not None and set(mine["strs"]) != set(tf_strs)):
            out.append("attr %s allows %s, TensorFlow %s" % (name, mine["strs"], tf_strs))
    elif mine["strs"] is not None or mine["types"] is not None:
        out.append("attr %s has allowed values, TensorFlow's none" % name)
    tf_min = tfa.minimum if tfa.has_minimum else None
    if mine["min"] != tf_min:
        out.append("attr %s: minimum %s, TensorFlow's %s" % (name, mine["min"], tf_min))


def check_args(op, what, mine, tfargs, attrs, out):
    if len(mine) != len(tfargs):
        out.append("%d %s args, TensorFlow %d (%s)" % (
            len(mine), what, len(tfargs), ", ".join(a.name for a in tfargs)))
        return
    for m, t in zip(mine, tfargs):
        where = "%s arg %s" % (what, m["name"])
        if (op["name"], t.type_attr) in KNOWN and m["fixed"] and not m["type_attr"]:
            # the arg's type attr is a known newer one: pcc's fixed type
            # must be its default (what TensorFlow fills in)
            d = op_def_registry.get(op["name"])
            ta = [a for a in d.attr if a.name == t.type_attr][0]
            if m["fixed"] != dt_name(ta.default_value.type):
                out.append("%s is %s, the default of TensorFlow's %s is %s" % (
                    where, m["fixed"], t.type_attr, dt_name(ta.default_value.type)))
            t = type(t)(name=t.name, type=types_pb2.DataType.Value(m["fixed"]),
                        number_attr=t.number_attr, is_ref=t.is_ref)
        if m["name"] != t.name:
            out.append("%s is TensorFlow's %s" % (where, t.name))
        is_list_attr = m["type_attr"] is not None and attrs.get(m["type_attr"], {}).get("list")
        mine_form = {
            "type": m["fixed"] or "DT_INVALID",
            "type_attr": "" if is_list_attr else (m["type_attr"] or ""),
            "type_list_attr": m["type_attr"] if is_list_attr else "",
            "number_attr": m["num_attr"] or "",
            "is_ref": m["ref"],
        }
        tf_form = {
            "type": dt_name(t.type), "type_attr": t.type_attr,
            "type_list_attr": t.type_list_attr, "number_attr": t.number_attr,
            "is_ref": t.is_ref,
        }
        for k in mine_form:
            if mine_form[k] != tf_form[k]:
                out.append("%s: %s %r, TensorFlow's %r" % (where, k, mine_form[k], tf_form[k]))


def check_op(op, known_seen):
    d = op_def_registry.get(op["name"])
    if d is None:
        return ["not in TensorFlow's op registry"]
    out = []
    attrs = {a["name"]: a for a in op["attrs"]}
    tf_attrs = {a.name: a for a in d.attr}
    for n, tfa in tf_attrs.items():
        if n in attrs:
            check_attr(op, attrs[n], tfa, out)
        elif (op["name"], n) in KNOWN:
            known_seen.add((op["name"], n))
            if tfa.HasField("default_value"):
                continue
            out.append("attr %s is listed as known but has no default" % n)
        else:
            out.append("lacks TensorFlow's attr %s: %s%s" % (
                n, tfa.type, " (required: no default)" if not tfa.HasField("default_value") else ""))
    for n in attrs:
        if n not in tf_attrs:
            out.append("has attr %s, which TensorFlow lacks" % n)
    check_args(op, "input", op["in"], d.input_arg, attrs, out)
    check_args(op, "output", op["out"], d.output_arg, attrs, out)
    return out


def find(table, op, key=None, name=None):
    row = [r for r in table["ops"] if r["name"] == op][0]
    return row if key is None else [x for x in row[key] if x["name"] == name][0]


# --self-test: each mutation of the table is a disagreement the check must
# report (so the check itself can fail): (what, op, mutate(table)).
MUTATIONS = [
    ("an attr dropped", "Conv2D",
     lambda t: find(t, "Conv2D")["attrs"].remove(find(t, "Conv2D", "attrs", "dilations"))),
    ("an extra attr", "Relu",
     lambda t: find(t, "Relu")["attrs"].append(dict(find(t, "Relu", "attrs", "T"), name="extra"))),
    ("a default", "Conv2D",
     lambda t: find(t, "Conv2D", "attrs", "data_format").update(default="'NCHW'")),
    ("a float default", "LeakyRelu",
     lambda t: find(t, "LeakyRelu", "attrs", "alpha").update(default="0.25")),
    ("a list default", "Conv2D",
     lambda t: find(t, "Conv2D", "attrs", "dilations").update(default="[1, 1, 1]")),
    ("a default left out", "Squeeze",
     lambda t: find(t, "Squeeze", "attrs", "squeeze_dims").update(default=None)),
    ("a minimum", "ConcatV2",
     lambda t: find(t, "ConcatV2", "attrs", "N").update(min=1)),
    ("a type set", "Relu",
     lambda t: find(t, "Relu", "attrs", "T")["types"].remove("DT_HALF")),
    ("a string set", "MirrorPad",
     lambda t: find(t, "MirrorPad", "attrs", "mode")["strs"].pop()),
    ("an attr kind", "Pack",
     lambda t: find(t, "Pack", "attrs", "axis").update(kind="float")),
    ("an arg name", "MatMul",
     lambda t: find(t, "MatMul", "in", "b").update(name="c")),
    ("an arg dropped", "Select",
     lambda t: find(t, "Select")["in"].pop()),
    ("a number_attr", "ConcatV2",
     lambda t: find(t, "ConcatV2", "in", "values").update(num_attr=None)),
    ("is_ref", "ApplyAdam",
     lambda t: find(t, "ApplyAdam", "in", "var").update(ref=False)),
    ("a fixed type", "Select",
     lambda t: find(t, "Select", "in", "condition").update(fixed="DT_INT32")),
    ("a type_list_attr", "IdentityN",
     lambda t: find(t, "IdentityN", "attrs", "T").update(list=False)),
    ("a known arg's fixed type", "TopKV2",
     lambda t: find(t, "TopKV2", "in", "k").update(fixed="DT_INT64")),
]


def self_test(table):
    import copy
    npass = nfail = 0
    for what, op, mutate in MUTATIONS:
        t = copy.deepcopy(table)
        mutate(t)
        if check_op(find(t, op), set()):
            npass += 1
        else:
            nfail += 1
            print("FAIL self-test: %s of %s went unnoticed" % (what, op))
    # an attr listed as KNOWN that the row then has: the list is stale
    t = copy.deepcopy(table)
    find(t, "TopKV2")["attrs"].append(dict(find(t, "TopKV2", "attrs", "T"), name="Tk"))
    seen = set()
    check_op(find(t, "TopKV2"), seen)
    if ("TopKV2", "Tk") in seen:
        nfail += 1
        print("FAIL self-test: a stale KNOWN entry went unnoticed")
    else:
        npass += 1
    return npass, nfail


def main():
    with open(sys.argv[-1]) as f:
        table = json.load(f)
    if len(sys.argv) > 2 and sys.argv[1] == "--self-test":
        npass, nfail = self_test(table)
        print("tfops-self: %d passed, %d failed" % (npass, nfail))
        return 1 if nfail else 0
    npass = nfail = 0
    known_seen = set()
    for op in table["ops"]:
        problems = check_op(op, known_seen)
        if problems:
            nfail += 1
            for p in problems:
                print("FAIL %s: %s" % (op["name"], p))
        else:
            npass += 1
    stale = sorted(set(KNOWN) - known_seen)
    if stale:
        nfail += 1
        for op, attr in stale:
            print("FAIL KNOWN lists %s.%s, which no longer differs from TensorFlow" % (op, attr))
    else:
        npass += 1
    import tensorflow as tf
    print("tfops: checked %d rows against TensorFlow %s" % (len(table["ops"]), tf.__version__))
    print("tfops: %d passed, %d failed" % (npass, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
