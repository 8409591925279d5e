"""The `nmt` command line: one command per verb; each parses, calls the library, prints.

Errors users can fix (`NmtError`) become one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape

from nmt.config import Recipe, load_recipe, save_recipe
from nmt.errors import NmtError

app = typer.Typer(
    help="Neural machine translation with the Transformer: tokenizer → prepare → train → translate → score.",
    no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False,
)
err = Console(stderr=True, soft_wrap=True)  # log lines stay whole in files and CI logs

RecipeArg = Annotated[Path, typer.Argument(help="YAML recipe (see recipes/).")]
CheckpointsOpt = Annotated[list[Path], typer.Option(
    "--checkpoint", "-c", help="Checkpoint (several: averaged, or see --ensemble), or a directory from `nmt export`.")]
SetOpt = Annotated[Optional[list[str]], typer.Option(
    "--set", "-s", help="Override one recipe key, e.g. --set train.max_steps=100 (repeatable).")]
SrcLangOpt = Annotated[Optional[str], typer.Option(help="Source language (default: the recipe's data.src_lang).")]
TgtLangOpt = Annotated[Optional[str], typer.Option(
    help="Target language of a multilingual model (default: the recipe's data.tgt_lang).")]
ZeroShotOpt = Annotated[bool, typer.Option(
    help="Allow a direction the model was not trained on (its target language token is known).")]


def friendly_errors(command):
    """Turn NmtError into `error: ...` on one line with exit code 2."""
    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except NmtError as e:
            err.print(f"[red]error:[/] {escape(str(e))}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        except KeyboardInterrupt:
            err.print("interrupted")
            raise typer.Exit(130) from None
    return wrapper


def _recipe(path: Path, overrides: list[str] | None) -> Recipe:
    return load_recipe(path, overrides)


@app.command()
@friendly_errors
def tokenizer(recipe: RecipeArg, set_: SetOpt = None):
    """Train the sentencepiece model(s) on the recipe's training text."""
    from nmt.data.tokenizer import train_tokenizer

    r = _recipe(recipe, set_)
    summary = train_tokenizer(r.data, r.tokenizer, r.out, r.train.init_from)
    if summary["skipped"]:
        err.print(f"tokenizer up to date: {summary['models'][0]}", markup=False)
    elif r.train.init_from:
        err.print(f"copied the tokenizer of {r.train.init_from} to {', '.join(sorted(set(summary['models'])))}", markup=False)
    else:
        err.print(f"trained {', '.join(sorted(set(summary['models'])))}", markup=False)
    for side in ("src", "tgt"):
        s = summary[side]
        err.print(f"  {side}: vocabulary {s['vocab_size']}, {s['dev_pieces_per_sentence']} pieces per dev "
                  f"sentence, unknown rate {s['dev_unknown_rate']}")


@app.command()
@friendly_errors
def prepare(recipe: RecipeArg, set_: SetOpt = None,
            threads: Annotated[int, typer.Option(help="Encoding threads; 0 = all cores.")] = 0):
    """Read, clean, encode and binarize the train/valid/test splits."""
    from nmt.data.prepare import data_dir, prepare as run_prepare

    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    r = _recipe(recipe, set_)
    columns = [SpinnerColumn(), TextColumn("preparing {task.fields[split]}: {task.completed:,} pairs read"),
               TimeElapsedColumn()]
    with Progress(*columns, console=err, disable=not err.is_terminal) as bar:
        tasks = {}

        def on_progress(split: str, read: int) -> None:
            if split not in tasks:
                tasks[split] = bar.add_task("", total=None, split=split)
            bar.update(tasks[split], completed=read)

        report = run_prepare(r.data, r.tokenizer, r.out, threads, on_progress)
    if report["skipped"]:
        err.print(f"data up to date: {data_dir(r.out)}", markup=False)
    for split, s in report["splits"].items():
        dropped = ", ".join(f"{n} {why}" for why, n in s["dropped"].items()) or "none"
        err.print(f"  {split}: {s['kept']:,} of {s['read']:,} pairs kept (dropped: {dropped})")
        for c in s.get("corpora", []):
            tag = f", tag {c['tag']}" if c["tag"] else ""
            err.print(f"    {c['corpus']} ({c['src_lang']}-{c['tgt_lang']}, weight {c['weight']}{tag}): "
                      f"{c['kept']:,} of {c['read']:,} kept", markup=False, highlight=False)


