import functools

import pytest
import torch

from nmt.decode import search
from nmt.decode.top_candidates import top_candidates
from tests.decode.test_search import sources, toy_model


def ranked_in_full(scores, log_probs, n):
    """Every candidate scored and ranked: the truth top_candidates must match."""
    sentences, beams, vocab = log_probs.shape
    values, index = (scores.unsqueeze(2) + log_probs).view(sentences, -1).topk(n, dim=1)
    return values, index // vocab, index % vocab


def assert_real_and_distinct(scores, log_probs, values, beam, column):
    """Each (beam, column) found is a candidate with the value reported, none found twice."""
    sentence = torch.arange(scores.size(0)).unsqueeze(1)
    assert torch.equal(scores.gather(1, beam) + log_probs[sentence, beam, column], values)
    assert all(len(set(zip(b.tolist(), c.tolist()))) == values.size(1) for b, c in zip(beam, column))


@pytest.mark.parametrize("vocab, chunk", [(64, 4), (67, 4), (70, 8), (40, 64)])  # whole chunks, a short last chunk, too few columns
def test_chunked_ranking_finds_the_same_candidates_as_ranking_them_all(vocab, chunk):
    torch.manual_seed(vocab)
    beams, n = 4, 8
    log_probs = torch.randn(5, beams, vocab).log_softmax(-1)
    log_probs[0, :, : vocab // 2] = float("-inf")  # half the columns forbidden
    log_probs[1, 1:] = log_probs[1, 0]  # beams with equal candidates
    scores = torch.randn(5, beams)
    scores[2, 1:] = float("-inf")  # a first step: only the first beam is live
    values, beam, column = top_candidates(scores, log_probs, n, chunk=chunk)
    assert torch.equal(values, ranked_in_full(scores, log_probs, n)[0])  # exactly the same values, best first
    assert_real_and_distinct(scores, log_probs, values, beam, column)


def test_chunked_ranking_handles_integer_ties_like_a_full_sort():
    """Many equal values (a peaked toy model's): the values found are those of a full ranking."""
    log_probs = torch.randint(-3, 0, (3, 2, 96)).float()
    scores = torch.zeros(3, 2)
    values, beam, column = top_candidates(scores, log_probs, 6, chunk=8)
    assert torch.equal(values, ranked_in_full(scores, log_probs, 6)[0])
    assert_real_and_distinct(scores, log_probs, values, beam, column)


def test_beam_search_with_chunked_ranking_equals_full_ranking(monkeypatch):
    model = toy_model(vocab=70)
    src = sources()
    runs = {}
    for name, chunk in (("full", 10**9), ("chunked", 4)):
        monkeypatch.setattr(search, "top_candidates", functools.partial(top_candidates, chunk=chunk))
        runs[name] = search.beam_search(model, src, beam_size=4, nbest=4, length_penalty=0.6, no_repeat_ngram_size=2)
    for full, chunked in zip(runs["full"], runs["chunked"]):
        assert [h.tokens for h in chunked] == [h.tokens for h in full]
        assert [h.score for h in chunked] == [h.score for h in full]  # the same additions: bit for bit
