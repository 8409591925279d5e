"""A folder translated (`nmt translate -i FOLDER -o NEW_FOLDER`): a documentation site, a book's
chapters, a program's texts. Each text file (.txt) and each file that `nmt translate` reads in a
format of its own by its name (nmt.decode.stream.file_format) is translated as `nmt translate`
translates it alone (nmt.decode.stream.translate_file); every other file (images, styles,
scripts, and JSON, .properties, YAML and TOML files other than a program's messages: holds_messages) is
copied as it is; the subfolders are made alike. A program's message file in the source language
keeps its place and gets its translation beside it, under the target language's name
(nmt.decode.locale_paths). The new folder appears only when every file is done: it is written
beside it under a hidden name, then renamed. What each translation beside its source was made from
is recorded in the folder (nmt.decode.translation_record), so that an update finds what changed.
"""

from __future__ import annotations

import functools
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from nmt.config import DecodeConfig
from nmt.decode.joomla_manifest import unlisted_languages
from nmt.decode.laravel_strings import LaravelApp, laravel_apps, strings_in_code, strings_source
from nmt.decode.locale_paths import (LOCALE_FOLDERS, PathLanguage, catalog_path, existing_folder, is_language,
                                     language_trees, names_by_folder, names_language, path_language, suffix_language,
                                     suffixed, translated_path, tree_language)
from nmt.decode.rows import direction
from nmt.decode.csv_table import names_languages
from nmt.decode.mkdocs_nav import translate_nav, untranslated_titles
from nmt.decode.site_layouts import Docusaurus, SuffixSite, documentation_site, unlisted, untranslated_label
from nmt.decode.stream import (BILINGUAL, KEYED, StreamReport, file_format, file_texts, read_document, translate_file,
                               translated_texts)
from nmt.decode.translation_record import (RECORD_NAME, Made, TranslationRecord, file_fingerprint, fingerprint,
                                           kept_translations)
from nmt.errors import NmtError
from nmt.file_lock import sole_writer
from nmt.files import replaced_whole

_DEPENDENCIES = {"node_modules", "bower_components", "pods", "carthage", "vendor", "site-packages"}
_BUILT = {"build", "dist", "out", "target", "deriveddata", "bin", "obj", "intermediates"}
_INI_SECTION = re.compile(rb"^[ \t]*\[[^\]\r\n]+\][ \t]*\r?$", re.M)
# .txt files a program reads, not a person: a site's robots.txt, Python's requirements, CMake's lists
_MACHINE_TEXT = re.compile(r"(?:robots|humans|ads|app-ads|security|llms(?:-full)?|cmakelists|constraints|"
                           r"requirements(?:[-_.][\w.-]*)?|dev-requirements|test-requirements|[\w.-]*\.lock)\.txt")
_LEGAL = re.compile(r"(?:un)?(?:license|licence|copying|copyright|notice|patents)(?:[-_.][\w-]+)?\.(?:md|markdown|txt|rst|adoc|asciidoc)")
_TEMPLATE = re.compile(rb"\{\{.*?\}\}|\{%.*?%\}|<%.*?%>|<\?php", re.S)  # Go, Jinja, Liquid, Handlebars, ERB, PHP
_MESSAGE_NAME = re.compile(r"messages|strings|bundle|translation|i18n|l10n|locale", re.I)


@dataclass
class FolderReport(StreamReport):
    """A folder's StreamReport, with the program's message files translated under the target
    language's names (from, to) and those of other languages copied as they are."""
    localized: list[tuple[Path, Path]] = field(default_factory=list)
    other_languages: list[Path] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)  # updated in place: the files written
    up_to_date: list[Path] = field(default_factory=list)  # updated in place: the files found up to date
    notes: list[str] = field(default_factory=list)  # what the user may need to do beside (a language to list)
    unrecorded: list[Path] = field(default_factory=list)  # translations the record did not know: taken as up to date
    left: list[Path] = field(default_factory=list)  # translations of changed sources left as they are (notes say why)
    gone: list[Path] = field(default_factory=list)  # a folder of translations updated: the files whose sources are gone
    recorded: bool = False  # updated in place: the record of what the translations were made from written


