"""Android's string resources in and out (`--input-format android`, the default for an .xml file
in a `values` folder: res/values/strings.xml; lxml, `pip install 'nmt[localization]'`): an app's
texts translated into the file that goes to res/values-de/.

Each `<string>`, each `<item>` of a `<string-array>` and each quantity of a `<plurals>` is
translated, its line breaks (`\\n`) apart; a resource marked translatable="false" is left out of
the translation, as Android's lint asks, and one that refers to another (`@string/app_name`) is
kept as it is. A `<plurals>` gets the target language's quantities (nmt.decode.plural_categories):
Russian's few and many are added with the translation of `other`, for a reviewer to adapt, and a
quantity the language lacks is left out.

Android's own escapes are read and written again (`\\'`, `\\"`, `\\n`, `\\@`, `\\uXXXX`), its runs of
spaces read as one (but inside a string in double quotes, which stays so). Format arguments
(`%1$s`, `%d`) are placeholders, kept; an `<xliff:g>` (a part not to translate) is kept whole
between the words; the HTML tags Android styles text with (`<b>`, `<i>`, `<u>`, `<font>`,
`<annotation>`, …) go around the words aligned to the ones they wrapped (nmt.decode.inline_codes),
and HTML in a CDATA section or escaped (`&lt;b>`) is translated as markup and written back as it
was. Other resources (colours, dimensions) and comments are kept.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass

from nmt.data.tmx import local_name
from nmt.decode.inline_codes import fill_inline, inline_markup, spaced_as_in
from nmt.decode.plural_categories import plural_forms
from nmt.decode.message_file import MessageFile, backslash_unescaped
from nmt.decode.text.messages import Message, as_markup, from_markup, joined
from nmt.decode.xml_file import XmlFile, remove_element

_STYLES = {"b", "i", "u", "s", "strike", "del", "em", "strong", "big", "small", "sup", "sub", "tt", "font", "a",
           "annotation", "span", "li", "ul"}  # tags Android styles text with: around words
_ESCAPED = {"n": "\n", "t": "\t"}
_RESOURCES = ("string", "string-array", "plurals")


def _read(text: str, quoted: bool) -> str:
    """A text of a string resource as Android reads it: its escapes undone, its runs of spaces one
    space (but in double quotes)."""
    if not quoted:
        text = re.sub(r"\s+", " ", text)
    return backslash_unescaped(text, _ESCAPED)


def _written(text: str, quoted: bool = False) -> str:
    """A text written for Android to read it back so (outside double quotes, a space after a space
    escaped: Android reads a run of them as one)."""
    text = (text.replace("\\", "\\\\").replace("'", "\\'").replace('"', '\\"')
            .replace("\n", "\\n").replace("\t", "\\t"))
    return text if quoted else re.sub(r"(?<= ) ", r"\\u0020", text)


def _paired(element) -> bool:
    return isinstance(element.tag, str) and local_name(element.tag) in _STYLES


@dataclass
class _Text(Message):
    """One string's (or item's) text to translate, and the element it is written back into."""
    element: object
    markup: str
    codes: list | None  # its inline elements; None: a text without any (HTML written as text, or none)
    quoted: bool  # in double quotes, its spaces kept
    cdata: bool  # written in a CDATA section
    original: tuple  # the element's text and its last child's tail, as the file wrote them
    key: tuple  # ("string", name), ("string-array", name, place) or ("plurals", name, quantity)

    @property
    def line(self) -> int:
        return self.element.sourceline or 0

    def restore(self) -> None:
        """The element as the file wrote it (its escapes, quotes and line breaks): reading took its
        double quotes off, and nothing else."""
        from lxml import etree

        if self.quoted:
            self.element.text = etree.CDATA(self.original[0]) if self.cdata else self.original[0]
            if len(self.element):
                self.element[-1].tail = self.original[1]

    def put(self, translations) -> None:
        from lxml import etree

        text = joined(self.parts, translations)
        if text == self.markup:  # (unchanged: as written)
            self.restore()
            return
        element = self.element
        for child in list(element):
            element.remove(child)
        element.text = None
        if self.codes is None:
            written = _written(from_markup(text, self.markup), self.quoted)
            element.text = etree.CDATA(_quoted(written, self.quoted)) if self.cdata else _quoted(written, self.quoted)
            return
        fill_inline(element, spaced_as_in(text, self.markup), self.codes, write=lambda t: _written(t, self.quoted))
        if self.quoted:
            element.text = '"' + (element.text or "")
            element[-1].tail = (element[-1].tail or "") + '"'
        elif (element.text or "").startswith(("@", "?")):
            element.text = "\\" + element.text


def _quoted(text: str, quoted: bool) -> str:
    """In double quotes where the source was; else with a leading @ or ? escaped (Android would
    read a reference)."""
    return f'"{text}"' if quoted else "\\" + text if text.startswith(("@", "?")) else text


def _text(element, key: tuple) -> _Text | None:
    """A string's or item's text to translate; None for a reference (@string/name, ?attr) or a
    text with nothing to translate."""
    from lxml import etree

    raw = element.text or ""
    last = element[-1].tail or "" if len(element) else raw
    original = (element.text, element[-1].tail if len(element) else None)
    cdata = len(element) == 0 and b"<![CDATA[" in etree.tostring(element)
    quoted = raw.lstrip().startswith('"') and last.rstrip().endswith('"') and (len(element) or len(raw.strip()) > 1)
    if quoted:  # (the quotes off, for the model; put back on writing)
        element.text = raw.lstrip()[1:]
        if len(element):
            element[-1].tail = last.rstrip()[:-1]
        else:
            element.text = element.text.rstrip()[:-1]
    if len(element) == 0:
        text = _read(element.text or "", quoted)
        if not quoted:
            text = text.strip()
        if text.startswith(("@", "?")) and not (element.text or "").lstrip().startswith("\\"):
            element.text = original[0]
            return None  # a reference to another resource
        markup, codes = as_markup(text), None
    else:
        codes = []
        markup = inline_markup(element, codes, _paired, read=lambda t: _read(t, quoted))
        if not quoted:
            markup = markup.strip()
    result = _Text(element, markup, codes, quoted, cdata, original, key)
    if not result.to_translate:
        result.restore()
        return None
    return result


class AndroidStrings(MessageFile):
    """An Android resources file read for translation: its `texts` in, the file for another
    language out (`write`)."""

    def __init__(self, file: XmlFile, texts: list[_Text]):
        self.file, self.messages = file, texts
        self.warnings: list[str] = []

    @classmethod
    def read(cls, data: bytes, name: str) -> "AndroidStrings":
        file = XmlFile.read(data, name, "Android string resources", "resources", "Android string resources")
        root = file.root
        for resource in [child for child in root if local_name(child.tag) in _RESOURCES]:
            if resource.get("translatable") == "false":
                remove_element(resource)
        texts = []
        for resource in root:
            kind, name = local_name(resource.tag), resource.get("name")
            if kind == "string":
                elements = [(resource, (kind, name))]
            elif kind in _RESOURCES:
                items = [item for item in resource if local_name(item.tag) == "item"]
                elements = [(item, (kind, name, item.get("quantity") if kind == "plurals" else place))
                            for place, item in enumerate(items)]
            else:
                elements = []
            texts += [text for text in (_text(element, key) for element, key in elements) if text is not None]
        return cls(file, texts)

    target_language = None  # (Android names it in the folder: values-de)

    def write(self, translations: list[str], target: str) -> bytes:
        translated = iter(translations)
        for text in self.messages:
            text.put(translated)
        for resource in [child for child in self.file.root if isinstance(child.tag, str)]:
            if local_name(resource.tag) not in _RESOURCES:  # a colour, a size: the default file's (values/), for every language
                remove_element(resource)
        added = sum(_plural_quantities(plurals, target, self.earlier) for plurals in self.file.root
                    if local_name(plurals.tag) == "plurals")
        if added:
            self.warnings.append(f"{added} plural quantities added for {target} with their 'other' item's "
                                 "translation: review them")
        return self.file.bytes()


def _plural_quantities(plurals, target: str, earlier: dict) -> int:
    """A `<plurals>` given the target language's quantities (in place), a quantity added taken from
    `earlier` translations where they have it; how many were added from `other`."""
    items = {item.get("quantity"): item for item in plurals if local_name(item.tag) == "item"}
    forms, added = plural_forms(target, items)
    if list(forms) == list(items):
        return 0
    tails = [item.tail for item in items.values()]
    between, last = (tails[0] if len(tails) > 1 else plurals.text), tails[-1]  # (line breaks and indentation)
    for item in items.values():
        plurals.remove(item)
    for number, (quantity, item) in enumerate(forms.items()):  # (in CLDR's order)
        kept = earlier.get(("plurals", plurals.get("name"), quantity)) if quantity in added else None
        if kept is not None:
            kept.restore()  # (its quotes back on)
        item = copy.deepcopy(kept.element if kept is not None else item) if quantity in added else item
        item.set("quantity", quantity)
        item.tail = between if number < len(forms) - 1 else last
        plurals.append(item)
    return sum(("plurals", plurals.get("name"), quantity) not in earlier for quantity in added)
