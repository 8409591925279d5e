"""Lexically constrained beam search: outputs that contain given phrases (terminology).

Dynamic beam allocation (Post & Vilar, 2018). Each hypothesis knows how many constraint tokens
it has produced (its bank). At each step the candidates are the usual best extensions of the
beams, plus, for every beam, the next token of each constraint it could advance and its single
best token; the K beams kept are taken in turns from the banks, the most advanced first, each
time the best remaining candidate of that bank. So hypotheses that place constraints early
survive beside those that place them later, and the cost per step is bounded: at most
K · (2 + number of constraints) candidates per sentence.

An output may end (EOS) only once every constraint is met. A phrase is met when its tokens come
in a row; a phrase abandoned halfway counts for nothing and may start again later. Constraints
are placed in any order. The search stops at the length limit (its last step files the beams
that met every constraint) or once round(K · patience) outputs have ended. When none meets every
constraint, the best output found is returned and flagged, so the caller can warn.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from nmt.data.batching import to_device
from nmt.data.tokenizer import BOS, EOS
from nmt.decode.search import (NEG_INF, Hypothesis, _next_token_log_probs, max_output_lengths,
                               normalized_score)
from nmt.model.transformer import Transformer


@dataclass(frozen=True)
class ConstraintState:
    """What a hypothesis has of its sentence's constraints: those met, and a phrase in progress."""

    met: frozenset = frozenset()
    current: int = -1  # the constraint in progress, -1 for none
    progress: int = 0  # its tokens produced so far

    def tokens_met(self, constraints: list[list[int]]) -> int:
        return sum(len(constraints[c]) for c in self.met) + self.progress

    def all_met(self, constraints: list[list[int]]) -> bool:
        return len(self.met) == len(constraints)

    def next_tokens(self, constraints: list[list[int]]) -> set[int]:
        """The tokens that would advance a constraint."""
        if self.current >= 0:
            return {constraints[self.current][self.progress]}
        return {c[0] for i, c in enumerate(constraints) if i not in self.met}

    def advance(self, token: int, constraints: list[list[int]]) -> "ConstraintState":
        if self.current >= 0 and constraints[self.current][self.progress] == token:
            if self.progress + 1 == len(constraints[self.current]):
                return ConstraintState(self.met | {self.current})
            return ConstraintState(self.met, self.current, self.progress + 1)
        for i, phrase in enumerate(constraints):  # (re)start an unmet phrase with this token
            if i not in self.met and phrase[0] == token:
                return ConstraintState(self.met | {i}) if len(phrase) == 1 else ConstraintState(self.met, i, 1)
        return ConstraintState(self.met)


@dataclass
class _Beam:
    tokens: list[int]
    score: float  # log-probability so far (a prefix's not counted)
    state: ConstraintState


def _allocate(candidates: list[tuple[float, int, int, ConstraintState]], k: int,
              constraints: list[list[int]]) -> list[tuple[float, int, int, ConstraintState]]:
    """K candidates taken in turns from the banks (tokens of constraints met), most advanced
    bank first, the best remaining of a bank each time."""
    banks: dict[int, list] = {}
    for candidate in sorted(candidates, key=lambda c: -c[0]):
        banks.setdefault(candidate[3].tokens_met(constraints), []).append(candidate)
    order = sorted(banks, reverse=True)
    chosen, depth = [], 0
    while len(chosen) < k and any(depth < len(banks[b]) for b in order):
        for bank in order:
            if depth < len(banks[bank]) and len(chosen) < k:
                chosen.append(banks[bank][depth])
        depth += 1
    return sorted(chosen, key=lambda c: -c[0])


