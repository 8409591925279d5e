"""decode.compile (nmt.model.compiled_decoding): the decoder layers of decoding steps compiled give
the eager searches' outputs, with a bounded number of graphs and no graph break. The backends are
dynamo's trace run by torch's own kernels (eager), and with AOT autograd's trace (aot_eager): the
same traces and guards as inductor's, without its C++ compile (seconds per graph on a CPU). One
decoder layer: tracing is these tests' cost."""

from __future__ import annotations

import pytest
import torch
from torch._dynamo.utils import counters

import nmt.model.compiled_decoding as compiled_decoding
from nmt.decode.search import beam_search, greedy_search
from nmt.special_tokens import EOS, PAD
from tests.decode.test_search import LAYOUTS, toy_model


def batch(rows: list[list[int]]) -> torch.Tensor:
    out = torch.full((len(rows), max(map(len, rows)) + 1), PAD)
    for i, row in enumerate(rows):
        out[i, : len(row) + 1] = torch.tensor(row + [EOS])
    return out


BATCHES = [batch([[5, 9, 12, 7], [8, 6], [30, 31, 32, 33, 34, 35], [11]]), batch([[21, 22, 23]]),
           batch([[7] * 9, [9, 8], [10, 11, 12]])]


@pytest.fixture
def dynamo_only(monkeypatch):
    monkeypatch.setattr(compiled_decoding, "BACKEND", "eager")
    torch._dynamo.reset()
    counters.clear()
    yield
    torch._dynamo.reset()


def searches(model, src: torch.Tensor, compiled: bool):
    """Beam search (4 beams) and greedy search of `src`, each output forced past MIN_PAST steps."""
    beams = beam_search(model, src, 4, min_len=4, nbest=2, compiled=compiled)
    greedy = greedy_search(model, src, min_len=4, compiled=compiled)
    return beams, greedy


def test_compiled_steps_give_the_eager_searches_outputs_with_a_bounded_number_of_graphs(dynamo_only, monkeypatch):
    """T5's layout: relative positions add a bias of the past's length to each self-attention."""
    model = toy_model(**LAYOUTS["t5"], decoder_layers=1)
    ran = []  # the rows of each step the compiled layers ran
    call = compiled_decoding.CompiledSteps.__call__
    monkeypatch.setattr(compiled_decoding.CompiledSteps, "__call__",
                        lambda self, x, state, bias: ran.append((x.size(0), state.length)) or call(self, x, state, bias))
    graphs = []
    for src in BATCHES:
        eager_beams, eager_greedy = searches(model, src, compiled=False)
        beams, greedy = searches(model, src, compiled=True)
        assert [[h.tokens for h in n] for n in beams] == [[h.tokens for h in n] for n in eager_beams]
        assert [h.tokens for h in greedy] == [h.tokens for h in eager_greedy]
        for got, want in zip([h for n in beams for h in n] + greedy, [h for n in eager_beams for h in n] + eager_greedy):
            assert got.score == pytest.approx(want.score, abs=1e-5)
        graphs.append(counters["stats"]["unique_graphs"])
    assert ran and min(length for _, length in ran) == compiled_decoding.MIN_PAST  # earlier steps run eagerly
    assert {rows for rows, _ in ran} >= {1, 4, 16}  # one row, one sentence's beams, several sentences'
    assert not counters["graph_break"]
    # one sentence or several, by beams or by one row each: four kinds of shape, all met in the
    # first batch, then no new graph for new batch sizes, source lengths or output lengths
    assert graphs == [4] * len(BATCHES)


def test_the_papers_post_ln_layout_traces_its_steps_whole(monkeypatch):
    """AOT autograd's trace too (backend aot_eager: functionalized, as inductor reads it), one
    graph: no graph break (fullgraph would raise) and the eager search's outputs (T5's layout above
    is pre-LN)."""
    monkeypatch.setattr(compiled_decoding, "BACKEND", "aot_eager")
    torch._dynamo.reset()
    model = toy_model(**LAYOUTS["post"], decoder_layers=1)
    src = batch([[13, 14], [15, 16, 17, 18, 19]])
    eager = beam_search(model, src, 4, min_len=6, nbest=4)
    compiled = beam_search(model, src, 4, min_len=6, nbest=4, compiled=True)
    assert [[h.tokens for h in n] for n in compiled] == [[h.tokens for h in n] for n in eager]
    torch._dynamo.reset()
