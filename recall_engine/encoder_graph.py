"""The sentence model's encoder as an ONNX graph, with int8 weights, built from its safetensors file.

``recall_engine.sentence`` runs this graph with onnxruntime. The graph is built
here, once per machine (the built file is kept in the user's cache folder), with
``onnx.helper``: no torch, nothing downloaded. See docs/review-queues.md
("Speed") for the figures behind each choice:

- the six BERT layers of all-MiniLM-L6-v2, with onnxruntime's fused CPU kernels
  (MultiHeadAttention, Gelu with the exact erf), then mean pooling over the real
  tokens and L2 normalisation. Each residual's layer norm is an Add and the
  standard LayerNormalization, not the fused SkipLayerNormalization: in
  onnxruntime 1.32 that kernel took a quarter of a batch's time, the two plain
  nodes together about a quarter as much: 25% less CPU for a batch in all (the session keeps
  onnxruntime from fusing them back: ``sentence.Encoder._session``). The token embeddings
  stay outside the graph (``sentence`` adds the mapped rows it needs), so the
  built file holds only the encoder: 11 MB, small enough to stay in cache;
- every linear layer's weights in int8, one scale per output column, and the
  activations quantised with fixed ranges (static quantisation): each layer's
  input range is measured over the starter registries' names and descriptions
  (``measure``; for the shipped weights the figures are in
  ``recall_engine.encoder_ranges``, written by ``python -m recall_engine.sentence``,
  so building takes a second, not a run over every text). A range fixed in advance makes a text's vector the same whatever
  it is embedded beside, which ranges taken from each batch would not;
- weights use 7 of their 8 bits: CPUs without VNNI multiply uint8 by int8 with
  16-bit sums that saturate on full-range weights, and one bit less keeps every
  sum exact.
"""

from __future__ import annotations

import json
import mmap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

VERSION = "int8-static-2"  # change with the graph or its quantisation: a new built file and new vectors
HIDDEN = 384
_WEIGHT_LEVELS = 63  # 7 bits (see above)