@dataclass
class _Step:
    """One file written into the new folder: `source` translated or copied to `target` (both
    relative to their folders); `earlier`: a translation of it already in the folder, whose
    messages are kept (--update); `before`: what that translation was made from, where the record
    knows it (nmt.decode.translation_record); `fill`: a Docusaurus labels file, its messages still
    in the site's English translated in place."""
    source: Path
    target: Path
    translated: bool
    earlier: Path | None = None
    before: Made | None = None
    fill: bool = False
    nav: str | None = None  # mkdocs.yml: its navigation's titles translated into this language (nmt.decode.mkdocs_nav)
    strings: str | None = None  # a Laravel app's strings found in its code, as JSON: the source (nmt.decode.laravel_strings)


def translate_folder(translator, source: Path, output: Path | None, cfg: DecodeConfig,
                     warn_for: Callable[[Path], Callable[[str], None]],
                     done: Callable[[int], None] = lambda _: None, other_targets=(),
                     into: Path | None = None) -> FolderReport:
    """Every file under `source` translated or copied into `output`, a folder that must not exist
    yet (or be empty) and must not lie inside `source`; `warn_for(path)` warns about a file's lines,
    `done(n)` hears of the files finished so far. A program's message file whose path names the
    source language (or the platform's default place: nmt.decode.locale_paths) stays as it is,
    and its translation is written under the target's name, keeping the messages of a translation
    already there; one whose path names another language is copied.

    `output` None: the folder's translations brought up to date in place (`--update FOLDER`):
    only those translations are written (and XLIFF, gettext, Qt files named for the target
    language and String Catalogs filled), each replacing its file once every one is done.
    `other_targets`: the languages the same run translates into next or did before, whose files
    are not another language's to report.

    `into`: a folder of its own that an earlier `-o` translated `source` into, file by file in
    their places (`-i FOLDER --update TRANSLATED`), brought up to date as `-o` would write it now:
    a file whose source changed since (the folder's record says) translated again, keeping the
    translations of its unchanged texts, a new one translated, a copied one copied again where
    its source changed; the rest kept as it is there, a reviewer's edits included."""
    if into is not None:
        return _update_translated_folder(translator, source, into, cfg, warn_for, done)
    if output is not None and output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise NmtError(f"{output}: exists and is not an empty folder; name a new folder for the translations")
    if output is not None and output.resolve().is_relative_to(source.resolve()):
        raise NmtError(f"{output}: inside {source}, the folder it is translated from; name a folder outside it")
    report = FolderReport()
    languages = _languages(translator)
    record = TranslationRecord.read(source)
    steps = _steps(sorted(path.relative_to(source) for path in source.rglob("*") if path.is_file()), source,
                   languages, report, record, other_targets)
    mirrored = output is not None and _mirrored(steps)  # (file by file in their places: all of them recorded)
    if mirrored:
        record = TranslationRecord()
    if output is None:
        steps = [step for step in steps if step.translated and (step.target != step.source or step.fill or step.nav or
                                                                _filled_in_place(source, step.source, languages[1]))]
    building = (output or source).resolve().with_name(f".{(output or source).resolve().name}.tmp")
    with sole_writer(output or source):  # (a second run would remove the first's folder being built)
        shutil.rmtree(building, ignore_errors=True)
        building.mkdir(parents=True)
        try:
            _carry_out(translator, steps, source, source, building, cfg, warn_for, done, report, record, mirrored)
            if output is None:
                _put_in_place(steps, building, source, report)
                _write_record(record, source, report)
            else:
                if record.entries:
                    (building / RECORD_NAME).write_text(record.content(), encoding="utf-8")
                if output.exists():
                    output.rmdir()  # (empty)
                building.rename(output)
        except BaseException:
            shutil.rmtree(building, ignore_errors=True)
            raise
    return report


