"""Translation through onnxruntime, from a directory written by `nmt export --format onnx`: what
`nmt translate -c DIR` and `nmt serve DIR` run for such a directory.

The engine runs nmt's own searches (the torch engine's: greedy, beam, sampling, lexical
constraints, prefixes, n-best) over the export's two graphs (nmt.decode.onnx_graphs), so its
outputs are nmt's up to float rounding; everything around the search (tokenization, sentence
splitting, capitals, markup, batching by tokens, jsonl, serve) is `nmt translate`'s. It runs on
the CPU (onnxruntime's CPU provider), with the weights the export holds (float32 or int8). Word
alignments (and with them the placement of numbers and markup) come from the decoder graph's
attention output, teacher-forced one step at a time, as the torch engine reads them from the
model; an export written before that output has none. No shortlist.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import torch

from nmt.checkpoint import checkpoint_recipe
from nmt.config import DecodeConfig, Recipe
from nmt.data.languages import Controls
from nmt.data.tokenizer import load_processor
from nmt.decode.engines.capabilities import ONNX, Capabilities, require
from nmt.decode.engines.torch_engine import padded, translate_batch
from nmt.decode.onnx_graphs import OnnxGraphs, session_threads
from nmt.devices import torch_on_one_thread
from nmt.decode.search import Hypothesis
from nmt.errors import NmtError
from nmt.export.onnx import read_onnx_config, require_onnx
from nmt.special_tokens import EOS


@dataclass
class OnnxEngine:
    """An ONNX export as nmt.decode.engines.engine.Engine: the graphs stand where the torch
    engine has its model, on the CPU."""

    model: OnnxGraphs
    recipe: Recipe
    src_tokenizer: object
    tgt_tokenizer: object
    quantization: str  # the export's: float32 or int8
    controls: Controls = field(default_factory=Controls)  # the direction's tokens (choose_direction)
    device: torch.device = torch.device("cpu")
    capabilities: Capabilities = ONNX

    @property
    def max_positions(self) -> int:
        return self.recipe.model.max_positions

    def translate_batch(self, sources: list[list[int]], cfg: DecodeConfig, prefixes: list[list[int]] | None = None,
                        constraints: list[list[list[int]]] | None = None) -> list[list[Hypothesis]]:
        if cfg.shortlist:
            raise NmtError("decode.shortlist: an ONNX export decodes over its whole vocabulary; "
                           "translate with the checkpoint, or a CTranslate2 export made with --shortlist")
        with torch_on_one_thread():
            return translate_batch(self, sources, cfg, prefixes, constraints)

    def score_batch(self, sources: list[list[int]], targets: list[list[int]], precision: str = "auto") -> list[list[float]]:
        """Forced decoding: per pair, the log-probability of each target token and then of EOS.
        `precision` is the torch engine's; the export's weights decide here."""
        expected = padded(targets, last=EOS)  # (B, T): what each step should predict
        table = torch.stack([log_probs.gather(1, expected[:, step: step + 1]).squeeze(1)
                             for step, (log_probs, _) in enumerate(self._forced_steps(sources, targets))], dim=1)
        return [table[i, : len(ids) + 1].tolist() for i, ids in enumerate(targets)]

    def alignment_attention(self, sources: list[list[int]], outputs: list[list[int]]) -> torch.Tensor:
        """The attention (B, T, S) word alignments are read from (nmt.decode.text.alignment), row t
        the step that predicts output token t, as the torch engine gives it."""
        require(self, "alignments")
        steps = self._forced_steps(sources, outputs, attention=True)
        return torch.stack([torch.from_numpy(state.attention) for _, state in steps], dim=1)

    def _forced_steps(self, sources: list[list[int]], targets: list[list[int]], attention: bool = False):
        """Teacher forcing one graph step per target position (the decoder graph takes one token a
        row): (log-probabilities, state) after the start token, then after each target token
        (past a row's end, padding, whose results are not read); each step's attention in the state
        where `attention`."""
        fed = padded(targets, first=self.model.start_token)
        with torch_on_one_thread():
            state = self.model.start_decoding(*self.model.encode(padded(sources, last=EOS)), attention=attention)
            for step in range(fed.size(1)):
                yield self.model.decode_step(fed[:, step], state), state


def load(directory: Path, device: str = "cpu", compute_type: str = "default", threads: int = 0,
         parallel_calls: int = 1) -> OnnxEngine:
    """The export in `directory`, on the CPU with `threads` threads per call (0: torch's count, as
    for the other engines: session_threads). onnxruntime's sessions take calls from several
    threads at once (a server's workers), so `parallel_calls` needs nothing of its own here."""
    directory = Path(directory)
    if device not in ("cpu", "auto"):
        raise NmtError(f"--device {device}: an ONNX export runs on the CPU here (onnxruntime's CPU provider)")
    if compute_type != "default":
        raise NmtError(f"--compute-type {compute_type} is CTranslate2's; an ONNX export computes with the "
                       "weights it was exported with (nmt export --format onnx --quantization int8)")
    config = read_onnx_config(directory)
    if "recipe" not in config:
        raise NmtError(f"{directory}: this ONNX export was written by nmt {config.get('nmt_version', '(unknown)')} "
                       "without its recipe; export it again to translate it with nmt "
                       "(nmt.decode.onnx_translator.OnnxTranslator reads it as it is)")
    recipe = checkpoint_recipe({"recipe": config["recipe"], "versions": {"nmt": config.get("nmt_version")}}, directory)
    require_onnx()
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = session_threads(threads)
    try:
        encoder, decoder = (ort.InferenceSession(str(directory / name), options, providers=["CPUExecutionProvider"])
                            for name in ("encoder.onnx", "decoder.onnx"))
    except Exception as e:  # onnxruntime's own exception types (a missing or damaged graph)
        raise NmtError(f"{directory}: onnxruntime cannot load this export: {str(e).splitlines()[0]}") from None
    graphs = OnnxGraphs(encoder, decoder, config)
    return OnnxEngine(graphs, recipe, load_processor(directory / "source.spm"), load_processor(directory / "target.spm"),
                      "int8" if config.get("quantized") else "float32",
                      capabilities=replace(ONNX, alignments=graphs.gives_attention))

