"""Text in, text out for `nmt translate`: plain lines or JSON requests, plain or JSON results; or
subtitles (nmt.decode.subtitles), wrapped text (nmt.decode.wrapped), a Markdown document
(nmt.decode.markdown_document), an HTML document
(nmt.decode.html_document), a Word document (nmt.decode.docx_document), a PowerPoint, Excel or
OpenDocument file (nmt.decode.pptx_document, xlsx_document, odf_document), an e-book
(nmt.decode.epub_document), a PDF file (nmt.decode.pdf_document), an XLIFF file
(nmt.decode.xliff_document), a gettext catalog (nmt.decode.po_document) or an app's messages
(nmt.decode.json_messages, android_strings, string_catalog, apple_strings, stringsdict_document,
qt_document, resx_document, properties_document, yaml_messages, toml_messages, php_messages,
ini_messages) in and out.

One output line per input line, always. A JSON request line that is not valid is warned about
and answered with an empty line (plain) or {"error": ...} (jsonl), and counted; the others are
translated. Files appear only when complete.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from nmt.config import DecodeConfig
from nmt.decode.text.bbcode import bbcode_markup
from nmt.decode.text.casing import hypothesis_text
from nmt.decode.text.end_marks import without_stop_its_source_lacks
from nmt.data.escapes import escaped_text
from nmt.decode.text.markup import read_as_markup
from nmt.decode.text.messages import read_as_translation
from nmt.data.languages import language_tag
from nmt.data.words import without_segmenter
from nmt.decode.resumable import made_with, resumes, write_resumably
from nmt.decode.request import Line, LineDirections, check_request, document_target, hypothesis_record, parse_request
from nmt.decode.html_document import HtmlDocument
from nmt.decode.markdown_document import MarkdownDocument
from nmt.decode.message_file import some_lines
from nmt.decode.rst_document import RstDocument
from nmt.decode.asciidoc_document import AsciidocDocument
from nmt.decode.notebook_document import NotebookDocument
from nmt.decode.rows import direction
from nmt.decode.search import Hypothesis
from nmt.decode.subtitles import FORMATS as SUBTITLES
from nmt.decode.subtitles import Subtitles, subtitle_format
from nmt.decode.translate import naming_lines, translate
from nmt.decode.translation_record import Made, fingerprint, kept_translations, key_name, of_language, with_language
from nmt.decode.wrapped import Wrapped, wrapped_paragraph
from nmt.errors import NmtError
from nmt.files import replaced_whole

CHUNK_LINES = 5000  # lines read, sorted and translated together when streaming
DOCUMENTS = ("docx", "pptx", "xlsx", "odt", "odp", "ods", "epub", "pdf", "xliff", "po", "json", "android", "xcstrings",
             "strings", "stringsdict", "qt", "resx", "properties", "yaml", "toml", "php", "ini", "csv")  # read as bytes, written as bytes
SUFFIXES = {"xlf": "xliff", "sdlxliff": "xliff", "pot": "po", "arb": "json", "ts": "qt", "resw": "resx", "yml": "yaml", "tsv": "csv"}  # names of DOCUMENTS' files besides their own
PAGES = ("markdown", "rst", "asciidoc", "ipynb")  # read_page's: a documentation page's syntax, Markdown's inline marks
INPUT_FORMATS = ("plain", "markup", "text", "jsonl", "wrapped", *PAGES, "html", *DOCUMENTS, *SUBTITLES)
WHOLE_FILE = ("wrapped", *PAGES, "html", *DOCUMENTS, *SUBTITLES)  # formats read whole, each unit of several lines translated as one
HTML_SUFFIXES = (".html", ".htm", ".xhtml")
_PARAGRAPHS = ("docx", "pptx", "odt", "odp", "ods")  # DOCUMENTS whose texts warnings name as paragraphs
KEYED = ("json", "android", "strings", "stringsdict", "resx", "properties", "yaml", "toml", "php", "ini")  # a text for each key, in one language
UPDATABLE = (*KEYED, "xliff", "po", "csv")  # --update: an earlier translation's texts kept by key (XLIFF's by unit, gettext's by msgid, a table's by its rows' keys)
BILINGUAL = ("xliff", "po", "qt", "xcstrings", "csv")  # files of both languages (or every one): they hold their sources
_PAGE_START = re.compile(r"\s*<(?:!doctype\s+html|html)\b", re.I)


def format_result(translator, hyps: list[Hypothesis], output_format: str, identified: str | None = None) -> str:
    """A line's output; in jsonl with the source language `identified` (--src-lang auto), if any."""
    if output_format == "jsonl":
        found = {"src_lang": identified} if identified else {}
        return json.dumps(found | {"hypotheses": [hypothesis_record(translator, h) for h in hyps]}, ensure_ascii=False)
    return hypothesis_text(translator.tgt_tokenizer, hyps[0])


