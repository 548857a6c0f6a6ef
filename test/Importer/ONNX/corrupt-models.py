# RUN: %python %s tq-import-onnx tq-opt %tq_src/models %tq_models | FileCheck %s
# Corrupt variants of real models get a diagnostic, never a crash. Each
# bundled model (and each published model scripts/fetch-models.sh cached,
# when present) is damaged in ways a file from the wild can be: sizes from
# the file that overflow, negative or zero dims, tensors whose data is
# shorter than their dims, unknown data types, dangling and cyclic names,
# nonsense attributes, and bytes truncated or flipped at random.
#
# - A structural corruption must be rejected: exit 1 with one
#   "tq-import-onnx: error:" line naming what is wrong.
# - A byte-level one may also leave a valid model (exit 0); then the
#   output must verify in tq-opt.
# - Nothing may crash, hang or trip the sanitizers (the suite runs again
#   with every tool built with ASan + UBSan).
import copy
import os
import random
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

importer, opt, bundled, published = sys.argv[1:5]
models = [os.path.join(bundled, m) for m in sorted(os.listdir(bundled))
          if m.endswith(".onnx")]
# One of each kind: the heads are all the same network.
for name in ("melspectrogram.onnx", "embedding_model.onnx", "hey_jarvis_v0.1.onnx",
             "silero_vad.onnx"):
    path = os.path.join(published, name)
    if os.path.exists(path):
        models.append(path)

BAD = ("Sanitizer", "runtime error:", "Stack dump", "PLEASE submit")


def initializer(m, rank=1):
    """The first initializer with data and at least `rank` dims."""
    for t in m.graph.initializer:
        if len(t.dims) >= rank and (t.raw_data or t.float_data):
            return t
    return None


def conv(m):
    return next((n for n in m.graph.node if n.op_type == "Conv"), None)


def attr(node, name):
    return next((a for a in node.attribute if a.name == name), None)


def dim_huge(m):
    t = initializer(m)
    t.dims[0] = 2**63 - 1


def dim_product_overflows(m):
    t = initializer(m, 2)
    t.dims[0], t.dims[1] = 2**40, 2**40


def dim_negative(m):
    initializer(m).dims[0] = -5


