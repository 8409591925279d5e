"""Search over the model's outputs: greedy, sampling and batched beam search, all incremental (cached).

Sentences whose search is over leave the active batch, so late steps only pay for the
sentences still being decoded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import torch
from torch import Tensor

from nmt.data.batching import to_device
from nmt.special_tokens import EOS, PAD
from nmt.decode.constraints import BankedBeams
from nmt.decode.top_candidates import top_candidates
from nmt.model.transformer import Transformer

NEG_INF = float("-inf")


@dataclass
class Hypothesis:
    tokens: list[int]  # without BOS and EOS
    score: float  # log-probability divided by the length penalty
    log_prob: float  # including the EOS step
    token_log_probs: list[float] | None = None  # each token's, under teacher forcing (on request)
    alignment: str | None = None  # Pharaoh word alignment to the source (on request)
    constraints_met: bool | None = None  # with lexical constraints: whether it contains them all
    upper: bool = False  # its source was in capitals: its text is given in capitals (nmt.decode.text.casing)
    text: str | None = None  # its output text where more than its tokens make it (nmt.decode.text.markup)
    selection: float | None = None  # chosen among candidates: MBR's expected utility or the reranked score
    joins: tuple[int, ...] = ()  # offsets in `text` where a word starts without a space (nmt.decode.text.paragraphs)


LENGTH_PENALTY_FORMS = ("power", "gnmt")


def length_penalty(length: int, alpha: float, form: str = "power") -> float:
    """What a finished output's log-probability is divided by. |Y| = `length`: its tokens, its
    EOS included (an output cut at its length limit has none), as CTranslate2, fairseq and Marian
    count. power: |Y|^alpha, as they divide; gnmt: ((5 + |Y|) / 6)^alpha (Wu et al., 2016).
    alpha = 0: rank by log-probability."""
    if form == "gnmt":
        return ((5.0 + length) / 6.0) ** alpha
    return float(length) ** alpha


def normalized_score(log_prob: float, length: int, alpha: float, form: str = "power") -> float:
    return log_prob / length_penalty(length, alpha, form)


def max_output_lengths(src: Tensor, model: Transformer, a: float, b: int,
                       prefix_lengths: Tensor | None = None) -> Tensor:
    """Per sentence: a · (source length without padding) + b, within the model's positions, and
    at least one token beyond its forced prefix, if any."""
    src_len = (src != PAD).sum(dim=1)
    limits = (a * src_len + b).long()
    if prefix_lengths is not None:
        limits = torch.maximum(limits, prefix_lengths + 1)
    return limits.clamp(min=1, max=model.cfg.max_positions - 1)  # (B,)


def output_limit(source_tokens: int, a: float, b: int, max_positions: int, prefix_length: int = 0) -> int:
    """max_output_lengths for one sentence, on the host: source_tokens counts its EOS."""
    return max(1, min(max(int(a * source_tokens + b), prefix_length + 1), max_positions - 1))


def _prefix_table(prefixes: list[list[int]] | None, batch: int, device) -> Tensor | None:
    """(B, longest prefix) of forced tokens, -1 past each sentence's prefix; None without any."""
    if not prefixes or not any(prefixes):
        return None
    table = torch.full((batch, max(len(p) for p in prefixes)), -1, dtype=torch.long)
    for i, prefix in enumerate(prefixes):
        table[i, : len(prefix)] = torch.tensor(prefix, dtype=torch.long)
    return to_device(table, device)


def columns_of(tokens: Tensor, vocabulary: Tensor | None) -> Tensor:
    """Token ids -> their columns in a step's log-probabilities: the ids themselves, or with a
    shortlist (sorted ids, each token in it), their positions in it."""
    return tokens if vocabulary is None else torch.searchsorted(vocabulary, tokens)


def tokens_of(columns: Tensor, vocabulary: Tensor | None) -> Tensor:
    """Columns of a step's log-probabilities -> the token ids they stand for."""
    return columns if vocabulary is None else vocabulary[columns]