@dataclass
class StreamReport:
    failed: int = 0  # input lines that could not be translated (each warned, its output empty)
    lines: int = 0  # input lines read (each gets one output line)
    sources: Counter = field(default_factory=Counter)  # lines by the source language identified for them (auto)
    kept: tuple[int, int] | None = None  # --update: the messages kept from the earlier translation, of how many
    kept_texts: tuple[int, int] | None = None  # a page updated (`before`): its texts kept, of how many
    made: Made | None = None  # what the translation was made from (a folder's record: nmt.decode.translation_record)
    unchanged: bool = False  # a file updated (nmt.decode.updates): its source unchanged, its translation as it was
    resumed: int = 0  # lines a stopped run had translated, which this one went on after (nmt.decode.resumable)

    def sources_found(self) -> str:
        """The languages identified, most lines first: "deu_Latn 812 lines, eng_Latn 188 lines"."""
        return ", ".join(f"{lang} {n:,} line{'s' if n != 1 else ''}" for lang, n in self.sources.most_common())


def translate_stream(translator, lines: Iterable[str], cfg: DecodeConfig, output_format: str = "plain",
                     warn: Callable[[str], None] = lambda _: None, chunk_lines: int = CHUNK_LINES,
                     input_format: str = "plain", report: StreamReport | None = None,
                     extras: Iterable[str] = (), first_line: int = 1,
                     finished: Callable[[int], None] = lambda _: None) -> Iterator[str]:
    """Lines in, translated lines out (same count and order), `chunk_lines` lines at a time
    (1 for interactive use: each line is answered before the next is read). With input_format
    markup, each line is inline markup whose tags the translation keeps (nmt.decode.text.markup);
    plain, each line that looks like markup (well-formed tags, no stray "<") or is text escaped
    for it ("Tom &amp; Jerry": read_as_markup) is, and the first such line is warned about; text, every line is text, tags and Markdown's marks
    and all (decode.markdown off); with
    jsonl, a line that is not a valid request is warned about and answered with an empty line
    (plain) or {"error": ...} (jsonl), and counted in `report`; the others are translated.
    Warnings number the lines from `first_line`. `finished(n)` hears, after each batch, of `n`
    more lines translated (their output comes when the chunk is done)."""
    report = report if report is not None else StreamReport()
    if input_format == "text":
        cfg = cfg.model_copy(update={"markdown": False})
    iterator = iter(lines)
    told = False  # of markup found in plain input: once per stream
    told_escaped = False  # of text escaped for markup (character references, no tags): once per stream
    told_scripts: set[str] = set()  # scripts whose markup is read without their words (Thai, Lao): once per stream
    directions = LineDirections(translator, warn=warn)  # of lines that name their languages, or whose source is identified
    while chunk := list(islice(iterator, chunk_lines)):
        if first_line == 1 and input_format == "plain" and chunk_lines > 1 and \
                (wrapped := wrapped_paragraph(chunk)) is not None:
            warn(f"line {wrapped + 1}: text wrapped at a width, read line by line: --input-format wrapped (or a "
                 "document's format) translates each paragraph whole and wraps it again over its lines")
        requests, errors, identified = [], {}, set()  # identified: lines whose source language was found
        for number, line in enumerate(chunk, start=first_line):
            if number == 1 and input_format == "plain" and _PAGE_START.match(line):
                warn("line 1: an HTML page, read line by line: --input-format html (the default for a file named "
                     ".html) reads it block by block, a paragraph over several lines whole")
            if input_format != "jsonl":
                markup = input_format == "markup" or (input_format == "plain" and read_as_markup(line))
                bbcode = input_format == "plain" and not markup  # (translate reads its BBCode, where it has any)
                escaped = markup and escaped_text(line)  # character references alone, no tags
                if input_format == "plain" and not told and not escaped and (markup or bbcode_markup(line) is not None):
                    warn(f"line {number}: inline markup found: its tags are kept around the words they wrap, here "
                         "and in every line with well-formed tags or BBCode (--input-format text translates them as text)")
                    told = True
                if input_format == "plain" and not told_escaped and escaped:
                    warn(f"line {number}: text escaped for markup (&amp;, &lt;, ...): read as the characters the "
                         "references stand for, and written as references again, here and in every line so "
                         "escaped (--input-format text translates them as typed)")
                    told_escaped = True
                # (the run's direction, or with --src-lang auto one of the directions into its target)
                requests.append(Line(line, markup=markup, controls=directions.of(line, number), bbcode=bbcode))
                if directions.auto:
                    identified.add(len(requests) - 1)
                continue
            try:
                request = parse_request(line, number)
                check_request(request, translator, number)
                requests.append(Line.of(request, directions.of_request(request, number)))
                if directions.identifies(request):
                    identified.add(len(requests) - 1)
            except NmtError as e:
                warn(str(e))
                errors[number - first_line] = str(e)
                requests.append(Line(""))
        for i, hyps in enumerate(translate(translator, requests, cfg, warn, first_line, extras,
                                           lambda done: finished(len(done)))):
            if i in errors:
                yield json.dumps({"error": errors[i]}, ensure_ascii=False) if output_format == "jsonl" else ""
            else:
                script = without_segmenter(requests[i].text + (hyps[0].text or "")) if requests[i].markup else None
                if script is not None and script.name not in told_scripts:
                    warn(f"line {first_line + i}: {script.name}: without {script.library} a {script.name} run between "
                         f"spaces is one word, so tags wrap whole runs; pip install 'nmt[{script.extra}]' places them "
                         f"around {script.name} words")
                    told_scripts.add(script.name)
                source = requests[i].controls.languages[0] if i in identified else None
                if source:
                    report.sources[source] += 1
                yield format_result(translator, hyps, output_format, source)
        report.failed += len(errors)  # counted once their lines are out (a stopped run's record counts those)
        report.lines += len(chunk)
        first_line += len(chunk)


