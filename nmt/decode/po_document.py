"""gettext catalogs in and out (`--input-format po`, the default for .po and .pot files; polib,
`pip install 'nmt[localization]'`): a program's messages machine-translated for a translator to
review.

Each message without a translation is translated; one already translated (or fuzzy) is kept as it
is, and so are obsolete ones (#~). A message of several lines is translated line by line, its
line breaks and each line's edge spaces kept, and ICU MessageFormat's plural and select branch by
branch, its syntax kept (nmt.decode.text.messages). A plural message's singular fills msgstr[0] and its
plural the other forms, as many as the header's Plural-Forms has (a template's header is given the
target language's from gettext's rules, where nmt.decode.plural_categories knows them). Each message translated is marked `fuzzy`, as gettext marks a guess:
msgfmt leaves it out of the compiled catalog until a translator has checked it and removed the
flag. Placeholders (%s, %(name)d, {0}) and HTML tags in a message are kept (nmt.decode.text.markup), and so
is BBCode, Godot's rich text (nmt.decode.text.bbcode).
The header's Language is set to the target where it is empty; the catalog keeps its charset.
Only the messages translated and the header's fields set are written anew; the rest of the
catalog keeps its lines as they were (msgmerge's wrapping, which polib's differs from), so that a
diff shows the translations alone. A catalog merged with its template (`--update`,
PoDocument.keep_from) is written whole, as msgmerge writes one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nmt.decode.text.bbcode import message_markup, message_text
from nmt.decode.text.messages import joined, message_parts
from nmt.data.languages import language_tag
from nmt.decode.plural_categories import gettext_plural_forms, plural_form_count
from nmt.errors import NmtError

_CHARSET = re.compile(rb"charset=([A-Za-z0-9_.:-]+)")
_STRING_LINE = re.compile(r'(?:(?:msgctxt|msgid|msgid_plural|msgstr(?:\[\d+\])?)\s+)?"(?:[^"\\]|\\.)*"')


@dataclass
class _Message:
    """A message's singular or plural to translate, cut into parts (nmt.decode.text.messages)."""
    entry: object  # polib's POEntry
    field: str  # "msgid" or "msgid_plural"
    markup: str  # as_markup of its text, or its BBCode as codes (Godot's rich text: nmt.decode.text.bbcode)
    codes: list | None = None  # its BBCode's tags, where it has any

    @classmethod
    def of(cls, entry, field: str) -> "_Message":
        return cls(entry, field, *message_markup(getattr(entry, field)))

    def __post_init__(self):
        self.parts = message_parts(self.markup)

    def translated(self, translations) -> str:
        """Its translation, from an iterator of its parts' translations."""
        return message_text(joined(self.parts, translations), self.markup, self.codes)