@torch.inference_mode()
def constrained_beam_search(model: Transformer, src: Tensor, constraints: list[list[list[int]]], beam_size: int = 4,
                            length_penalty: float = 0.6, max_len_a: float = 1.5, max_len_b: int = 10, nbest: int = 1,
                            min_len: int = 0, no_repeat_ngram_size: int = 0, length_penalty_form: str = "power",
                            patience: float = 1.0, prefixes: list[list[int]] | None = None,
                            ) -> tuple[list[list[Hypothesis]], list[bool]]:
    """Beam search for sources (B, S) whose outputs contain each sentence's constraints (token-id
    phrases). Returns the `nbest` best hypotheses per sentence and, per sentence, whether they
    meet every constraint."""
    k, batch, device = beam_size, src.size(0), src.device
    prefixes = prefixes or [[] for _ in range(batch)]
    enough = max(1, int(k * patience + 0.5))
    limits = max_output_lengths(src, model, max_len_a, max_len_b,
                                torch.tensor([len(p) for p in prefixes], device=device)).tolist()
    memory, src_mask = model.encode(src)
    state = model.start_decoding(memory, src_mask, beams=k)
    sentence = list(range(batch))
    beams = [[_Beam([], 0.0 if j == 0 else NEG_INF, ConstraintState()) for j in range(k)] for _ in range(batch)]
    finished: list[list[Hypothesis]] = [[] for _ in range(batch)]
    fallback: list[list[Hypothesis]] = [[] for _ in range(batch)]  # ended without meeting every constraint
    last = torch.full((batch * k,), BOS, dtype=torch.long, device=device)
    history = torch.empty((batch * k, 0), dtype=torch.long, device=device) if no_repeat_ngram_size else None

    def hypothesis(tokens: list[int], log_prob: float, ended: bool) -> Hypothesis:
        return Hypothesis(tokens, normalized_score(log_prob, len(tokens) + ended, length_penalty, length_penalty_form),
                          log_prob)

    for t in range(max(limits)):
        b = len(sentence)
        log_probs = _next_token_log_probs(model.decode_step(last, state), t >= min_len, history, no_repeat_ngram_size)
        vocab = log_probs.size(1)
        beam_scores = to_device(torch.tensor([[beam.score for beam in beams[s]] for s in sentence]), device)
        totals = (beam_scores.unsqueeze(2) + log_probs.view(b, k, vocab)).view(b, k * vocab)
        top_scores, top_index = totals.topk(min(2 * k, k * vocab), dim=1)
        best_scores, best_tokens = log_probs.max(dim=1)  # each beam's best token
        wanted = [(i * k + j, token) for i, s in enumerate(sentence) for j, beam in enumerate(beams[s])
                  if beam.score > NEG_INF for token in beam.state.next_tokens(constraints[s])]
        asked = log_probs[[r for r, _ in wanted], [tok for _, tok in wanted]].tolist() if wanted else []
        top_scores, top_index = top_scores.tolist(), top_index.tolist()
        best_scores, best_tokens = best_scores.tolist(), best_tokens.tolist()
        asked_by_row: dict[int, list[tuple[int, float]]] = {}
        for (row, token), lp in zip(wanted, asked):
            asked_by_row.setdefault(row, []).append((token, lp))

        active, rows, tokens, next_beams = [], [], [], []
        for i, s in enumerate(sentence):
            current, phrases = beams[s], constraints[s]
            if t < len(prefixes[s]):  # forced through the prefix on the first beam, at no cost
                token = prefixes[s][t]
                kept = [_Beam(current[0].tokens + [token], 0.0, current[0].state.advance(token, phrases))]
                kept += [_Beam(kept[0].tokens, NEG_INF, kept[0].state) for _ in range(k - 1)]
                active.append(i)
                rows += [i * k] * k
                tokens += [token] * k
                next_beams.append(kept)
                continue
            pool: dict[tuple[int, int], float] = {}
            for score, index in zip(top_scores[i], top_index[i]):
                pool[(index // vocab, index % vocab)] = score
            for j, beam in enumerate(current):
                if beam.score == NEG_INF:
                    continue
                pool[(j, best_tokens[i * k + j])] = beam.score + best_scores[i * k + j]
                for token, lp in asked_by_row.get(i * k + j, []):
                    pool[(j, token)] = beam.score + lp
            last_step = t == limits[s] - 1
            candidates = []
            for (j, token), score in pool.items():
                if score == NEG_INF:
                    continue
                beam = current[j]
                if token == EOS:
                    met = beam.state.all_met(phrases)
                    (finished if met else fallback)[s].append(hypothesis(beam.tokens, score, True))
                    continue
                new_state = beam.state.advance(token, phrases)
                if last_step:  # the limit: file what is there, without EOS
                    met = new_state.all_met(phrases)
                    (finished if met else fallback)[s].append(hypothesis(beam.tokens + [token], score, False))
                    continue
                candidates.append((score, j, token, new_state))
            if last_step or len(finished[s]) >= enough or not candidates:
                continue
            chosen = _allocate(candidates, k, phrases)
            chosen += [(NEG_INF, chosen[0][1], chosen[0][2], chosen[0][3])] * (k - len(chosen))  # empty beams
            active.append(i)
            rows += [i * k + j for _, j, _, _ in chosen]
            tokens += [token for _, _, token, _ in chosen]
            next_beams.append([_Beam(current[j].tokens + [token], score, st) for score, j, token, st in chosen])
        if not active:
            break
        rows_device = to_device(torch.tensor(rows, dtype=torch.long), device)
        last = to_device(torch.tensor(tokens, dtype=torch.long), device)
        if history is not None:
            history = torch.cat([history.index_select(0, rows_device), last.unsqueeze(1)], dim=1)
        state = state.select(rows_device, same_sentences=len(active) == b)
        sentence = [sentence[i] for i in active]
        for s, kept in zip(sentence, next_beams):
            beams[s] = kept

    results, satisfied = [], []
    for s in range(batch):
        met = bool(finished[s])
        pool = finished[s] or fallback[s] or [hypothesis(beams[s][0].tokens, beams[s][0].score, False)]
        results.append(sorted(pool, key=lambda h: -h.score)[:nbest])
        satisfied.append(met)
    return results, satisfied