def translate_file(translator, source: str, output: str, cfg: DecodeConfig, output_format: str = "plain",
                   interactive: bool = False, warn: Callable[[str], None] = lambda _: None,
                   input_format: str | None = None, extras: Iterable[str] = (),
                   shards: Callable[..., Iterator[str]] | None = None,
                   done: Callable[[int], None] = lambda _: None, update: str | None = None,
                   before: Made | None = None, fill: Callable[[tuple, str], bool] | None = None,
                   resume: dict | None = None) -> StreamReport:
    """`nmt translate`: a file (or "-", standard input) to a file (or "-", standard output), one line
    for each line. A file appears only when complete; at a terminal (or `interactive`) each line
    is answered as soon as it is read. Returns how many input lines failed (jsonl input).
    `input_format` None: subtitles (nmt.decode.subtitles), markdown (nmt.decode.markdown_document),
    html (nmt.decode.html_document), or one of DOCUMENTS (read_document) for a file named so, else plain.
    `shards`: translate_stream's stand-in that spreads the work over processes (nmt.decode.sharded);
    `done(n)` hears of the lines translated so far; `update`: a translation of an earlier version of
    a program's message file, whose translations are kept (MessageFile.keep_from), or, with `before`
    (what it was made from: nmt.decode.translation_record), of any file: the translations of the
    texts unchanged since are kept, the messages whose source changed translated again; `fill`: of a
    file updated in place, the messages still to translate (by their key and text). The report's
    `made` is what the translation is made from, for the record. `resume`: the engine's identity
    (nmt.decode.resumable.engine_identity): a file's lines are then written so that a stopped run
    goes on where it stopped when run again (nmt.decode.resumable)."""
    from nmt.data.corpus import decode_lines, read_lines

    if input_format is None:
        input_format = file_format(source) or "plain"
    if output_format not in ("plain", "jsonl"):
        raise NmtError(f"--output-format {output_format}: choose plain or jsonl")
    if input_format not in INPUT_FORMATS:
        raise NmtError(f"--input-format {input_format}: choose {', '.join(INPUT_FORMATS)}")
    if update is not None and not Path(update).is_file():
        raise NmtError(f"{update}: file not found (--update)")
    if update is not None and input_format not in UPDATABLE and (before is None or before.texts is None):
        raise NmtError(f"--update keeps the translations of a file of keys and texts ({', '.join(UPDATABLE)}); "
                       f"not of --input-format {input_format}")
    if update is None and input_format in UPDATABLE and _holds_translations(output, input_format):
        raise NmtError(f"{output}: holds translations already; --update {output} keeps them and translates what is "
                       "new (or remove it to translate everything anew)")
    if input_format in WHOLE_FILE:
        return _translate_whole_file(translator, source, output, cfg, output_format, interactive, warn, input_format,
                                     extras, shards, done, update, before, fill)
    if extras and output_format != "jsonl":
        raise NmtError("--token-scores and --alignments need --output-format jsonl")
    if cfg.nbest > 1 and output_format == "plain":
        raise NmtError("--nbest > 1 needs --output-format jsonl (plain keeps one line per input)")
    interactive = line_by_line(source, interactive)
    if source == "-":
        lines = decode_lines(sys.stdin.buffer, "<stdin>")
    else:
        lines = read_lines(Path(source))
    report = StreamReport()
    if update is not None:  # (a folder's text file, its earlier translation's lines kept where their sources are)
        refuse_to_overwrite(output, [source])
        return _update_lines(translator, list(lines), output, cfg, warn, input_format, report, done, update, before)
    if resume is not None and resumes(source, output, interactive):
        refuse_to_overwrite(output, [source])
        return _translate_resumably(translator, source, lines, output, cfg, output_format, warn, input_format, report,
                                    extras, shards, done, made_with(resume, cfg, output_format, input_format, extras))
    write_lines(output, translate_all(translator, lines, cfg, output_format, warn, input_format, report, extras,
                                      shards, interactive, done), inputs=[source])
    return report