def _next_log_probs(model, tokens: Tensor, state, end_allowed: bool, history: Tensor | None,
                    no_repeat_ngram_size: int, vocabulary: Tensor | None = None) -> Tensor:
    """One decoding step's log-probabilities without what may not come next (EOS below min_len,
    tokens repeating an n-gram): the model takes them out before its softmax, which renormalizes
    the rest, as CTranslate2 does, so both engines rank alike (PAD and BOS are always out). With a
    shortlist's `vocabulary`, the columns are its tokens."""
    ngrams = history is not None and history.size(1) >= no_repeat_ngram_size  # none can repeat before
    if end_allowed and not ngrams:
        return model.decode_step(tokens, state)

    def forbid(scores: Tensor) -> None:
        if not end_allowed:
            if vocabulary is None:
                scores[:, EOS] = NEG_INF
            else:  # EOS's column, found on the device (no host sync in the step)
                scores.masked_fill_(vocabulary == EOS, NEG_INF)
        if ngrams:
            forbid_repeated_ngrams(scores, columns_of(history, vocabulary), no_repeat_ngram_size)

    log_probs = model.decode_step(tokens, state, forbid)
    # A row with nothing left (a toy vocabulary's n-grams all used) stays at -inf, not NaN.
    return log_probs.nan_to_num_(nan=NEG_INF) if ngrams else log_probs


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


def _sampler(temperature: float, top_k: int, top_p: float, generator: torch.Generator | None,
             epsilon: float = 0.0):
    """Draw one token per row from the (temperature-scaled, top-k/top-p/epsilon truncated) distribution.
    Epsilon sampling drops the tokens whose model probability is below epsilon (the most probable
    token always stays)."""
    def pick(log_probs: Tensor) -> Tensor:
        logits = log_probs / temperature
        if epsilon > 0:
            floor = torch.minimum(log_probs.max(dim=-1, keepdim=True).values,
                                  torch.full_like(log_probs[:, :1], math.log(epsilon)))
            logits = logits.masked_fill(log_probs < floor, NEG_INF)
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
                  min_len: int = 0, sample: dict | None = None, no_repeat_ngram_size: int = 0,
                  length_penalty: float = 0.0, length_penalty_form: str = "power",
                  prefixes: list[list[int]] | None = None, vocabulary: torch.Tensor | None = None,
                  compiled: bool = False) -> list[Hypothesis]:
    """The most probable next token at each step, for a batch of sources (B, S). An output ends
    with EOS or at its length limit (then without EOS, as in beam search); its score is divided
    by the length penalty as beam search's are. An output with a prefix (token ids) starts with
    it; its probability is not counted (it is given, not chosen), as in CTranslate2.

    With `sample` (temperature, top_k, top_p, generator, epsilon), the next token is drawn at random instead.
    `vocabulary`: the target ids the outputs may use (a lexical shortlist), None for all.
    `compiled`: the model's decoder layers run compiled (decode.compile, nmt.model.compiled_decoding).
    """
    pick = _sampler(**sample) if sample else None
    batch = src.size(0)
    forced = _prefix_table(prefixes, batch, src.device)
    prefix_lengths = None if forced is None else (forced >= 0).sum(dim=1)
    limits = max_output_lengths(src, model, max_len_a, max_len_b, prefix_lengths)
    memory, src_mask = model.encode(src)
    state = model.start_decoding(memory, src_mask, vocabulary=vocabulary, compiled=compiled)
    alive = torch.arange(batch, device=src.device)  # sentence of each active row
    tokens = torch.full((batch,), model.start_token, dtype=torch.long, device=src.device)
    outputs = torch.full((batch, int(limits.max())), PAD, dtype=torch.long, device=src.device)
    log_prob = torch.zeros(batch, device=src.device)
    for t in range(int(limits.max())):
        history = outputs[alive, :t] if no_repeat_ngram_size else None  # a copy: made only when asked for
        log_probs = _next_log_probs(model, tokens, state, t >= min_len, history,
                                    no_repeat_ngram_size, vocabulary)  # (n, V), or (n, C) over a shortlist
        if pick is None:
            best, columns = log_probs.max(dim=-1)
        else:
            columns = pick(log_probs)
            best = log_probs.gather(1, columns.unsqueeze(1)).squeeze(1)
        tokens = tokens_of(columns, vocabulary)
        if forced is not None and t < forced.size(1):
            given = forced[alive, t]
            tokens = torch.where(given >= 0, given, tokens)
            best = best.masked_fill(given >= 0, 0.0)
        outputs[alive, t] = tokens
        log_prob[alive] += best
        running = (tokens != EOS) & (limits[alive] > t + 1)
        if not running.any():
            break
        if not running.all():
            keep = running.nonzero().squeeze(1)
            state, alive, tokens = state.select(keep), alive[keep], tokens[keep]
    hypotheses = []
    for row, total in zip(outputs.tolist(), log_prob.tolist()):
        ended = EOS in row
        seq = row[: row.index(EOS)] if ended else [t for t in row if t != PAD]
        hypotheses.append(Hypothesis(seq, normalized_score(total, len(seq) + ended, length_penalty,
                                                           length_penalty_form), total))
    return hypotheses