@app.command()
@friendly_errors
def train(recipe: RecipeArg, set_: SetOpt = None,
          init_from: Annotated[Optional[Path], typer.Option(
              help="Fine-tune: start from this checkpoint's weights (same as --set train.init_from=CKPT).")] = None,
          progress: Annotated[bool, typer.Option(help="Show a progress bar (else log lines).")] = True,
          nproc: Annotated[int, typer.Option(help="Processes (GPUs) on this machine: runs itself under torchrun.")] = 1):
    """Train the Transformer; resumes from OUTPUT_DIR/checkpoints/last.pt if it exists.

    Several GPUs or machines: `torchrun --nproc-per-node K -m nmt train RECIPE` (or --nproc K).
    """
    from nmt.train.trainer import train as run_train

    r = _recipe(recipe, [*(set_ or []), *([f"train.init_from={init_from}"] if init_from else [])])
    if nproc > 1:
        from nmt.train.distributed import relaunch_under_torchrun

        raise typer.Exit(relaunch_under_torchrun(nproc, sys.argv[1:], r.train))
    r.out.mkdir(parents=True, exist_ok=True)
    from nmt.train.distributed import launched_rank

    if launched_rank() == 0:  # under torchrun, one process writes
        save_recipe(r, r.out / "recipe.yaml")
    result = run_train(r, err, show_progress=progress and err.is_terminal)
    if result.stopped_because.startswith("signal"):
        err.print(f"checkpoint saved at step {result.step}; run the same command again to resume")
        raise typer.Exit(130)


@app.command()
@friendly_errors
def translate(
    checkpoint: CheckpointsOpt,
    input: Annotated[str, typer.Option("--input", "-i", help="Source text file, or - for stdin.")] = "-",
    output: Annotated[str, typer.Option("--output", "-o", help="Output file, or - for stdout.")] = "-",
    beam_size: Annotated[Optional[int], typer.Option(help="Beam size; 1 = greedy search.")] = None,
    length_penalty: Annotated[Optional[float], typer.Option(help="Length penalty alpha (decode.length_penalty).")] = None,
    nbest: Annotated[Optional[int], typer.Option(help="Hypotheses per sentence (jsonl output).")] = None,
    max_tokens: Annotated[Optional[int], typer.Option(
        "--max-tokens", "--batch-tokens", help="Source tokens per batch, padding included.")] = None,
    sampling: Annotated[Optional[bool], typer.Option("--sampling", help="Sample instead of beam search.")] = None,
    temperature: Annotated[Optional[float], typer.Option(help="Sampling temperature.")] = None,
    top_k: Annotated[Optional[int], typer.Option(help="Sample among the k most probable tokens (0 = all).")] = None,
    top_p: Annotated[Optional[float], typer.Option(help="Nucleus sampling mass (1.0 = all).")] = None,
    output_format: Annotated[str, typer.Option(help="plain (one line each) or jsonl (n-best, scores).")] = "plain",
    input_format: Annotated[str, typer.Option(
        help='plain (text a line), markup (text with inline tags, kept around the translated words) or jsonl '
             '({"text": ..., "prefix": ..., "constraints": [...], "markup": false} a line).')] = "plain",
    token_scores: Annotated[bool, typer.Option(
        help="jsonl output: each token's log-probability (teacher-forced).")] = False,
    alignments: Annotated[bool, typer.Option(
        help="jsonl output: a word alignment to the source, from cross-attention (nmt's own engine).")] = False,
    device: Annotated[str, typer.Option(help="cpu, cuda, cuda:1, ...")] = "cpu",
    threads: Annotated[int, typer.Option(help="CPU threads; 0 = torch's default.")] = 0,
    decode_from: Annotated[Optional[Path], typer.Option(
        help="Recipe whose decode section replaces the checkpoint's (settings tuned after training).")] = None,
    interactive: Annotated[bool, typer.Option(
        help="Answer each input line at once (the default when standard input is a terminal).")] = False,
    engine: Annotated[str, typer.Option(
        help="torch (nmt's own search) or ctranslate2 (checkpoints are converted on the fly; "
             "an exported directory always uses it).")] = "torch",
    compute_type: Annotated[str, typer.Option(
        help="CTranslate2 only: default (as exported), int8, float32, float16, ...")] = "default",
    ensemble: Annotated[bool, typer.Option(
        help="With several -c: decode with all the models together (mean of their next-token "
             "probabilities) instead of averaging their weights.")] = False,
    src_lang: SrcLangOpt = None,
    tgt_lang: TgtLangOpt = None,
    zero_shot: ZeroShotOpt = False,
    set_: SetOpt = None,
):
    """Translate text line by line: one output line per input line, empty lines included.

    --beam-size, --length-penalty, --nbest, --max-tokens, --sampling, --temperature, --top-k and
    --top-p are shortcuts for --set decode.KEY=VALUE (--batch-tokens: the former name of --max-tokens).
    """
    import torch

    from nmt.decode.stream import translate_file
    from nmt.decode.translate import choose_direction, decode_settings, load_translator

    if threads:
        torch.set_num_threads(threads)
    translator = load_translator(checkpoint, device, engine, compute_type, threads, ensemble)
    choose_direction(translator, src_lang, tgt_lang, zero_shot)
    shortcuts = {"beam_size": beam_size, "length_penalty": length_penalty, "nbest": nbest, "max_tokens": max_tokens,
                 "sampling": sampling, "temperature": temperature, "top_k": top_k, "top_p": top_p}
    cfg = decode_settings(translator.recipe, decode_from, shortcuts, set_ or [])
    warn = lambda message: err.print(f"warning: {input}: {message}", highlight=False, markup=False)  # noqa: E731
    extras = [name for name, wanted in (("token_scores", token_scores), ("alignments", alignments)) if wanted]
    report = translate_file(translator, input, output, cfg, output_format, interactive, warn, input_format, extras)
    if report.failed:
        err.print(f"error: {input}: {report.failed} line(s) could not be translated (warned above); "
                  "their output lines are empty (or, in jsonl, hold the error)", highlight=False, markup=False)
        raise typer.Exit(1)