def _translate_resumably(translator, source: str, lines: Iterator[str], output: str, cfg: DecodeConfig,
                         output_format: str, warn: Callable[[str], None], input_format: str, report: StreamReport,
                         extras: Iterable[str], shards, done: Callable[[int], None], made: dict) -> StreamReport:
    """translate_file's `lines` of the file `source` into a file, going on after the lines a stopped run wrote."""
    start = write_resumably(Path(output), Path(source), made, lines,
                            lambda rest, before: translate_all(translator, rest, cfg, output_format, warn, input_format,
                                                               report, extras, shards, done=lambda n: done(before + n),
                                                               first_line=before + 1),
                            lambda: {"failed": report.failed, "sources": dict(report.sources)}, CHUNK_LINES, done)
    report.lines += start.lines
    report.failed += start.counts.get("failed", 0)
    report.sources.update(start.counts.get("sources", {}))
    report.resumed = start.lines
    return report


def _update_lines(translator, lines: list[str], output: str, cfg: DecodeConfig, warn: Callable[[str], None],
                  input_format: str, report: StreamReport, done: Callable[[int], None], update: str,
                  before: Made) -> StreamReport:
    """A text file translated line by line but for the lines whose translation in `update` is kept
    (unchanged since `before`): those are given to the model empty, and their translations put in
    their places."""
    from nmt.data.corpus import read_lines

    kept = _kept(before, lines, list(read_lines(Path(update))), update)
    given = ["" if i in kept else line for i, line in enumerate(lines)]
    translated = translate_all(translator, given, cfg, "plain", warn, input_format, report, done=done)
    write_lines(output, (kept.get(i, text) for i, text in enumerate(translated)))
    report.kept_texts, report.made = (len(kept), len(lines)), _made_of(lines)
    return report


def _kept(before: Made, texts: list[str], earlier: list[str], update: str) -> dict[int, str]:
    """The translations in `update` (its `earlier` texts) kept for `texts`: those of the texts
    unchanged since `before`."""
    kept = kept_translations(before.texts, texts, earlier)
    if kept is None:
        raise NmtError(f"{update}: has {len(earlier)} texts, where the source it was translated from had "
                       f"{len(before.texts)}, so they cannot be lined up; remove it to translate its source anew")
    return kept


def _made_of(texts: list[str]) -> Made:
    return Made("", tuple(fingerprint(text) for text in texts))


def file_format(source: str) -> str | None:
    """The input format a file is read in by its name: subtitles, markdown, html or one of
    DOCUMENTS; None for any other name (plain text)."""
    suffix = Path(source).suffix.lower()[1:]
    kind = SUFFIXES.get(suffix, suffix)
    if kind == "xml":  # Android's resources: res/values/strings.xml, res/values-de/strings.xml
        kind = "android" if Path(source).parent.name.startswith("values") else kind
    return subtitle_format(source) or ("html" if source.lower().endswith(HTML_SUFFIXES) else
                                       "markdown" if suffix in ("md", "mdx", "markdown") else
                                       "rst" if suffix in ("rst", "rest") else
                                       "asciidoc" if suffix in ("adoc", "asciidoc") else
                                       "ipynb" if suffix == "ipynb" else
                                       kind if kind in DOCUMENTS else None)