def _first_beam_only(k: int, device: torch.device) -> Tensor:
    return to_device(torch.tensor([0.0] + [NEG_INF] * (k - 1)), device)


def _index_tensor(values: list[int], device: torch.device) -> Tensor:
    """Host-built indices on the device, copied without making the host wait."""
    return to_device(torch.tensor(values, dtype=torch.long), device)


def enough_filed(beam_size: int, patience: float) -> int:
    """How many filed hypotheses end a sentence's beam search: round(K · patience), half up, as
    CTranslate2 rounds (Kasai et al., 2022)."""
    return max(1, int(beam_size * patience + 0.5))


@dataclass
class Filing:
    """What a beam search's choosers share: the beam size, each sentence's length limit and forced
    prefix, how a finished output is ranked, and how many end a sentence's search."""

    k: int
    limits: list[int]  # per sentence
    prefixes: list[list[int]]  # per sentence, [] for none
    nbest: int
    enough: int  # enough_filed(K, patience)
    alpha: float
    form: str

    def hypothesis(self, tokens: list[int], log_prob: float, ended: bool) -> Hypothesis:
        return Hypothesis(tokens, normalized_score(log_prob, len(tokens) + ended, self.alpha, self.form), log_prob)

    def last_step(self, s: int, t: int) -> bool:
        return t == self.limits[s] - 1

    def after_prefix(self, s: int, t: int) -> bool:
        return t == len(self.prefixes[s]) > 0


# What a chooser decides for an entry (a sentence still searched) at a step: the rows (beams of
# the step, entry·K + beam) its next K beams extend, and their tokens.
Moves = dict[int, tuple[list[int], list[int]]]


class Chooser(Protocol):
    """beam_search's step rule: which K extensions each sentence goes on with, and which outputs
    are filed. Entries are the sentences still searched, in `sentence` order."""

    def choose(self, t: int, log_probs: Tensor, sentence: list[int], history: list[list[int]],
               forced: dict[int, int]) -> Moves:
        """Step t's moves for the entries not in `forced` that go on (an entry left out is done);
        log_probs: (entries·K, V); history: each row's tokens so far."""

    def force(self, forced: dict[int, int], sentence: list[int]) -> None:
        """The entries forced through their prefix this step (entry -> token): the first beam
        takes the token at no cost, the others are empty."""

    def keep(self, active: list[int], sentence: list[int]) -> None:
        """Only the `active` entries go on, in this order."""

    def results(self) -> list[list[Hypothesis]]:
        """Per sentence, its n-best filed hypotheses, best first."""


