"""Search over the model's outputs: greedy, sampling and batched beam search, all incremental (cached).

Sentences whose search is over leave the active batch, so late steps only pay for the
sentences still being decoded.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from nmt.data.batching import to_device
from nmt.data.tokenizer import BOS, EOS, PAD
from nmt.model.transformer import Transformer

NEG_INF = float("-inf")


@dataclass
class Hypothesis:
    tokens: list[int]  # without BOS and EOS
    score: float  # log-probability divided by the length penalty
    log_prob: float  # including the EOS step


def gnmt_length_penalty(length, alpha: float):
    """GNMT (Wu et al., 2016): ((5 + |Y|) / 6)^alpha, |Y| counting the EOS."""
    return ((5.0 + length) / 6.0) ** alpha


def max_output_lengths(src: Tensor, model: Transformer, a: float, b: int) -> Tensor:
    """Per sentence: a · (source length without padding) + b, within the model's positions."""
    src_len = (src != PAD).sum(dim=1)
    return (a * src_len + b).long().clamp(min=1, max=model.cfg.max_positions - 1)  # (B,)


def _forbid_specials(log_probs: Tensor, end_allowed: bool = True) -> None:
    log_probs[:, PAD] = NEG_INF
    log_probs[:, BOS] = NEG_INF
    if not end_allowed:  # shorter than min_len
        log_probs[:, EOS] = NEG_INF


def _force_eos(log_probs: Tensor, rows: Tensor) -> None:
    """Rows at their length limit may only end."""
    eos = log_probs[rows, EOS]
    log_probs[rows] = NEG_INF
    log_probs[rows, EOS] = eos


def forbid_repeated_ngrams(log_probs: Tensor, history: Tensor, n: int) -> None:
    """Forbid each row the tokens that would repeat one of its n-grams (fairseq's
    `--no-repeat-ngram-size`): where the row's last n-1 tokens occurred before, the token that
    followed them then. history: (rows, t) tokens so far, BOS excluded; log_probs: (rows, V).
    Written without a data-dependent shape (no `nonzero`), so a GPU never waits on it."""
    t = history.size(1)
    if n <= 0 or t < n:
        return
    grams = history.unfold(1, n, 1)  # (rows, t-n+1, n): every n-gram so far
    prefix = history[:, t - n + 1:]  # (rows, n-1): the n-gram the next token would complete
    seen = (grams[:, :, : n - 1] == prefix.unsqueeze(1)).all(dim=2)  # (rows, t-n+1)
    penalty = torch.zeros(seen.shape, dtype=log_probs.dtype, device=log_probs.device).masked_fill_(seen, NEG_INF)
    log_probs.scatter_add_(1, grams[:, :, n - 1], penalty)  # -inf where forbidden, +0 elsewhere


def _sampler(temperature: float, top_k: int, top_p: float, generator: torch.Generator | None):
    """Draw one token per row from the (temperature-scaled, top-k/top-p truncated) distribution."""
    def pick(log_probs: Tensor) -> Tensor:
        logits = log_probs / temperature
        if top_k > 0:
            kth = logits.topk(min(top_k, logits.size(-1)), dim=-1).values[:, -1:]
            logits = logits.masked_fill(logits < kth, NEG_INF)
        if top_p < 1.0:  # keep the smallest set of most probable tokens whose mass reaches top_p
            sorted_logits, order = logits.sort(dim=-1, descending=True)
            mass_before = sorted_logits.softmax(-1).cumsum(-1) - sorted_logits.softmax(-1)
            sorted_logits = sorted_logits.masked_fill(mass_before >= top_p, NEG_INF)
            logits = torch.full_like(logits, NEG_INF).scatter(1, order, sorted_logits)
        return torch.multinomial(logits.softmax(-1), 1, generator=generator).squeeze(1)
    return pick