def _carry_out(translator, steps: list[_Step], source: Path, translations: Path, building: Path, cfg: DecodeConfig,
               warn_for: Callable[[Path], Callable[[str], None]], done: Callable[[int], None], report: FolderReport,
               record: TranslationRecord, every: bool) -> None:
    """Each step done into `building`: its file of `source` translated (its earlier translation,
    the step's `earlier`, read in `translations`) or copied; what each translation beside its
    source was made from recorded (`every`: each file's, copies too); the lines and the texts
    kept counted in `report`."""
    kept = messages = 0
    for finished, step in enumerate(steps, start=1):
        target = building / step.target
        target.parent.mkdir(parents=True, exist_ok=True)
        if step.nav is not None:
            target.write_text(translate_nav((source / step.source).read_text(encoding="utf-8"), step.nav,
                                            lambda titles: translated_texts(translator, titles, cfg), str(source / step.source)),
                              encoding="utf-8")
        elif step.translated:
            named = step.source if step.strings is None else step.target  # (what warnings name)
            with _read_from(source, step) as read:
                translated = translate_file(translator, str(read), str(target), cfg, warn=warn_for(source / named),
                                            update=str(translations / step.earlier) if step.earlier else None,
                                            before=step.before, fill=untranslated_label if step.fill else None)
            report.lines += translated.lines
            report.failed += translated.failed
            if translated.kept:
                kept, messages = kept + translated.kept[0], messages + translated.kept[1]
            if translated.kept_texts:
                report.kept_texts = tuple(a + b for a, b in zip(report.kept_texts or (0, 0), translated.kept_texts))
            if step.strings is None and (step.target != step.source or every or file_format(str(step.source)) == "csv"):
                _record(record, step, translated.made, source)  # (a table of languages: its texts by key)
        else:
            shutil.copy2(source / step.source, target)
            if every:
                record.set(step.target, Made(step.source.as_posix(), copied=file_fingerprint(target)))
        done(finished)
    report.kept = (kept, messages) if messages else None


@contextmanager
def _read_from(source: Path, step: _Step) -> Iterator[Path]:
    """The file a step translates: its source's, or a Laravel app's strings, written to a temporary
    one (nothing recorded of them: each is its own key)."""
    if step.strings is None:
        yield source / step.source
        return
    with tempfile.TemporaryDirectory(prefix="nmt-laravel-") as temporary:
        strings = Path(temporary) / "strings.json"
        strings.write_text(step.strings, encoding="utf-8")
        yield strings


def _write_record(record: TranslationRecord, folder: Path, report: FolderReport) -> None:
    """The record written into the folder updated, where it changed."""
    if record.changed:
        with replaced_whole(folder / RECORD_NAME) as f:
            f.write(record.content())
        report.recorded = True


def _mirrored(steps: list[_Step]) -> bool:
    """Whether a folder's files are translated or copied each in its place (no translation beside
    its source: no program's messages, no site's pages), so that a new folder mirrors it."""
    return all(step.target == step.source for step in steps)