class PoDocument:
    """A .po or .pot file read for translation: its `texts` (the untranslated messages' lines) in,
    the catalog with their translations out (`write`)."""

    def __init__(self, catalog, messages: list[_Message]):
        self.catalog, self.messages = catalog, messages
        self.warnings: list[str] = []
        self.stale: list[int] = []  # (a message whose msgid changed is simply a new one)
        self.text: str | None = None  # the catalog as written, where it is edited in place (not after a merge)
        self.header_set: dict[str, str] = {}  # header fields the translation sets (Language, Plural-Forms)

    @property
    def message_count(self) -> int:
        """The catalog's messages (not the header, nor obsolete ones)."""
        return sum(1 for entry in self.catalog if entry.msgid and not entry.obsolete)

    def keep_from(self, earlier: "PoDocument") -> int:
        """msgmerge's update, with this catalog the template: `earlier` (its translation before)
        keeps its header and the translations of the messages still here (by msgid and context),
        the messages gone are made obsolete (#~), the new ones are added to be translated. How many
        messages kept their translation."""
        earlier.catalog.merge(self.catalog)
        self.catalog, self.messages = earlier.catalog, _untranslated(earlier.catalog)
        self.text = None  # (merged: written anew, as msgmerge writes)
        return self.message_count - len({id(message.entry) for message in self.messages})

    def with_kept(self, translations: list[str]) -> list[str]:
        return translations  # (the kept messages are in the merged catalog already)

    def holds_translations(self) -> bool:
        """Whether a message has its translation."""
        return any(entry.msgstr or any(entry.msgstr_plural.values()) for entry in self.catalog if entry.msgid)

    def contents(self) -> dict:
        """Each message's translation by its context and msgid: what two versions of a catalog must
        share to say the same."""
        return {(entry.msgctxt, entry.msgid, entry.obsolete): (entry.msgstr, tuple(sorted(entry.msgstr_plural.items())),
                                                              "fuzzy" in entry.flags)
                for entry in self.catalog if entry.msgid}

    @classmethod
    def read(cls, data: bytes, name: str) -> "PoDocument":
        try:
            import polib
        except ImportError:
            raise NmtError("gettext catalogs (.po) need polib: pip install 'nmt[localization]'") from None
        charset = _CHARSET.search(data[:4096])
        encoding = charset.group(1).decode() if charset and charset.group(1) != b"CHARSET" else "utf-8"
        try:
            text = data.decode(encoding).removeprefix("\ufeff")
        except LookupError:
            raise NmtError(f"{name}: its charset {encoding} is not one Python knows") from None
        except UnicodeDecodeError as e:
            line = data[:e.start].count(b"\n") + 1
            raise NmtError(f"{name}:{line}: invalid {encoding} (the catalog's charset) at byte {e.start}") from None
        for number, line in enumerate(text.splitlines(), start=1):  # (polib takes an unclosed string for "")
            line = line.strip()
            if line and not line.startswith("#") and not _STRING_LINE.fullmatch(line):
                raise NmtError(f"{name}:{number}: not a gettext catalog (a syntax error)")
        try:
            # (a newline at the end: polib takes a text that names an existing file for that file's name)
            catalog = polib.pofile(text if text.endswith("\n") else text + "\n", encoding=encoding)
        except (OSError, ValueError) as e:
            where = re.search(r"\(line (\d+)\)", str(e))
            raise NmtError(f"{name}:{where.group(1)}: not a gettext catalog (a syntax error)" if where else
                           f"{name}: not a gettext catalog ({e})") from None
        document = cls(catalog, _untranslated(catalog))
        document.text = text  # as written: a catalog filled in place is edited, not written anew
        return document

    @property
    def target_language(self) -> str | None:
        """The language the catalog is for (its header's Language), or None (a template)."""
        return self.catalog.metadata.get("Language") or None

    @property
    def texts(self) -> list[str]:
        """Each message's parts to translate: its lines, its ICU branches."""
        return [part.model_text for message in self.messages for part in message.parts if part.translated]

    @property
    def numbers(self) -> list[int]:
        """Each text's line in the file: its message's (for warnings)."""
        return [message.entry.linenum for message in self.messages for part in message.parts if part.translated]

    def write(self, translations: list[str], target: str) -> bytes:
        nplurals = self._plural_forms(target)
        translated = iter(translations)
        done = {(id(message.entry), message.field): message.translated(translated) for message in self.messages}
        for entry in dict.fromkeys(message.entry for message in self.messages):
            singular, plural = (done.get((id(entry), field), getattr(entry, field)) for field in ("msgid", "msgid_plural"))
            if entry.msgid_plural:  # (a language of one form uses it for every number: the plural's words)
                forms = range(nplurals) if nplurals else sorted(entry.msgstr_plural) or [0, 1]
                entry.msgstr_plural = {form: singular if form == 0 and nplurals != 1 else plural for form in forms}
            else:
                entry.msgstr = singular
            if "fuzzy" not in entry.flags:
                entry.flags.insert(0, "fuzzy")  # first, as msgmerge writes it
        if not self.catalog.metadata.get("Language"):
            self.catalog.metadata["Language"] = self.header_set["Language"] = language_tag(target).replace("-", "_")
        text = str(self.catalog) if self.text is None else self._edited(dict.fromkeys(m.entry for m in self.messages))
        return text.encode(self.catalog.encoding or "utf-8")

    def _edited(self, translated) -> str:
        """The catalog as written, but for the entries translated (each written anew in its place)
        and the header fields set: the rest keeps its wrapping and comments, so that a diff shows
        only the translations."""
        lines = self.text.splitlines(keepends=True)
        starts = sorted(entry.linenum - 1 for entry in self.catalog)
        replaced = {}
        for entry in translated:
            start = entry.linenum - 1
            end = next((s for s in starts if s > start), len(lines))
            while end > start and not lines[end - 1].strip():
                end -= 1  # (the blank lines between entries stay)
            replaced[start] = (end, str(entry))
        header_end = starts[0] if starts else len(lines)
        out, index = [], 0
        while index < len(lines):
            if index in replaced:
                end, text = replaced[index]
                out.append(text)
                index = end
                continue
            out.append(lines[index])
            index += 1
            if index == header_end or index == len(lines) and not starts:
                out = _header_set(out, self.header_set)
        return "".join(out)

    def _plural_forms(self, target: str) -> int | None:
        """How many plural forms the catalog's language has: its header's Plural-Forms, else (a
        template's placeholder, or none) the target's from gettext's rules, written into the header;
        None where neither says (warned about where a message has a plural)."""
        stated = plural_form_count(self.catalog.metadata.get("Plural-Forms", ""))
        if stated is not None:
            return stated
        language = self.catalog.metadata.get("Language") or target
        rule = gettext_plural_forms(language)
        if rule is None:
            if any(message.entry.msgid_plural for message in self.messages):
                self.warnings.append(f"no Plural-Forms for {language} in its header: plural messages are given two "
                                     "forms; set Plural-Forms before compiling it")
            return None
        self.catalog.metadata["Plural-Forms"] = self.header_set["Plural-Forms"] = rule
        return plural_form_count(rule)


def _untranslated(catalog) -> list[_Message]:
    """The messages of a catalog left to translate: each singular and plural of an entry without a
    translation (not obsolete, not the header)."""
    return [_Message.of(entry, field) for entry in catalog
            if not (entry.obsolete or entry.msgstr or any(entry.msgstr_plural.values()) or not entry.msgid)
            for field in (("msgid", "msgid_plural") if entry.msgid_plural else ("msgid",))]


def _header_set(lines: list[str], fields: dict[str, str]) -> list[str]:
    """The header's lines (the catalog's first lines, up to its first message) with `fields` set:
    a field written empty or as a template's placeholder replaced in its line, a missing one added
    after the header's last string."""
    for name, value in fields.items():
        written = f'"{name}: {value}\\n"\n'
        found = next((i for i, line in enumerate(lines) if line.lstrip().startswith(f'"{name}:')), None)
        if found is not None:
            lines[found] = written
            continue
        last = max((i for i, line in enumerate(lines) if line.lstrip().startswith(('"', "msgstr"))), default=None)
        if last is not None:
            lines.insert(last + 1, written if lines[last].endswith("\n") else "\n" + written)
    return lines