@torch.inference_mode()
def greedy_search(model: Transformer, src: Tensor, max_len_a: float = 1.5, max_len_b: int = 10,
                  min_len: int = 0, sample: dict | None = None, no_repeat_ngram_size: int = 0) -> list[Hypothesis]:
    """The most probable next token at each step, for a batch of sources (B, S).

    With `sample` (temperature, top_k, top_p, generator), the next token is drawn at random instead.
    """
    pick = _sampler(**sample) if sample else None
    batch = src.size(0)
    limits = max_output_lengths(src, model, max_len_a, max_len_b)
    memory, src_mask = model.encode(src)
    state = model.start_decoding(memory, src_mask)
    alive = torch.arange(batch, device=src.device)  # sentence of each active row
    tokens = torch.full((batch,), BOS, dtype=torch.long, device=src.device)
    outputs = torch.full((batch, int(limits.max()) + 1), PAD, dtype=torch.long, device=src.device)
    log_prob = torch.zeros(batch, device=src.device)
    for t in range(int(limits.max()) + 1):
        log_probs = model.decode_step(tokens, state)  # (n, V)
        _forbid_specials(log_probs, end_allowed=t >= min_len)
        if no_repeat_ngram_size:  # outputs[alive] is a copy: made only when asked for
            forbid_repeated_ngrams(log_probs, outputs[alive, :t], no_repeat_ngram_size)
        _force_eos(log_probs, (limits[alive] <= t).nonzero().squeeze(1))
        if pick is None:
            best, tokens = log_probs.max(dim=-1)
        else:
            tokens = pick(log_probs)
            best = log_probs.gather(1, tokens.unsqueeze(1)).squeeze(1)
        outputs[alive, t] = tokens
        log_prob[alive] += best
        running = tokens != EOS
        if not running.any():
            break
        if not running.all():
            keep = running.nonzero().squeeze(1)
            state, alive, tokens = state.select(keep), alive[keep], tokens[keep]
    hypotheses = []
    for row, score in zip(outputs.tolist(), log_prob.tolist()):
        seq = row[: row.index(EOS)] if EOS in row else [t for t in row if t != PAD]
        hypotheses.append(Hypothesis(seq, score, score))
    return hypotheses


def _index_tensor(values: list[int], device: torch.device) -> Tensor:
    """Host-built indices on the device, copied without making the host wait."""
    return to_device(torch.tensor(values, dtype=torch.long), device)


