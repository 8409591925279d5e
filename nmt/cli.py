"""The `nmt` command line: one command per verb; each parses, calls the library, prints.

Errors users can fix (`NmtError`) become one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from nmt.cli_options import (BeamSizeOpt, CheckpointsOpt, ComputeTypeOpt, CorpusOpt, DecodeFromOpt, DeviceOpt,
                             EngineOpt, EnsembleOpt, NprocOpt, OptionalCheckpointsOpt, OutputOpt, RecipeArg,
                             ScoringMaxTokensOpt, ScoringNprocOpt, SetOpt, SrcLangOpt, TgtLangOpt, ThreadsOpt,
                             ZeroShotOpt)
from nmt.config import load_recipe
from nmt.console import (counter, drawn, err, lines_counter, one_line_errors, pairs_counter, say, terminate_as_interrupt,
                         warner, working)
from nmt.errors import NmtError
from nmt.startup import start_and_end_quickly

app = typer.Typer(help="Neural machine translation with the Transformer: tokenizer → prepare → train → translate → "
                  "score.", no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False)


def command(name: str | None = None):
    """An `nmt` verb, named after its function unless `name`; its NmtError is one line, exit code 2.
    Its help is its docstring with each paragraph as one line of text, for the terminal to wrap
    (Typer's rich help would keep the line breaks of the source, and break lines mid-sentence)."""
    def register(function):
        paragraphs = inspect.cleandoc(function.__doc__ or "").split("\n\n")
        help_text = "\n\n".join(" ".join(paragraph.split()) for paragraph in paragraphs)
        return app.command(name=name, help=help_text or None)(one_line_errors(function))
    return register


@command()
def tokenizer(recipe: RecipeArg, set_: SetOpt = None):
    """Train the sentencepiece model(s) on the recipe's training text."""
    from nmt.data.tokenizer import describe_tokenizer, train_tokenizer

    r = load_recipe(recipe, set_)
    with working("training the tokenizer (sentencepiece)"):  # minutes at WMT's size, with nothing else shown
        trained = train_tokenizer(r.data, r.tokenizer, r.out, r.train.init_from)
    say(describe_tokenizer(trained, r.train.init_from))


@command()
def prepare(recipe: RecipeArg, set_: SetOpt = None,
            threads: Annotated[int, typer.Option(help="Encoding threads, and processes for data.language_filter; 0 = all cores.")] = 0,
            dropped: Annotated[Optional[Path], typer.Option(help=(
                "Also write each training pair left out here, a JSON line each: its corpus, line, reason and text "
                "(prepares again even where up to date)."))] = None):
    """Read, clean, encode and binarize the train/valid/test splits."""
    from nmt.data.prepare import describe_preparation, prepare as run_prepare

    r = load_recipe(recipe, set_)
    with counter("preparing {task.fields[name]}: {task.completed:,}{task.fields[of]} pairs read", bars=True) as count:
        report = run_prepare(r.data, r.tokenizer, r.out, threads, count, count_first=drawn(), dropped=dropped)
    say(describe_preparation(report, r.out))


@command()
def train(recipe: RecipeArg, set_: SetOpt = None,
          init_from: Annotated[Optional[Path], typer.Option(
              help="Fine-tune: start from this checkpoint's weights (same as --set train.init_from=CKPT).")] = None,
          progress: Annotated[bool, typer.Option(help="Show a progress bar (else log lines).")] = True,
          nproc: Annotated[int, typer.Option(help="Processes (GPUs) on this machine: runs itself under torchrun.")] = 1):
    """Train the Transformer; resumes from OUTPUT_DIR/checkpoints/last.pt if it exists.

    Several GPUs or machines: `torchrun --nproc-per-node K -m nmt train RECIPE` (or --nproc K).
    """
    from nmt.train.distributed import launched_rank
    from nmt.train.launch import relaunch_under_torchrun
    from nmt.train.trainer import train as run_train

    r = load_recipe(recipe, [*(set_ or []), *([f"train.init_from={init_from}"] if init_from else [])])
    if nproc > 1:
        raise typer.Exit(relaunch_under_torchrun(nproc, sys.argv[1:], r))
    result = run_train(r, err, show_progress=drawn(progress))
    if result.stopped_because.startswith("signal"):
        if launched_rank() == 0:  # under torchrun, one process speaks
            err.print(f"checkpoint saved at step {result.step}; run the same command again to resume")
        raise typer.Exit(130)


def _start_fork_server_for(nproc: int) -> None:
    """--nproc K > 1 forks K workers: their fork server starts now, beside the model's loading."""
    if nproc > 1:
        from nmt.decode.worker_processes import start_fork_server

        start_fork_server()


@command()
def translate(
    checkpoint: CheckpointsOpt,
    input: Annotated[str, typer.Option("--input", "-i", help="Source text file, or - for stdin.")] = "-",
    output: OutputOpt = "-",
    beam_size: BeamSizeOpt = None,
    length_penalty: Annotated[Optional[float], typer.Option(help="Length penalty alpha (decode.length_penalty).")] = None,
    nbest: Annotated[Optional[int], typer.Option(help="Hypotheses per sentence (jsonl output).")] = None,
    max_tokens: Annotated[Optional[int], typer.Option(
        "--max-tokens", "--batch-tokens", help="Source tokens per batch, padding included.")] = None,
    sampling: Annotated[Optional[bool], typer.Option("--sampling", help="Sample instead of beam search.")] = None,
    temperature: Annotated[Optional[float], typer.Option(help="Sampling temperature.")] = None,
    top_k: Annotated[Optional[int], typer.Option(help="Sample among the k most probable tokens (0 = all).")] = None,
    top_p: Annotated[Optional[float], typer.Option(help="Nucleus sampling mass (1.0 = all).")] = None,
    epsilon: Annotated[Optional[float], typer.Option(help="Epsilon sampling: never draw a token below this probability.")] = None,
    mbr: Annotated[Optional[int], typer.Option(
        help="Minimum-Bayes-risk decoding among N candidates (decode.mbr.candidates; decode.mbr.* says which).")] = None,
    rerank: Annotated[Optional[int], typer.Option(
        help="Rerank the beam's N best (decode.rerank.candidates) with decode.rerank's models and weights.")] = None,
    glossary: Annotated[Optional[Path], typer.Option(
        help="Terms to translate as given: a file of source term, tab, translation, a line (decode.glossary).")] = None,
    memory: Annotated[Optional[str], typer.Option(
        help="A translation memory (TMX, TSV or a path stem): a line it holds gets its translation (decode.memory).")] = None,
    update: Annotated[Optional[Path], typer.Option(
        help="The file's translation made before (a page, a document, a program's messages, an XLIFF file, a gettext "
             "catalog): what is unchanged in the source since keeps its translation there (nmt-translations.json "
             "beside it records what it was made from; XLIFF and gettext by their sources); only the rest is translated. "
             "-i FOLDER --update FOLDER: the folder's translations brought up to date in place (values-de/, "
             "de.lproj/, messages_de.properties, de.po, a site's pages, ...): what changed in their sources since "
             "translated (nmt-translations.json records what each was made from), nothing else written. "
             "-i FOLDER --update TRANSLATED: a folder an earlier -o made, brought up to date so.")] = None,
    output_format: Annotated[str, typer.Option(help="plain (one line each) or jsonl (n-best, scores).")] = "plain",
    input_format: Annotated[Optional[str], typer.Option(
        help='plain (text a line; a line with well-formed inline tags is read as markup), markup (every line: '
             'tags kept around the translated words), text (every line as text, tags and Markdown and all), jsonl '
             '({"text": ..., "prefix": ..., "constraints": [...], "markup": false} a line), wrapped (each paragraph '
             'translated whole and wrapped again over its lines), markdown (each paragraph, item, heading and '
             'table cell whole, code copied; a documentation site\'s syntax kept), rst (reStructuredText, likewise), asciidoc (AsciiDoc, likewise), ipynb (a Jupyter notebook: its Markdown cells so, its code cells and outputs copied), html (a page: each block translated whole, its '
             'markup kept), docx (a Word document: each paragraph whole, its formatting kept; pip install '
             '"nmt\\[office]"), pptx, xlsx, odt, odp or ods (a PowerPoint, Excel or OpenDocument file, likewise), epub (an e-book: '
             'each chapter as a page), pdf (each paragraph drawn again in its place; pip install "nmt\\[pdf]"), xliff '
             'or po (a translation tool\'s XLIFF file or a gettext catalog: each segment not yet translated, marked for '
             'review; the extra localization), json (an app\'s messages: i18next, FormatJS, Flutter\'s .arb), android '
             '(res/values/strings.xml; the extra localization), xcstrings, strings or stringsdict (Apple\'s String Catalog, '
             '.strings or .stringsdict file), qt (Qt Linguist\'s .ts), resx (.NET), properties (Java), yaml (Rails\' locales), toml (Hugo\'s and go-i18n\'s), php (Laravel\'s, CodeIgniter\'s), ini (Joomla\'s), csv (a table: a column of a program\'s texts into the target language\'s, '
             'as Godot\'s, or each cell, its first row kept; decode.table_columns), or srt or vtt (subtitles: each cue translated whole, numbers '
             'and timings kept). Default: srt, vtt, markdown (.md, .mdx), rst, asciidoc (.adoc), ipynb, html, docx, pptx, xlsx, odt, odp, ods, epub, pdf, '
             'xliff (.xlf), po (.pot), json (.arb), xcstrings, strings, stringsdict, qt (.ts), resx, properties, yaml (.yml), toml, php, ini, csv (.tsv) for a file named so, android for an .xml file in a values folder, '
             'else plain.')] = None,
    token_scores: Annotated[bool, typer.Option(
        help="jsonl output: each token's log-probability (teacher-forced).")] = False,
    alignments: Annotated[bool, typer.Option(
        help="jsonl output: a word alignment to the source, from cross-attention (nmt's own engine).")] = False,
    device: DeviceOpt = "cpu",
    threads: ThreadsOpt = 0,
    decode_from: DecodeFromOpt = None,
    interactive: Annotated[bool, typer.Option(
        help="Answer each input line at once (the default when standard input is a terminal).")] = False,
    engine: EngineOpt = "torch",
    compute_type: ComputeTypeOpt = "default",
    ensemble: EnsembleOpt = False,
    src_lang: Annotated[Optional[str], typer.Option(
        help="Source language (default: the recipe's data.src_lang); auto: each line's, identified among the "
             "model's (py3langid: pip install 'nmt\\[langid]').")] = None,
    tgt_lang: Annotated[Optional[str], typer.Option(
        help="Target language of a multilingual model (default: the recipe's data.tgt_lang); several, as de,fr,ja, "
             "for a program's folder updated in place (-i FOLDER --update FOLDER): each language's translations.")] = None,
    zero_shot: ZeroShotOpt = False,
    set_: SetOpt = None,
    nproc: NprocOpt = 1,
):
    """Translate text line by line: one output line per input line, empty lines included; or a
    document whole, by its name (subtitles cue by cue; Markdown, reStructuredText, AsciiDoc,
    notebooks, HTML, Word, PowerPoint, Excel, OpenDocument, EPUB and PDF files block by block,
    their shape kept; XLIFF files, gettext catalogs and a program's messages segment by
    segment); or a folder of them into a new folder (other files copied), or a folder's
    translations brought up to date (--update).

    --beam-size, --length-penalty, --nbest, --max-tokens, --sampling, --temperature, --top-k,
    --top-p, --epsilon, --glossary and --memory are shortcuts for --set decode.KEY=VALUE (--batch-tokens: the former name
    of --max-tokens); --mbr N for --set decode.mbr.candidates=N, --rerank N for decode.rerank.candidates.
    """
    _start_fork_server_for(nproc)
    from nmt.decode.engines.torch_engine import precision_warning
    from nmt.decode.translate import decode_settings

    spec, targets = _engine_spec(checkpoint, device, engine, compute_type, threads, ensemble, src_lang, tgt_lang,
                                 zero_shot, input, update)
    translator = spec.load(note=lambda text: err.print(f"note: {text}", highlight=False, markup=False))
    cfg = decode_settings(translator.recipe, decode_from, {
        "beam_size": beam_size, "length_penalty": length_penalty, "nbest": nbest, "max_tokens": max_tokens,
        "sampling": sampling, "temperature": temperature, "top_k": top_k, "top_p": top_p, "epsilon": epsilon,
        "mbr.candidates": mbr, "rerank.candidates": rerank, "glossary": glossary and str(glossary),
        "memory": memory}, set_ or [])
    if warning := precision_warning(translator, cfg.precision):
        err.print(f"warning: {warning}", highlight=False, markup=False)
    extras = [name for name, wanted in (("token_scores", token_scores), ("alignments", alignments)) if wanted]
    if input != "-" and Path(input).is_dir():
        return _translate_folders(translator, Path(input), output, cfg, output_format, input_format, extras, nproc,
                                  update, targets, (src_lang, zero_shot))
    _translate_input(translator, spec, input, output, cfg, output_format, input_format, extras, nproc, interactive, update)


def _translate_input(translator, spec, input: str, output: str, cfg, output_format: str, input_format: str | None,
                     extras: list[str], nproc: int, interactive: bool, update: Path | None) -> None:
    """`nmt translate` of a file or standard input (nmt.decode.stream), or with --update of the
    file's earlier translation brought up to date (nmt.decode.updates)."""
    from nmt.decode.resumable import engine_identity
    from nmt.decode.sharded import sharding
    from nmt.decode.stream import translate_file

    if update is not None:
        return _update_file(translator, input, output, cfg, update, input_format, output_format != "plain" or extras
                            or nproc != 1, interactive)
    with terminate_as_interrupt(), _lines_counter(input, output, interactive) as count:
        report = translate_file(translator, input, output, cfg, output_format, interactive, warner(input),
                                input_format, extras, sharding(nproc, spec), done=lambda n: count("lines", n),
                                resume=engine_identity(spec))
    _translated(report, input)


def _update_file(translator, input: str, output: str, cfg, update: Path, input_format: str | None, refused: bool,
                 interactive: bool) -> None:
    """`nmt translate -i FILE -o OUT --update EARLIER`: what changed in FILE since EARLIER was made
    from it, translated (nmt.decode.updates); `refused`: asked with jsonl output, scores or processes."""
    from nmt.decode.updates import update_file

    if refused:
        raise NmtError(f"--update {update} writes the translation of {input} as a file: not with --output-format "
                       "jsonl, --token-scores, --alignments or --nproc")
    with _lines_counter(input, output, interactive) as count:
        report = update_file(translator, input, output, cfg, update, warner(input), input_format,
                             done=lambda n: count("lines", n))
    _translated(report, input, kept_from=f"{update} (--update)")


def _translated(report, input: str, kept_from: str = "--update") -> None:
    """After `nmt translate`: the source languages found (--src-lang auto), the messages kept from
    `kept_from` (--update's file), and exit code 1 where lines could not be translated."""
    if report.kept:
        kept, messages = report.kept
        err.print(f"{input}: {kept} of {messages} messages kept from {kept_from}, "
                  f"{messages - kept} translated", highlight=False, markup=False)
    if report.unchanged:
        err.print(f"{input}: unchanged since {kept_from} was made from it; nothing translated", highlight=False,
                  markup=False)
    if report.kept_texts:
        kept, texts = report.kept_texts
        err.print(f"{input}: of the files whose sources changed, {kept} of {texts} texts kept from their translations, "
                  f"{texts - kept} translated", highlight=False, markup=False)
    if report.resumed:
        err.print(f"{input}: went on after line {report.resumed:,}, where a run stopped; its {report.resumed:,} "
                  "lines kept", highlight=False, markup=False)
    if report.sources:
        err.print(f"--src-lang auto: {report.sources_found()}", highlight=False, markup=False)
    if report.failed:
        err.print(f"error: {input}: {report.failed} line(s) could not be translated (warned above); "
                  "their output lines are empty (or, in jsonl, hold the error)", highlight=False, markup=False)
        raise typer.Exit(1)


def _engine_spec(checkpoint, device, engine, compute_type, threads, ensemble, src_lang, tgt_lang, zero_shot,
                 input: str, update: Path | None):
    """`nmt translate`'s engine and its target languages (several for a folder updated in place)."""
    from nmt.decode.folders import target_languages
    from nmt.decode.sharded import EngineSpec

    targets = target_languages(tgt_lang, input, update)
    return EngineSpec(tuple(checkpoint), device, engine, compute_type, threads, ensemble, src_lang, targets[0],
                      zero_shot), targets


def _translate_folders(translator, source: Path, output: str, cfg, output_format: str, input_format: str | None,
                       extras: list[str], nproc: int, update: Path | None, targets: list[str | None],
                       direction: tuple[str | None, bool]) -> None:
    """`nmt translate -i FOLDER` into each of `targets` in turn (several: a multilingual model's
    languages, each checked first; `direction`: the run's --src-lang and --zero-shot)."""
    from nmt.decode.engines.engine import choose_direction

    src_lang, zero_shot = direction
    for target in targets[1:]:  # each target checked before anything is written
        choose_direction(translator, src_lang, target, zero_shot)
    for target in targets:
        if len(targets) > 1:
            choose_direction(translator, src_lang, target, zero_shot)
        _translate_folder(translator, source, output, cfg, output_format, input_format, extras, nproc, update,
                          other_targets=[code for code in targets if code != target])


def _translate_folder(translator, source: Path, output: str, cfg, output_format: str, input_format: str | None,
                      extras: list[str], nproc: int, update: Path | None = None, other_targets: list[str] = ()) -> None:
    """`nmt translate -i FOLDER -o NEW_FOLDER`, or `-i FOLDER --update FOLDER`: its translations
    brought up to date in place, or `-i FOLDER --update TRANSLATED`: a folder an earlier -o made
    (nmt.decode.folders); `other_targets`' by other calls."""
    from nmt.decode.folders import translate_folder
    from nmt.decode.translation_record import RECORD_NAME

    in_place = update is not None and update.is_dir() and update.resolve() == source.resolve()
    into = update if update is not None and update.is_dir() and not in_place else None  # a folder -o made before
    if (in_place or into is not None) and output not in ("-", str(update)) and Path(output).resolve() != update.resolve():
        raise NmtError(f"{source}: --update {update} updates the translations there; leave out -o {output}")
    for given, refused in ((update is not None and not update.is_dir(),
                            f"--update {update} (of a folder: the folder itself, -i FOLDER --update FOLDER, to update "
                            "its translations in place, or the folder an earlier -o translated it into)"),
                           (output == "-" and not in_place and into is None, "-o - (a folder's translations are files)"),
                           (input_format is not None, "--input-format (each file is read by its name)"),
                           (output_format != "plain" or extras, "--output-format jsonl, --token-scores, --alignments"),
                           (nproc != 1, "--nproc (one process translates a folder)")):
        if given:
            raise NmtError(f"{source}: a folder is translated file by file into a new folder; not with {refused}")
    with lines_counter("translating", str(source), show=True, unit="files") as count:
        report = translate_folder(translator, source, None if in_place or into else Path(output), cfg, warner,
                                  done=lambda n: count("files", n), other_targets=other_targets, into=into)
    if report.localized and not in_place and into is None:
        err.print(f"{source}: {_some(f'{a} → {b}' for a, b in report.localized)} (each source kept, its "
                  "translation where the program or site reads the target language's)", highlight=False, markup=False)
    if report.other_languages:
        others = report.other_languages
        err.print(f"{source}: {_some(map(str, others))} {'left' if in_place else 'copied'} as "
                  f"{'it is' if len(others) == 1 else 'they are'} (another language's)", highlight=False, markup=False)
    for text in report.notes:
        err.print(f"note: {text}", highlight=False, markup=False)
    if report.gone:
        err.print(f"note: {_some(map(str, report.gone))}: {'its source is' if len(report.gone) == 1 else 'their sources are'} "
                  f"no longer in {source}; left as they are (remove what is no longer wanted)", highlight=False, markup=False)
    if report.unrecorded:
        err.print(f"note: {_some(map(str, report.unrecorded))}: not in {RECORD_NAME}, taken as translations of their "
                  "sources as they are now (a later change to a source is translated)", highlight=False, markup=False)
    if in_place or into is not None:
        recorded = f" (and {RECORD_NAME}, what they were made from)" if report.recorded else ""
        if report.written:
            done = f"{_some(map(str, report.written))} written{recorded}"
        elif report.left:
            done = "no translation written (one left as it is: see the note above)" + (
                f"; {RECORD_NAME} written" if report.recorded else "")
        elif report.recorded:
            done = f"{RECORD_NAME} written, what its translations were made from; the translations themselves up to date"
        elif report.up_to_date:
            done = "its translations are up to date; nothing written"
        else:
            done = "nothing to update: no program's messages in the source language, nor a translation file for the target language"
        err.print(f"{into or source}: {done}", highlight=False, markup=False)
    _translated(report, str(source), kept_from="the translations already in the folder")


def _some(items, most: int = 3) -> str:
    """The first few of a list, and how many more: "a, b, c and 4 more"."""
    items = list(items)
    more = f" and {len(items) - most} more" if len(items) > most else ""
    return ", ".join(items[:most]) + more


def _lines_counter(input: str, output: str, interactive: bool):
    """`nmt translate`'s count of lines done, on stderr's terminal, unless the translations go to a
    terminal too (standard output is one) or typed lines are answered one by one."""
    from nmt.decode.stream import line_by_line

    return lines_counter("translating", input, show=_drawn_beside(output) and not line_by_line(input, interactive))


def _drawn_beside(output: str) -> bool:
    """Whether a counter may be drawn on stderr's terminal: not where the output goes to a terminal."""
    return not (output == "-" and sys.stdout.isatty())


@command("back-translate")
def back_translate_(
    checkpoint: CheckpointsOpt,
    input: Annotated[Path, typer.Option("--input", "-i", help="Monolingual text in the reverse model's source language.")],
    output: Annotated[str, typer.Option("--output", "-o", help="Corpus path stem to write: STEM.{both languages} (STEM.gz: each side compressed, STEM.en.gz).")],
    sampling: Annotated[bool, typer.Option("--sampling", help="Sample the translations instead of beam search.")] = False,
    noise: Annotated[bool, typer.Option("--noise", help="Noise the translations: words deleted, replaced by <blank>, shuffled locally.")] = False,
    beam_size: BeamSizeOpt = None,
    device: DeviceOpt = "cpu",
    threads: ThreadsOpt = 0,
    set_: SetOpt = None,
    nproc: NprocOpt = 1,
):
    """Back-translate: a reverse model (e.g. de→en) turns monolingual text (German) into a synthetic corpus to train on (en→de)."""
    _start_fork_server_for(nproc)
    from nmt.jobs.back_translate import back_translate
    from nmt.decode.resumable import engine_identity
    from nmt.decode.sharded import EngineSpec, sharding
    from nmt.decode.translate import decode_settings

    spec = EngineSpec(tuple(checkpoint), device, threads=threads)
    translator = spec.load()
    cfg = decode_settings(translator.recipe, None, {"sampling": sampling or None, "beam_size": beam_size}, set_ or [])
    with terminate_as_interrupt(), lines_counter("back-translating", input) as count:
        result = back_translate(translator, input, output, cfg, warner(input), sharding(nproc, spec), noise,
                                done=lambda n: count("lines", n), resume=engine_identity(spec))
    say(result.describe())


@command()
def shortlist(
    checkpoint: Annotated[Path, typer.Option("--checkpoint", "-c", help="The model whose tokenizers the shortlist is for.")],
    source: Annotated[Path, typer.Option("--source", help="Source side of a parallel corpus (e.g. the training data).")],
    target: Annotated[Path, typer.Option("--target", help="Its target side, line for line.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The shortlist file to write.")],
    best: Annotated[int, typer.Option(help="Target pieces per source piece.")] = 50,
    frequent: Annotated[int, typer.Option(help="The most frequent target pieces, always allowed.")] = 100,
):
    """A lexical shortlist from a parallel corpus: translate with --set decode.shortlist=FILE; export with it."""
    from nmt.jobs.shortlist_build import build_shortlist

    say(build_shortlist(checkpoint, source, target, output, best, frequent).describe())


@command()
def distill(
    checkpoint: CheckpointsOpt,
    input: Annotated[Path, typer.Option("--input", "-i", help="The source side of the corpus to distill.")],
    output: Annotated[str, typer.Option("--output", "-o", help="Corpus path stem to write: STEM.{both languages}, STEM.json (STEM.gz: each side compressed).")],
    drop_worst: Annotated[float, typer.Option(
        help="Leave out this share of the pairs, those the teacher finds least likely (cross-entropy per token).")] = 0.0,
    reference: Annotated[Optional[Path], typer.Option("--reference", "-r", help=(
        "The corpus's target side: each line's translation is then the one of the teacher's n-best "
        "closest to it by sentence BLEU (interpolated distillation)."))] = None,
    beam_size: BeamSizeOpt = None,
    device: DeviceOpt = "cpu",
    threads: ThreadsOpt = 0,
    ensemble: EnsembleOpt = False,
    decode_from: DecodeFromOpt = None,
    set_: SetOpt = None,
    nproc: NprocOpt = 1,
):
    """Sequence-level distillation: a teacher translates a corpus's source side into a corpus for a student to train on."""
    _start_fork_server_for(nproc)
    from nmt.jobs.distill import distill as distill_corpus
    from nmt.decode.resumable import engine_identity
    from nmt.decode.sharded import EngineSpec, sharding
    from nmt.decode.translate import decode_settings

    spec = EngineSpec(tuple(checkpoint), device, threads=threads, ensemble=ensemble)
    teacher = spec.load()
    cfg = decode_settings(teacher.recipe, decode_from, {"beam_size": beam_size}, set_ or [])
    with terminate_as_interrupt(), lines_counter("distilling", input) as count:
        result = distill_corpus(teacher, input, output, cfg, drop_worst, warner(input), sharding(nproc, spec),
                                [str(c) for c in checkpoint], done=lambda n: count("lines", n), reference=reference,
                                resume=engine_identity(spec))
    say(result.describe())


@command()
def likelihood(
    checkpoint: CheckpointsOpt,
    source: Annotated[Optional[Path], typer.Option("--source", help="Source text file.")] = None,
    target: Annotated[Optional[Path], typer.Option(
        "--target", help="Target text file: the translations to score, line by line.")] = None,
    corpus: CorpusOpt = None,
    output: OutputOpt = "-",
    output_format: Annotated[str, typer.Option(
        help="text (the total log-probability) or jsonl (also per token).")] = "text",
    max_tokens: ScoringMaxTokensOpt = None,
    device: DeviceOpt = "cpu",
    threads: ThreadsOpt = 0,
    engine: EngineOpt = "torch",
    compute_type: ComputeTypeOpt = "default",
    ensemble: EnsembleOpt = False,
    src_lang: SrcLangOpt = None,
    tgt_lang: TgtLangOpt = None,
    zero_shot: ZeroShotOpt = False,
    decode_from: DecodeFromOpt = None,
    set_: SetOpt = None,
    nproc: ScoringNprocOpt = 1,
):
    """Score given translations (forced decoding): for each pair of lines (of --source and --target,
    or of --corpus), the natural-log probability of the target's pieces and EOS given the source;
    one output line per pair."""
    _start_fork_server_for(nproc)
    from nmt.jobs.likelihood import likelihood_file, scorer_and_pairs
    from nmt.decode.translate import decode_settings
    from nmt.decode.sharded import EngineSpec, processes

    spec = EngineSpec(tuple(checkpoint), device, engine, compute_type, threads, ensemble, src_lang, tgt_lang, zero_shot)
    workers = processes(nproc, spec, threads)
    scorer, pairs = scorer_and_pairs(spec, corpus, source, target)
    cfg = decode_settings(scorer.recipe, decode_from, {"max_tokens": max_tokens}, set_ or [])
    with pairs_counter("scoring", pairs, show=_drawn_beside(output)) as count:
        likelihood_file(scorer, pairs, output, cfg.max_tokens, output_format, cfg.precision, warner(pairs),
                        done=lambda n: count("pairs", n), processes=workers)


@command("filter")
def filter_(
    output: Annotated[str, typer.Option("--output", "-o", help="Corpus path stem to write: STEM.{both languages}, STEM.json (STEM.gz: each side compressed).")],
    checkpoint: OptionalCheckpointsOpt = None,
    source: Annotated[Optional[Path], typer.Option("--source", help="The corpus's source side.")] = None,
    target: Annotated[Optional[Path], typer.Option("--target", help="Its target side, line by line.")] = None,
    corpus: CorpusOpt = None,
    reverse_model: Annotated[Optional[Path], typer.Option(help=(
        "A checkpoint translating the other way (target to source): pairs are then ranked by dual "
        "conditional cross-entropy; without it, by the forward model's cross-entropy alone."))] = None,
    domain_model: Annotated[Optional[Path], typer.Option(help=(
        "A checkpoint of -c's direction and target tokenizer fine-tuned on in-domain (or trusted) pairs: "
        "pairs ranked by how much likelier it finds them than -c (cross-entropy difference), added to the "
        "dual score with --reverse-model; --keep-best N keeps the N most like its domain."))] = None,
    qe_model: Annotated[Optional[Path], typer.Option(help=(
        "Instead of translation models, a local CometKiwi model directory: pairs ranked by its quality "
        "estimate (pip install 'nmt\\[comet]'; name the languages with --src-lang and --tgt-lang)."))] = None,
    drop_worst: Annotated[float, typer.Option(help="Leave out this share of the pairs, those with the worst scores.")] = 0.0,
    keep_best: Annotated[Optional[int], typer.Option(
        help="Keep at most this many pairs, those with the best scores (e.g. the N most like --domain-model's domain).")] = None,
    max_score: Annotated[Optional[float], typer.Option(help="Leave out the pairs scored above this (nats per token).")] = None,
    min_qe: Annotated[Optional[float], typer.Option(help="With --qe-model: leave out the pairs estimated below this.")] = None,
    scores: Annotated[Optional[str], typer.Option(help="Write each pair's scores here, one JSON line per input pair.")] = None,
    max_tokens: ScoringMaxTokensOpt = None,
    device: DeviceOpt = "cpu",
    threads: ThreadsOpt = 0,
    ensemble: EnsembleOpt = False,
    src_lang: SrcLangOpt = None,
    tgt_lang: TgtLangOpt = None,
    decode_from: DecodeFromOpt = None,
    set_: SetOpt = None,
    nproc: ScoringNprocOpt = 1,
):
    """Filter a parallel corpus by how likely models find its pairs: dual conditional cross-entropy
    of a forward and a reverse translation model (Junczys-Dowmunt 2018), the forward model's
    cross-entropy alone, its difference from an in-domain model's (data selection), or a CometKiwi
    model's quality estimate."""
    from nmt.data.corpora import pairs_opener
    from nmt.jobs.corpus_filter import check_thresholds, filter_corpus
    from nmt.jobs.pair_scorings import load_scoring

    open_pairs = pairs_opener(corpus, source, target, "filter")  # (a missing or doubled input said before the models load)
    check_thresholds(qe_model is not None, drop_worst, max_score, min_qe, keep_best)
    _start_fork_server_for(nproc)
    scoring = load_scoring(checkpoint, reverse_model, qe_model, device, threads, ensemble, src_lang, tgt_lang, nproc,
                           decode_from, set_ or [], max_tokens, domain_model)
    pairs = open_pairs(scoring.languages)
    with terminate_as_interrupt(), pairs_counter("scoring", pairs) as count:
        result = filter_corpus(scoring, pairs, output, drop_worst, max_score, min_qe, scores, warner(pairs),
                               lambda n: count("pairs", n), keep_best)
    say(result.describe())


@command("rerank-tune")
def rerank_tune(
    checkpoint: CheckpointsOpt,
    source: Annotated[Path, typer.Option("--source", help="Dev source file.")],
    reference: Annotated[Path, typer.Option("--reference", "-r", help="Its reference translations.")],
    candidates: Annotated[int, typer.Option(help="The beam's N best to rerank (beam_size is raised to N).")] = 8,
    reverse_model: Annotated[Optional[Path], typer.Option(
        help="A checkpoint translating the other way: its score of the source given each candidate.")] = None,
    qe_model: Annotated[Optional[Path], typer.Option(help="A local CometKiwi model directory.")] = None,
    metric: Annotated[str, typer.Option(help="What the weights maximize: bleu, chrf or chrf++ (corpus-level).")] = "bleu",
    grid: Annotated[str, typer.Option(help="The weights tried for each model, comma-separated.")] =
        ",".join(str(w) for w in (0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0)),
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the search as JSON here.")] = None,
    device: DeviceOpt = "cpu",
    threads: ThreadsOpt = 0,
    decode_from: DecodeFromOpt = None,
    set_: SetOpt = None,
):
    """Choose decode.rerank's weights on a dev set: every combination in the grid reranks the
    beam's n-best lists, scored once; prints the --set flags of the best."""
    from nmt.jobs.rerank_tuning import tune_files

    weights = _grid_weights(grid)
    tuning, flags = tune_files(checkpoint, source, reference, candidates, reverse_model, qe_model, metric, weights,
                               output, device, threads, decode_from, set_ or [])
    say([f"{metric} {tuning.beam[metric]:.2f} with the beam's choice, {tuning.best[metric]:.2f} reranked "
         f"({tuning.candidates} candidates, {tuning.lines} lines)"])
    typer.echo(flags)


def _grid_weights(grid: str) -> tuple[float, ...]:
    try:
        weights = tuple(float(w) for w in grid.split(",") if w.strip())
    except ValueError:
        raise NmtError(f"--grid {grid}: expected weights, comma-separated numbers (0,0.5,1)") from None
    if not weights:
        raise NmtError(f"--grid {grid!r}: no weights")
    return weights


@command()
def export(
    checkpoint: Annotated[Path, typer.Argument(help="Checkpoint to export (e.g. an averaged one).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory to create (argos: a .argosmodel file).")],
    format_: Annotated[str, typer.Option("--format", help="ctranslate2, huggingface (transformers: MarianMTModel, or Pegasus for pre-LN), onnx, or argos (an Argos Translate package).")] = "ctranslate2",
    quantization: Annotated[Optional[str], typer.Option(
        help="Weight type: int8, int8_float16, float16, ... (default float32).")] = None,
    force: Annotated[bool, typer.Option(help="Replace OUTPUT if it exists.")] = False,
    shortlist: Annotated[Optional[Path], typer.Option(
        help="A shortlist (`nmt shortlist`) to export with the model (default: the recipe's decode.shortlist).")] = None,
    src_lang: Annotated[Optional[str], typer.Option(help="argos: the package's source language (default: the recipe's).")] = None,
    tgt_lang: Annotated[Optional[str], typer.Option(help="argos: the package's target language (default: the recipe's).")] = None,
):
    """Export a checkpoint for another engine (CTranslate2, Hugging Face transformers, ONNX, Argos Translate), with its tokenizers and decode settings."""
    from nmt.export import describe_export, export_checkpoint

    with working(f"exporting {checkpoint} ({format_})"):  # minutes for a model of billions of weights
        summary = export_checkpoint(checkpoint, output, format_, quantization, force, shortlist, src_lang, tgt_lang)
    say(describe_export(summary, checkpoint, format_))


@command("import")
def import_(
    directory: Annotated[Path, typer.Argument(help="A transformers model directory: Marian (OPUS-MT), Pegasus, M2M-100 (NLLB-200, M2M-100), mBART-50, T5 (MADLAD-400).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Checkpoint to write (e.g. opus_en_de.pt).")],
    src_lang: Annotated[Optional[str], typer.Option(help="Source language, if tokenizer_config.json does not say.")] = None,
    tgt_lang: Annotated[Optional[str], typer.Option(help="Target language, if tokenizer_config.json does not say.")] = None,
    recipe: Annotated[Optional[Path], typer.Option(
        help="Also write a recipe that fine-tunes the imported model (its data section to fill in).")] = None,
    force: Annotated[bool, typer.Option(help="Replace OUTPUT (and RECIPE) if they exist.")] = False,
    add_languages: Annotated[Optional[str], typer.Option(
        help="New language codes, comma-separated; CODE=RELATED starts CODE's row from RELATED's (ukr_Cyrl=rus_Cyrl).")] = None,
    add_pieces: Annotated[Optional[Path], typer.Option(
        help="A file of new sentencepiece pieces, one a line (a word's start written ▁).")] = None,
):
    """Import a Hugging Face transformers model as an nmt checkpoint, to translate, fine-tune (train --init-from) and export."""
    from nmt.export.huggingface_import import import_with_recipe

    with working(f"importing {directory}"):  # reading, checking against transformers, writing: minutes at NLLB's size
        summary = import_with_recipe(directory, output, force, src_lang, tgt_lang, recipe, add_languages, add_pieces)
    say(summary)


@command()
def serve(
    models: Annotated[list[Path], typer.Argument(
        help="The model(s) to serve, each a checkpoint or a directory from `nmt export`, each its own direction(s).")],
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    engine: EngineOpt = "torch",
    compute_type: ComputeTypeOpt = "default",
    device: DeviceOpt = "cpu",
    threads: ThreadsOpt = 0,
    max_lines: Annotated[int, typer.Option(help="Lines per request at most.")] = 64,
    max_chars: Annotated[int, typer.Option(help="Characters per line at most.")] = 2000,
    max_constraints: Annotated[int, typer.Option(help="Terminology constraints per line at most.")] = 8,
    batch_wait_ms: Annotated[float, typer.Option(
        help="How long the first waiting request waits for others to share its model call (not at all where "
             "no other request is in flight).")] = 5.0,
    batch_max_lines: Annotated[int, typer.Option(help="Lines per model call at most.")] = 64,
    max_queued_lines: Annotated[int, typer.Option(
        help="Lines waiting for a model call at most: past this a request is answered 503 (retry later) at once, "
             "so that what is accepted waits a bounded time; 0: no limit.")] = 1024,
    workers: Annotated[int, typer.Option(
        help="Model calls at once per model; 0: two on a CPU (each on its share of --threads), one on a GPU. "
             "1 on a CPU: one call on all the threads, sooner for one client at a time, fewer sentences/s under "
             "load (docs/serving.md).")] = 0,
    worker_mode: Annotated[str, typer.Option(
        help="auto, processes or threads: whether each worker translates in a process of its own (its own copy of "
             "the model; no Python lock shared) or as a thread of the server. auto: processes for the torch engine "
             "on a CPU with 2+ workers where they fit in half the free memory.")] = "auto",
    decode_from: DecodeFromOpt = None,
    set_: SetOpt = None,
):
    """Serve translations over HTTP: POST /translate (nmt's API and LibreTranslate's), GET /health,
    GET /languages, and a page at / to try the model. Several models: a request goes to the one of
    its languages. The decode settings are each checkpoint's recipe's, then --decode-from's, then --set's."""
    from nmt.serve.worker_process import start_fork_server_where_forking, workers_and_threads

    start_fork_server_where_forking(models, device, engine, workers, threads, worker_mode)  # beside what follows
    from nmt.serve.app import ServeLimits, check_limits, check_listening, require_fastapi, serve as run_server
    from nmt.serve.models import load_served

    check_limits(max_lines=max_lines, max_chars=max_chars, max_constraints=max_constraints, batch_wait_ms=batch_wait_ms,
                 batch_max_lines=batch_max_lines, max_queued_lines=max_queued_lines, workers=workers)
    require_fastapi()
    check_listening(host, port)
    workers, threads = workers_and_threads(workers, threads, device)
    served = load_served(models, device, engine, compute_type, threads, decode_from, set_ or [], workers, worker_mode,
                         note=lambda text: err.print(text, highlight=False, markup=False))
    err.print(f"serving {served.describe(workers)} on http://{host}:{port}/ (Ctrl-C or SIGTERM to stop)", highlight=False,
              markup=False)
    limits = ServeLimits(max_lines, max_chars, max_constraints=max_constraints, max_queued_lines=max_queued_lines)
    run_server(served, host, port, limits, batch_wait_ms, batch_max_lines, workers=workers)


@command()
def score(
    hypotheses: Annotated[list[Path], typer.Argument(help="Hypothesis file(s); with several, the first is the baseline of a paired test.")],
    reference: Annotated[Optional[list[Path]], typer.Option(
        "--reference", "-r", help="Reference file (repeat for several); optional with --langid and cometkiwi.")] = None,
    metrics: Annotated[list[str], typer.Option(
        "--metrics", "--metric", "-m", help="bleu, chrf, chrf++, ter, comet, cometkiwi (repeatable).")] = ["bleu"],
    tokenize: Annotated[Optional[str], typer.Option(help="BLEU tokenizer (sacrebleu's, default 13a).")] = None,
    language_pair: Annotated[Optional[str], typer.Option(
        "--language-pair", "-l", help="SRC-TGT: BLEU's tokenizer for TGT where --tokenize is not given, as "
        "sacrebleu -l picks it (zh, ja-mecab, ko-mecab).")] = None,
    lowercase: Annotated[bool, typer.Option(help="Case-insensitive BLEU.")] = False,
    paired_test: Annotated[str, typer.Option(help="With several systems: bs (paired bootstrap) or ar.")] = "bs",
    samples: Annotated[int, typer.Option(help="Resamples/trials of the paired test; 0 = sacrebleu's default.")] = 0,
    output_format: Annotated[str, typer.Option(
        help="text, json, or jsonl (the system's scores, then each line's).")] = "text",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (--output-format json).")] = False,
    langid: Annotated[Optional[str], typer.Option(
        help="Also the share of lines identified as this language, e.g. de (pip install 'nmt\\[langid]').")] = None,
    source: Annotated[Optional[Path], typer.Option(
        "--source", help="The source file the hypotheses translate (COMET and CometKiwi read it).")] = None,
    comet_model: Annotated[Optional[Path], typer.Option(
        help="A local COMET model directory (hparams.yaml, checkpoints/model.ckpt), e.g. wmt22-comet-da.")] = None,
    cometkiwi_model: Annotated[Optional[Path], typer.Option(
        help="A local CometKiwi model directory (quality estimation: no references).")] = None,
    batch_size: Annotated[int, typer.Option(help="COMET's segments per batch.")] = 16,
    device: DeviceOpt = "cpu",
    threads: ThreadsOpt = 0,
):
    """Score hypotheses: sacrebleu's BLEU, chrF and TER with their signatures; COMET and CometKiwi
    from a local model (pip install 'nmt\\[comet]'); paired significance tests with several systems."""
    from nmt.devices import check_threads, resolve_device, use_threads
    from nmt.score import NEURAL, NeuralSettings, pair_tokenizer, score_report

    check_threads(threads)
    tokenize = tokenize or (pair_tokenizer(language_pair) if language_pair else None)
    if set(metrics) & set(NEURAL):  # the device and threads are COMET's: torch loads only for it
        use_threads(threads)
        resolve_device(device)
    with _segments_counter(hypotheses[0], metrics) as count:
        neural = NeuralSettings(comet_model, cometkiwi_model, source, batch_size, device, count)
        report = score_report(hypotheses, reference or [], metrics, tokenize, lowercase, paired_test, samples,
                              "json" if as_json else output_format, langid, neural,
                              warn=lambda warning: err.print(warning, highlight=False, markup=False))
    typer.echo(report)


def _segments_counter(hypotheses: Path, metrics: list[str]):
    """`nmt score`'s bar of segments scored by COMET or CometKiwi (per system), on a terminal."""
    from nmt.score import NEURAL

    return lines_counter("{task.fields[name]}", hypotheses, show=bool(set(metrics) & set(NEURAL)), unit="segments")


@command()
def average(
    checkpoints: Annotated[Optional[list[Path]], typer.Argument(help="Checkpoints to average.")] = None,
    output: Annotated[Path, typer.Option("--output", "-o", help="Averaged checkpoint to write.")] = Path("averaged.pt"),
    last: Annotated[int, typer.Option(help="Instead of listing files: the last N step checkpoints of --dir.")] = 0,
    dir: Annotated[Optional[Path], typer.Option(help="The checkpoints folder (or the run's) for --last.")] = None,
):
    """Average the weights of several checkpoints (e.g. the last 5) into one."""
    from nmt.checkpoint import average_into

    with working("averaging checkpoints"):  # each read whole: a minute for several of a large model
        averaged = average_into(output, checkpoints or [], last, dir)
    named = len(checkpoints or []) + last
    twice = f" ({named - len(averaged)} named twice: one file under two names, counted once)" if named > len(averaged) else ""
    say([f"averaged {len(averaged)} checkpoint{'s' * (len(averaged) != 1)} -> {output}{twice}"])


@command()
def env(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
):
    """What this machine offers nmt: versions, the CPU (family, model, vector instructions, bf16 arithmetic), GPUs, what `auto` precisions become here, and the optional extras installed."""
    from nmt.machine import describe, machine_report

    report = machine_report()
    typer.echo(json.dumps(report, indent=1) if as_json else "\n".join(describe(report)))


@command()
def info(
    checkpoint: Annotated[Path, typer.Argument(
        help="A checkpoint written by nmt train, average or import, or a directory written by nmt export "
             "(CTranslate2 or ONNX).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (the whole recipe included).")] = False,
):
    """Describe a checkpoint (progress, model shape, vocabularies, best dev score, recipe, versions) or an export."""
    from nmt.info import describe, info_of

    found = info_of(checkpoint)
    typer.echo(json.dumps(found, indent=1) if as_json else "\n".join(describe(found)))


@command()
def plot(
    metrics: Annotated[Path, typer.Argument(help="metrics.jsonl written by nmt train (or its output_dir).")],
    output: Annotated[Optional[Path], typer.Option(
        "--output", "-o", help="Image to write, in the format its suffix names (png, svg, pdf, ...; .png where it "
                               "has none); default learning_curve.png beside the log.")] = None,
):
    """Draw the learning curves (training loss, dev loss and BLEU) to an image: PNG, or the format -o names."""
    from nmt.train.plot import plot_learning_curve

    err.print(f"wrote {plot_learning_curve(metrics, output)}", markup=False)


def main() -> None:
    start_and_end_quickly()
    app()
