"""`nmt score`: sacrebleu's BLEU, chrF and TER with their signatures, and its paired significance tests.

Options mean what they mean on the sacrebleu command line (`--tokenize` and `--lowercase` apply
to BLEU), so the numbers are the same as `sacrebleu REF -i HYP -m ...`.
"""

from __future__ import annotations

import json
from pathlib import Path

from sacrebleu.metrics import BLEU, CHRF, TER
from sacrebleu.metrics.base import Metric
from sacrebleu.significance import PairedTest

from nmt.data.corpus import read_lines
from nmt.errors import NmtError
from nmt.language_id import describe, language_shares

METRICS = ("bleu", "chrf", "ter")


def build_metric(name: str, tokenize: str | None = None, lowercase: bool = False) -> Metric:
    if name == "bleu":
        return BLEU(tokenize=tokenize, lowercase=lowercase)
    if name == "chrf":
        return CHRF()
    if name == "ter":
        return TER()
    raise NmtError(f"unknown metric '{name}' (choose from {', '.join(METRICS)})")


def read_system(path: Path) -> list[str]:
    lines = list(read_lines(Path(path)))
    if not lines:
        raise NmtError(f"{path}: empty file")
    return lines


def read_references(hypothesis_path: Path, n_lines: int, reference_paths: list[Path]) -> list[list[str]]:
    if not reference_paths:
        raise NmtError("no reference file given")
    references = []
    for path in reference_paths:
        lines = read_system(path)
        if len(lines) != n_lines:
            raise NmtError(f"{hypothesis_path} has {n_lines} lines but {path} has {len(lines)}: "
                           "hypotheses and references must align line by line")
        references.append(lines)
    return references


def score_file(hypothesis_path: Path, reference_paths: list[Path], metrics: list[str] = ["bleu"],
               tokenize: str | None = None, lowercase: bool = False) -> list[dict]:
    """One result per metric: name, score, signature and sacrebleu's verbose line."""
    hypotheses = read_system(hypothesis_path)
    references = read_references(hypothesis_path, len(hypotheses), reference_paths)
    results = []
    for name in metrics:
        metric = build_metric(name, tokenize, lowercase)
        score = metric.corpus_score(hypotheses, references)
        result = {"name": score.name, "score": round(score.score, 4),
                  "signature": str(metric.get_signature()), "verbose_score": str(score)}
        if name == "bleu":
            result["length_ratio"] = length_ratio(score)
        results.append(result)
    return results


def length_ratio(bleu_score) -> float:
    """Output length over reference length, as sacreBLEU counts them (its `ratio`)."""
    return round(bleu_score.sys_len / bleu_score.ref_len, 4) if bleu_score.ref_len else 0.0


def compare_systems(system_paths: list[Path], reference_paths: list[Path], metrics: list[str] = ["bleu"],
                    tokenize: str | None = None, lowercase: bool = False, test: str = "bs",
                    samples: int = 0) -> list[dict]:
    """sacrebleu's paired test (bootstrap `bs` or approximate randomization `ar`), the first
    system being the baseline. One row per system with score, p-value and 95% interval."""
    if len(system_paths) < 2:
        raise NmtError("a paired test needs a baseline and at least one other system")
    systems = [(str(p), read_system(p)) for p in system_paths]
    for path, lines in systems[1:]:
        if len(lines) != len(systems[0][1]):
            raise NmtError(f"{systems[0][0]} has {len(systems[0][1])} lines but {path} has {len(lines)}")
    references = read_references(system_paths[0], len(systems[0][1]), reference_paths)
    named_metrics = {name: build_metric(name, tokenize, lowercase) for name in metrics}
    signatures, scores = PairedTest(systems, named_metrics, references, test_type=test, n_samples=samples)()
    rows = []
    for i, system in enumerate(scores["System"]):
        # sacrebleu counts only resamples whose difference strictly exceeds the observed one, so a
        # copy of the baseline (difference 0 everywhere) would get the smallest p-value; it is 1.
        identical = i > 0 and systems[i][1] == systems[0][1]
        row = {"system": system, "baseline": i == 0, "identical_to_baseline": identical}
        for metric_name, results in scores.items():
            if metric_name == "System":
                continue
            r = results[i]
            p_value = 1.0 if identical else r.p_value
            row[metric_name] = {"score": round(r.score, 4), "p_value": p_value,
                                "mean": None if r.mean is None else round(float(r.mean), 4),
                                "ci95": None if r.ci is None else round(float(r.ci), 4),
                                "signature": str(signatures[metric_name])}
        if "bleu" in named_metrics:
            row["length_ratio"] = length_ratio(named_metrics["bleu"].corpus_score(systems[i][1], references))
        rows.append(row)
    return rows


def score_report(hypotheses: list[Path], references: list[Path], metrics: list[str], tokenize: str | None = None,
                 lowercase: bool = False, paired_test: str = "bs", samples: int = 0, as_json: bool = False,
                 langid: str | None = None) -> str:
    """What `nmt score` prints: each metric's score and signature for one system; with several,
    the paired test's table, the first system being the baseline. `metrics` may be comma-separated.
    With `langid` (a language code), also each system's share of lines in that language
    (nmt.language_id); without references, only that."""
    identified = [language_shares(read_system(path), langid) for path in hypotheses] if langid else []
    if identified and not references:
        if as_json:
            return json.dumps(identified if len(identified) > 1 else identified[0], indent=1)
        return "\n".join(f"{path}: {describe(result)}" for path, result in zip(hypotheses, identified))
    metrics = [m.lower() for group in metrics for m in group.split(",") if m]
    if len(hypotheses) == 1:
        results = score_file(hypotheses[0], references, metrics, tokenize, lowercase) + identified
        if as_json:
            return json.dumps(results if len(results) > 1 else results[0], indent=1)
        return "\n".join(describe(r) if r["name"] == "langid" else f"{r['verbose_score']}  ({r['signature']})"
                         for r in results)
    if paired_test not in ("bs", "ar"):
        raise NmtError(f"--paired-test {paired_test}: choose bs or ar")
    rows = compare_systems(hypotheses, references, metrics, tokenize, lowercase, paired_test, samples)
    for row, result in zip(rows, identified):
        row["langid"] = result
    return json.dumps(rows, indent=1) if as_json else "\n".join(_comparison_line(row) for row in rows)


def _comparison_line(row: dict) -> str:
    parts = []
    for name, r in row.items():
        if isinstance(r, dict) and name != "langid":
            p = "" if r["p_value"] is None else f" p={r['p_value']:.4f}"
            ci = "" if r["ci95"] is None else f" ({r['mean']:.2f} ± {r['ci95']:.2f})"
            parts.append(f"{name} {r['score']:.2f}{ci}{p}")
    if "length_ratio" in row:
        parts.append(f"length ratio {row['length_ratio']:.3f}")
    if "langid" in row:
        parts.append(f"in {row['langid']['expected']} {row['langid']['share']:.1%}")
    note = "  (identical to the baseline)" if row["identical_to_baseline"] else ""
    return f"{'baseline ' if row['baseline'] else ''}{row['system']}: " + "  ".join(parts) + note