def _update_translated_folder(translator, source: Path, into: Path, cfg: DecodeConfig,
                              warn_for: Callable[[Path], Callable[[str], None]],
                              done: Callable[[int], None]) -> FolderReport:
    """translate_folder's `into`: the folder `into`, an earlier translation of `source` file by
    file, brought up to date as translate_folder into a new folder would write it now."""
    if not into.is_dir():
        raise NmtError(f"{into}: not a folder (--update names the folder an earlier -o translated {source} into)")
    if into.resolve().is_relative_to(source.resolve()) or source.resolve().is_relative_to(into.resolve()):
        raise NmtError(f"{into}: inside {source}, or holding it; name the folder an earlier -o translated it into")
    report = FolderReport()
    record = TranslationRecord.read(into)
    files = sorted(path.relative_to(source) for path in source.rglob("*") if path.is_file())
    steps = _steps(files, source, _languages(translator), report)
    if not _mirrored(steps):
        beside = next(step.target for step in steps if step.target != step.source)
        raise NmtError(f"{source}: its translations go beside their sources ({beside}), not into a folder of their "
                       f"own; update them in place: -i {source} --update {source}")
    report.notes = []  # (the languages a site does not list are the in-place update's to say)
    report.gone = sorted(Path(target) for target, made in record.entries.items()
                         if not (source / made.source).is_file() and (into / target).is_file())
    steps = [kept for step in steps if (kept := _still_to_do(step, source, into, record, report)) is not None]
    building = into.resolve().with_name(f".{into.resolve().name}.tmp")
    with sole_writer(into):
        shutil.rmtree(building, ignore_errors=True)
        building.mkdir(parents=True)
        try:
            _carry_out(translator, steps, source, into, building, cfg, warn_for, done, report, record, every=True)
            _put_in_place(steps, building, into, report)
        except BaseException:
            shutil.rmtree(building, ignore_errors=True)
            raise
        _write_record(record, into, report)
    return report


def _still_to_do(step: _Step, source: Path, into: Path, record: TranslationRecord, report: FolderReport) -> _Step | None:
    """What becomes of a file of `source` whose earlier translation (or copy) `into` may hold:
    None where that is up to date (or not known to be otherwise: taken as so, and recorded);
    else the step, to translate again with that translation's unchanged texts kept (`earlier`,
    `before`), or to copy again."""
    there, made = into / step.target, record.made(step.target, step.source)
    if not there.is_file():
        return step
    if not step.translated:
        now = file_fingerprint(source / step.source)
        if made is not None and made.copied is not None and made.copied != now:
            return step  # (its source changed since it was copied)
        record.set(step.target, Made(step.source.as_posix(), copied=now))
        report.up_to_date.append(step.target)
        return None
    kind = file_format(str(step.source))
    if kind in KEYED + BILINGUAL:  # (kept by key, or by the units a file of both languages holds)
        return replace(step, earlier=step.target, before=made)
    if not _changed_since(source, step.source, step.target, made, record, report, into):
        return None
    return replace(step, earlier=step.target, before=made)


def _record(record: TranslationRecord, step: _Step, made: Made | None, folder: Path) -> None:
    """What `step`'s translation was made from, recorded: `made` (a document's or message file's),
    or a text file's lines; nothing for a file that holds its sources (XLIFF, gettext)."""
    kind = file_format(str(step.source))
    if made is None and kind in BILINGUAL:
        return
    if made is None:  # (a text file, streamed line by line)
        made = Made("", tuple(map(fingerprint, file_texts(folder / step.source, kind))))
    record.set(step.target, replace(made, source=step.source.as_posix()))


def _put_in_place(steps: list[_Step], building: Path, folder: Path, report: FolderReport) -> None:
    """The files made in `building` put in their places in `folder`, each replacing its old version
    whole (a rename), but for those the same as it (up to date: left as they are)."""
    for step in steps:
        made, there = building / step.target, folder / step.target
        if there.is_file() and there.read_bytes() == made.read_bytes():
            report.up_to_date.append(step.target)
            continue
        there.parent.mkdir(parents=True, exist_ok=True)
        made.replace(there)
        report.written.append(step.target)
    shutil.rmtree(building)


def _filled_in_place(folder: Path, path: Path, target: str | None) -> bool:
    """Whether a file of a folder updated in place is filled where it is: a String Catalog (every
    language in one file), or an XLIFF, gettext or Qt file whose path (de.po, messages.de.xlf,
    app_de.ts) or, where the path names none, whose content states the target language; never a
    file of the source's text."""
    path = folder / path
    kind = file_format(str(path))
    if kind in ("xcstrings", "csv"):
        return True
    if kind not in ("xliff", "po", "qt"):
        return False
    named = path_language(path.relative_to(folder), kind) or PathLanguage(_stated_target(path, kind))
    return is_language(named, target)


