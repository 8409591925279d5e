"""Where a program keeps each language's messages, for a folder translated (nmt.decode.folders): the
language a message file's path names, and the path its translation takes. Each platform writes it
its own way:

- Android: `res/values-de/strings.xml`, `values-pt-rBR`, `values-iw` (Hebrew), `values-zh-rTW`,
  `values-b+sr+Latn`; `values/` (also `values-night/`, `values-v21/`) holds the default
  language's, whose translation goes to `values-de/` (`values-de-night/`: the language comes first
  among the qualifiers).
- Apple: `de.lproj/Localizable.strings`; `Base.lproj` holds the development language's.
- .NET: `Resources.de.resx` beside `Resources.resx`, the default culture's; `Strings/de/Resources.resw`.
- Java: `messages_de.properties` beside `messages.properties`, the default bundle.
- Web and Rails: a folder or a name of the language (`locales/de/common.json`, `de.json`,
  `pt-BR.json`, `app_de.arb`, `devise.de.yml`).
- CodeIgniter 3: `application/language/english/form_validation_lang.php` beside `german/`: a
  language's English name (language_named_folder).
- Joomla: `language/en-GB/com_example.ini` (and before Joomla 4 `en-GB.com_example.ini` in it)
  beside `language/de-DE/`; a language's folder names its country too (joomla_tag).
- Templates: Angular's XLIFF `messages.xlf` (or `messages.en.xlf`) beside `messages.de.xlf`;
  gettext's `NAME.pot` beside `de.po`, or with `de/LC_MESSAGES/NAME.po` (catalog_path).
- Documents: a folder of a tree of languages (`docs/en/` beside `docs/de/`, fastlane's
  `metadata/android/en-US/` beside `de-DE/`: language_trees), or a name among siblings named for
  theirs (`about.md` beside `about.de.md`: names_by_folder).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from nmt.data.languages import LANGUAGE_NAMES, language_match, language_tag
from nmt.decode.plural_categories import plural_categories

# a part of a path that is a language (en, en-US, zh_Hans, pt-br) or ends in one after a separator
# (messages_en, devise.en, Resources.en-US, app_pt_BR)
_WHOLE = re.compile(r"(?P<language>[a-z]{2,3})(?:(?P<separator>[-_])(?P<variant>[A-Z][a-z]{3}|[A-Z]{2}|[0-9]{3}|[a-z]{2}|hans|hant|latn|cyrl|arab))?")
_ENDING = re.compile(r"(?P<head>.*?[_.-])(?P<language>[a-z]{2,3})(?:(?P<separator>[-_])(?P<variant>[A-Z][a-z]{3}|[A-Z]{2}))?")
_ANDROID = re.compile(r"values(?P<qualifiers>(?:-[^-]+)*)")
_ANDROID_LANGUAGE = re.compile(r"-(?:b\+(?P<tag>[a-zA-Z0-9+]+)|(?P<language>[a-z]{2,3})(?:-r(?P<region>[A-Z]{2}))?)(?=-|$)")
# Android's codes for three languages (Java's before version 17): Hebrew, Indonesian, Yiddish
_REGIONAL = re.compile(r"[a-z]{2,3}[-_](?:[A-Z]{2}|[A-Z][a-z]{3}|[0-9]{3})")  # ast-ES, sr_Latn: not app_en
_LEGACY = {"iw": "he", "in": "id", "ji": "yi"}
# Chinese written by its region where a path names no script (values-zh-rCN, zh_TW.po)
_CHINESE_SCRIPTS = {"cn": "Hans", "sg": "Hans", "tw": "Hant", "hk": "Hant", "mo": "Hant"}
# Joomla's language packs name a language with a country: where it is not the language's own code
# in capitals (de-DE, fr-FR, it-IT), this one (ar-AA, Joomla's name for its Arabic; eo-XX, Esperanto)
_JOOMLA_COUNTRIES = {"af": "ZA", "ar": "AA", "be": "BY", "bn": "BD", "bs": "BA", "ca": "ES", "cs": "CZ", "cy": "GB",
                     "da": "DK", "el": "GR", "en": "GB", "eo": "XX", "et": "EE", "eu": "ES", "fa": "IR", "ga": "IE",
                     "gl": "ES", "he": "IL", "hi": "IN", "hy": "AM", "ja": "JP", "ka": "GE", "kk": "KZ", "km": "KH",
                     "ko": "KR", "lo": "LA", "ml": "IN", "ms": "MY", "nb": "NO", "nn": "NO", "pt": "PT", "si": "LK",
                     "sl": "SI", "sq": "AL", "sr": "RS", "sv": "SE", "sw": "KE", "ta": "IN", "te": "IN", "uk": "UA",
                     "ur": "PK", "vi": "VN", "zh": "CN"}
# CodeIgniter 3 names a language's folder of PHP messages by the language's English name
# (language/english/); its translations' names for a language and a script or country
_COMPOUND_NAMES = {"pt-BR": "portuguese-brazilian", "zh-Hans": "simplified-chinese", "zh-Hant": "traditional-chinese"}
_BY_NAME = {english.lower(): code for code, english in LANGUAGE_NAMES.items()} | \
    {folder: tag for tag, folder in _COMPOUND_NAMES.items()}  # a folder's name: the language's tag
# folders that hold a program's messages (a folder in one named for a language: locales/de/)
LOCALE_FOLDERS = {"locales", "locale", "_locales", "i18n", "l10n", "lang", "langs", "languages", "translations",
                  "messages", "intl"}


@dataclass(frozen=True)
class PathLanguage:
    """The language a message file's path names: `code` as written there (`en`, `en-US`, `pt_BR`),
    or None for the platform's place of the default language's messages (`values/`, `Base.lproj`,
    `Resources.resx`, `messages.properties`)."""
    code: str | None


def path_language(path: Path, kind: str) -> PathLanguage | None:
    """The language `path` (relative to the folder translated) names for a message file of `kind`
    (nmt.decode.stream.file_format), or None where it names none and the platform has no default place."""
    for part, is_folder, parent in reversed(_parts(path)):
        code = _part_language(part, is_folder, kind, parent)
        if code is not None:
            return PathLanguage(code)
    default = {"android": _ANDROID.fullmatch(path.parent.name) is not None,
               "strings": path.parent.name == "Base.lproj", "stringsdict": path.parent.name == "Base.lproj",
               "resx": path.suffix.lower() == ".resx", "properties": True}
    return PathLanguage(None) if default.get(kind) else None


def names_language(path: Path) -> bool:
    """Whether a folder or the name of a file of messages names a language (en.json,
    locales/en-US/common.json, messages_de.properties)."""
    return any(_named(part, _in_locale_folder(is_folder, parent, part)) for part, is_folder, parent in _parts(path))


def is_language(named: PathLanguage, code: str | None) -> bool:
    """Whether the language a path names is `code` (a model's: `en`, `eng_Latn`); never for the
    default place. Android's iw, in and ji are he, id and yi; Chinese of China or Taiwan is written
    in Simplified or Traditional characters."""
    if named.code is None or code is None:
        return False
    return language_match(code, named.code) > 0 or language_match(code, _standard(named.code)) > 0


def _standard(code: str) -> str:
    """A code as BCP 47 writes it now: he for iw, zh-Hant for zh-TW."""
    if (named := _BY_NAME.get(code.lower())) is not None:  # (CodeIgniter 3's folders: english, german)
        return named
    language, _, rest = code.replace("_", "-").partition("-")
    language = _LEGACY.get(language.lower(), language)
    if language.lower() == "zh" and rest.lower() in _CHINESE_SCRIPTS:
        rest = _CHINESE_SCRIPTS[rest.lower()]
    return f"{language}-{rest}" if rest else language


def translated_path(path: Path, kind: str, named: PathLanguage, target: str) -> Path:
    """The path of the translation into `target` (a model's language code) of the message file at
    `path`, whose path names the language `named`: each part that names it renamed, or the
    platform's name for the target's messages made beside the default's."""
    tag = language_tag(target)
    parts = list(path.parts)
    if named.code is None:
        if kind == "android":
            parts[-2] = f"values{_android_qualifier(tag)}{parts[-2].removeprefix('values')}"
        elif kind in ("strings", "stringsdict"):
            parts[-2] = f"{tag}.lproj"
        elif kind in ("resx", "xliff"):  # (Angular's messages.xlf: messages.de.xlf)
            parts[-1] = f"{path.stem}.{tag}{path.suffix}"
        else:  # properties
            parts[-1] = f"{path.stem}_{tag.replace('-', '_')}{path.suffix}"
        return Path(*parts)
    if kind == "ini":
        tag = joomla_tag(tag)
    for index, (part, is_folder, parent) in enumerate(_parts(path)):
        if _part_language(part, is_folder, kind, parent) == named.code:
            parts[index] = _written(part, is_folder, kind, tag, parent) + ("" if is_folder else path.suffix)
        elif kind == "ini" and not is_folder and part.startswith(f"{named.code}."):  # Joomla 3's en-GB.com_example.ini
            parts[index] = tag + part[len(named.code):] + path.suffix
    return Path(*parts)


def joomla_tag(tag: str) -> str:
    """A language's tag as Joomla's language packs name it, with a country: de-DE for de, pt-BR
    for pt-BR, zh-TW for zh-Hant."""
    language, _, variant = tag.partition("-")
    if language == "zh" and variant in ("Hans", "Hant"):
        return "zh-CN" if variant == "Hans" else "zh-TW"
    if len(variant) == 2 and variant.isupper():
        return tag
    return f"{language}-{_JOOMLA_COUNTRIES.get(language, language.upper())}"


def folder_language(name: str, parent: str) -> str | None:
    """The language a folder's name is (`de`, `en-US`, `pt_BR`; any code in a folder of languages:
    `locale/ach`), or None."""
    named = _named(name, _in_locale_folder(True, parent))
    return name if named is not None and named.start("language") == 0 else None


def catalog_path(template: Path, target: str, files: list[Path]) -> Path:
    """Where gettext's catalog for `target` of a template (NAME.pot) goes, as the folder (`files`,
    its paths) keeps its other languages': LANG/LC_MESSAGES/NAME.po under the folder that holds
    theirs (Babel, Django, Sphinx), NAME-LANG.po beside the template (WordPress), else LANG.po
    beside it (autotools, meson). LANG as gettext writes it: de, pt_BR."""
    tag, name = language_tag(target).replace("-", "_"), template.stem
    for path in files:
        if path.name == f"{name}.po" and path.parent.name == "LC_MESSAGES" and _named(path.parent.parent.name):
            return path.parent.parent.parent / tag / "LC_MESSAGES" / f"{name}.po"
    if any(path.suffix == ".po" and path.parent == template.parent and path.stem.startswith(f"{name}-")
           and _named(path.stem[len(name) + 1:]) for path in files):
        return template.parent / f"{name}-{tag}.po"
    return template.parent / f"{tag}.po"


def _parts(path: Path) -> list[tuple[str, bool, str]]:
    """The folders of `path` and its file's name without its extension, each with whether it is a
    folder and the name of the folder it lies in ("" at the top)."""
    names = [*path.parts[:-1], path.stem]
    return [(name, index < len(names) - 1, names[index - 1] if index else "") for index, name in enumerate(names)]


def _in_locale_folder(is_folder: bool, parent: str, part: str = "") -> bool:
    """Whether a part of a path is a folder in a folder of languages (locale/ach/, locales/ast/), or
    a file there named with two letters or with a region (i18n/oc.toml, locales/ast-ES.json), whose
    name is a language's code even where the tables here do not know the language (a file's three
    letters alone may be a word: i18n/app.json)."""
    return parent.lower() in LOCALE_FOLDERS and (is_folder or len(part) == 2 or bool(_REGIONAL.fullmatch(part)))


def _part_language(part: str, is_folder: bool, kind: str, parent: str = "") -> str | None:
    """The language one part of a path names (as written there), by the convention of its kind, or None."""
    if kind == "android" and is_folder and (android := _ANDROID.fullmatch(part)):
        qualifier = _ANDROID_LANGUAGE.match(android["qualifiers"])
        if qualifier is None:
            return None
        if qualifier["tag"]:
            return qualifier["tag"].replace("+", "-")
        if qualifier["language"] == "car":  # (the one other qualifier of two or three letters: a car's UI mode)
            return None
        return qualifier["language"] + (f"-{qualifier['region']}" if qualifier["region"] else "")
    if is_folder and part.endswith(".lproj"):
        return None if part == "Base.lproj" else part.removesuffix(".lproj")
    if _named_in_english(part, is_folder, kind, parent):
        return part
    named = _named(part, _in_locale_folder(is_folder, parent, part))
    return part[named.start("language"):] if named else None


def _named_in_english(part: str, is_folder: bool, kind: str, parent: str) -> bool:
    """Whether a part of a path is CodeIgniter 3's folder of a language's PHP messages, named by
    the language's English name (language/english/, language/portuguese-brazilian/)."""
    return kind == "php" and is_folder and parent.lower() == "language" and part.lower() in _BY_NAME


def language_named_folder(tag: str) -> str:
    """The folder CodeIgniter 3's translations name for a language (BCP 47's tag): `german` for de,
    `portuguese-brazilian` for pt-BR; a language without an English name here keeps its tag."""
    if tag in _COMPOUND_NAMES:
        return _COMPOUND_NAMES[tag]
    language = tag.partition("-")[0]
    return LANGUAGE_NAMES[language].lower() if language in LANGUAGE_NAMES else tag


def _named(part: str, any_code: bool = False) -> re.Match | None:
    """A part of a path matched as a language or a name ending in one, where CLDR knows the language
    (any code, where `any_code`, for a whole part)."""
    if any_code and (whole := _WHOLE.fullmatch(part)):
        return whole
    for pattern in (_WHOLE, _ENDING):
        named = pattern.fullmatch(part)
        if named and plural_categories(named["language"]) is not None:
            return named
    return None


def _written(part: str, is_folder: bool, kind: str, tag: str, parent: str = "") -> str:
    """A part of a path that names a language, naming `tag` (BCP 47: de, pt-BR, zh-Hant) instead,
    in the part's own way of writing it."""
    if kind == "android" and is_folder and (android := _ANDROID.fullmatch(part)):
        return f"values{_android_qualifier(tag)}{_ANDROID_LANGUAGE.sub('', android['qualifiers'], count=1)}"
    if is_folder and part.endswith(".lproj"):
        return f"{tag}.lproj"
    if _named_in_english(part, is_folder, kind, parent):
        return language_named_folder(tag)
    named = _named(part, _in_locale_folder(is_folder, parent, part))
    head = named.groupdict().get("head") or ""
    separator = named["separator"] or ("_" if head.endswith("_") or kind == "properties" else "-")
    language, _, variant = tag.partition("-")
    if variant and named["variant"] and named["variant"].islower():
        variant = variant.lower()
    return head + language + (separator + variant if variant else "")


def _android_qualifier(tag: str) -> str:
    """Android's resource qualifier for a language: -de, -pt-rBR, -iw (Hebrew, as Android names it),
    -zh-rCN and -zh-rTW (Chinese in either script, read by every Android version), -b+sr+Latn (a
    script needs BCP 47's form)."""
    language, _, variant = tag.partition("-")
    language = {standard: legacy for legacy, standard in _LEGACY.items()}.get(language, language)
    if language == "zh" and variant in ("Hans", "Hant"):
        return "-zh-rCN" if variant == "Hans" else "-zh-rTW"
    if not variant:
        return f"-{language}"
    if len(variant) == 2 and variant.isupper():
        return f"-{language}-r{variant}"
    return f"-b+{tag.replace('-', '+')}"


# Documents: the language of a page in a tree of languages (docs/en/, docs/de/), or of one named for
# its language beside its siblings (about.md, about.de.md)

def language_trees(files: list[Path], source: str | None = None) -> dict[tuple[str, ...], set[str]]:
    """The folders (as paths' parts) that hold a folder for each of two languages or more, or one
    for the `source` language alone (a site not translated yet: Hugo's content/en/), with those
    folders' names: a documentation site's en/ and de/, fastlane's metadata/android/en-US/ and
    de-DE/."""
    languages: dict[tuple[str, ...], set[str]] = {}
    for path in files:
        for index, name in enumerate(path.parts[:-1]):
            if folder_language(name, path.parts[index - 1] if index else "") is not None:
                languages.setdefault(path.parts[:index], set()).add(name)
    return {parent: names for parent, names in languages.items()
            if len(names) >= 2 or any(is_language(PathLanguage(name), source) for name in names)}


def tree_language(path: Path, trees: dict[tuple[str, ...], set[str]]) -> PathLanguage | None:
    """The language of the folder a document lies in within a tree of languages, or None."""
    for index, name in enumerate(path.parts[:-1]):
        if path.parts[:index] in trees and (code := folder_language(name, path.parts[index - 1] if index else "")):
            return PathLanguage(code)
    return None


def existing_folder(target: Path, source: Path, language: str, trees: dict[tuple[str, ...], set[str]]) -> Path:
    """`target` (a document's translation in a tree of languages) in the folder the tree already has
    for the language, where it has one under another name (de-DE/ where nmt would write de/)."""
    for index in range(len(source.parts) - 1):
        parent = source.parts[:index]
        if parent in trees and target.parts[:index] == parent:
            for sibling in sorted(trees[parent]):
                if is_language(PathLanguage(sibling), language):
                    return Path(*parent, sibling, *target.parts[index + 1:])
    return target


def names_by_folder(files: list[Path]) -> dict[tuple[Path, str], dict[str, str | None]]:
    """The stems of the files of each folder, by their extension, each with the mark before the
    language its siblings are named for (about: "." where about.de.md is one), else None."""
    names: dict[tuple[Path, str], dict[str, str | None]] = {}
    for path in files:
        names.setdefault((path.parent, path.suffix), {}).setdefault(path.stem, None)
    for stems in names.values():
        variants: dict[tuple[str, str], int] = {}
        for stem in list(stems):
            for mark in "._-":
                base, _, code = stem.rpartition(mark)
                if base and folder_language(code, "") is not None:
                    variants[base, mark] = variants.get((base, mark), 0) + 1
        for (base, mark), count in variants.items():
            if base in stems or count >= 2:  # (a file alone that ends in a code may not name its language)
                stems[base] = stems.get(base) or mark
    return names


def _suffix_separator(path: Path, names: dict) -> str | None:
    """Where a document has siblings named for their languages (Hugo's about.md beside about.de.md,
    a store text's description.txt beside description_fr.txt), the mark before their language
    ("." or "_"); None where it has none."""
    return names.get((path.parent, path.suffix), {}).get(path.stem)


def suffix_language(path: Path, names: dict) -> PathLanguage | None:
    """A document's language by its name among siblings named for theirs: about.de.md is German,
    about.md the default (None: its siblings' mark known, it names no language)."""
    if _suffix_separator(path, names) is not None:
        return PathLanguage(None)
    for mark in "._-":
        base, _, code = path.stem.rpartition(mark)
        if base and folder_language(code, "") is not None and names[(path.parent, path.suffix)].get(base) == mark:
            return PathLanguage(code)
    return None


def suffixed(path: Path, language: str, names: dict) -> Path:
    """A default document's translation, named as its siblings are: about.de.md, description_de.txt."""
    mark = _suffix_separator(path, names)
    tag = language_tag(language)
    return path.with_name(f"{path.stem}{mark}{tag.replace('-', '_') if mark == '_' else tag}{path.suffix}")