@app.command(name="back-translate")
@friendly_errors
def back_translate_(
    checkpoint: CheckpointsOpt,
    input: Annotated[Path, typer.Option("--input", "-i", help="Monolingual text in the reverse model's source language.")],
    output: Annotated[str, typer.Option("--output", "-o", help="Corpus prefix to write: PREFIX.{both languages}.")],
    sampling: Annotated[bool, typer.Option("--sampling", help="Sample the translations instead of beam search.")] = False,
    beam_size: Annotated[Optional[int], typer.Option(help="Beam size; 1 = greedy search.")] = None,
    device: Annotated[str, typer.Option(help="cpu, cuda, cuda:1, ...")] = "cpu",
    threads: Annotated[int, typer.Option(help="CPU threads; 0 = torch's default.")] = 0,
    set_: SetOpt = None,
):
    """Back-translate: a reverse model (e.g. de→en) turns monolingual text (German) into a synthetic corpus to train on (en→de)."""
    import torch

    from nmt.decode.back_translate import back_translate
    from nmt.decode.translate import choose_direction, decode_settings, load_translator

    if threads:
        torch.set_num_threads(threads)
    translator = load_translator(checkpoint, device)
    choose_direction(translator)
    cfg = decode_settings(translator.recipe, None, {"sampling": sampling or None, "beam_size": beam_size}, set_ or [])
    warn = lambda message: err.print(f"warning: {input}: {message}", highlight=False, markup=False)  # noqa: E731
    summary = back_translate(translator, input, output, cfg, warn)
    err.print(f"wrote {summary['lines']:,} lines: {summary['monolingual']} (as given) and {summary['synthetic']} "
              f"({'sampled' if summary['sampling'] else 'beam search'})", highlight=False, markup=False)