def read_page(kind: str, lines: list[str], name: str) -> MarkdownDocument | NotebookDocument:
    """A Markdown (an .mdx file's as MDX reads it), reStructuredText or AsciiDoc page, or a Jupyter
    notebook's Markdown cells, read for translation."""
    if kind == "asciidoc":
        return AsciidocDocument.read(lines)
    if kind == "ipynb":
        return NotebookDocument.read(lines, name)
    return RstDocument.read(lines) if kind == "rst" else MarkdownDocument.read(lines, mdx=name.lower().endswith(".mdx"))


def _translate_whole_file(translator, source: str, output: str, cfg: DecodeConfig, output_format: str,
                          interactive: bool, warn: Callable[[str], None], kind: str, extras: Iterable[str],
                          shards: Callable[..., Iterator[str]] | None, done: Callable[[int], None],
                          update: str | None = None, before: Made | None = None,
                          fill: Callable[[tuple, str], bool] | None = None) -> StreamReport:
    """`nmt translate` of a subtitle file (each cue's text, or a sentence's over several cues,
    translated whole: nmt.decode.subtitles), of wrapped text (each paragraph whole:
    nmt.decode.wrapped) or of an HTML document (each block whole: nmt.decode.html_document),
    written back where it came from, the rest copied. Read whole, translated in one process."""
    from nmt.data.corpus import decode_lines, read_lines, text_layout

    if output_format != "plain" or extras:
        raise NmtError(f"--input-format {kind} writes the file's own shape: --output-format plain, without "
                       "--token-scores or --alignments")
    if shards is not None:
        raise NmtError(f"--input-format {kind}: one process translates such a file (--nproc 1)")
    if line_by_line(source, interactive):
        raise NmtError(f"--input-format {kind} reads a whole file, not lines typed at a terminal")
    if kind in DOCUMENTS:
        return _translate_document(translator, source, output, cfg, warn, done, kind, update, before, fill)
    name = "<stdin>" if source == "-" else source
    lines = list(decode_lines(sys.stdin.buffer, name) if source == "-" else read_lines(Path(source)))
    document, markup = _whole(kind, lines, name)
    if kind in PAGES:  # (reStructuredText's and AsciiDoc's marks read with Markdown's)
        cfg = cfg.model_copy(update={"markdown": True})
    kept = _kept(before, document.texts, _whole(kind, list(read_lines(Path(update))), update)[0].texts, update) \
        if update is not None else {}
    directions, numbers = LineDirections(translator, warn=warn), document.numbers
    requests = [Line(text, markup=is_markup, controls=directions.of(text, number), page=kind in PAGES)
                for text, is_markup, number in zip(document.texts, markup, numbers)]
    translations = _translations(translator, requests, cfg, warn, numbers, done, kept=kept,
                                 stops=kind not in PAGES)  # (a page's are its reader's to drop: its marks)
    if kind == "html":  # its lang names the target language
        target = direction(translator, requests[0].controls if requests else None)[1]
        written = document.write(translations, target)
    else:
        written = document.write(translations)
    # written back as it came (a regular file: a pipe read once is not opened again)
    newline, bom = text_layout(Path(source)) if source != "-" and Path(source).is_file() else ("\n", False)
    write_lines(output, written, inputs=[source], newline=newline, bom=bom)
    report = StreamReport(lines=len(lines), made=_made_of(document.texts),
                          kept_texts=(len(kept), len(requests)) if update is not None else None)
    for request in requests if directions.auto else []:
        report.sources[request.controls.languages[0]] += 1
    return report


def _whole(kind: str, lines: list[str], name: str) -> tuple:
    """A file read whole (HTML, a page, wrapped text, subtitles): the document, and whether each
    of its texts is markup."""
    if kind == "html":
        document = HtmlDocument.read(lines)
        return document, [True] * len(document.texts)
    if kind in PAGES:
        document = read_page(kind, lines, name)
        return document, document.markup
    document = Wrapped.read(lines) if kind == "wrapped" else Subtitles.read(lines, kind, name)
    return document, [read_as_markup(text) for text in document.texts]


def file_texts(path: Path, kind: str | None) -> list[str]:
    """The texts `nmt translate` gives the model from a file read as `kind` (None: plain lines):
    a page's paragraphs, headings, items and cells, a document's paragraphs, a text file's lines."""
    from nmt.data.corpus import read_bytes, read_lines

    if kind is None or kind not in WHOLE_FILE:
        return list(read_lines(path))
    if kind in DOCUMENTS:
        return read_document(kind, read_bytes(path), str(path)).texts
    return _whole(kind, list(read_lines(path)), str(path))[0].texts