def target_languages(tgt_lang: str | None, source: str, update: Path | None) -> list[str | None]:
    """`nmt translate --tgt-lang`'s languages (None: the model's own target): several, as de,fr,ja,
    only for a folder updated in place (`-i FOLDER --update FOLDER`), whose files each language has
    under its own name."""
    targets = [code.strip() for code in tgt_lang.split(",")] if tgt_lang else [None]
    in_place = source != "-" and Path(source).is_dir() and update is not None and update.resolve() == Path(source).resolve()
    if len(targets) > 1 and not in_place:
        raise NmtError(f"--tgt-lang {tgt_lang}: several target languages are for a program's folder updated in place "
                       "(-i FOLDER --update FOLDER); translate into one at a time otherwise")
    return targets


def _languages(translator) -> tuple[str | None, str | None]:
    """The run's (source, target) languages; the source None where each line's is identified (--src-lang auto)."""
    src, tgt = direction(translator, None)
    return (None if getattr(translator, "source_guess", None) is not None else src), tgt


def _steps(files: list[Path], folder: Path, languages: tuple[str | None, str | None], report: FolderReport,
           record: TranslationRecord | None = None, other_targets=()) -> list[_Step]:
    """What becomes of each file of `folder` (paths relative to it): translated or copied where it
    is, and a program's message file in the source language also translated under the target's name."""
    src, tgt = languages
    record = record if record is not None else TranslationRecord()
    steps, localized = [], {}
    documents = (language_trees(files, src), names_by_folder(files), documentation_site(files, folder))
    for path in files:
        if path == Path(RECORD_NAME):
            continue  # (the folder's record: each run writes its own, where it writes one)
        kind = file_format(str(path))
        if not _translated(folder / path, folder):
            steps.append(_Step(path, path, False))
            continue
        named = _named_language(folder, path, kind, documents) if tgt is not None else None
        if named is None:  # (a table of texts by language: what its cells were made from, where the record knows)
            steps.append(_Step(path, path, True, before=record.made(path, path) if kind == "csv" else None))
            continue
        steps.append(_Step(path, path, False))  # the source's file (or another language's) stays as it is
        if is_language(named, tgt) and isinstance(documents[2], Docusaurus) and documents[2].labels(path, tgt):
            steps[-1] = _Step(path, path, True, path, fill=True)  # (the site's labels: what is still English filled)
        if is_language(named, tgt) or any(is_language(named, code) for code in other_targets):
            continue
        if src is not None and named.code is not None and not is_language(named, src):
            report.other_languages.append(path)
            continue
        if kind in BILINGUAL + KEYED and not _read(folder / path, kind).texts:
            continue  # (nothing to translate: colours, strings marked untranslatable)
        localized.setdefault(_translation_path(path, kind, named, tgt, files, documents), []).append((path, named.code))
    site, site_pages = documents[2], False
    for target, sources in localized.items():
        path = _primary(sources, folder, target)
        report.other_languages += [other for other, _ in sources if other != path]
        report.notes += _unlisted(folder, target) if file_format(str(target)) == "po" else []
        site_pages = site_pages or (site is not None and site.translation(path, tgt) == target)
        earlier = folder / target
        before = record.made(target, path)
        if earlier.is_file() and file_format(str(path)) not in BILINGUAL + KEYED:
            if not _changed_since(folder, path, target, before, record, report):
                continue  # a document the target's folder has already, up to date: kept as it is (its copy above)
        steps = [step for step in steps if step.source != target]  # the earlier translation, kept by key (or text)
        steps.append(_Step(path, target, True, target if earlier.is_file() else None, before))
        report.localized.append((path, target))
    for app in laravel_apps(folder, files) if tgt is not None else []:
        if (step := _laravel_strings(folder, files, app, src, tgt)) is not None:
            steps = [kept for kept in steps if kept.source != step.target]  # (its earlier translation: kept by key)
            steps.append(step)
            report.localized.append((step.source, step.target))
    joomla = [(path, target) for path, target in report.localized if file_format(str(target)) == "ini"]
    report.notes += unlisted_languages(folder, files, joomla) if joomla else []
    if site_pages:
        report.notes += unlisted(site, folder, tgt)
        if isinstance(site, Docusaurus) and not any(site.labels(path, tgt) for path in files):
            report.notes.append(f"the site's navbar, footer and sidebar labels: `npm run write-translations -- --locale "
                                f"{site.named(tgt)}` in {site.root.as_posix() or '.'} writes them for nmt to translate")
    if isinstance(site, SuffixSite) and tgt is not None and _navigation_untranslated(folder / site.config, site.named(tgt),
                                                                                 report):
        steps = [step for step in steps if step.source != site.config]  # (its navigation's titles translated)
        steps.append(_Step(site.config, site.config, True, nav=site.named(tgt)))
    return steps


