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
constraint, the best output found is returned and flagged (`constraints_met`), so the caller can
warn. `BankedBeams` is the chooser nmt.decode.search.beam_search uses when given constraints.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from nmt.data.batching import to_device
from nmt.special_tokens import EOS

NEG_INF = float("-inf")


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


class BankedBeams:
    """beam_search's chooser (nmt.decode.search.Chooser) with constraints; `filing`
    (nmt.decode.search.Filing) gives the rules. The candidates of an entry are its 2K best
    extensions, each beam's best token and each token that advances one of its constraints; the
    K kept are dealt from the banks (`_allocate`). An output ends (EOS) or is cut at the limit as
    a finished hypothesis if it meets every constraint, else as a fallback returned only when
    none does."""

    def __init__(self, filing, constraints: list[list[list[int]]], device: torch.device):
        self.filing, self.constraints, self.device = filing, constraints, device
        k, batch = filing.k, len(constraints)
        self.beams = [[_Beam(0.0 if j == 0 else NEG_INF, ConstraintState()) for j in range(k)] for _ in range(batch)]
        self.next: dict[int, list[_Beam]] = {}  # per entry going on, its beams for the next step
        self.finished: list[list] = [[] for _ in range(batch)]
        self.fallback: list[list] = [[] for _ in range(batch)]  # ended without meeting every constraint

    def choose(self, t: int, log_probs: Tensor, sentence: list[int], history: list[list[int]],
               forced: dict[int, int]) -> dict[int, tuple[list[int], list[int]]]:
        f, k = self.filing, self.filing.k
        b, vocab = len(sentence), log_probs.size(1)
        beam_scores = to_device(torch.tensor([[beam.score for beam in self.beams[s]] for s in sentence]), self.device)
        totals = (beam_scores.unsqueeze(2) + log_probs.view(b, k, vocab)).view(b, k * vocab)
        top_scores, top_index = totals.topk(min(2 * k, k * vocab), dim=1)
        best_scores, best_tokens = log_probs.max(dim=1)  # each beam's best token
        wanted = [(i * k + j, token) for i, s in enumerate(sentence) if i not in forced
                  for j, beam in enumerate(self.beams[s]) if beam.score > NEG_INF
                  for token in beam.state.next_tokens(self.constraints[s])]
        asked = log_probs[[r for r, _ in wanted], [tok for _, tok in wanted]].tolist() if wanted else []
        top_scores, top_index = top_scores.tolist(), top_index.tolist()
        best_scores, best_tokens = best_scores.tolist(), best_tokens.tolist()
        asked_by_row: dict[int, list[tuple[int, float]]] = {}
        for (row, token), lp in zip(wanted, asked):
            asked_by_row.setdefault(row, []).append((token, lp))

        moves, self.next = {}, {}
        for i, s in enumerate(sentence):
            if i in forced:
                continue
            current, phrases = self.beams[s], self.constraints[s]
            pool: dict[tuple[int, int], float] = {}
            for score, index in zip(top_scores[i], top_index[i]):
                pool[(index // vocab, index % vocab)] = score
            for j, beam in enumerate(current):
                if beam.score == NEG_INF:
                    continue
                pool[(j, best_tokens[i * k + j])] = beam.score + best_scores[i * k + j]
                for token, lp in asked_by_row.get(i * k + j, []):
                    pool[(j, token)] = beam.score + lp
            last_step = f.last_step(s, t)
            candidates = []
            for (j, token), score in pool.items():
                if score == NEG_INF:
                    continue
                tokens, state = history[i * k + j], current[j].state
                if token != EOS:
                    state = state.advance(token, phrases)
                if token == EOS or last_step:  # it ends, or the limit cuts it (without EOS)
                    ended = token == EOS
                    filed = self.finished if state.all_met(phrases) else self.fallback
                    filed[s].append(f.hypothesis(tokens + ([] if ended else [token]), score, ended))
                    continue
                candidates.append((score, j, token, state))
            if last_step or len(self.finished[s]) >= f.enough or not candidates:
                if not self.finished[s] and not self.fallback[s]:  # nothing ended: its best beam so far
                    self.fallback[s].append(f.hypothesis(history[i * k], current[0].score, False))
                continue
            chosen = _allocate(candidates, k, phrases)
            chosen += [(NEG_INF, chosen[0][1], chosen[0][2], chosen[0][3])] * (k - len(chosen))  # empty beams
            moves[i] = ([i * k + j for _, j, _, _ in chosen], [token for _, _, token, _ in chosen])
            self.next[i] = [_Beam(score, state) for score, _, _, state in chosen]
        return moves

    def force(self, forced: dict[int, int], sentence: list[int]) -> None:
        """Entries forced through their prefix: the first beam at no cost, its constraints
        advanced by the token, the others empty."""
        for i, token in forced.items():
            s = sentence[i]
            state = self.beams[s][0].state.advance(token, self.constraints[s])
            self.next[i] = [_Beam(0.0, state)] + [_Beam(NEG_INF, state) for _ in range(self.filing.k - 1)]

    def keep(self, active: list[int], sentence: list[int]) -> None:
        for i in active:
            self.beams[sentence[i]] = self.next[i]

    def results(self) -> list:
        results = []
        for s, phrases in enumerate(self.constraints):
            met = bool(self.finished[s])
            hyps = sorted(self.finished[s] or self.fallback[s], key=lambda h: -h.score)[: self.filing.nbest]
            for h in hyps:
                h.constraints_met = met if phrases else None
            results.append(hyps)
        return results