def _translate_document(translator, source: str, output: str, cfg: DecodeConfig, warn: Callable[[str], None],
                        done: Callable[[int], None], kind: str, update: str | None = None,
                        before: Made | None = None, fill: Callable[[tuple, str], bool] | None = None) -> StreamReport:
    """`nmt translate` of a Word, PowerPoint, Excel or OpenDocument file (each paragraph or cell whole,
    its formatting kept: nmt.decode.docx_document, pptx_document, xlsx_document, odf_document), an e-book (each chapter as an HTML page:
    nmt.decode.epub_document), a PDF file (each paragraph drawn again in its place: nmt.decode.pdf_document)
    or a localization file (each untranslated segment or message: nmt.decode.xliff_document, po_document;
    each message: nmt.decode.json_messages, android_strings, string_catalog, apple_strings,
    stringsdict_document, qt_document, resx_document, properties_document, yaml_messages, toml_messages,
    php_messages, ini_messages), written
    with its language the target's; `update`: an earlier translation whose messages are kept (those
    whose source changed since `before`, translated again), or, `before` a document's texts, whose
    translations of the texts unchanged since are kept."""
    from nmt.data.corpus import read_bytes

    refuse_to_overwrite(output, [source])
    name = "<stdin>" if source == "-" else source
    data = sys.stdin.buffer.read() if source == "-" else read_bytes(Path(source))
    by_texts = update is not None and before is not None and before.texts is not None  # (not by keys)
    by_keys = update is not None and not by_texts and kind != "csv"  # (a table keeps its earlier cells itself)
    with read_as_translation() if by_keys else contextlib.nullcontext():
        document = read_document(kind, data, name, cfg.pdf_font)  # (MessageFile.keep_from)
    # (what the record says of a source: read as a source, whether or not it is updated)
    as_source = read_document(kind, data, name) if by_keys else document
    # a multilingual model translates a localization file into the language it names
    controls = document_target(translator, getattr(document, "target_language", None), warn)
    source, target = direction(translator, controls)
    if hasattr(document, "for_target"):  # a file of every language (a String Catalog): the strings the target lacks
        document.for_target(target)
    if hasattr(document, "for_direction"):  # a table: its source language's column into the target's, or its cells
        guessed = getattr(translator, "source_guess", None) is not None  # (--src-lang auto: no one source)
        earlier_table = read_document(kind, read_bytes(Path(update)), update) if update is not None else None
        document.for_direction(None if guessed else source, target, cfg.table_header, cfg.table_columns,
                               made_from=of_language(before, language_tag(target)), earlier=earlier_table)
    kept_texts = _kept(before, document.texts, read_document(kind, read_bytes(Path(update)), update, cfg.pdf_font).texts,
                       update) if by_texts else {}
    if by_keys:  # an earlier translation: its messages kept, the new ones translated
        earlier = read_bytes(Path(update))
        with read_as_translation():
            earlier_messages = read_document(kind, earlier, update)
        if before is not None and before.messages is not None:
            _forget_changed(earlier_messages, as_source, before, update, warn)
        if fill is not None:  # (the file itself: its messages still to translate left out of what it keeps)
            earlier_messages.messages = [message for message in earlier_messages.messages
                                         if not fill(getattr(message, "key", ()) or (), message.markup)]
        kept = document.keep_from(earlier_messages)
        if document.stale:
            warn(f"{len(document.stale)} message(s) translated again (line {some_lines(document.stale)}): their "
                 f"translation in {update} has placeholders the source no longer has")
    requests = [Line(text, markup=True, controls=controls) for text in document.texts]
    unit = {"epub": "line", "pdf": "page", "xlsx": "string"}.get(kind, "paragraph" if kind in _PARAGRAPHS else "line")
    translations = _translations(translator, requests, cfg, warn, document.numbers, done, unit, kept_texts, stops=True)
    content = document.write(document.with_kept(translations) if by_keys else translations, target)
    # up to date, the file as it was written (its order, its comments, a catalog's line wrapping): the
    # earlier translation, or a translator's file with nothing left to translate
    baseline = earlier if by_keys else data if not requests and kind in ("xliff", "po") else None
    if baseline is not None and _same_messages(kind, content, baseline):
        content = baseline
    for message in getattr(document, "warnings", []):  # what a PDF's reader left out, or its font lacked; XLIFF's language
        warn(message)  # (the warning names the file)
    if output == "-":
        sys.stdout.buffer.write(content)
        sys.stdout.flush()
    else:
        with replaced_whole(output, "wb") as f:
            f.write(content)
    return StreamReport(lines=len(requests), kept=(kept, document.message_count) if by_keys else None,
                        kept_texts=(len(kept_texts), len(requests)) if by_texts else None, made=_made(kind, as_source, before, target))