def _laravel_strings(folder: Path, files: list[Path], app: LaravelApp, src: str | None, tgt: str) -> _Step | None:
    """The step that writes a Laravel app's lang/de.json from the strings its code looks up by
    their text, where it has no JSON file of its own language (lang/en.json: translated as a
    message file is) and its code has such strings or lang/de.json does."""
    if any(path.parent == app.lang and path.suffix == ".json" and is_language(PathLanguage(path.stem), src or "en")
           for path in files):
        return None
    target = app.strings_file(tgt)
    strings = strings_in_code(folder, app, files)
    if not strings and not (folder / target).is_file():
        return None
    return _Step(app.root / "__() in the code", target, True, target if (folder / target).is_file() else None,
                 strings=strings_source(strings, folder / target))


def _navigation_untranslated(config: Path, language: str, report: FolderReport) -> bool:
    """Whether an MkDocs site's configuration lists `language` with titles of its navigation still
    to translate (one that does not read as YAML: a note, and the site's pages translated all the same)."""
    try:
        return bool(untranslated_titles(config.read_text(encoding="utf-8", errors="replace"), language, str(config)))
    except NmtError as e:
        report.notes.append(f"{e}: its navigation's titles are left as they are")
        return False


def _changed_since(folder: Path, path: Path, target: Path, before: Made | None, record: TranslationRecord,
                   report: FolderReport, translations: Path | None = None) -> bool:
    """Whether the document `target` (in `translations`, else in `folder`), a translation of `path`
    made from its texts as they were `before`, is to be updated: its source's texts changed
    since, and its own still line up with them. One the record does not know is taken as made
    from the source as it is now (and recorded so); one that no longer lines up is left as it is,
    with a note."""
    kind = file_format(str(path))
    try:
        now = file_texts(folder / path, kind)
    except NmtError as e:  # (a page it cannot read: kept as it is)
        report.notes.append(f"{target}: left as it is: {e}")
        report.left.append(target)
        return False
    if before is None or before.texts is None:
        record.set(target, Made(path.as_posix(), tuple(map(fingerprint, now))))
        report.unrecorded.append(target)
        report.up_to_date.append(target)
        return False
    if tuple(map(fingerprint, now)) == before.texts:
        report.up_to_date.append(target)
        return False
    try:
        earlier = file_texts((translations or folder) / target, kind)
    except NmtError as e:
        report.notes.append(f"{target}: left as it is, though {path} changed since it was translated: {e}")
        report.left.append(target)
        return False
    if kept_translations(before.texts, now, earlier) is None:
        report.notes.append(f"{target}: left as it is, though {path} changed since it was translated: it has "
                            f"{len(earlier)} texts, where the source it was translated from had {len(before.texts)}, "
                            "so they cannot be lined up; remove it to translate the page anew")
        report.left.append(target)
        return False
    return True