def data_short(m):
    t = initializer(m)
    if t.raw_data:
        t.raw_data = t.raw_data[: len(t.raw_data) // 2]
    else:
        del t.float_data[len(t.float_data) // 2:]


def data_type_unknown(m):
    initializer(m).data_type = 999


def data_type_string(m):
    t = initializer(m)
    t.data_type = TensorProto.STRING


def input_dangling(m):
    m.graph.node[len(m.graph.node) // 2].input[0] = "no_such_tensor"


def node_cycle(m):
    n = m.graph.node[len(m.graph.node) // 2]
    n.input[0] = n.output[0]


def graph_output_missing(m):
    m.graph.output[0].name = "never_produced"


def input_dim_huge(m):
    t = m.graph.input[0].type.tensor_type
    t.shape.dim[-1].ClearField("dim_param")
    t.shape.dim[-1].dim_value = 2**62


def opset_future(m):
    m.opset_import[0].version = 10000


def set_conv_attr(m, name, value):
    """Replaces (or adds) attribute `name` of the first Conv; False when
    the model has no Conv."""
    n = conv(m)
    if n is None:
        return False
    a = attr(n, name)
    if a is not None:
        n.attribute.remove(a)
    n.attribute.append(helper.make_attribute(name, value))
    return True


def strides_zero(m):
    return set_conv_attr(m, "strides", [0, 0])


def pads_huge(m):
    n = conv(m)
    k = attr(n, "kernel_shape") if n is not None else None
    return set_conv_attr(m, "pads", [2**40] * (2 * (len(k.ints) if k else 2)))


def kernel_shape_wrong_type(m):
    return set_conv_attr(m, "kernel_shape", 3.5)


def group_zero(m):
    return set_conv_attr(m, "group", 0)


STRUCTURAL = [dim_huge, dim_product_overflows, dim_negative, data_short,
              data_type_unknown, data_type_string, input_dangling, node_cycle,
              graph_output_missing, input_dim_huge, opset_future, strides_zero,
              pads_huge, kernel_shape_wrong_type, group_zero]

work = tempfile.mkdtemp(prefix="tq-corrupt-")
rng = random.Random(20261201)
counts = {"rejected": 0, "imported": 0, "bad": 0}


def run(path, label, must_reject, extra):
    out = path + ".mlir"
    try:
        p = subprocess.run([importer, path, "-o", out, *extra], capture_output=True,
                           text=True, errors="replace", timeout=300)
    except subprocess.TimeoutExpired:
        print(f"BAD {label}: timed out")
        counts["bad"] += 1
        return
    errors = [l for l in p.stderr.splitlines() if "error:" in l]
    if any(b in p.stderr for b in BAD) or p.returncode not in (0, 1):
        print(f"BAD {label}: exit {p.returncode}: {p.stderr[-600:]}")
        counts["bad"] += 1
    elif p.returncode == 1:
        if not p.stderr.startswith("tq-import-onnx: error:") or not errors:
            print(f"BAD {label}: no diagnostic: {p.stderr[:300]}")
            counts["bad"] += 1
        else:
            counts["rejected"] += 1
            return errors[0].split(path + ": ", 1)[-1]
    elif must_reject:
        print(f"BAD {label}: imported a corrupt model")
        counts["bad"] += 1
    else:
        v = subprocess.run([opt, out, "-o", "/dev/null"], capture_output=True,
                           text=True, errors="replace")
        if v.returncode != 0:
            print(f"BAD {label}: imported IR does not verify: {v.stderr[:300]}")
            counts["bad"] += 1
        else:
            counts["imported"] += 1


def fix_dims(m):
    """Symbolic input dims fixed, so that the import gets past them: a
    leading one or a batch to 1, others (samples, sequence) to 512."""
    for i in m.graph.input:
        for k, d in enumerate(i.type.tensor_type.shape.dim):
            if not d.HasField("dim_value"):
                batch = k == 0 or "batch" in d.dim_param
                d.ClearField("dim_param")
                d.dim_value = 1 if batch else 512


# silero_vad's sample rate, an int64 scalar input, bound as a constant.
sr = os.path.join(tempfile.mkdtemp(prefix="tq-corrupt-sr-"), "sr.npy")
np.save(sr, np.array(16000, np.int64))


def flags(m):
    names = {i.name for i in m.graph.input}
    return [f"--constant-input=sr={sr}"] if "sr" in names else []


structural = 0
for model_path in models:
    base = onnx.load(model_path)
    fix_dims(base)
    name = os.path.basename(model_path)
    # The undamaged model imports: the diagnostics below are about the damage.
    path = os.path.join(work, f"{name}.intact.onnx")
    with open(path, "wb") as f:
        f.write(base.SerializeToString())
    extra = flags(base)
    intact = subprocess.run([importer, path, "-o", "/dev/null", *extra],
                            capture_output=True,
                            text=True, errors="replace")
    if intact.returncode != 0:
        print(f"BAD {name}: the intact model does not import: {intact.stderr[:300]}")
        counts["bad"] += 1
        continue
    for corrupt in STRUCTURAL:
        m = copy.deepcopy(base)
        if corrupt(m) is False:
            continue
        path = os.path.join(work, f"{name}.{corrupt.__name__}.onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        structural += 1
        diagnostic = run(path, f"{name} {corrupt.__name__}", must_reject=True,
                         extra=extra)
        if name == "digits_cnn.onnx":
            print(f"{corrupt.__name__}: {diagnostic}")
    data = base.SerializeToString()
    for trial in range(6):
        mutated = bytearray(data)
        if trial % 2 == 0:
            mutated = mutated[: rng.randrange(len(mutated))]
        else:
            for _ in range(rng.randint(1, 16)):
                mutated[rng.randrange(len(mutated))] = rng.randrange(256)
        path = os.path.join(work, f"{name}.bytes{trial}.onnx")
        with open(path, "wb") as f:
            f.write(mutated)
        run(path, f"{name} bytes{trial}", must_reject=False, extra=extra)

print(f"models {len(models)}, structural variants {structural}")
print(f"bad {counts['bad']}")
# CHECK-NOT: BAD
# CHECK: dim_huge: initializer '0.weight': tensor has more than 2^32 elements
# CHECK: dim_product_overflows: initializer '0.weight': tensor has more than 2^32 elements
# CHECK: dim_negative: initializer '0.weight': tensor has a negative dimension (-5)
# CHECK: data_short: initializer '0.weight': raw data size does not match the shape
# CHECK: data_type_unknown: initializer '0.weight': tensors of data type 999 are not supported
# CHECK: data_type_string: initializer '0.weight': tensors of data type 8 are not supported
# CHECK: input_dangling: node '{{.*}}' ({{.*}}): input 'no_such_tensor' is not defined
# CHECK: node_cycle: node '{{.*}}' ({{.*}}): input '{{.*}}' is not defined
# CHECK: graph_output_missing: output 'never_produced' is not computed by the graph
# CHECK: input_dim_huge: input 'image' would have a dimension of 4611686018427387904 (at most 2^31-1)
# CHECK: opset_future: opset 10000 is not supported
# CHECK: strides_zero: node '/0/Conv' (Conv): stride 0 is out of range
# CHECK: pads_huge: node '/0/Conv' (Conv): pad 1099511627776 is out of range
# CHECK: kernel_shape_wrong_type: node '/0/Conv' (Conv): attribute 'kernel_shape' is FLOAT, expected INTS
# CHECK: group_zero: node '/0/Conv' (Conv): group 0 does not divide the channels
# CHECK-NOT: BAD
# CHECK: models {{[0-9]+}}, structural variants {{[0-9]+}}
# CHECK: bad 0
