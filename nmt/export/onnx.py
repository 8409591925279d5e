"""`nmt export --format onnx`: the model as two ONNX graphs, for onnxruntime wherever it runs
(browsers through onnxruntime-web, phones, Windows, servers):

- encoder.onnx: src_ids (B, S) int64, 0-padded after each sentence's EOS
    -> memory_keys (L, B, h, dh, S), memory_values (L, B, h, S, dh): each decoder layer's
       encoder-side keys (transposed) and values, computed once per sentence;
       src_bias (B, 1, 1, S): 0 at real tokens, -inf at padding.
- decoder.onnx: one step for N = B·K rows (K beams per sentence, in consecutive rows; K = 1 for
  greedy search) with their past: tokens (N,) int64, position (1,) int64 (the step's index, 0 for
  the start token), src_bias, memory_keys and memory_values as the encoder gave them (B rows, once
  per sentence: a sentence's K beams attend to its encoder side in one product), past_keys and
  past_values (L, N, h, t, dh; t = 0 at the first step)
    -> log_probs (N, V) of the next token (PAD and BOS never predicted, as nmt's search),
       present_keys and present_values (L, N, h, t + 1, dh): the past for the next step,
       attention (N, S): the encoder-decoder attention word alignments are read from (the
       guided heads' where the model was trained with guided alignment, else every head's mean).

Beside them: the sentencepiece models (source.spm, target.spm), and onnx_config.json with the
special ids, the start token, the positions, the languages and the recipe's search ("search":
beam size, length penalty, patience, min_len, no_repeat_ngram_size; max_len_a and max_len_b;
max_tokens, the source tokens of a batch), and the whole recipe, with which `nmt translate -c DIR`
and `nmt serve DIR` translate through the export (nmt.decode.engines.onnx_engine). A
multilingual model's language tokens (data.language_token) are listed there by the language each
names: `source_language_tokens`, one of which goes in front of the source ids (the target's with
language_token source, the source's with both) after the ids of `source_language_prefix` (the
word boundary "▁" of a language token written as text, MADLAD-400's; none otherwise), and
`target_language_tokens`, the target's fed as the decoder's first token after the start token
(target, both), never counted as output.
`nmt.decode.onnx_translator.OnnxTranslator` translates with them as `nmt translate` does (nmt's
greedy and beam search over the graphs, tested), and its `greedy` in numpy alone is the reference
for driving the graphs elsewhere.
Optional: int8 dynamic quantization of both graphs (onnxruntime's quantize_dynamic). A graph whose
tensors come near protobuf's 2 GiB (a model of a billion parameters) keeps them in one file beside
it, encoder.onnx.data or decoder.onnx.data, which onnxruntime reads from there.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor, nn

import nmt
from nmt.checkpoint import open_checkpoint
from nmt.config import language_token
from nmt.errors import NmtError
from nmt.export.directory import read_description, write_directory_atomically
from nmt.model.from_weights import transformer_from_weights
from nmt.model.guided_alignment import alignment_heads
from nmt.model.matmul_attention import step_attention
from nmt.model.transformer import Transformer, _merge_heads, _split_heads
from nmt.special_tokens import BOS, EOS, PAD, WORD_START

CONFIG = "onnx_config.json"
ONE_FILE_LIMIT = 1_900_000_000  # bytes of tensors a graph holds in its own file, short of protobuf's 2 GiB
# The recipe's decode settings an export keeps for nmt.decode.onnx_translator's search.
SEARCH_SETTINGS = ("beam_size", "length_penalty", "length_penalty_form", "patience", "min_len", "no_repeat_ngram_size")
OPSET = 17
# How decoder.onnx takes the encoder side: once per sentence, shared by the sentence's beams. An
# export whose config has no "encoder_side" (written before it) takes it per row ("per_row"):
# repeated for each beam.
ENCODER_SIDE = "per_sentence"
# decoder.onnx's outputs: a search step reads STEP_OUTPUTS, word alignments the attention too. An
# export whose config lists none (written before) has STEP_OUTPUTS only: no word alignments.
STEP_OUTPUTS = ("log_probs", "present_keys", "present_values")
DECODER_OUTPUTS = (*STEP_OUTPUTS, "attention")


def require_onnx():
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError:
        raise NmtError("ONNX export needs onnx and onnxruntime: pip install 'nmt[onnx]'") from None


class EncoderGraph(nn.Module):
    """encoder.onnx: the encoder, and the decoder layers' encoder-side keys and values."""

    def __init__(self, model: Transformer):
        super().__init__()
        self.model = model

    def forward(self, src_ids: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        memory, src_mask = self.model.encode(src_ids)
        projected = [layer.cross_attn.step_memory(memory) for layer in self.model.decoder_layers]
        src_bias = torch.zeros(src_mask.shape, dtype=memory.dtype).masked_fill(~src_mask, float("-inf"))
        return torch.stack([k for k, _ in projected]), torch.stack([v for _, v in projected]), src_bias


class DecoderStepGraph(nn.Module):
    """decoder.onnx: one decoding step, its self-attention past passed in and out as tensors (the
    same arithmetic as Transformer.decode_step, with concatenation in place of its cache).

    The output layer: in float32 a Gemm with the weight as it is, so a tied embedding is stored
    once; `for_int8`, a MatMul with its transpose (a second copy, a quarter of the size once
    quantized), which onnxruntime's dynamic quantization makes an int8 MatMul (a Gemm it would
    transpose itself, which fails past 2 GiB)."""

    def __init__(self, model: Transformer, for_int8: bool = False):
        super().__init__()
        self.model, self.for_int8 = model, for_int8
        never = torch.zeros(model.output_weight.size(0))
        never[PAD] = never[BOS] = float("-inf")  # as next_token_log_probs takes them out
        self.register_buffer("never", never, persistent=False)
        self.relative = model.decoder_position_bias is not None
        if self.relative:  # T5's: the last position's row of biases, every distance, farthest first
            last = model.cfg.max_positions - 1
            with torch.no_grad():
                self.register_buffer("self_bias_row", model.decoder_position_bias(1, last + 1, offset=last),
                                     persistent=False)

    def self_bias(self, position: Tensor, keys: int) -> Tensor:
        """Relative positions' bias (1, h, 1, keys) of the query at `position` (1,) over keys at
        0..keys-1 (its past and itself): key j's column of the row is that of distance j - position
        (Transformer.decode_step's view of the row, as a gather)."""
        last = self.self_bias_row.size(-1) - 1
        return self.self_bias_row.index_select(-1, torch.arange(keys) + last - position)

    def forward(self, tokens: Tensor, position: Tensor, src_bias: Tensor, memory_keys: Tensor, memory_values: Tensor,
                past_keys: Tensor, past_values: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        model = self.model
        embed = model.tgt_embed
        x = embed.at_positions(tokens.unsqueeze(1), position)
        present_keys, present_values, cross_weights = [], [], []
        bias = self.self_bias(position, past_keys.size(3) + 1) if self.relative else None
        for i, layer in enumerate(model.decoder_layers):
            attention = layer.self_attn

            def self_attention(y: Tensor) -> Tensor:
                q, k, v = (_split_heads(t, attention.heads) for t in attention.qkv_proj(y).chunk(3, dim=-1))
                k, v = torch.cat([past_keys[i], k], dim=2), torch.cat([past_values[i], v], dim=2)
                present_keys.append(k)
                present_values.append(v)
                return attention.out_proj(_merge_heads(step_attention(q, k, v, bias)))

            x = layer.self_sublayer(x, self_attention)
            x = layer.cross_sublayer(x, lambda y: layer.cross_attn.step_cross(y, (memory_keys[i], memory_values[i]),
                                                                              src_bias, cross_weights))
            x = layer.ff_sublayer(x, layer.feed_forward)
        hidden = model.decoder_norm(x[:, 0])
        if self.for_int8:  # a product with a transposed copy of the weight: what becomes an int8 MatMul
            logits = F.linear(hidden, model.output_weight) + self.never
        else:  # a Gemm reading the (tied) embedding as it is, PAD and BOS ruled out by its bias
            logits = F.linear(hidden, model.output_weight, self.never)
        log_probs = F.log_softmax(logits.float(), dim=-1)
        return log_probs, torch.stack(present_keys), torch.stack(present_values), self.attention(cross_weights)

    def attention(self, cross_weights: list[Tensor]) -> Tensor:
        """(N, S): the attention word alignments are read from, as nmt.decode.text.alignment's
        model_attention takes it from the model: the guided heads' mean where the model was
        trained with guided alignment, else the mean of every layer's heads."""
        if self.model.alignment_heads:
            layer, heads = self.model.alignment_heads
            chosen = cross_weights[layer][:, :heads].mean(dim=1)
        else:
            chosen = torch.stack([w.mean(dim=1) for w in cross_weights]).mean(dim=0)  # (B, K, S)
        return chosen.reshape(-1, chosen.size(-1))


def is_onnx_export(path: Path) -> bool:
    return Path(path).is_dir() and (Path(path) / CONFIG).is_file()


def read_onnx_config(directory: Path) -> dict:
    """An export's onnx_config.json; a one-line error where it cannot be read."""
    return read_description(Path(directory) / CONFIG)


def export_onnx(checkpoint_path: Path, out: Path, quantization: str | None = None, force: bool = False) -> dict:
    """Write the ONNX directory `out` (see the module's docstring), whole or not at all; an
    existing `out` only with `force`. quantization: None (float32) or int8. Returns what was
    written, for the CLI to report."""
    require_onnx()
    if quantization not in (None, "int8"):
        raise NmtError(f"--quantization {quantization}: the ONNX export is float32, or int8 (dynamic quantization)")
    out = Path(out)
    if out.exists() and not force:
        raise NmtError(f"{out}: already exists (--force replaces it)")
    quantize = quantization == "int8"
    checkpoint = open_checkpoint(checkpoint_path)
    recipe, cfg = checkpoint.recipe, checkpoint.recipe.model
    protos = checkpoint.tokenizer_models()
    from nmt.data.tokenizer import load_processor

    src_sp, tgt_sp = load_processor(model_proto=protos["src"]), load_processor(model_proto=protos["tgt"])
    data = recipe.data
    named = {"source": data.target_languages(), "both": data.source_languages()}.get(data.language_token, [])
    source_tokens = {lang: src_sp.piece_to_id(language_token(lang)) for lang in named}
    target_tokens = {lang: tgt_sp.piece_to_id(language_token(lang))
                     for lang in (data.target_languages() if data.forced_target_tokens else [])}
    model = transformer_from_weights(cfg, src_sp.get_piece_size(), tgt_sp.get_piece_size(), checkpoint.weights,
                                     checkpoint_path)
    model.alignment_heads = alignment_heads(recipe)  # the heads the decoder's attention output averages
    model.eval()

    def fill(staging: Path) -> None:
        export_graphs(model, staging, quantize)
        (staging / "source.spm").write_bytes(protos["src"])
        (staging / "target.spm").write_bytes(protos["tgt"])
        heads, layers = cfg.heads, cfg.decoder_layers
        config = {"nmt_version": nmt.__version__, "pad_id": PAD, "bos_id": BOS, "eos_id": EOS,
                  "start_token": model.start_token, "max_positions": cfg.max_positions, "decoder_layers": layers,
                  "heads": heads, "head_dim": cfg.head_width, "quantized": quantize,
                  "src_lang": recipe.data.src_lang, "tgt_lang": recipe.data.tgt_lang,
                  "language_token": data.language_token, "source_language_tokens": source_tokens,
                  "source_language_prefix": [src_sp.piece_to_id(WORD_START)] if data.language_token_as_text else [],
                  "target_language_tokens": target_tokens,
                  "directions": [f"{src}-{tgt}" for src, tgt in data.directions()], "languages": data.languages,
                  "max_len_a": recipe.decode.max_len_a, "max_len_b": recipe.decode.max_len_b,
                  "max_tokens": recipe.decode.max_tokens,
                  "search": {key: getattr(recipe.decode, key) for key in SEARCH_SETTINGS},
                  "encoder_side": ENCODER_SIDE,
                  "recipe": checkpoint.payload["recipe"],  # for `nmt translate -c` and `nmt serve` (onnx_engine)
                  "checkpoint": str(checkpoint_path),  # and for `nmt info`
                  "progress": {k: checkpoint.payload.get("progress", {}).get(k) for k in ("step", "epoch")},
                  "inputs": {"encoder": ["src_ids"], "decoder": ["tokens", "position", "src_bias", "memory_keys",
                                                               "memory_values", "past_keys", "past_values"]},
                  "outputs": {"encoder": ["memory_keys", "memory_values", "src_bias"], "decoder": list(DECODER_OUTPUTS)}}
        (staging / CONFIG).write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")

    write_directory_atomically(out, fill, force)  # built beside `out`, renamed into place when whole
    return {"directory": str(out), "direction": f"{recipe.data.src_lang}-{recipe.data.tgt_lang}",
            "quantization": quantization or "float32", "architecture": "ONNX encoder and decoder step",
            "bytes": sum(f.stat().st_size for f in out.iterdir())}


def export_graphs(model: Transformer, out: Path, quantize: bool) -> None:
    """Trace both graphs on small example inputs, every size named dynamic, quantize them where
    asked, and save each into `out` (`save_graph`)."""
    import warnings

    import onnx

    with tempfile.TemporaryDirectory(dir=out) as work:
        for name, graph, inputs, names in _graphs(model, quantize):
            traced = Path(work) / name / f"{name}.onnx"
            traced.parent.mkdir()
            with warnings.catch_warnings():  # the tracer's notes on Python conditions fixed at tracing time
                warnings.simplefilter("ignore")
                # A path as a str: only then does torch write a graph over protobuf's 2 GiB, its
                # tensors in files of their own beside it (each graph in its folder: their names may repeat).
                torch.onnx.export(graph, inputs, str(traced), opset_version=OPSET, dynamo=False, **names)
            if quantize:
                from onnxruntime.quantization import QuantType, quantize_dynamic

                quantized = traced.with_suffix(".int8.onnx")
                quantize_dynamic(traced, quantized, weight_type=QuantType.QInt8, use_external_data_format=True)
                traced = quantized
            save_graph(onnx.load(str(traced)), out / f"{name}.onnx")


def save_graph(proto, path: Path) -> None:
    """Save the graph `proto` as `path`, in one file; or where its tensors come near protobuf's
    2 GiB limit (a model of a billion parameters), with its tensors in one file beside it,
    `path`.data, which onnxruntime reads from there."""
    import onnx
    from onnx.numpy_helper import to_array

    # (ByteSize cannot measure a tensor past 2 GiB: the bytes of its data)
    tensor_bytes = sum(len(t.raw_data) if t.raw_data else to_array(t).nbytes for t in proto.graph.initializer)
    onnx.save_model(proto, str(path), save_as_external_data=tensor_bytes > ONE_FILE_LIMIT,
                    all_tensors_to_one_file=True, location=f"{path.name}.data")


def _graphs(model: Transformer, quantize: bool) -> list[tuple[str, nn.Module, tuple, dict]]:
    """(name, module, example inputs, the names of inputs, outputs and dynamic sizes) of each graph."""
    cfg = model.cfg
    layers, heads, dh = cfg.decoder_layers, cfg.heads, cfg.head_width
    src = torch.tensor([[5, 6, 7, EOS], [5, EOS, PAD, PAD]], dtype=torch.long)
    with torch.no_grad():
        memory_keys, memory_values, src_bias = EncoderGraph(model)(src)
    encoder = {"input_names": ["src_ids"], "output_names": ["memory_keys", "memory_values", "src_bias"],
               "dynamic_axes": {"src_ids": {0: "batch", 1: "source"}, "memory_keys": {1: "batch", 4: "source"},
                                "memory_values": {1: "batch", 3: "source"}, "src_bias": {0: "batch", 3: "source"}}}
    # Traced with 2 sentences of 2 beams each: the graph takes any B sentences of K rows each.
    past = torch.zeros(layers, 4, heads, 3, dh)
    step_inputs = (torch.tensor([5, 6, 7, 8]), torch.tensor([3]), src_bias, memory_keys, memory_values, past, past.clone())
    decoder = {"input_names": ["tokens", "position", "src_bias", "memory_keys", "memory_values", "past_keys",
                               "past_values"],
               "output_names": list(DECODER_OUTPUTS),
               "dynamic_axes": {"tokens": {0: "rows"}, "src_bias": {0: "sentences", 3: "source"},
                                "memory_keys": {1: "sentences", 4: "source"},
                                "memory_values": {1: "sentences", 3: "source"},
                                "past_keys": {1: "rows", 3: "past"}, "past_values": {1: "rows", 3: "past"},
                                "log_probs": {0: "rows"}, "present_keys": {1: "rows", 3: "steps"},
                                "present_values": {1: "rows", 3: "steps"}, "attention": {0: "rows", 1: "source"}}}
    return [("encoder", EncoderGraph(model), (src,), encoder),
            ("decoder", DecoderStepGraph(model, for_int8=quantize), step_inputs, decoder)]