class TopK:
    """Plain beam search's choice: each step scores all K·V extensions of the K beams and keeps
    the 2K best. Those among the top K that end in EOS are filed, and the search goes on with the
    K best that did not end. At a sentence's last step every top-K candidate is filed, ended or
    not. A sentence stops there, or once `enough` hypotheses are filed; with length_penalty 0,
    once the step's best candidate has ended and `nbest` are filed (no later hypothesis can beat
    it). At the first free step after a prefix, an EOS that is not the best candidate is not
    filed and its beam is left empty (CTranslate2's guard against outputs that stop right after
    the prefix).

    The beams' scores stay on the device, which sends the host what it needs in one read per step
    (the top candidates, their beams and tokens): on a GPU, one host sync per step."""

    def __init__(self, filing: Filing, batch: int, device: torch.device, vocabulary: Tensor | None = None):
        self.filing, self.device, self.vocabulary = filing, device, vocabulary  # vocabulary: a shortlist's ids
        self.scores = torch.full((batch, filing.k), NEG_INF, device=device)  # (b, K) log-probabilities
        self.scores[:, 0] = 0.0  # all beams start identical: expand only the first
        self.finished: list[list[Hypothesis]] = [[] for _ in range(batch)]
        self.best_has_ended = [False] * batch  # a step's best candidate was EOS (for length_penalty 0)

    def choose(self, t: int, log_probs: Tensor, sentence: list[int], history: list[list[int]],
               forced: dict[int, int]) -> Moves:
        f, k = self.filing, self.filing.k
        b, vocab = len(sentence), log_probs.size(1)
        # the 2K best extensions (b, 2K), best first
        top_scores, top_beam, top_column = top_candidates(self.scores, log_probs.view(b, k, vocab), 2 * k)
        top_token = tokens_of(top_column, self.vocabulary)
        # Continue with the K best candidates that did not end (each beam has only one EOS
        # extension, so at least K of the 2K did not end).
        ends = top_token == EOS
        rank = torch.arange(2 * k, device=self.device).expand(b, 2 * k) + ends * (2 * k)
        keep = rank.topk(k, dim=1, largest=False).indices  # (b, K) in score order
        self.scores = top_scores.gather(1, keep)
        next_beam, next_token = top_beam.gather(1, keep), top_token.gather(1, keep)
        # The one read of the step: per entry, the top K candidates (score, beam, token), the K
        # that go on (beam, token) and the best live score. float64 holds each exactly.
        step = torch.cat([top_scores[:, :k], top_beam[:, :k], top_token[:, :k], next_beam, next_token,
                          self.scores[:, :1]], dim=1).double().tolist()
        moves: Moves = {}
        emptied = []
        for i, row in enumerate(step):
            if i in forced:
                continue
            top, beams, words = row[:k], row[k:2 * k], row[2 * k:3 * k]
            s = sentence[i]
            after_prefix, last_step = f.after_prefix(s, t), f.last_step(s, t)
            if after_prefix and EOS in words[1:]:
                emptied.append(i)
            hyps = self.finished[s]
            for j in range(k):  # file the top K candidates that end (all of them at the last step)
                if top[j] == NEG_INF or not (words[j] == EOS or last_step) or (after_prefix and j and words[j] == EOS):
                    continue
                ended = words[j] == EOS
                hyps.append(f.hypothesis(history[i * k + int(beams[j])] + ([] if ended else [int(words[j])]),
                                         top[j], ended))
                self.best_has_ended[s] = self.best_has_ended[s] or j == 0
            enough = self.best_has_ended[s] and len(hyps) >= f.nbest if f.alpha == 0 else len(hyps) >= f.enough
            if not (last_step or enough or row[5 * k] == NEG_INF):
                moves[i] = ([i * k + int(beam) for beam in row[3 * k:4 * k]], [int(token) for token in row[4 * k:5 * k]])
        if emptied:  # where an EOS was not filed, CTranslate2 keeps one live beam fewer
            self.scores[_index_tensor(emptied, self.device), k - 1] = NEG_INF
        return moves

    def force(self, forced: dict[int, int], sentence: list[int]) -> None:
        """Entries forced through their prefix: the first beam at no cost, the others empty."""
        if forced:
            self.scores[_index_tensor(list(forced), self.device)] = _first_beam_only(self.filing.k, self.device)

    def keep(self, active: list[int], sentence: list[int]) -> None:
        if len(active) < len(sentence):
            self.scores = self.scores.index_select(0, _index_tensor(active, self.device))

    def results(self) -> list[list[Hypothesis]]:
        return [sorted(hyps, key=lambda h: -h.score)[: self.filing.nbest] for hyps in self.finished]


