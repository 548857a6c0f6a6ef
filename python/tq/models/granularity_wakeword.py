"""The rows of the granularity table (tq.models.granularity) for the
published openWakeWord models (scripts/fetch-models.sh), with the same
VARIANTS, on SECONDS of espeak-ng speech (tq.models.wakeword.speech) that
onnxruntime turns into embeddings (the pipeline of tq.models.wakeword):

- wakeword-heads: the alexa and hey_mycroft heads (Gemm/MatMul MLPs), every
  frame's last 16 embeddings in one batch. Accuracy: the share of frames
  whose decision (score > 0.5) agrees with ORT f32's.
- wakeword-embedding: embedding_model.onnx (20 convolutions) on the first
  EMBEDDING_WINDOWS windows. Accuracy: the share of the two heads'
  decisions (ORT f32 heads fed tq's embeddings) that agree with those on
  ORT's embeddings; the cell adds the largest |tq - ORT| of the embeddings
  relative to max |ORT|, which moves where the decisions do not.

hey_jarvis is left out: its If takes one frame per call (one tq-run per
frame and variant). The embedding takes about 25 s per variant on 2 busy
cores (three compilations: run, timing, PPU; the PPU simulator about 20 s
for 30 windows), the heads about 1.5 s.
"""
import os
import shutil
import tempfile

import numpy as np

from tq.cpu import Runner
from tq.models.compile_time import PUBLISHED, ROOT
from tq.models.evaluate import Row
from tq.models.granularity import VARIANTS
from tq.models.wakeword import CHUNK, HEADS, STEP, WINDOW, speech
from tq.ort import ORT, install
from tq.ppu import Flow, ToolError

SECONDS = 8.0                 # 54 frames for the heads
# The first 5 s: alexa's detections (frames 24 to 28) and their history;
# the PPU simulator's time grows with the windows.
EMBEDDING_WINDOWS = 30
TABLE_HEADS = ("alexa_v0.1.onnx", "hey_mycroft_v0.1.onnx")
MODELS = ("wakeword-heads", "wakeword-embedding")
ALIASES = {"wakeword": list(MODELS)}
NOTE = (f"openWakeWord models (scripts/fetch-models.sh) on {SECONDS:g} s of espeak-ng "
        "speech whose embeddings onnxruntime (ORT) computes: a head's accuracy is the "
        "share of frames whose decision (score > 0.5) agrees with ORT f32's, the "
        "embedding model's the share of the two heads' decisions on its embeddings "
        "(ORT f32 heads) that agree with those on ORT's, followed by the largest "
        "|tq - ORT| of the embeddings relative to max |ORT|; CPU ms and PPU cycles "
        "for the whole batch of frames or windows.")


def missing():
    """Why the rows cannot be made on this machine, or None."""
    if not os.path.isdir(PUBLISHED):
        return f"{os.path.relpath(PUBLISHED, ROOT)} is absent (run scripts/fetch-models.sh)"
    tools = [t for t in ("node", "npm", "espeak-ng", "sox") if not shutil.which(t)]
    if tools:
        return f"{', '.join(tools)} not found (run scripts/install-deps.sh node audio)"
    return None


def model(name):
    return os.path.join(PUBLISHED, name)


def embeddings(ort, audio):
    """ORT's pipeline up to the embeddings (as tq.models.wakeword runs it):
    the mel spectrogram of every chunk, x/10 + 2, windows of 76 frames every
    8. Returns the windows and their embeddings (N x 96)."""
    (mel,) = ort.run(model("melspectrogram.onnx"), {"input": audio.reshape(-1, CHUNK)})[0].values()
    frames = (mel.reshape(-1, 32) / 10 + 2).astype(np.float32)
    starts = range(0, len(frames) - WINDOW + 1, STEP)
    windows = np.stack([frames[s:s + WINDOW] for s in starts])[..., None]
    (emb,) = ort.run(model("embedding_model.onnx"), {"input_1": windows})[0].values()
    return windows, emb.reshape(len(windows), 96)


