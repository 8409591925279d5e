"""`nmt score`: sacrebleu's BLEU, chrF and TER with their signatures, COMET and CometKiwi from a
local model (nmt.metrics.comet), and sacrebleu's paired significance tests on any of them.

Options mean what they mean on the sacrebleu command line (`--tokenize` and `--lowercase` apply
to BLEU), so the numbers are the same as `sacrebleu REF -i HYP -m ...`. COMET's system score is
unbabel-comet's (the mean of its segment scores), and its paired tests resample those segment
scores with sacrebleu's own procedure (nmt.metrics.segment_mean).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sacrebleu.metrics import CHRF, TER
from sacrebleu.metrics.base import Metric
from sacrebleu.significance import PairedTest

from nmt.data.corpus import read_lines
from nmt.data.preprocessed import scoring_warnings
from nmt.data.languages import two_letter
from nmt.errors import NmtError
from nmt.files import line_count
from nmt.language_id import describe, language_shares
from nmt.metrics.bleu import FOR_TARGET, make_bleu
from nmt.metrics.chrf import WORD_ORDER

METRICS = ("bleu", "chrf", "chrf++", "ter", "comet", "cometkiwi")
NEURAL = {"comet": "COMET", "cometkiwi": "CometKiwi"}  # metric -> its name in the results


@dataclass(frozen=True)
class NeuralSettings:
    """What COMET and CometKiwi need besides hypotheses and references: each one's model directory,
    the source file, the batch size and the device; `progress(name, n)`, where given, hears the
    segments scored so far of the system a model (COMET or CometKiwi) is scoring."""

    comet_model: Path | None = None
    cometkiwi_model: Path | None = None
    source: Path | None = None
    batch_size: int = 16
    device: str = "cpu"
    progress: Callable[[str, int], None] | None = None


def build_metric(name: str, tokenize: str | None = None, lowercase: bool = False) -> Metric:
    if name == "bleu":
        return make_bleu(tokenize, lowercase)
    if name in WORD_ORDER:  # chrf++: word unigrams and bigrams besides the characters (Popović 2017)
        return CHRF(word_order=WORD_ORDER[name])  # as `sacrebleu -m chrf --chrf-word-order N`
    if name == "ter":
        return TER()
    raise NmtError(f"unknown metric '{name}' (choose from {', '.join(METRICS)})")


def pair_tokenizer(language_pair: str) -> str | None:
    """BLEU's tokenizer for SRC-TGT as `sacrebleu -l SRC-TGT` picks it: zh, ja-mecab or ko-mecab
    for a target in Chinese, Japanese or Korean, else None (13a)."""
    languages = language_pair.split("-")
    if len(languages) != 2 or not all(languages):
        raise NmtError(f"--language-pair {language_pair}: SRC-TGT, e.g. en-zh")
    return FOR_TARGET.get(two_letter(languages[1]) or "")


def check_metrics(metrics: list[str], neural: NeuralSettings) -> None:
    """Unknown metrics, and neural ones without their model or source, are errors naming the option."""
    for name in metrics:
        if name not in METRICS:
            raise NmtError(f"unknown metric '{name}' (choose from {', '.join(METRICS)})")
        if name in NEURAL and getattr(neural, f"{name}_model") is None:
            raise NmtError(f"--metric {name} needs --{name}-model DIR (a local {NEURAL[name]} model directory)")
        if name in NEURAL and neural.source is None:
            raise NmtError(f"--metric {name} needs --source FILE (the sources the hypotheses translate)")


class NeuralScores:
    """COMET / CometKiwi segment scores of each system, each model loaded once (nmt.metrics.comet)."""

    def __init__(self, settings: NeuralSettings, n_lines: int, references: list[list[str]]):
        self.settings, self.scorers, self.cache = settings, {}, {}
        self.sources = read_system(settings.source) if settings.source else []
        if settings.source and len(self.sources) != n_lines:
            raise NmtError(f"{settings.source} has {line_count(len(self.sources))} but the hypotheses have {n_lines}: "
                           "sources and hypotheses must align line by line")
        self.reference = references[0] if references else None

    def scores(self, name: str, hypotheses: list[str]):
        key = (name, tuple(hypotheses))
        if key not in self.cache:
            if name not in self.scorers:
                from nmt.metrics.comet import CometScorer

                self.scorers[name] = CometScorer(getattr(self.settings, f"{name}_model"), name,
                                                 self.settings.device, self.settings.batch_size)
            references = self.reference if name == "comet" else None
            progress = self.settings.progress
            done = (lambda n: progress(NEURAL[name], n)) if progress else None
            self.cache[key] = self.scorers[name].score(self.sources, hypotheses, references, done)
        return self.cache[key]

    def signature(self, name: str) -> dict:
        from importlib import metadata

        directory = Path(getattr(self.settings, f"{name}_model"))
        return {"nmt-" + name: directory.name, "unbabel-comet": metadata.version("unbabel-comet"),
                "refs": 1 if name == "comet" else 0}

    def result(self, name: str, hypotheses: list[str]) -> dict:
        scores = self.scores(name, hypotheses)
        signature = "|".join(f"{k}:{v}" for k, v in self.signature(name).items())
        return {"name": NEURAL[name], "score": round(scores.system, 4), "signature": signature,
                "verbose_score": f"{NEURAL[name]} = {scores.system:.4f}", "segments": scores.segments}


def read_system(path: Path) -> list[str]:
    lines = list(read_lines(Path(path)))
    if not lines:
        raise NmtError(f"{path}: empty file")
    return lines


def preprocessing_warnings(paths: list[Path]) -> list[str]:
    """Warnings for the files to be scored that another toolkit segmented or tokenized
    (nmt.data.preprocessed): BLEU would count their "@@" and "@-@"."""
    return [warning for path in paths if Path(path).is_file()
            for warning in scoring_warnings(str(path), list(read_lines(Path(path))))]


def read_references(hypothesis_path: Path, n_lines: int, reference_paths: list[Path]) -> list[list[str]]:
    if not reference_paths:
        raise NmtError("no reference file given")
    references = []
    for path in reference_paths:
        lines = read_system(path)
        if len(lines) != n_lines:
            raise NmtError(f"{hypothesis_path} has {line_count(n_lines)} but {path} has {len(lines)}: "
                           "hypotheses and references must align line by line")
        references.append(lines)
    return references


def _references_for(metrics: list[str], hypothesis_path: Path, n_lines: int, reference_paths: list[Path]) -> list[list[str]]:
    """The references the metrics need (none where CometKiwi is the only one); COMET takes one."""
    if all(m == "cometkiwi" for m in metrics):
        return []
    references = read_references(hypothesis_path, n_lines, reference_paths)
    if "comet" in metrics and len(references) > 1:
        raise NmtError(f"--metric comet scores against one reference (-r given {len(references)} times)")
    return references


def _neural_scores(metrics: list[str], neural: NeuralSettings, n_lines: int,
                   references: list[list[str]]) -> NeuralScores | None:
    """The COMET scorer of a run, where a metric needs one: shared by every system it scores."""
    return NeuralScores(neural, n_lines, references) if set(metrics) & set(NEURAL) else None


def score_file(hypothesis_path: Path, reference_paths: list[Path], metrics: list[str] = ["bleu"],
               tokenize: str | None = None, lowercase: bool = False,
               neural: NeuralSettings = NeuralSettings()) -> list[dict]:
    """One result per metric: name, score, signature and sacrebleu's verbose line (COMET's:
    also its segment scores, `segments`)."""
    check_metrics(metrics, neural)
    hypotheses = read_system(hypothesis_path)
    references = _references_for(metrics, hypothesis_path, len(hypotheses), reference_paths)
    return _score_lines(hypotheses, references, metrics, tokenize, lowercase,
                        _neural_scores(metrics, neural, len(hypotheses), references))


def _score_lines(hypotheses: list[str], references: list[list[str]], metrics: list[str], tokenize: str | None,
                 lowercase: bool, neural_scores: NeuralScores | None) -> list[dict]:
    results = []
    for name in metrics:
        if name in NEURAL:
            results.append(neural_scores.result(name, hypotheses))
            continue
        metric = build_metric(name, tokenize, lowercase)
        score = metric.corpus_score(hypotheses, references)
        result = {"name": score.name, "score": round(score.score, 4),
                  "signature": str(metric.get_signature()), "verbose_score": str(score)}
        if name == "bleu":
            result["length_ratio"] = length_ratio(score)
        results.append(result)
    return results


def system_records(path: Path, reference_paths: list[Path], metrics: list[str], tokenize: str | None = None,
                   lowercase: bool = False, neural: NeuralSettings = NeuralSettings(),
                   neural_scores: NeuralScores | None = None) -> list[dict]:
    """jsonl's records of one system: its scores, then each line's (the files read once;
    `neural_scores`: a scorer shared with other systems, whose COMET scores it keeps)."""
    check_metrics(metrics, neural)
    hypotheses = read_system(path)
    references = _references_for(metrics, path, len(hypotheses), reference_paths)
    neural_scores = neural_scores or _neural_scores(metrics, neural, len(hypotheses), references)
    results = _score_lines(hypotheses, references, metrics, tokenize, lowercase, neural_scores)
    system = {"scope": "system", **{r["name"]: r["score"] for r in results},
              "signatures": {r["name"]: r["signature"] for r in results}}
    lines = segment_scores(hypotheses, references, metrics, results, tokenize, lowercase)
    return [system] + [{"scope": "line", **line} for line in lines]


def segment_scores(hypotheses: list[str], references: list[list[str]], metrics: list[str], results: list[dict],
                   tokenize: str | None = None, lowercase: bool = False) -> list[dict]:
    """Each line's scores: COMET's segment scores, and sacrebleu's sentence-level BLEU (with
    effective order, as `sacrebleu --sentence-level`), chrF and TER."""
    per_metric = {}
    for name, result in zip(metrics, results):
        if name in NEURAL:
            per_metric[result["name"]] = result["segments"]
            continue
        metric = make_bleu(tokenize, lowercase, effective_order=True) if name == "bleu" else \
            build_metric(name, tokenize, lowercase)
        per_metric[result["name"]] = [metric.sentence_score(h, [r[i] for r in references]).score
                                      for i, h in enumerate(hypotheses)]
    return [{"line": i + 1, **{name: round(scores[i], 4) for name, scores in per_metric.items()}}
            for i in range(len(hypotheses))]


def length_ratio(bleu_score) -> float:
    """Output length over reference length, as sacreBLEU counts them (its `ratio`)."""
    return round(bleu_score.sys_len / bleu_score.ref_len, 4) if bleu_score.ref_len else 0.0


def compare_systems(system_paths: list[Path], reference_paths: list[Path], metrics: list[str] = ["bleu"],
                    tokenize: str | None = None, lowercase: bool = False, test: str = "bs",
                    samples: int = 0, neural: NeuralSettings = NeuralSettings(),
                    neural_scores: NeuralScores | None = None) -> list[dict]:
    """sacrebleu's paired test (bootstrap `bs` or approximate randomization `ar`), the first
    system being the baseline. One row per system with score, p-value and 95% interval; COMET's
    and CometKiwi's resample their segment scores the same way (nmt.metrics.segment_mean).
    `neural_scores`: a COMET scorer to share (and keep the scores of) with the caller."""
    from nmt.metrics.segment_mean import SegmentMean

    check_metrics(metrics, neural)
    if len(system_paths) < 2:
        raise NmtError("a paired test needs a baseline and at least one other system")
    systems = [(str(p), read_system(p)) for p in system_paths]
    for path, lines in systems[1:]:
        if len(lines) != len(systems[0][1]):
            raise NmtError(f"{systems[0][0]} has {line_count(len(systems[0][1]))} but {path} has {len(lines)}")
    references = _references_for(metrics, system_paths[0], len(systems[0][1]), reference_paths)
    named_metrics = {name: build_metric(name, tokenize, lowercase) for name in metrics if name not in NEURAL}
    neural_scores = neural_scores or _neural_scores(metrics, neural, len(systems[0][1]), references)
    if neural_scores:
        for name in (m for m in metrics if m in NEURAL):
            segments = {tuple(lines): neural_scores.scores(name, lines).segments for _, lines in systems}
            named_metrics[name] = SegmentMean(NEURAL[name], segments, neural_scores.signature(name))
    signatures, scores = PairedTest(systems, named_metrics, references or None, test_type=test, n_samples=samples)()
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


OUTPUT_FORMATS = ("text", "json", "jsonl")


def score_report(hypotheses: list[Path], references: list[Path], metrics: list[str], tokenize: str | None = None,
                 lowercase: bool = False, paired_test: str = "bs", samples: int = 0, output_format: str = "text",
                 langid: str | None = None, neural: NeuralSettings = NeuralSettings(),
                 warn: Callable[[str], None] = lambda _: None) -> str:
    """What `nmt score` prints: each metric's score and signature for one system; with several,
    the paired test's table, the first system being the baseline. `metrics` may be comma-separated.
    With `langid` (a language code), also each system's share of lines in that language
    (nmt.language_id); without references, only that. output_format jsonl: the system's record
    (`"scope": "system"`), then one per line (`"scope": "line"`) with each metric's segment score;
    with several systems, each system's records in turn, after the paired test's rows. `warn` hears
    of the files that another toolkit segmented or tokenized (preprocessing_warnings)."""
    if output_format not in OUTPUT_FORMATS:
        raise NmtError(f"--output-format {output_format}: choose from {', '.join(OUTPUT_FORMATS)}")
    for warning in preprocessing_warnings([*hypotheses, *references]):
        warn(warning)
    identified = [language_shares(read_system(path), langid) for path in hypotheses] if langid else []
    metrics = [m.lower() for group in metrics for m in group.split(",") if m]
    if identified and not references and not metrics_without_references(metrics):
        if output_format != "text":
            return json.dumps(identified if len(identified) > 1 else identified[0], indent=1)
        return "\n".join(f"{path}: {describe(result)}" for path, result in zip(hypotheses, identified))
    if len(hypotheses) == 1:
        if output_format == "jsonl":
            return "\n".join(json.dumps(record, ensure_ascii=False)
                             for record in system_records(hypotheses[0], references, metrics, tokenize, lowercase, neural))
        results = score_file(hypotheses[0], references, metrics, tokenize, lowercase, neural)
        results = [_without_segments(r) for r in results] + identified
        if output_format == "json":
            return json.dumps(results if len(results) > 1 else results[0], indent=1)
        return "\n".join(describe(r) if r["name"] == "langid" else f"{r['verbose_score']}  ({r['signature']})"
                         for r in results)
    if paired_test not in ("bs", "ar"):
        raise NmtError(f"--paired-test {paired_test}: choose bs or ar")
    if samples < 0:
        raise NmtError(f"--samples {samples}: a number of resamples or trials (0: sacrebleu's default)")
    shared = None  # jsonl: one COMET scorer for the paired test and the records, each system scored once
    if output_format == "jsonl" and set(metrics) & set(NEURAL):
        check_metrics(metrics, neural)
        n_lines = len(read_system(hypotheses[0]))
        shared = NeuralScores(neural, n_lines, _references_for(metrics, hypotheses[0], n_lines, references))
    rows = compare_systems(hypotheses, references, metrics, tokenize, lowercase, paired_test, samples, neural, shared)
    for row, result in zip(rows, identified):
        row["langid"] = result
    if output_format == "jsonl":
        lines = [json.dumps({"scope": "paired_test", **row}, ensure_ascii=False) for row in rows]
        for path in hypotheses:
            lines += [json.dumps({"system": str(path), **record}, ensure_ascii=False)
                      for record in system_records(path, references, metrics, tokenize, lowercase, neural, shared)]
        return "\n".join(lines)
    return json.dumps(rows, indent=1) if output_format == "json" else "\n".join(_comparison_line(row) for row in rows)


def metrics_without_references(metrics: list[str]) -> bool:
    """Whether every metric asked for scores without references (CometKiwi)."""
    return bool(metrics) and all(m == "cometkiwi" for m in metrics)


def _without_segments(result: dict) -> dict:
    return {key: value for key, value in result.items() if key != "segments"}


def _comparison_line(row: dict) -> str:
    parts = []
    for name, r in row.items():
        if isinstance(r, dict) and name != "langid":
            p = "" if r["p_value"] is None else f" p={r['p_value']:.4f}"
            digits = 4 if name in NEURAL.values() else 2  # COMET's scores lie in [0, 1], not [0, 100]
            ci = "" if r["ci95"] is None else f" ({r['mean']:.{digits}f} ± {r['ci95']:.{digits}f})"
            parts.append(f"{name} {r['score']:.{digits}f}{ci}{p}")
    if "length_ratio" in row:
        parts.append(f"length ratio {row['length_ratio']:.3f}")
    if "langid" in row:
        parts.append(f"in {row['langid']['expected']} {row['langid']['share']:.1%}")
    note = "  (identical to the baseline)" if row["identical_to_baseline"] else ""
    return f"{'baseline ' if row['baseline'] else ''}{row['system']}: " + "  ".join(parts) + note