@torch.inference_mode()
def beam_search(model: Transformer, src: Tensor, beam_size: int = 4, length_penalty: float = 0.6,
                max_len_a: float = 1.5, max_len_b: int = 10, nbest: int = 1,
                min_len: int = 0, no_repeat_ngram_size: int = 0,
                length_penalty_form: str = "power", patience: float = 1.0,
                prefixes: list[list[int]] | None = None,
                constraints: list[list[list[int]]] | None = None,
                vocabulary: torch.Tensor | None = None, compiled: bool = False) -> list[list[Hypothesis]]:
    """Batched beam search for sources (B, S); returns the `nbest` best hypotheses per sentence.

    Each step extends the K beams of every sentence still searched and a chooser keeps K of the
    extensions and files the outputs that end: `TopK` (CTranslate2's beam search, so a model and
    its export translate alike), or, with `constraints` (per sentence, phrases of token ids its
    output must contain), `nmt.decode.constraints.BankedBeams` (dynamic beam allocation), which
    sets each hypothesis's `constraints_met`. Each filed hypothesis is ranked by its
    log-probability divided by the length penalty. A sentence stops at its length limit or once
    round(K · patience) hypotheses are filed (Kasai et al., 2022).

    A sentence with a prefix (token ids) is forced through it on one beam, its probability not
    counted (it is given, not chosen). Each beam's tokens live on the host, indices go back to
    the device as host-built tensors. `vocabulary`: the target ids the outputs may use (a lexical
    shortlist), None for all. `compiled`: as in greedy_search.
    """
    if length_penalty_form not in LENGTH_PENALTY_FORMS:
        raise ValueError(f"length_penalty_form {length_penalty_form!r}: choose one of {LENGTH_PENALTY_FORMS}")
    k, batch, device = beam_size, src.size(0), src.device
    prefixes = prefixes or [[] for _ in range(batch)]
    prefix_lengths = torch.tensor([len(p) for p in prefixes], device=device)
    limits = max_output_lengths(src, model, max_len_a, max_len_b, prefix_lengths).tolist()  # (B,) on the host
    filing = Filing(k, limits, prefixes, nbest, enough_filed(k, patience), length_penalty, length_penalty_form)
    banked = bool(constraints and any(constraints))
    chooser: Chooser = BankedBeams(filing, constraints, device) if banked else TopK(filing, batch, device, vocabulary)
    memory, src_mask = model.encode(src)
    state = model.start_decoding(memory, src_mask, beams=k, vocabulary=vocabulary, compiled=compiled)

    sentence = list(range(batch))  # sentence of each active batch entry
    history: list[list[int]] = [[] for _ in range(batch * k)]  # tokens of each of the b·K rows
    # The same on the device, for the n-gram blocking only.
    history_device = torch.empty((batch * k, 0), dtype=torch.long, device=device) if no_repeat_ngram_size else None
    last = torch.full((batch * k,), model.start_token, dtype=torch.long, device=device)
    # With constraints over a shortlist, the constraints' chooser reads columns as token ids: each
    # step's log-probabilities are widened to the largest shortlisted id.
    widen_to = int(vocabulary[-1]) + 1 if banked and vocabulary is not None else None
    for t in range(max(limits)):
        log_probs = _next_log_probs(model, last, state, t >= min_len, history_device,
                                    no_repeat_ngram_size, vocabulary)  # (b·K, V), or (b·K, C) over a shortlist
        if widen_to is not None:
            log_probs = log_probs.new_full((log_probs.size(0), widen_to), NEG_INF).index_copy_(1, vocabulary, log_probs)
        forced = {i: prefixes[s][t] for i, s in enumerate(sentence) if t < len(prefixes[s])}
        moves = chooser.choose(t, log_probs, sentence, history, forced)
        chooser.force(forced, sentence)
        moves.update({i: ([i * k] * k, [token] * k) for i, token in forced.items()})
        if not moves:
            break
        active = sorted(moves)
        rows = [r for i in active for r in moves[i][0]]
        tokens = [token for i in active for token in moves[i][1]]
        history = [history[r] + [token] for r, token in zip(rows, tokens)]
        rows_device = _index_tensor(rows, device)  # (b'·K,)
        last = _index_tensor(tokens, device)
        if history_device is not None:
            history_device = torch.cat([history_device.index_select(0, rows_device), last.unsqueeze(1)], dim=1)
        state = state.select(rows_device, same_sentences=len(active) == len(sentence))
        chooser.keep(active, sentence)
        sentence = [sentence[i] for i in active]
    return chooser.results()
