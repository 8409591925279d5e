"""Ensemble decoding: the mean of the members' next-token probabilities at every step."""

from __future__ import annotations

import itertools

import pytest
import sentencepiece as spm
import torch
import torch.nn.functional as F
from typer.testing import CliRunner

from tests.conftest import TINY_DATA
from nmt.cli import app
from nmt.special_tokens import BOS, EOS, PAD
from nmt.decode.engines.ensemble import Ensemble
from nmt.decode.search import beam_search, greedy_search, max_output_lengths, normalized_score
from test_search import sources, toy_model

runner = CliRunner()


def member_probs(model, src, tgt_in) -> torch.Tensor:
    logits = model(src, tgt_in)[0].float()
    logits[:, [PAD, BOS]] = float("-inf")  # never predicted: each member takes them out before its softmax
    return F.softmax(logits, dim=-1)


def ensemble_sequence_log_prob(models, src_row: torch.Tensor, tokens: list[int], ended: bool = True) -> float:
    """Independent of incremental decoding: each model's teacher-forced probabilities, averaged
    per position; EOS counted when the output `ended` before its length limit."""
    src = src_row[src_row != PAD].unsqueeze(0)
    tgt_in = torch.tensor([[BOS] + tokens])
    logp = torch.stack([member_probs(m, src, tgt_in) for m in models]).mean(0).log()
    return sum(logp[t, tok].item() for t, tok in enumerate(tokens + [EOS] if ended else tokens))


def searches(model):
    src = sources()
    sample = {"temperature": 1.0, "top_k": 0, "top_p": 1.0, "generator": torch.Generator().manual_seed(3)}
    return {"greedy": [[h] for h in greedy_search(model, src)],
            "beam": beam_search(model, src, beam_size=4, nbest=3),
            "sampling": [[h] for h in greedy_search(model, src, sample=sample)]}


def test_an_ensemble_of_one_is_that_model():
    model = toy_model()
    alone, ensemble = searches(model), searches(Ensemble([model]))
    for name in alone:
        for a, b in zip(alone[name], ensemble[name]):
            assert [(h.tokens, h.score, h.log_prob) for h in a] == [(h.tokens, h.score, h.log_prob) for h in b], name


def test_an_ensemble_of_two_copies_is_one_copy():
    model = toy_model()
    alone, ensemble = searches(model), searches(Ensemble([model, model]))
    for name in alone:
        for a, b in zip(alone[name], ensemble[name]):
            assert [h.tokens for h in a] == [h.tokens for h in b], name
            assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-4)


def test_ensemble_steps_are_the_mean_of_the_members_probabilities():
    # Members of different shapes: only the vocabulary must be shared.
    models = [toy_model(seed=1), toy_model(seed=2, d_model=48, heads=6, decoder_layers=1, norm="pre")]
    ensemble = Ensemble(models)
    limits = max_output_lengths(sources(), models[0], 1.5, 10).tolist()
    for i, hyps in enumerate(beam_search(ensemble, sources(), beam_size=4, nbest=4)):
        for h in hyps:
            expected = ensemble_sequence_log_prob(models, sources()[i], h.tokens, len(h.tokens) < limits[i])
            assert h.log_prob == pytest.approx(expected, abs=1e-3)


@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_a_large_beam_finds_the_ensembles_exhaustive_best(alpha):
    vocab, limit = 7, 3  # real tokens 1 (UNK), 4, 5, 6 and EOS; outputs of at most 3 tokens
    models = [toy_model(vocab=vocab, seed=1), toy_model(vocab=vocab, seed=5, d_model=16, heads=2)]
    src = torch.tensor([[4, 5, 6, EOS]])
    candidates = [list(seq) for n in range(limit + 1) for seq in itertools.product([1, 4, 5, 6], repeat=n)]

    def score(members, c):  # an output of `limit` tokens was cut there: no EOS
        ended = len(c) < limit
        return normalized_score(ensemble_sequence_log_prob(members, src[0], c, ended), len(c) + ended, alpha)

    best_score, best = max((score(models, c), c) for c in candidates)
    # The ensemble's best is not simply one member's: the mixing decides here.
    members_best = [max((score([m], c), c) for c in candidates)[1] for m in models]
    assert members_best[0] != members_best[1]
    found = beam_search(Ensemble(models), src, beam_size=len(candidates), length_penalty=alpha,
                        max_len_a=0.0, max_len_b=limit)[0][0]
    assert found.tokens == best
    assert found.score == pytest.approx(best_score, abs=1e-4)