def _translation_path(path: Path, kind: str, named: PathLanguage, target: str, files: list[Path],
                      documents: tuple) -> Path:
    """Where the translation into `target` of a file whose path names the language `named` goes:
    a gettext template's catalog where the folder keeps the others, a documentation site's page
    where the site reads it, a document in its tree's folder for the target or named as its
    siblings, a message file under its platform's name."""
    if kind == "po":
        return catalog_path(path, target, files)
    if kind not in BILINGUAL + KEYED:
        trees, names, site = documents
        if site is not None and (translated := site.translation(path, target)) is not None:
            return Path(translated)
        if named.code is None:
            return suffixed(path, target, names)
        return existing_folder(translated_path(path, kind, named, target), path, target, trees)
    return translated_path(path, kind, named, target)


def _primary(sources: list[tuple[Path, str | None]], folder: Path, target: Path) -> Path:
    """Of the files that would be translated into one (en-US/, en-GB/ and en-CA/ into de/), the
    source's: the one that names the language alone or is the platform's default place, else the
    one of its own country (de-DE, fr-FR) or English's en-US; none of these: an error naming them."""
    if len(sources) == 1:
        return sources[0][0]
    for chosen in (lambda code: code is None or "-" not in code.replace("_", "-"),
                   lambda code: code.replace("_", "-").lower() in ("en-us", f"{code[:2].lower()}-{code[:2].lower()}")):
        found = [path for path, code in sources if chosen(code)]
        if len(found) == 1:
            return found[0]
    names = " and ".join(str(folder / path) for path, _ in sources)
    raise NmtError(f"{names}: {'both' if len(sources) == 2 else 'all'} would be translated into {folder / target}; "
                   "name the source language (--src-lang) or leave one of them out")


def _named_language(folder: Path, path: Path, kind: str, documents: tuple) -> PathLanguage | None:
    """The language a file is in, by its path (nmt.decode.locale_paths), where its translations go
    under their languages' names: a monolingual message file's, an XLIFF template's (no target
    language stated: Angular's messages.xlf or messages.en.xlf, whose translations are
    messages.de.xlf), a gettext template's (NAME.pot: de.po, de/LC_MESSAGES/NAME.po), or a
    document's in a tree of languages (docs/en/ beside docs/fr/: `documents`, language_trees and
    names_by_folder) or named for its language beside its siblings (about.de.md), or a Docusaurus
    site's page (docs/intro.md, its translations under i18n/: nmt.decode.site_layouts). None: a
    file translated in its place."""
    if kind in KEYED:
        return path_language(path, kind)
    if kind == "xliff" and _stated_target(folder / path, kind) is None:
        return path_language(path, kind) or PathLanguage(None)
    if kind == "po" and path.suffix.lower() == ".pot":
        return PathLanguage(None)
    if kind not in BILINGUAL:  # a document: by its site, the folder of its language in a tree of them, or its name
        folders, names, site = documents
        if site is not None and site.translation(path, "") is not None:
            return PathLanguage(None)  # (the site's default language)
        if site is not None and (code := site.translated_language(path)) is not None:
            return PathLanguage(code)
        return tree_language(path, folders) or suffix_language(path, names)
    return None


def _stated_target(path: Path, kind: str) -> str | None:
    """The target language a bilingual file (XLIFF, gettext, Qt) states inside, if any."""
    return getattr(_read(path, kind), "target_language", None)


def _read(path: Path, kind: str):
    """A file of the folder read as `kind`, once while it is unchanged (its language and whether it
    has messages are asked apart)."""
    stat = path.stat()
    return _read_unchanged(path, kind, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=16)
def _read_unchanged(path: Path, kind: str, mtime_ns: int, size: int):
    from nmt.data.corpus import read_bytes

    return read_document(kind, read_bytes(path), str(path))