def _made(kind: str, document, before: Made | None = None, target: str | None = None) -> Made | None:
    """What a document's translation is made from, for a folder's record: its messages' texts by
    key (a file of keys), or its texts; for a table of texts by language, its source texts by key
    for the target, beside the other languages' of its record `before`; None for another file that
    holds its sources (XLIFF, gettext)."""
    if getattr(document, "sources", None):
        return with_language(before, language_tag(target), document.sources)
    if kind in KEYED:
        return Made("", messages={key_name(message.key): fingerprint(message.markup) for message in document.messages
                                  if getattr(message, "key", None) is not None})
    return None if kind in BILINGUAL else _made_of(document.texts)


def _forget_changed(earlier, document, before: Made, update: str, warn: Callable[[str], None]) -> None:
    """The messages of `earlier` (a translation of `document`'s messages as they were `before`)
    whose source changed since, left out of it, so that they are translated again."""
    now = {key_name(message.key): (fingerprint(message.markup), message.line) for message in document.messages
           if getattr(message, "key", None) is not None}
    changed = {key: line for key, (mark, line) in now.items() if before.messages.get(key, mark) != mark}
    if not changed:
        return
    earlier.messages = [message for message in earlier.messages
                        if getattr(message, "key", None) is None or key_name(message.key) not in changed]
    lines = sorted(changed.values())
    warn(f"{len(changed)} message(s) translated again (line {some_lines(lines)}): their source changed since {update} "
         "was translated")


def _holds_translations(output: str, kind: str) -> bool:
    """Whether the file a program's messages would be written to is there already with messages in
    it: a translation a reviewer may have worked on, not to be replaced unasked (as msginit will
    not replace a catalog)."""
    from nmt.data.corpus import read_bytes

    if output == "-" or not Path(output).is_file():
        return False
    try:
        with read_as_translation():
            return read_document(kind, read_bytes(Path(output)), output).holds_translations()
    except NmtError:  # (not a file of that kind: replaced as any output file is)
        return False


def _same_messages(kind: str, content: bytes, earlier: bytes) -> bool:
    """Whether two files of a program's messages (or two XLIFF files) hold the same text under each
    key, in any order."""
    with read_as_translation():
        return read_document(kind, content, "").contents() == read_document(kind, earlier, "").contents()


def _translations(translator, requests: list[Line], cfg: DecodeConfig, warn: Callable[[str], None],
                  numbers: list[int], done: Callable[[int], None], unit: str = "line",
                  kept: dict[int, str] | None = None, stops: bool = False) -> list[str]:
    """Each of a document's texts translated (the text itself where its translation is empty), but
    those `kept` (a text's place -> its translation); with `stops`, without a full stop the model
    ended one with where its source has no end mark (a heading, a cell, a label: "Ein Hund", not
    "Ein Hund."). Warnings name a text's `unit` and number (`numbers`); `done(n)` hears of the
    texts translated so far."""
    kept = kept or {}
    rest = [i for i in range(len(requests)) if i not in kept]
    add = running_total(done)
    hyps = translate(translator, [requests[i] for i in rest], cfg, naming_lines(warn, [numbers[i] for i in rest], unit),
                     finished=lambda indices: add(len(indices)))
    translated = {i: hypothesis_text(translator.tgt_tokenizer, h[0]) or requests[i].text for i, h in zip(rest, hyps)}
    if stops:
        translated = {i: without_stop_its_source_lacks(requests[i].text, text) for i, text in translated.items()}
    return [kept[i] if i in kept else translated[i] for i in range(len(requests))]


def translated_texts(translator, texts: list[str], cfg: DecodeConfig) -> list[str]:
    """Each text's translation (a title, a label: the text itself where it comes back empty)."""
    return _translations(translator, [Line(text) for text in texts], cfg, lambda _: None,
                         list(range(1, len(texts) + 1)), lambda _: None)