@pytest.fixture(scope="module")
def other_vocabulary_checkpoint(trained_tiny, tmp_path_factory):
    """trained_tiny's checkpoint with another target sentencepiece model."""
    folder = tmp_path_factory.mktemp("othervocab")
    spm.SentencePieceTrainer.Train(input=str(TINY_DATA / "train.de"), model_prefix=str(folder / "sp"),
                                   vocab_size=100, pad_id=PAD, unk_id=1, bos_id=BOS, eos_id=EOS, minloglevel=2)
    payload = torch.load(trained_tiny.out / "checkpoints" / "best.pt", weights_only=True)
    payload["tokenizer"]["tgt"] = torch.frombuffer(bytearray((folder / "sp.model").read_bytes()), dtype=torch.uint8)
    path = folder / "other.pt"
    torch.save(payload, path)
    return path


def test_ensemble_cli(trained_tiny, other_vocabulary_checkpoint, tmp_path):
    ckpts = trained_tiny.out / "checkpoints"
    steps = sorted(ckpts.glob("step_*.pt"))
    args = ["translate", "--ensemble", "-c", str(ckpts / "best.pt"), "-c", str(steps[0])]
    result = runner.invoke(app, args, input="A dog runs.\n\nTwo men.\n")
    assert result.exit_code == 0, result.output
    assert len(result.stdout.split("\n")) == 4  # 3 lines and the final newline
    jsonl = runner.invoke(app, [*args, "--output-format", "jsonl", "--nbest", "2"], input="A dog runs.\n")
    assert jsonl.exit_code == 0 and '"hypotheses"' in jsonl.stdout

    for bad, fragment in ((other_vocabulary_checkpoint, "target vocabulary differs"), (tmp_path / "nope.pt", "not found")):
        result = runner.invoke(app, ["translate", "--ensemble", "-c", str(ckpts / "best.pt"), "-c", str(bad)],
                               input="A dog.\n")
        assert result.exit_code == 2, result.output
        assert str(bad) in result.output and fragment in result.output and "Traceback" not in result.output


def test_an_ensemble_aligns_with_its_first_member(trained_tiny):
    from nmt.decode.engines.engine import load_engine
    from nmt.decode.translate import translate_lines

    checkpoint = trained_tiny.out / "checkpoints" / "last.pt"
    lines = ["A black dog leaps over a log.", "", "Two cats."]
    cfg = trained_tiny.decode.model_copy(update={"precision": "fp32"})
    single = translate_lines(load_engine([checkpoint]), lines, cfg, extras=("alignments",))
    pair = translate_lines(load_engine([checkpoint, checkpoint], ensemble=True), lines, cfg, extras=("alignments",))
    assert [h[0].tokens for h in pair] == [h[0].tokens for h in single]
    assert [h[0].alignment for h in pair] == [h[0].alignment for h in single] and single[0][0].alignment


@pytest.mark.parametrize("members", [1, 2])
def test_a_forbidden_token_leaves_the_others_renormalized(members):
    """decode_step's `forbid` (the search's rules: EOS below min_len, n-gram blocking) takes
    tokens out before the softmax: the rest are the unforbidden step's probabilities divided by
    their sum, for a model alone and for an ensemble's mean."""
    models = [toy_model(seed=1), toy_model(seed=2)][:members]
    model = models[0] if members == 1 else Ensemble(models)
    src, forbidden = sources(), [EOS, 7]
    tokens = torch.full((src.size(0),), BOS)

    def step(forbid=None):
        memory, src_mask = model.encode(src)
        return model.decode_step(tokens, model.start_decoding(memory, src_mask), forbid)

    def forbid(scores):
        scores[:, forbidden] = float("-inf")

    free, ruled = step().exp(), step(forbid).exp()
    expected = free.clone()
    expected[:, forbidden] = 0.0
    expected /= expected.sum(dim=-1, keepdim=True)
    assert torch.allclose(ruled, expected, atol=1e-6)
    assert ruled[:, forbidden].eq(0).all() and free[:, forbidden].gt(0).all()