def head_inputs(head, emb):
    """Each frame's last W embeddings (zeros before the first)."""
    w = HEADS[head][1]
    history = np.concatenate([np.zeros((w - 1, 96), np.float32), emb])
    return np.stack([history[i:i + w] for i in range(len(emb))]).astype(np.float32)


def ort_scores(ort, head, emb):
    """The head's score per frame in ORT (batch 1: one call per frame)."""
    feeds = [{HEADS[head][0]: f[None]} for f in head_inputs(head, emb)]
    return np.concatenate([list(o.values())[0] for o in ort.run_many(model(head), feeds)])[:, 0]


def agreement(scores, reference):
    return float(((scores > 0.5) == (reference > 0.5)).mean() * 100)


def measure(build, onnx_file, input_name, x, score):
    """Every VARIANTS entry of `onnx_file` on the batch `x`, as
    tq.models.evaluate.evaluate runs one: (Row, program text, note), the
    accuracy and note from score(output), the CPU time of the batch, the
    PPU run's statistics where tq-run --target=ppu runs it."""
    bindir = os.path.join(build, "bin")
    flow = Flow(opt=os.path.join(bindir, "tq-opt"),
                workdir=tempfile.mkdtemp(prefix="tq-granularity-"))
    cpu = Runner(os.path.join(bindir, "tq-run"), workdir=flow.dir)
    imported = flow.path("model.mlir")
    flow.run(os.path.join(bindir, "tq-import-onnx"), model(onnx_file),
             f"--input-shape={input_name}:" + "x".join(map(str, x.shape)), "-o", imported)
    results = []
    for i, (variant, options) in enumerate(VARIANTS):
        src = imported if options is None else flow.opt(
            imported, f"-tq-quantize={options}", out=f"q{i}.mlir")
        with open(src) as f:
            text = f.read()
        (out,) = cpu.run(text, [x])
        accuracy, note = score(out)
        r = Row(variant, accuracy, cpu_ms=cpu.time(text, [x]))
        if options:
            try:
                (p,), r.ppu_stats = cpu.run_ppu(text, [x])
                r.ppu_same = p.tobytes() == out.tobytes()
            except ToolError:
                pass  # printed as "not on the PPU"
        results.append((r, text, note))
    return results


def rows(build, names):
    """Yields (label, results) per model of `names` (MODELS), results as
    granularity.print_rows takes them."""
    work = tempfile.mkdtemp(prefix="tq-granularity-wakeword-")
    ort = ORT(install(), workdir=work)
    windows, emb = embeddings(ort, speech(work, SECONDS))
    if "wakeword-heads" in names:
        for head in TABLE_HEADS:
            ref = ort_scores(ort, head, emb)
            results = measure(build, head, HEADS[head][0], head_inputs(head, emb),
                              lambda out: (agreement(out[:, 0], ref), ""))
            yield (f"{head[:-5]} ({len(emb)} frames, {int((ref > 0.5).sum())} detected "
                   "by ORT; accuracy: decisions as ORT's)"), results
    if "wakeword-embedding" in names:
        windows, emb = windows[:EMBEDDING_WINDOWS], emb[:EMBEDDING_WINDOWS]
        refs = [ort_scores(ort, head, emb) for head in TABLE_HEADS]

        def score(out):
            out = out.reshape(emb.shape)
            agree = np.mean([agreement(ort_scores(ort, h, out), r)
                             for h, r in zip(TABLE_HEADS, refs)])
            error = np.abs(out - emb).max() / np.abs(emb).max()
            return float(agree), f" (error {error:.3f})"

        detected = sum(int((r > 0.5).sum()) for r in refs)
        yield (f"embedding_model ({len(emb)} windows, {detected} detections by ORT; "
               "accuracy: head decisions on its embeddings as ORT's)"), \
            measure(build, "embedding_model.onnx", "input_1", windows, score)