@app.command()
@friendly_errors
def likelihood(
    checkpoint: CheckpointsOpt,
    source: Annotated[Path, typer.Option("--source", "-s", help="Source text file.")],
    target: Annotated[Path, typer.Option("--target", "-t", help="Target text file: the translations to score, line by line.")],
    output: Annotated[str, typer.Option("--output", "-o", help="Output file, or - for stdout.")] = "-",
    output_format: Annotated[str, typer.Option(
        help="text (the total log-probability) or jsonl (also per token).")] = "text",
    max_tokens: Annotated[Optional[int], typer.Option(
        "--max-tokens", help="Tokens per batch, padding included (default: the recipe's decode.max_tokens).")] = None,
    device: Annotated[str, typer.Option(help="cpu, cuda, cuda:1, ...")] = "cpu",
    threads: Annotated[int, typer.Option(help="CPU threads; 0 = torch's default.")] = 0,
    engine: Annotated[str, typer.Option(help="torch or ctranslate2 (an exported directory always uses it).")] = "torch",
    compute_type: Annotated[str, typer.Option(help="CTranslate2 only: default (as exported), int8, ...")] = "default",
    ensemble: Annotated[bool, typer.Option(
        help="With several -c: score with the models together (mean of their probabilities).")] = False,
    src_lang: SrcLangOpt = None,
    tgt_lang: TgtLangOpt = None,
    zero_shot: ZeroShotOpt = False,
):
    """Score given translations (forced decoding): for each pair of lines, the natural-log
    probability of the target's pieces and EOS given the source; one output line per pair."""
    import torch
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from nmt.decode.likelihood import likelihood_file
    from nmt.decode.translate import choose_direction, load_translator

    if threads:
        torch.set_num_threads(threads)
    scorer = load_translator(checkpoint, device, engine, compute_type, threads, ensemble)
    choose_direction(scorer, src_lang, tgt_lang, zero_shot)
    decode = scorer.recipe.decode
    warn = lambda message: err.print(f"warning: {source}: {message}", highlight=False, markup=False)  # noqa: E731
    columns = [SpinnerColumn(), TextColumn("scoring: {task.completed:,} pairs"), TimeElapsedColumn()]
    with Progress(*columns, console=err, disable=not err.is_terminal or output == "-") as bar:
        task = bar.add_task("", total=None)
        likelihood_file(scorer, source, target, output, max_tokens or decode.max_tokens, output_format,
                        decode.precision, warn, done=lambda n: bar.advance(task, n))


@app.command()
@friendly_errors
def export(
    checkpoint: Annotated[Path, typer.Argument(help="Checkpoint to export (e.g. an averaged one).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory to create.")],
    format_: Annotated[str, typer.Option("--format", help="ctranslate2, or huggingface (transformers: MarianMTModel, or Pegasus for pre-LN).")] = "ctranslate2",
    quantization: Annotated[Optional[str], typer.Option(
        help="Weight type: int8, int8_float16, float16, ... (default float32).")] = None,
    force: Annotated[bool, typer.Option(help="Replace OUTPUT if it exists.")] = False,
):
    """Export a checkpoint for another engine (CTranslate2, Hugging Face transformers), with its tokenizers and decode settings."""
    from nmt.export import export_checkpoint

    summary = export_checkpoint(checkpoint, output, format_, quantization, force)
    use = (f'AutoModelForSeq2SeqLM.from_pretrained("{summary["directory"]}")' if format_ == "huggingface"
           else f"nmt translate -c {summary['directory']}")
    kind = f"{summary['architecture']}, " if "architecture" in summary else ""
    err.print(f"exported {checkpoint} ({summary['direction']}, {kind}{summary['quantization']}) to "
              f"{summary['directory']}: {summary['bytes'] / 1e6:.1f} MB; load with `{use}`",
              highlight=False, markup=False)
    for note in summary.get("generation_differences", []):
        err.print(f"note: {note}", highlight=False, markup=False)


