"""Translation through CTranslate2, from a directory written by `nmt export --format ctranslate2`.

The engine plugs into nmt.decode.translate: the same tokenization, truncation, length-sorted token
batches, one output per input line, n-best and jsonl. What differs from nmt's own search:
- length_penalty is CTranslate2's: the log-probability divided by |Y|^alpha (nmt divides by the
  GNMT ((5 + |Y|) / 6)^alpha); with alpha = 0 both rank by log-probability and give the same output;
- at the length limit a·|source| + b, nmt ends every beam with EOS and ranks them with its
  probability; CTranslate2 stops them without it (greedy search gives the same tokens either way);
- tokens forbidden by min_len or no_repeat_ngram_size are removed before the softmax (the rest
  renormalized), in nmt after it: greedy search picks the same tokens, beam search may rank differently;
- sampling draws from CTranslate2's random generator (seeded with decode.seed).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import torch

from nmt.checkpoint import load_payload
from nmt.config import DecodeConfig, Recipe, recipe_from_dict
from nmt.data.tokenizer import load_processor
from nmt.decode.search import Hypothesis
from nmt.errors import NmtError
from nmt.export.ctranslate2 import (SOURCE_SPM, TARGET_SPM, export_payload, read_export_info,
                                    require_ctranslate2)


@dataclass
class CTranslate2Translator:
    translator: object  # ctranslate2.Translator
    recipe: Recipe
    src_tokenizer: object
    tgt_tokenizer: object
    quantization: str

    @property
    def max_positions(self) -> int:
        return self.recipe.model.max_positions

    def translate_batch(self, sources: list[list[int]], cfg: DecodeConfig) -> list[list[Hypothesis]]:
        """Token-id sources (non-empty) -> n-best hypotheses each, in the same order.

        CTranslate2 takes one length limit per call: the batch is decoded with its longest
        source's limit, then the few sentences whose output reached their own limit are decoded
        again with it (grouped by limit), so that every sentence gets exactly its own.
        """
        limits = [self._limit(len(ids), cfg) for ids in sources]
        results = self._call(sources, max(limits), cfg)
        redo: dict[int, list[int]] = {}
        for i, (hyps, limit) in enumerate(zip(results, limits)):
            if limit < max(limits) and max(len(h.tokens) for h in hyps) >= limit:
                redo.setdefault(limit, []).append(i)
        for limit, rows in redo.items():
            for i, hyps in zip(rows, self._call([sources[i] for i in rows], limit, cfg)):
                results[i] = hyps
        return results

    def _limit(self, source_length: int, cfg: DecodeConfig) -> int:
        """nmt's limit a·|source| + b, the source counted with its EOS (as nmt.decode.search does)."""
        return max(1, min(int(cfg.max_len_a * (source_length + 1) + cfg.max_len_b), self.max_positions - 1))

    def _call(self, sources: list[list[int]], limit: int, cfg: DecodeConfig) -> list[list[Hypothesis]]:
        piece = self.src_tokenizer.id_to_piece
        options = dict(max_decoding_length=limit, min_decoding_length=min(cfg.min_len, limit), max_input_length=0,
                       no_repeat_ngram_size=cfg.no_repeat_ngram_size, return_scores=True)
        if cfg.sampling:
            import ctranslate2

            ctranslate2.set_random_seed(cfg.seed)
            options |= dict(beam_size=1, sampling_topk=cfg.top_k, sampling_topp=cfg.top_p,
                            sampling_temperature=cfg.temperature, length_penalty=0.0)
        else:
            options |= dict(beam_size=cfg.beam_size, num_hypotheses=max(cfg.nbest, 1),
                            length_penalty=cfg.length_penalty)
        results = self.translator.translate_batch([[piece(i) for i in ids] for ids in sources], **options)
        to_id = self.tgt_tokenizer.piece_to_id
        alpha = options["length_penalty"]
        return [[_hypothesis([to_id(p) for p in tokens], score, alpha)
                 for tokens, score in zip(result.hypotheses, result.scores)] for result in results]


def _hypothesis(tokens: list[int], score: float, alpha: float) -> Hypothesis:
    """CTranslate2 reports log-probability / |Y|^alpha; undo the division for log_prob."""
    log_prob = score * len(tokens) ** alpha if tokens and alpha else score
    return Hypothesis(tokens, score, log_prob)


def load(directory: Path, device: str = "cpu", compute_type: str = "default", threads: int = 0) -> CTranslate2Translator:
    ctranslate2 = require_ctranslate2()
    directory = Path(directory)
    info = read_export_info(directory)
    recipe = recipe_from_dict(info["recipe"], str(directory))
    kind, _, index = device.partition(":")
    try:
        translator = ctranslate2.Translator(str(directory), device=kind, device_index=int(index or 0),
                                            compute_type=compute_type, inter_threads=1,
                                            intra_threads=threads or torch.get_num_threads())
    except (RuntimeError, ValueError) as e:
        raise NmtError(f"{directory}: CTranslate2 cannot load this model: {str(e).splitlines()[0]}") from None
    return CTranslate2Translator(translator, recipe, load_processor(directory / SOURCE_SPM),
                                 load_processor(directory / TARGET_SPM), info["quantization"])


def load_from_checkpoints(checkpoints: list[Path], device: str = "cpu", compute_type: str = "default",
                          threads: int = 0) -> CTranslate2Translator:
    """Convert the checkpoint(s) (averaged when several) in a temporary folder and load that."""
    payload = load_payload(checkpoints)
    with tempfile.TemporaryDirectory(prefix="nmt-ct2-") as scratch:
        out = Path(scratch) / "model"
        export_payload(payload, str(checkpoints[0]), out)
        return load(out, device, compute_type, threads)  # the weights are in memory from here on
