"""Translation through CTranslate2, from a directory written by `nmt export --format ctranslate2`.

The engine plugs into nmt.decode.translate: the same tokenization, truncation, length-sorted token
batches, one output per input line, n-best and jsonl. nmt's own search follows CTranslate2's
(the length penalty |Y|^alpha, the stopping rule, what happens at the length limit, min_len and
n-gram blocking before the softmax), so both give the same outputs up to float rounding. What
differs:
- decode.length_penalty_form gnmt exists in nmt's engine only (an error here);
- sampling draws from CTranslate2's random generator (seeded with decode.seed);
- with decode.shortlist, the export's own shortlist is used (`nmt export --shortlist`), and a
  sentence decoded again at its own length limit (below) gets the candidates of its group.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch

from nmt.checkpoint import checkpoint_recipe, open_checkpoint
from nmt.config import DecodeConfig, Recipe
from nmt.data.languages import Controls
from nmt.data.tokenizer import load_processor
from nmt.decode.engines.capabilities import CTRANSLATE2, Capabilities, require
from nmt.decode.search import Hypothesis, enough_filed, output_limit
from nmt.errors import NmtError
from nmt.model.guided_alignment import alignment_heads
from nmt.export.ctranslate2 import (SOURCE_SPM, TARGET_SPM, export_checkpoint, has_shortlist, read_export_info,
                                    require_ctranslate2)


@dataclass
class CTranslate2Translator:
    translator: object  # ctranslate2.Translator
    recipe: Recipe
    src_tokenizer: object
    tgt_tokenizer: object
    quantization: str
    shortlist: bool  # the export carries a vocabulary map
    controls: Controls = field(default_factory=Controls)  # the direction's tokens (choose_direction)
    # alignments where the export returns attention for them (nmt.export.ctranslate2.attention_for_alignments)
    capabilities: Capabilities = CTRANSLATE2

    @property
    def max_positions(self) -> int:
        return self.recipe.model.max_positions

    def translate_batch(self, sources: list[list[int]], cfg: DecodeConfig, prefixes: list[list[int]] | None = None,
                        constraints: list[list[list[int]]] | None = None) -> list[list[Hypothesis]]:
        """Token-id sources (non-empty) -> n-best hypotheses each, in the same order.

        CTranslate2 takes one length limit per call, and a search that reaches a sentence's own
        limit ends there, so the batch is decoded under its longest limit and the sentences whose
        search may have reached their own are decoded again with it (grouped by limit):
        - greedy: an output as long as the limit;
        - beam, length_penalty > 0: asked for its round(K · patience) best (the number that stops
          the search), a hypothesis filed at the limit's last step or later, i.e. one of at least
          limit - 1 tokens: a search that went on past that step had fewer than K · patience
          hypotheses before it, so one filed later is among them;
        - beam, length_penalty 0: the search stops early on the n-best it was asked for, so
          nothing tells; every limit is decoded on its own.
        """
        if constraints and any(constraints):
            require(self, "constraints")
        if cfg.shortlist and not self.shortlist:
            raise NmtError(f"decode.shortlist: this CTranslate2 model has no shortlist; export it with "
                           f"`nmt export --shortlist {cfg.shortlist}`")
        if cfg.length_penalty_form != "power" and cfg.length_penalty and not cfg.sampling:
            raise NmtError(f"decode.length_penalty_form={cfg.length_penalty_form}: CTranslate2 divides by "
                           "|Y|^alpha only; use decode.length_penalty_form=power, or translate with the checkpoint")
        nbest = max(cfg.nbest, 1)
        prefixes = prefixes or [[] for _ in sources]
        limits = [self._limit(len(ids), cfg, len(prefix)) for ids, prefix in zip(sources, prefixes)]
        beam = not cfg.sampling and cfg.beam_size > 1
        if beam and cfg.length_penalty == 0:
            results: list[list[Hypothesis] | None] = [None] * len(sources)
            redo = list(range(len(sources)))
        else:
            wanted = max(nbest, enough_filed(cfg.beam_size, cfg.patience)) if beam else nbest
            results = self._call(sources, prefixes, max(limits), cfg, wanted)
            reach = 1 if beam else 0  # tokens short of the limit that tell the search reached it
            redo = [i for i, hyps in enumerate(results)
                    if limits[i] < max(limits) and max(len(h.tokens) for h in hyps) >= limits[i] - reach]
        groups: dict[int, list[int]] = {}
        for i in redo:
            groups.setdefault(limits[i], []).append(i)
        for limit, rows in groups.items():
            for i, hyps in zip(rows, self._call([sources[i] for i in rows], [prefixes[i] for i in rows], limit, cfg, nbest)):
                results[i] = hyps
        return [hyps[:nbest] for hyps in results]

    def score_batch(self, sources: list[list[int]], targets: list[list[int]], precision: str = "auto") -> list[list[float]]:
        """Forced decoding (CTranslate2's score_batch): per pair, the log-probability of each
        target token and then of EOS. `precision` is nmt's engine's; the export's weights decide here."""
        src_piece, tgt_piece = self.src_tokenizer.id_to_piece, self.tgt_tokenizer.id_to_piece
        results = self.translator.score_batch([[src_piece(i) for i in ids] for ids in sources],
                                              [[tgt_piece(i) for i in ids] for ids in targets], max_input_length=0)
        return [list(result.log_probs) for result in results]

    def alignment_attention(self, sources: list[list[int]], outputs: list[list[int]]) -> torch.Tensor:
        """The attention the export returns (B, T, S) under teacher forcing (a guided model's
        guided heads, any other's penultimate layer: attention_for_alignments): each output given as the
        target prefix, with one step decoded past it. CTranslate2 leaves out the source EOS's
        column (0 here; alignments leave it out too)."""
        require(self, "alignments")
        src_piece, tgt_piece = self.src_tokenizer.id_to_piece, self.tgt_tokenizer.id_to_piece
        longest = max(len(o) for o in outputs)
        results = self.translator.translate_batch(
            [[src_piece(i) for i in ids] for ids in sources],
            target_prefix=[[tgt_piece(i) for i in output] or None for output in outputs],
            beam_size=1, max_decoding_length=longest + 1, max_input_length=0, return_attention=True)
        attention = torch.zeros(len(sources), longest + 1, max(len(s) for s in sources) + 1)
        for row, (result, source, output) in enumerate(zip(results, sources, outputs)):
            if output:
                attention[row, :len(output), :len(source)] = torch.tensor(result.attention[0])[:len(output), :len(source)]
        return attention

    def _limit(self, source_length: int, cfg: DecodeConfig, prefix_length: int = 0) -> int:
        """nmt's limit a·|source| + b, the source counted with its EOS, at least one token past the
        prefix (as nmt.decode.search.max_output_lengths)."""
        return output_limit(source_length + 1, cfg.max_len_a, cfg.max_len_b, self.max_positions, prefix_length)

    def _call(self, sources: list[list[int]], prefixes: list[list[int]], limit: int, cfg: DecodeConfig,
              hypotheses: int) -> list[list[Hypothesis]]:
        piece, tgt_piece = self.src_tokenizer.id_to_piece, self.tgt_tokenizer.id_to_piece
        options = dict(max_decoding_length=limit, min_decoding_length=min(cfg.min_len, limit), max_input_length=0,
                       no_repeat_ngram_size=cfg.no_repeat_ngram_size, return_scores=True,
                       use_vmap=bool(cfg.shortlist))
        if cfg.sampling:
            import ctranslate2

            if cfg.epsilon:
                require(self, "epsilon")
            ctranslate2.set_random_seed(cfg.seed)
            options |= dict(beam_size=1, sampling_topk=cfg.top_k, sampling_topp=cfg.top_p,
                            sampling_temperature=cfg.temperature, length_penalty=0.0)
        else:
            options |= dict(beam_size=cfg.beam_size, num_hypotheses=hypotheses,
                            length_penalty=cfg.length_penalty, patience=cfg.patience)
        if any(prefixes):
            options["target_prefix"] = [[tgt_piece(i) for i in prefix] or None for prefix in prefixes]
        results = self.translator.translate_batch([[piece(i) for i in ids] for ids in sources], **options)
        to_id = self.tgt_tokenizer.piece_to_id
        alpha = options["length_penalty"]
        # An output shorter than the limit ended with EOS; one of the limit's length was cut there.
        return [[_hypothesis([to_id(p) for p in tokens], score, alpha, len(tokens) < limit)
                 for tokens, score in zip(result.hypotheses, result.scores)] for result in results]


def _hypothesis(tokens: list[int], score: float, alpha: float, ended: bool) -> Hypothesis:
    """CTranslate2 reports log-probability / |Y|^alpha (|Y| counting the EOS, if any); undo the
    division for log_prob."""
    return Hypothesis(tokens, score, score * (len(tokens) + ended) ** alpha)


def load(directory: Path, device: str = "cpu", compute_type: str = "default", threads: int = 0,
         parallel_calls: int = 1, name: str | None = None) -> CTranslate2Translator:
    """The export in `directory`, translating up to `parallel_calls` calls at once (CTranslate2's
    inter_threads: a call made while as many run waits for one of them), each on `threads`
    threads (0: torch's default). Errors call the model `name` (default: the directory)."""
    ctranslate2 = require_ctranslate2()
    directory = Path(directory)
    info = read_export_info(directory)
    recipe = checkpoint_recipe(info, directory)
    kind, _, index = device.partition(":")
    try:
        translator = ctranslate2.Translator(str(directory), device=kind, device_index=int(index or 0),
                                            compute_type=compute_type, inter_threads=parallel_calls,
                                            intra_threads=threads or torch.get_num_threads())
    except (RuntimeError, ValueError) as e:
        raise NmtError(f"{name or directory}: CTranslate2 cannot load this model: {str(e).splitlines()[0]}") from None
    # An export written before unguided models' exports returned attention recorded none; a
    # guided model's returned its guided heads then too.
    returns_attention = "alignment_attention" in info or alignment_heads(recipe) is not None
    capabilities = replace(CTRANSLATE2, alignments=returns_attention)
    return CTranslate2Translator(translator, recipe, load_processor(directory / SOURCE_SPM),
                                 load_processor(directory / TARGET_SPM), info["quantization"], has_shortlist(directory),
                                 capabilities=capabilities)


def check_runs_here(device: str, compute_type: str) -> None:
    """A one-line error unless CTranslate2 has `device` here and computes in `compute_type` on it."""
    ctranslate2 = require_ctranslate2()
    kind, _, index = device.partition(":")
    _check_device(ctranslate2, device, kind, index)
    _check_device_computes(ctranslate2, kind, compute_type)


def _check_device(ctranslate2, device: str, kind: str, index: str) -> None:
    """CTranslate2's devices: cpu, cuda, cuda:N and auto (CUDA where there is one)."""
    if kind not in ("cpu", "cuda", "auto") or (index and (kind != "cuda" or not index.isdigit())):
        raise NmtError(f"--device {device}: CTranslate2 runs on cpu, cuda, cuda:N or auto")
    count = ctranslate2.get_cuda_device_count()
    if kind == "cuda" and not count:
        raise NmtError(f"--device {device}: CTranslate2 sees no CUDA device here")
    if kind == "cuda" and int(index or 0) >= count:
        raise NmtError(f"--device {device}: CTranslate2 sees {count} CUDA device(s) here, numbered from 0")


def _check_device_computes(ctranslate2, kind: str, compute_type: str) -> None:
    if compute_type in ("default", "auto"):
        return
    if kind == "auto":
        kind = "cuda" if ctranslate2.get_cuda_device_count() else "cpu"
    supported = ctranslate2.get_supported_compute_types(kind)
    if compute_type not in supported:
        raise NmtError(f"--compute-type {compute_type}: CTranslate2 on {kind} computes in "
                       f"{', '.join(sorted(supported))}")


def load_from_checkpoints(checkpoints: list[Path], device: str = "cpu", compute_type: str = "default",
                          threads: int = 0, parallel_calls: int = 1) -> CTranslate2Translator:
    """Convert the checkpoint(s) (averaged when several) in a temporary folder and load that."""
    checkpoint = open_checkpoint(checkpoints)
    with tempfile.TemporaryDirectory(prefix="nmt-ct2-") as scratch:
        out = Path(scratch) / "model"
        export_checkpoint(checkpoint, out)
        shown = ", ".join(str(c) for c in checkpoints)
        return load(out, device, compute_type, threads, parallel_calls, shown)  # the weights are in memory from here on