@app.command(name="import")
@friendly_errors
def import_(
    directory: Annotated[Path, typer.Argument(help="A transformers Marian (OPUS-MT) or Pegasus model directory.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Checkpoint to write (e.g. opus_en_de.pt).")],
    src_lang: Annotated[Optional[str], typer.Option(help="Source language, if tokenizer_config.json does not say.")] = None,
    tgt_lang: Annotated[Optional[str], typer.Option(help="Target language, if tokenizer_config.json does not say.")] = None,
    recipe: Annotated[Optional[Path], typer.Option(
        help="Also write a recipe that fine-tunes the imported model (its data section to fill in).")] = None,
    force: Annotated[bool, typer.Option(help="Replace OUTPUT (and RECIPE) if they exist.")] = False,
):
    """Import a Hugging Face transformers model as an nmt checkpoint, to translate, fine-tune (train --init-from) and export."""
    from nmt.export.huggingface_import import import_huggingface, write_finetuning_recipe

    if recipe and recipe.exists() and not force:
        raise NmtError(f"{recipe}: exists (--force replaces it)")
    summary = import_huggingface(directory, output, force, src_lang, tgt_lang)
    if recipe:
        write_finetuning_recipe(summary["recipe"], output, recipe)
        err.print(f"wrote {recipe}: fill in its data section, then `nmt tokenizer {recipe} && nmt prepare {recipe} "
                  f"&& nmt train {recipe}`", highlight=False, markup=False)
    model = summary["recipe"].model
    shape = ", ".join(f"{key}: {getattr(model, key)}" for key in
                      ("encoder_layers", "decoder_layers", "d_model", "heads", "d_ff", "norm", "activation",
                       "share_embeddings", "tie_output"))
    err.print(f"imported {directory} ({summary['architecture']}, {summary['direction']}, vocabularies "
              f"{summary['vocab']['src']}/{summary['vocab']['tgt']}) to {output}; logits within "
              f"{summary['max_logit_difference']:.1g} of transformers'. Fine-tune with `nmt train RECIPE --init-from "
              f"{output}`, whose model section is {{{shape}}} and tokenizer section {{joint: "
              f"{summary['recipe'].tokenizer.joint}, vocab_size: {summary['recipe'].tokenizer.vocab_size}}}",
              highlight=False, markup=False)


@app.command()
@friendly_errors
def serve(
    checkpoint: Annotated[list[Path], typer.Argument(help="Checkpoint(s) (averaged), or a directory from `nmt export`.")],
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    engine: Annotated[str, typer.Option(help="torch or ctranslate2 (an exported directory always uses it).")] = "torch",
    compute_type: Annotated[str, typer.Option(help="CTranslate2 only: default, int8, float32, ...")] = "default",
    device: Annotated[str, typer.Option(help="cpu, cuda, cuda:1, ...")] = "cpu",
    threads: Annotated[int, typer.Option(help="CPU threads; 0 = torch's default.")] = 0,
    max_lines: Annotated[int, typer.Option(help="Lines per request at most.")] = 64,
    max_chars: Annotated[int, typer.Option(help="Characters per line at most.")] = 2000,
    max_constraints: Annotated[int, typer.Option(help="Terminology constraints per line at most.")] = 8,
    batch_wait_ms: Annotated[float, typer.Option(
        help="How long the first waiting request waits for others to share its model call.")] = 5.0,
    batch_max_lines: Annotated[int, typer.Option(help="Lines per model call at most.")] = 256,
):
    """Serve translations over HTTP: POST /translate, GET /health, and a page at / to try the model."""
    import torch

    from nmt.decode.translate import load_translator
    from nmt.serve.app import ServeLimits, require_fastapi, serve as run_server

    require_fastapi()
    if threads:
        torch.set_num_threads(threads)
    translator = load_translator(checkpoint, device, engine, compute_type, threads)
    name = ", ".join(str(c) for c in checkpoint)
    err.print(f"serving {name} on http://{host}:{port}/ (Ctrl-C or SIGTERM to stop)", highlight=False, markup=False)
    run_server(translator, host, port, ServeLimits(max_lines, max_chars, max_constraints=max_constraints), batch_wait_ms, batch_max_lines, name)


