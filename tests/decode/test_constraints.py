"""Lexically constrained beam search (nmt.decode.constraints): outputs contain the constraints,
a large beam finds the exhaustive best among outputs that do, and placing them is bookkept right."""

from __future__ import annotations

import itertools

import pytest
import torch

from nmt.special_tokens import EOS
from nmt.decode.constraints import ConstraintState, _allocate
from nmt.decode.search import beam_search, max_output_lengths, normalized_score
from tests.decode.test_search import sequence_log_prob, sources, toy_model


def constrained_beam_search(model, src, constraints, **settings):
    """beam_search with constraints, and per sentence whether its output meets them all (a
    sentence without constraints has none unmet)."""
    hyps = beam_search(model, src, constraints=constraints, **settings)
    return hyps, [found[0].constraints_met is not False for found in hyps]


def contains(tokens: list[int], phrase: list[int]) -> bool:
    return any(tokens[i:i + len(phrase)] == phrase for i in range(len(tokens) - len(phrase) + 1))


def test_constraint_states_by_hand():
    phrases = [[5, 6, 7], [9]]
    state = ConstraintState()
    assert state.next_tokens(phrases) == {5, 9} and state.tokens_met(phrases) == 0
    state = state.advance(5, phrases).advance(6, phrases)
    assert (state.current, state.progress, state.tokens_met(phrases)) == (0, 2, 2)
    assert state.next_tokens(phrases) == {7}
    broken = state.advance(8, phrases)  # abandoned halfway: counts for nothing
    assert broken == ConstraintState() and broken.tokens_met(phrases) == 0
    restarted = state.advance(5, phrases)  # ... or starts again
    assert (restarted.current, restarted.progress) == (0, 1)
    done = state.advance(7, phrases).advance(9, phrases)
    assert done.all_met(phrases) and done.tokens_met(phrases) == 4 and done.next_tokens(phrases) == set()


def test_beams_are_dealt_in_turns_from_the_most_advanced_bank():
    phrases = [[5, 6]]
    zero, one, two = ConstraintState(), ConstraintState(frozenset(), 0, 1), ConstraintState(frozenset({0}))
    candidates = [(-1.0, 0, 10, zero), (-1.1, 0, 11, zero), (-1.2, 0, 12, zero), (-5.0, 1, 5, one),
                  (-9.0, 2, 6, two), (-9.5, 3, 6, two)]
    chosen = _allocate(candidates, 3, phrases)
    assert sorted(c[0] for c in chosen) == [-9.0, -5.0, -1.0]  # the best of each bank, not the 3 best
    assert len(_allocate(candidates, 10, phrases)) == 6


@pytest.mark.parametrize("phrases", [[[5, 6]], [[4], [6]], [[1, 1]]])
@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_a_large_beam_finds_the_best_output_that_contains_the_constraints(phrases, alpha):
    vocab, limit = 7, 3  # real tokens 1, 4, 5, 6 and EOS; outputs of at most 3 tokens
    model = toy_model(vocab=vocab, seed=1)
    src = torch.tensor([[4, 5, 6, EOS]])
    everything = [list(seq) for n in range(limit + 1) for seq in itertools.product([1, 4, 5, 6], repeat=n)]
    allowed = [c for c in everything if all(contains(c, p) for p in phrases)]
    scored = [(normalized_score(sequence_log_prob(model, src[0], c, ended=len(c) < limit), len(c) + (len(c) < limit),
                                alpha), c) for c in allowed]
    best_score, best = max(scored)
    unconstrained = beam_search(model, src, beam_size=len(everything), length_penalty=alpha, max_len_a=0.0,
                                max_len_b=limit)[0][0]
    assert unconstrained.tokens != best  # the constraints change the answer
    hyps, satisfied = constrained_beam_search(model, src, [phrases], beam_size=len(everything), length_penalty=alpha,
                                              max_len_a=0.0, max_len_b=limit)
    assert satisfied == [True] and hyps[0][0].tokens == best
    assert hyps[0][0].score == pytest.approx(best_score, abs=1e-4)


def test_every_output_contains_its_constraints_and_scores_are_the_models():
    model = toy_model()
    src = sources()
    constraints = [[[7, 8]], [[30], [31, 32]], [], [[12, 13, 14]]]
    hyps, satisfied = constrained_beam_search(model, src, constraints, beam_size=4, nbest=2, length_penalty=0.6)
    assert satisfied == [True] * 4
    limits = max_output_lengths(src, model, 1.5, 10).tolist()
    for i, (found, phrases) in enumerate(zip(hyps, constraints)):
        for h in found:
            assert all(contains(h.tokens, p) for p in phrases), (h.tokens, phrases)
            ended = len(h.tokens) < limits[i]
            assert h.log_prob == pytest.approx(sequence_log_prob(model, src[i], h.tokens, ended), abs=1e-3)
    # No constraints: the output is a beam search output of the same model.
    plain = beam_search(model, src[2:3], beam_size=4, length_penalty=0.6)[0][0]
    assert hyps[2][0].log_prob <= plain.log_prob + 1e-4 or hyps[2][0].score <= plain.score + 1e-4


def test_constraints_that_cannot_fit_are_flagged_not_fatal():
    model = toy_model()
    src = sources()[:1]
    hyps, satisfied = constrained_beam_search(model, src, [[[7, 8, 9, 10]]], beam_size=3, max_len_a=0.0, max_len_b=2)
    assert satisfied == [False] and len(hyps[0]) == 1 and len(hyps[0][0].tokens) <= 2


def test_a_prefix_and_constraints_together():
    model = toy_model()
    hyps, satisfied = constrained_beam_search(model, sources()[:2], [[[20, 21]], [[9]]], beam_size=4,
                                              prefixes=[[5, 5], []])
    assert satisfied == [True, True]
    assert hyps[0][0].tokens[:2] == [5, 5] and contains(hyps[0][0].tokens, [20, 21]) and 9 in hyps[1][0].tokens
