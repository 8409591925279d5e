"""A server's warm-up before it takes requests: with decode.compile, the compiled decoding steps
(nmt.model.compiled_decoding) are compiled at their first call of each kind of shape, about a
minute on 2 cores the first time, which would otherwise fall on the first users' requests."""

from __future__ import annotations

from nmt.config import DecodeConfig, MbrConfig, RerankConfig
from nmt.decode.translate import translate_lines
from nmt.model.compiled_decoding import MIN_PAST

# the kinds of shape a compiled step has a graph for: one sentence or several, by beams or by one
# row each (greedy search; one row in all for one sentence)
WARM_UP_BATCHES = (["A warm-up line."], ["A warm-up line.", "Another one."])


def warm_up(translator, cfg: DecodeConfig) -> int:
    """With cfg.compile, translate made-up lines by beam search (cfg's beam) and greedily, each
    output at least MIN_PAST + 1 tokens long so that its steps reach the compiled layers; returns
    the number of translation calls made (0 without decode.compile)."""
    if not cfg.compile:
        return 0
    calls = 0
    plain = cfg.model_copy(update={"min_len": MIN_PAST + 1, "nbest": 1, "sampling": False, "mbr": MbrConfig(),
                                   "rerank": RerankConfig(), "max_len_b": max(cfg.max_len_b, MIN_PAST + 2)})
    for beam_size in dict.fromkeys((cfg.beam_size, 1)):  # beam_size 1: greedy only
        for lines in WARM_UP_BATCHES:
            translate_lines(translator, lines, plain.model_copy(update={"beam_size": beam_size}))
            calls += 1
    return calls