@app.command()
@friendly_errors
def score(
    hypotheses: Annotated[list[Path], typer.Argument(help="Hypothesis file(s); with several, the first is the baseline of a paired test.")],
    reference: Annotated[list[Path], typer.Option("--reference", "-r", help="Reference file (repeat for several).")],
    metrics: Annotated[list[str], typer.Option("--metrics", "-m", help="bleu, chrf, ter (repeatable).")] = ["bleu"],
    tokenize: Annotated[Optional[str], typer.Option(help="BLEU tokenizer (sacrebleu's, default 13a).")] = None,
    lowercase: Annotated[bool, typer.Option(help="Case-insensitive BLEU.")] = False,
    paired_test: Annotated[str, typer.Option(help="With several systems: bs (paired bootstrap) or ar.")] = "bs",
    samples: Annotated[int, typer.Option(help="Resamples/trials of the paired test; 0 = sacrebleu's default.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
):
    """Score hypotheses against references with sacrebleu (BLEU, chrF, TER and their signatures)."""
    from nmt.score import compare_systems, score_file

    metrics = [m.lower() for group in metrics for m in group.split(",") if m]
    if len(hypotheses) == 1:
        results = score_file(hypotheses[0], reference, metrics, tokenize, lowercase)
        if as_json:
            typer.echo(json.dumps(results if len(results) > 1 else results[0], indent=1))
        else:
            for r in results:
                typer.echo(f"{r['verbose_score']}  ({r['signature']})")
        return
    if paired_test not in ("bs", "ar"):
        raise NmtError(f"--paired-test {paired_test}: choose bs or ar")
    rows = compare_systems(hypotheses, reference, metrics, tokenize, lowercase, paired_test, samples)
    if as_json:
        typer.echo(json.dumps(rows, indent=1))
        return
    for row in rows:
        parts = []
        for name, r in row.items():
            if isinstance(r, dict):
                p = "" if r["p_value"] is None else f" p={r['p_value']:.4f}"
                ci = "" if r["ci95"] is None else f" ({r['mean']:.2f} ± {r['ci95']:.2f})"
                parts.append(f"{name} {r['score']:.2f}{ci}{p}")
        if "length_ratio" in row:
            parts.append(f"length ratio {row['length_ratio']:.3f}")
        note = "  (identical to the baseline)" if row["identical_to_baseline"] else ""
        typer.echo(f"{'baseline ' if row['baseline'] else ''}{row['system']}: " + "  ".join(parts) + note)


@app.command()
@friendly_errors
def average(
    checkpoints: Annotated[Optional[list[Path]], typer.Argument(help="Checkpoints to average.")] = None,
    output: Annotated[Path, typer.Option("--output", "-o", help="Averaged checkpoint to write.")] = Path("averaged.pt"),
    last: Annotated[int, typer.Option(help="Instead of listing files: the last N step checkpoints of --dir.")] = 0,
    dir: Annotated[Optional[Path], typer.Option(help="Checkpoint folder for --last.")] = None,
):
    """Average the weights of several checkpoints (e.g. the last 5) into one."""
    from nmt.checkpoint import average_checkpoints, save_checkpoint, step_checkpoints

    paths = list(checkpoints or [])
    if last:
        if dir is None:
            raise NmtError("--last needs --dir (the checkpoints folder)")
        found = step_checkpoints(dir)
        if len(found) < last:
            raise NmtError(f"{dir}: {len(found)} step checkpoints, {last} asked for")
        paths += found[-last:]
    if output.resolve() in {p.resolve() for p in paths}:
        raise NmtError(f"{output}: would overwrite one of the checkpoints being averaged")
    save_checkpoint(average_checkpoints(paths), output)
    err.print(f"averaged {len(paths)} checkpoints -> {output}", markup=False)


@app.command()
@friendly_errors
def info(
    checkpoint: Annotated[Path, typer.Argument(help="A checkpoint written by nmt train or nmt average.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (the whole recipe included).")] = False,
):
    """Describe a checkpoint: progress, model shape, vocabularies, best dev score, recipe, versions."""
    from nmt.info import checkpoint_info, describe

    found = checkpoint_info(checkpoint)
    typer.echo(json.dumps(found, indent=1) if as_json else "\n".join(describe(found)))


@app.command()
@friendly_errors
def plot(
    metrics: Annotated[Path, typer.Argument(help="metrics.jsonl written by nmt train (or its output_dir).")],
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="PNG to write.")] = None,
):
    """Draw the learning curves (training loss, dev loss and BLEU) to a PNG."""
    from nmt.train.plot import plot_learning_curve

    if metrics.is_dir():
        metrics = metrics / "metrics.jsonl"
    written = plot_learning_curve(metrics, output or metrics.with_name("learning_curve.png"))
    err.print(f"wrote {written}", markup=False)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