def read_weights(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file as read-only numpy views of the file, mapped.

    Nothing is copied: the word-embedding table alone is 47 MB and a name touches a
    handful of its rows. The format is 8 bytes of header length, a JSON header giving
    each tensor's dtype, shape and byte range, then the bytes."""
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


class Weights:
    """The model's tensors, checked against its configuration.

    ``layers`` holds, per layer: the joined Q, K, V weights as (in, out) and their bias,
    the attention output's weights and bias, its layer norm, the intermediate and output
    linear layers and the output layer norm."""

    def __init__(self, directory: Path, cfg: dict[str, Any]):
        w = read_weights(directory / "model.safetensors")
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in w else ""

        def g(name: str, *shape: int) -> np.ndarray:
            a = w.get(prefix + name)
            if a is None:
                raise ValueError(f"the weights have no tensor {name}")
            if a.shape != shape:
                raise ValueError(f"tensor {name} has shape {a.shape}, expected {shape}")
            return a

        hidden = int(cfg["hidden_size"])
        inner = int(cfg["intermediate_size"])
        if hidden != HIDDEN:
            raise ValueError(f"the model gives {hidden} dimensions, expected {HIDDEN}")
        self.heads = int(cfg["num_attention_heads"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.word = g("embeddings.word_embeddings.weight", int(cfg["vocab_size"]), hidden)
        position = g("embeddings.position_embeddings.weight", int(cfg["max_position_embeddings"]), hidden)
        self.token_type = g("embeddings.token_type_embeddings.weight", int(cfg["type_vocab_size"]), hidden)[0]
        self.position = position
        self.emb_ln = (g("embeddings.LayerNorm.weight", hidden), g("embeddings.LayerNorm.bias", hidden))
        self.layers = []
        for i in range(int(cfg["num_hidden_layers"])):
            p = f"encoder.layer.{i}."
            qkv = ("query", "key", "value")
            self.layers.append(
                (
                    np.concatenate([g(p + f"attention.self.{m}.weight", hidden, hidden).T for m in qkv], axis=1),
                    np.concatenate([g(p + f"attention.self.{m}.bias", hidden) for m in qkv]),
                    g(p + "attention.output.dense.weight", hidden, hidden).T,
                    g(p + "attention.output.dense.bias", hidden),
                    g(p + "attention.output.LayerNorm.weight", hidden),
                    g(p + "attention.output.LayerNorm.bias", hidden),
                    g(p + "intermediate.dense.weight", inner, hidden).T,
                    g(p + "intermediate.dense.bias", inner),
                    g(p + "output.dense.weight", hidden, inner).T,
                    g(p + "output.dense.bias", hidden),
                    g(p + "output.LayerNorm.weight", hidden),
                    g(p + "output.LayerNorm.bias", hidden),
                )
            )


Ranges = dict[str, tuple[float, float]]


def graph(weights: Weights, ranges: Ranges | None) -> tuple[Any, list[str]]:
    """The encoder as an ONNX model, and the names of its linear layers' inputs.

    Inputs: ``emb`` (n, t, 384) float32, each token's word + position + segment
    embedding, and ``mask`` (n, t) int32, 1 for real tokens; output ``vec`` (n, 384),
    unit rows. With ``ranges`` (each linear input's measured (low, high)) the linear
    layers are int8; without them float32, every linear input is an output too
    (what ``measure`` reads)."""
    from onnx import TensorProto, helper, numpy_helper

    nodes: list[Any] = []
    tensors: list[Any] = []
    taps: list[str] = []

    def const(name: str, a: np.ndarray) -> str:
        tensors.append(numpy_helper.from_array(np.ascontiguousarray(a), name))
        return name

    def op(kind: str, inputs: list[str], output: str, ms: bool = False, **attrs: Any) -> str:
        nodes.append(helper.make_node(kind, inputs, [output], domain="com.microsoft" if ms else "", **attrs))
        return output

    def linear(x: str, w: np.ndarray, b: np.ndarray, name: str) -> str:
        taps.append(x)
        if ranges is None:
            return op("Add", [op("MatMul", [x, const(name + ".w", w)], name + ".mm"), const(name + ".b", b)], name)
        low, high = ranges[x]
        low, high = min(low, 0.0), max(high, 0.0)
        a_scale = np.float32(max(high - low, 1e-6) / 255)
        a_zero = np.uint8(np.clip(np.rint(-low / a_scale), 0, 255))
        top = np.abs(w).max(0)
        w_scale = (np.where(top > 0, top, 1.0) / _WEIGHT_LEVELS).astype(np.float32)
        q = np.clip(np.rint(w / w_scale), -_WEIGHT_LEVELS, _WEIGHT_LEVELS).astype(np.int8)
        s, z = const(name + ".as", np.array(a_scale)), const(name + ".az", np.array(a_zero))
        xq = op("QuantizeLinear", [x, s, z], name + ".xq")
        return op(
            "MatMulIntegerToFloat",
            [xq, const(name + ".q", q), s, const(name + ".ws", w_scale), z, "", const(name + ".b", b)],
            name,
            ms=True,
        )

    eps = weights.eps

    def skip_norm(y: str, residual: str, w: np.ndarray, b: np.ndarray, norm: str, output: str) -> str:
        """Layer norm of ``y + residual``: an Add and the standard LayerNormalization, whose CPU
        kernel and the Add take about a quarter of the fused SkipLayerNormalization's time (module doc)."""
        total = op("Add", [y, residual], output + ".sum")
        return op(
            "LayerNormalization", [total, const(norm + ".w", w), const(norm + ".b", b)], output, axis=-1, epsilon=eps
        )

    ln = [const(f"emb.ln.{i}", a) for i, a in enumerate(weights.emb_ln)]
    x = op("LayerNormalization", ["emb", *ln], "x0", axis=-1, epsilon=eps)
    thirds = const("qkv.split", np.array([HIDDEN] * 3, dtype=np.int64))
    for i, (qkv_w, qkv_b, ao_w, ao_b, ln1_w, ln1_b, i_w, i_b, o_w, o_b, ln2_w, ln2_b) in enumerate(weights.layers):
        p = f"l{i}."
        qkv = linear(x, qkv_w, qkv_b, p + "qkv")
        nodes.append(helper.make_node("Split", [qkv, thirds], [p + "q", p + "k", p + "v"], axis=2))
        ctx = op(
            "MultiHeadAttention", [p + "q", p + "k", p + "v", "", "mask"], p + "ctx", ms=True, num_heads=weights.heads
        )
        x = skip_norm(linear(ctx, ao_w, ao_b, p + "ao"), x, ln1_w, ln1_b, p + "ln1", p + "x1")
        h = op("Gelu", [linear(x, i_w, i_b, p + "in")], p + "gelu", ms=True)
        x = skip_norm(linear(h, o_w, o_b, p + "out"), x, ln2_w, ln2_b, p + "ln2", p + "x2")
    # mean over the real tokens, then unit length (the mean's divisor cancels out)
    mask = op(
        "Unsqueeze", [op("Cast", ["mask"], "maskf", to=TensorProto.FLOAT), const("axis2", np.array([2]))], "mask3"
    )
    total = op("ReduceSum", [op("Mul", [x, mask], "masked"), const("axis1", np.array([1]))], "pooled", keepdims=0)
    op("LpNormalization", [total], "vec", axis=1, p=2)
    outputs = [helper.make_tensor_value_info("vec", TensorProto.FLOAT, ["n", HIDDEN])]
    if ranges is None:
        outputs += [helper.make_tensor_value_info(t, TensorProto.FLOAT, None) for t in taps]
    g = helper.make_graph(
        nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info("emb", TensorProto.FLOAT, ["n", "t", HIDDEN]),
            helper.make_tensor_value_info("mask", TensorProto.INT32, ["n", "t"]),
        ],
        outputs,
        tensors,
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8  # what onnxruntime 1.17 and later read
    return model, taps


def measure(
    session_of: Callable[[bytes], Any], weights: Weights, batches: Sequence[tuple[np.ndarray, np.ndarray]]
) -> Ranges:
    """Each linear input's (low, high) over the float32 graph run on ``batches`` of (emb, mask),
    every batch of texts of one token count (padding would add values no text has)."""
    model, taps = graph(weights, None)
    session = session_of(model.SerializeToString())
    ranges = {t: (0.0, 0.0) for t in taps}
    for emb, mask in batches:
        for t, a in zip(taps, session.run(None, {"emb": emb, "mask": mask})[1:], strict=True):
            low, high = ranges[t]
            ranges[t] = (min(low, float(a.min())), max(high, float(a.max())))
    return ranges


def build(weights: Weights, ranges: Ranges) -> bytes:
    """The int8 encoder's serialised ONNX model, with these activation ranges."""
    model, _ = graph(weights, ranges)
    return model.SerializeToString()