def _unlisted(folder: Path, catalog: Path) -> list[str]:
    """A note where the build's list of languages beside a new catalog (autotools' and meson's
    po/LINGUAS) does not name its language, which the build then leaves out."""
    linguas = folder / catalog.parent / "LINGUAS"
    if not linguas.is_file():
        return []
    lines = linguas.read_text(encoding="utf-8", errors="replace").splitlines()
    if catalog.stem in {word for line in lines for word in line.split("#")[0].split()}:
        return []
    return [f"{catalog.parent / 'LINGUAS'} does not list {catalog.stem}: add it, or the build leaves {catalog} out"]


def _translated(path: Path, folder: Path) -> bool:
    """Whether a file of the folder is translated (or copied): a text file, or one `nmt translate`
    reads in a format of its own, but for a JSON, .properties, YAML or TOML file that is not a
    program's messages (package.json, application.properties, docker-compose.yml, hugo.toml), a
    .php file outside a folder of languages (lang/, language/: the app's code), an .ini file that is
    not one of Joomla's language files (language/en-GB/: php.ini, a tool's settings), a .ts file that is
    TypeScript, not Qt's XML, an HTML file that is a template (its syntax, `{{ .Title }}`, `{% if %}`,
    is code), a .txt file a program reads (robots.txt, requirements.txt) and a license (LICENSE.md,
    COPYING.txt). Never one in a hidden folder (.git) or another project's (node_modules,
    Pods), nor a program's messages in what a build made of them (build/, DerivedData/)."""
    kind = file_format(str(path))
    if _LEGAL.fullmatch(path.name.lower()):
        return False  # a license is binding as written: a translation of it is not
    if path.name == RECORD_NAME:
        return False  # (what translations were made from, a folder's or a file's: nmt.decode.translation_record)
    folders = {name.lower() for name in path.relative_to(folder).parts[:-1]}
    if any(name.startswith(".") for name in folders) or folders & _DEPENDENCIES or \
            kind in KEYED + BILINGUAL and folders & _BUILT:
        return False
    if kind == "qt":  # (.ts is TypeScript's too)
        return _head(path, 64).lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<")
    if kind == "properties" and _INI_SECTION.search(path.read_bytes()):
        return False  # sections ([de]): an INI file (pdf.js' locale.properties, an index of languages), not Java's
    if kind == "php":  # code, but for a language folder's files (lang/en/auth.php) and CodeIgniter's *_lang.php
        return bool(folders & (LOCALE_FOLDERS | {"language"})) or path.stem.lower().endswith("_lang")
    if kind == "ini":  # Joomla's language files (language/en-GB/); any other INI file holds settings
        return "language" in folders and names_language(path.relative_to(folder))
    if kind in ("json", "properties", "yaml", "toml"):
        return holds_messages(path.relative_to(folder))
    if kind == "csv":  # a table of a program's texts by language (Godot's) is filled; a table of data, copied
        return names_languages(_head(path), path.name)
    if kind == "html" and _TEMPLATE.search(_head(path)):
        return False  # a template (Hugo's layouts, Jekyll's, Django's, Angular's): its syntax is code
    if path.suffix.lower() == ".txt":
        return not _MACHINE_TEXT.fullmatch(path.name.lower())
    return kind is not None


def _head(path: Path, size: int = 1 << 16) -> bytes:
    """A file's first bytes (where a template shows what it is)."""
    with open(path, "rb") as f:
        return f.read(size)


def holds_messages(path: Path) -> bool:
    """Whether a JSON, .properties, YAML or TOML file's path says it holds a program's messages: an .arb file,
    a file in a folder named for them (locales/, i18n/, _locales/), one named so
    (messages.properties, strings.json) or named for a language (en.json, en-US.json,
    messages_en.json, locales/en/common.json). Other such files (package.json,
    application.properties: settings, data) are copied."""
    if (path.suffix.lower() == ".arb" or any(folder.lower() in LOCALE_FOLDERS for folder in path.parts[:-1])
            or _MESSAGE_NAME.search(path.stem)):
        return True
    return names_language(path)
