"""An ONNX export's two graphs (nmt.export.onnx) behind the part of the Transformer's interface
that nmt's searches call (encode, start_decoding, decode_step, start_token, cfg.max_positions),
so that nmt.decode.search runs over them unchanged: the same beam search, with its every rule,
on onnxruntime.

decoder.onnx takes the encoder side (each decoder layer's keys and values, the source's padding
bias) once per sentence, shared by its K beams (K consecutive rows), as nmt's own decoder keeps it;
it is selected again only when sentences leave the batch. (An export written before that takes it
per row: repeated for each beam when decoding starts.) The self-attention past travels in and out
of the graph as arrays, reordered with the beams.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from nmt.export.onnx import DECODER_OUTPUTS, STEP_OUTPUTS


@dataclass
class GraphState:
    """What decoding carries between steps: DecoderState's counterpart for the graphs."""

    memory_keys: np.ndarray  # (L, B, h, dh, S): per sentence (per row, N of them, where shared is False)
    memory_values: np.ndarray  # (L, B, h, S, dh)
    src_bias: np.ndarray  # (B, 1, 1, S)
    past_keys: np.ndarray  # (L, N, h, t, dh), N = B·beams rows, a sentence's beams consecutive
    past_values: np.ndarray
    beams: int = 1
    length: int = 0
    shared: bool = True  # the encoder side once per sentence (False: once per row)
    wants_attention: bool = False  # each step's attention asked of the graph (word alignments), else left there
    attention: np.ndarray | None = None  # (N, S): the last step's, where wanted

    def select(self, rows: Tensor, same_sentences: bool = False) -> GraphState:
        """Keep (and reorder) rows, in blocks of `beams` per sentence, as DecoderState.select."""
        rows = rows.cpu().numpy()
        keys, values, bias = self.memory_keys, self.memory_values, self.src_bias
        if not same_sentences:  # (with the same sentences, the encoder side stays as it is)
            kept = rows.reshape(-1, self.beams)[:, 0] // self.beams if self.shared else rows
            keys, values, bias = keys[:, kept], values[:, kept], bias[kept]
        return GraphState(keys, values, bias, self.past_keys[:, rows], self.past_values[:, rows], self.beams,
                          self.length, self.shared, self.wants_attention)


class OnnxGraphs:
    """encoder.onnx and decoder.onnx (onnxruntime sessions) as nmt's searches call a model."""

    def __init__(self, encoder, decoder, config: dict):
        self.encoder, self.decoder, self.config = encoder, decoder, config
        self.cfg = SimpleNamespace(max_positions=config["max_positions"])  # for the searches' length limits
        self.start_token = config["start_token"]
        self.shared = config.get("encoder_side", "per_row") == "per_sentence"
        # an export that lists no outputs (written before) gives no attention
        self.gives_attention = "attention" in config.get("outputs", {}).get("decoder", [])

    def encode(self, src: Tensor) -> tuple[tuple[np.ndarray, ...], None]:
        """The encoder graph's outputs, in the place of (memory, src_mask): start_decoding's input."""
        return tuple(self.encoder.run(None, {"src_ids": src.cpu().numpy()})), None

    def start_decoding(self, memory: tuple[np.ndarray, ...], src_mask: None, beams: int = 1,
                       vocabulary: Tensor | None = None, attention: bool = False, compiled: bool = False) -> GraphState:
        """The state before the first step; with `attention` (where the graph gives it), each step
        also returns the attention alignments are read from (the searches leave it in the graph).
        `compiled` (decode.compile) changes nothing: onnxruntime optimizes the graphs itself."""
        if vocabulary is not None:
            raise ValueError("an ONNX export decodes over its whole vocabulary (no shortlist)")
        keys, values, bias = memory
        rows = bias.shape[0] * beams
        if beams > 1 and not self.shared:  # an older export's: each row its sentence's
            keys, values, bias = np.repeat(keys, beams, axis=1), np.repeat(values, beams, axis=1), np.repeat(bias, beams, axis=0)
        c = self.config
        past = np.zeros((c["decoder_layers"], rows, c["heads"], 0, c["head_dim"]), dtype=np.float32)
        return GraphState(keys, values, bias, past, past.copy(), beams, shared=self.shared,
                          wants_attention=attention and self.gives_attention)

    def decode_step(self, tokens: Tensor, state: GraphState, forbid=None) -> Tensor:
        """tokens (N,) -> log-probabilities (N, V) of the next token, as Transformer.decode_step:
        `forbid` sets what may not come next to -inf, and the rest is renormalized (the graph's
        log-probabilities are logits up to a constant per row). Advances the state (the step's
        attention in state.attention, where the state wants it)."""
        outputs = DECODER_OUTPUTS if state.wants_attention else STEP_OUTPUTS
        log_probs, state.past_keys, state.past_values, *attention = self.decoder.run(list(outputs), {
            "tokens": tokens.cpu().numpy(), "position": np.array([state.length], dtype=np.int64),
            "src_bias": state.src_bias, "memory_keys": state.memory_keys, "memory_values": state.memory_values,
            "past_keys": state.past_keys, "past_values": state.past_values})
        state.length += 1
        state.attention = attention[0] if attention else None
        log_probs = torch.from_numpy(log_probs)
        if forbid is None:
            return log_probs
        forbid(log_probs)
        return F.log_softmax(log_probs, dim=-1)


def session_threads(threads: int) -> int:
    """onnxruntime's threads for a session: `threads`, or with 0 torch's count, as for the other
    engines. onnxruntime's own default, every core, ignores OMP_NUM_THREADS and torch's setting,
    so processes that share the cores (`nmt translate --nproc`, a test runner's workers) would
    each spin on all of them."""
    return threads or torch.get_num_threads()