# each of DOCUMENTS' reader: its module in nmt.decode (imported when a file of it is read, so that a
# missing extra matters only to its own files) and class
_READERS = {"docx": ("docx_document", "DocxDocument"), "pptx": ("pptx_document", "PptxDocument"),
            "xlsx": ("xlsx_document", "XlsxDocument"), **dict.fromkeys(("odt", "odp", "ods"), ("odf_document", "OdfDocument")),
            "epub": ("epub_document", "EpubDocument"), "pdf": ("pdf_document", "PdfDocument"),
            "xliff": ("xliff_document", "XliffDocument"), "po": ("po_document", "PoDocument"),
            "json": ("json_messages", "JsonMessages"), "android": ("android_strings", "AndroidStrings"),
            "xcstrings": ("string_catalog", "StringCatalog"), "strings": ("apple_strings", "AppleStrings"),
            "stringsdict": ("stringsdict_document", "StringsdictDocument"), "qt": ("qt_document", "QtDocument"),
            "resx": ("resx_document", "ResxDocument"), "properties": ("properties_document", "PropertiesDocument"),
            "yaml": ("yaml_messages", "YamlMessages"), "toml": ("toml_messages", "TomlMessages"),
            "php": ("php_messages", "PhpMessages"), "ini": ("ini_messages", "IniMessages"),
            "csv": ("csv_table", "CsvTable")}


def read_document(kind: str, data: bytes, name: str, pdf_font: str | None = None):
    """A file of one of DOCUMENTS read for translation: its `texts` (inline markup) in, its bytes
    out (`write(translations, target language)`); a PDF's drawn in `pdf_font` (decode.pdf_font)."""
    module, reader = _READERS[kind]
    document = getattr(importlib.import_module(f"nmt.decode.{module}"), reader)
    if kind == "pdf":
        return document.read(data, name, pdf_font)
    if kind in ("odt", "odp", "ods"):
        return document.read(data, name, kind)
    return document.read(data, name)


def running_total(done: Callable[[int], None]) -> Callable[[int], None]:
    """A callback that adds up the counts it hears and tells `done` the sum so far."""
    total = 0

    def add(n: int) -> None:
        nonlocal total
        total += n
        done(total)
    return add


def line_by_line(source: str, interactive: bool = False) -> bool:
    """Whether each line is answered as soon as it is read: asked for, or typed at a terminal."""
    return interactive or (source == "-" and sys.stdin.isatty())


def translate_all(translator, lines: Iterable[str], cfg: DecodeConfig, output_format: str = "plain",
                  warn: Callable[[str], None] = lambda _: None, input_format: str = "plain",
                  report: StreamReport | None = None, extras: Iterable[str] = (),
                  shards: Callable[..., Iterator[str]] | None = None, interactive: bool = False,
                  done: Callable[[int], None] = lambda _: None, first_line: int = 1) -> Iterator[str]:
    """`translate_stream` in chunks (one line at a time when `interactive`), or spread over
    processes by `shards` (nmt.decode.sharded), which refuses lines typed at a terminal.
    `done(n)` hears of the lines translated so far, after each batch; warnings number the lines
    from `first_line`."""
    if shards is None:
        return translate_stream(translator, lines, cfg, output_format, warn, 1 if interactive else CHUNK_LINES,
                                input_format, report, extras, first_line=first_line, finished=running_total(done))
    if interactive:
        raise NmtError("--nproc > 1 translates a file or piped input, not lines typed at a terminal")
    return shards(lines, cfg, output_format, warn, input_format, report, extras, done=done, first_line=first_line)


def refuse_to_overwrite(output: str, inputs: Iterable[str | Path]) -> None:
    """An NmtError where the file `output` is one of `inputs` (or a link to one): writing it
    would lose the text it is made from."""
    if output == "-":
        return
    for given in inputs:
        if str(given) != "-" and Path(output).resolve() == Path(given).resolve():
            raise NmtError(f"{output}: is the input {given}; write the output to another file")


def write_lines(output: str, lines: Iterable[str], inputs: Iterable[str | Path] = (), newline: str | None = None,
                bom: bool = False) -> None:
    """Lines to "-" (standard output, each flushed as it comes) or to a file that appears only
    when complete (written beside it under a hidden name, then renamed), never over one of
    `inputs`, the files the lines come from (refuse_to_overwrite); nmt.files.replaced_whole. A
    path that cannot be written fails before any line is computed. Each line ends in `newline`
    (None: "\n", as the platform's text files write it); `bom`: a UTF-8 byte order mark first
    (both as a document translated whole came: nmt.data.corpus.text_layout)."""
    refuse_to_overwrite(output, inputs)
    end = "\n" if newline is None else newline
    if output == "-":
        sys.stdout.write("\ufeff" if bom else "")
        for line in lines:
            sys.stdout.write(line + end)
            sys.stdout.flush()
        return
    with replaced_whole(output, newline=None if newline is None else "") as f:
        f.write("\ufeff" if bom else "")
        for line in lines:
            f.write(line + end)