@torch.inference_mode()
def beam_search(model: Transformer, src: Tensor, beam_size: int = 4, length_penalty: float = 0.6,
                max_len_a: float = 1.5, max_len_b: int = 10, nbest: int = 1,
                min_len: int = 0, no_repeat_ngram_size: int = 0) -> list[list[Hypothesis]]:
    """Batched beam search for sources (B, S); returns the `nbest` best hypotheses per sentence.

    Each step scores all K·V extensions of the K beams, keeps the 2K best, files those ending in
    EOS among the top K as finished (normalized by the length penalty), and continues with the
    K best that did not end. A sentence stops at its length limit, when no live beam is left, or
    when its n-th best finished score is at least the best score a live beam could still reach
    (log-probabilities only fall, so that is its score now, normalized at the longest length).
    Stopping after K finished hypotheses instead (as fairseq does) can return a poor early
    hypothesis while a far better one is still in the beam.

    The bookkeeping (finished hypotheses, which sentences go on, each beam's tokens) lives on the
    host, and the device sends it what it needs in one read per step (the top candidates, their
    beams and tokens): on a GPU, one host sync per step. Indices go back as host-built tensors.
    """
    k = beam_size
    batch, device = src.size(0), src.device
    limits = max_output_lengths(src, model, max_len_a, max_len_b).tolist()  # (B,) on the host
    memory, src_mask = model.encode(src)
    state = model.start_decoding(memory, src_mask, beams=k)

    sentence = list(range(batch))  # sentence of each active batch entry
    scores = torch.full((batch, k), NEG_INF, device=device)  # (b, K) log-probabilities of the beams
    scores[:, 0] = 0.0  # all beams start identical: expand only the first
    history: list[list[int]] = [[] for _ in range(batch * k)]  # tokens of each of the b·K rows
    # The same on the device, for the n-gram blocking only.
    history_device = torch.empty((batch * k, 0), dtype=torch.long, device=device) if no_repeat_ngram_size else None
    last = torch.full((batch * k,), BOS, dtype=torch.long, device=device)
    finished: list[list[Hypothesis]] = [[] for _ in range(batch)]

    for t in range(max(limits) + 1):
        b = len(sentence)
        log_probs = model.decode_step(last, state)  # (b·K, V)
        vocab = log_probs.size(1)
        _forbid_specials(log_probs, end_allowed=t >= min_len)
        if history_device is not None:
            forbid_repeated_ngrams(log_probs, history_device, no_repeat_ngram_size)
        at_limit = [limits[s] <= t for s in sentence]
        if any(at_limit):
            _force_eos(log_probs, _index_tensor([i * k + j for i in range(b) if at_limit[i] for j in range(k)], device))

        candidates = (scores.unsqueeze(2) + log_probs.view(b, k, vocab)).view(b, k * vocab)
        top_scores, top_index = candidates.topk(2 * k, dim=1)  # (b, 2K), best first
        top_beam, top_token = top_index // vocab, top_index % vocab
        # Continue with the K best candidates that did not end (each beam has only one EOS
        # extension, so at least K of the 2K did not end).
        ends = top_token == EOS
        rank = torch.arange(2 * k, device=device).expand(b, 2 * k) + ends * (2 * k)
        keep = rank.topk(k, dim=1, largest=False).indices  # (b, K) in score order
        scores = top_scores.gather(1, keep)
        next_beam, next_token = top_beam.gather(1, keep), top_token.gather(1, keep)

        # The one read of the step: per entry, the top K candidates (score, beam, token), the K
        # that go on (beam, token) and the best live score. float64 holds each exactly.
        step = torch.cat([top_scores[:, :k], top_beam[:, :k], top_token[:, :k], next_beam, next_token,
                          scores[:, :1]], dim=1).double().tolist()

        active, rows, tokens = [], [], []
        for i, row in enumerate(step):
            top, beams, ends_here = row[:k], row[k:2 * k], row[2 * k:3 * k]
            hyps = finished[sentence[i]]
            for j in range(k):  # file the EOS candidates ranked in the top K as finished hypotheses
                if ends_here[j] == EOS and top[j] > NEG_INF:
                    tokens_so_far = history[i * k + int(beams[j])]
                    hyps.append(Hypothesis(list(tokens_so_far), top[j] / gnmt_length_penalty(t + 1, length_penalty), top[j]))
            if len(hyps) > 1:
                hyps.sort(key=lambda h: -h.score)
                del hyps[max(nbest, k):]
            best = row[5 * k]
            nth_best = hyps[nbest - 1].score if len(hyps) >= nbest else NEG_INF
            reachable = best / gnmt_length_penalty(limits[sentence[i]] + 1, length_penalty)
            if at_limit[i] or best == NEG_INF or nth_best >= reachable:
                continue
            active.append(i)
            rows += [i * k + int(beam) for beam in row[3 * k:4 * k]]
            tokens += [int(token) for token in row[4 * k:5 * k]]
        if not active:
            break
        history = [history[r] + [token] for r, token in zip(rows, tokens)]
        rows_device = _index_tensor(rows, device)  # (b'·K,)
        last = _index_tensor(tokens, device)
        if history_device is not None:
            history_device = torch.cat([history_device.index_select(0, rows_device), last.unsqueeze(1)], dim=1)
        state = state.select(rows_device, same_sentences=len(active) == b)
        if len(active) < b:
            scores = scores.index_select(0, _index_tensor(active, device))
            sentence = [sentence[i] for i in active]

    return [hyps[:nbest] for hyps in finished]
