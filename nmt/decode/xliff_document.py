"""XLIFF files in and out (`--input-format xliff`, the default for .xlf and .xliff files, versions
1.2 and 2.x; lxml, `pip install 'nmt[localization]'`): the exchange format of translation tools
(OmegaT, memoQ, Trados, Weblate, Crowdin, Xcode, Angular), pre-translated for a translator to
review.

Each segment without a translation is translated: a 1.2 `<trans-unit>` with no `<target>` or an
empty one (each `<mrk mtype="seg">` of its `<seg-source>` apart, where it has one), a 2.x
`<segment>` likewise. Segments translated already are kept, and so are those marked
translate="no" (on the unit or on a group or file around it). A translation is marked as a
machine's: 1.2 `state="needs-review-translation"` with `state-qualifier="leveraged-mt"`, 2.x
`state="translated"` with `subState="nmt:mt"`; in Trados' .sdlxliff, each segment's own status
too (sdl:seg conf="Draft" origin="mt"). A segment of several lines is translated line by
line, its line breaks and each line's edge spaces kept (but for a break inside a paired code), and
ICU MessageFormat's plural and select branch by branch, its syntax kept (nmt.decode.text.messages).

Inline codes are kept. A paired code around words (1.2 `<g>`, 2.x `<pc>`, `<mrk>`) is an element
of the translation's markup, so it goes around the words aligned to the ones it wrapped; every
other code (`<x/>`, `<bx/>`, `<ex/>`, `<ph>`, `<bpt>`, `<ept>`, `<it>`, `<sc/>`, `<ec/>`, `<sm/>`,
`<em/>`, `<cp/>`, and a paired code marked translate="no" or mtype="protected") is a point, put back whole between the
words (nmt.decode.text.markup). The file's target language (1.2 `target-language`, 2.x `trgLang`)
is set to the model's where it is missing; one that differs is warned about. Everything else
stays as it was.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass

from nmt.data.languages import language_tag
from nmt.data.tmx import local_name
from nmt.decode.inline_codes import fill_inline, inline_markup, spaced_as_in
from nmt.decode.text.messages import joined, message_parts
from nmt.decode.xml_file import XmlFile, claim_language
from nmt.errors import NmtError

_XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
_PAIRED = {"g", "pc", "mrk"}  # codes around words; every other inline element is a point


@dataclass
class _Segment:
    """One segment to translate and where its translation goes."""
    source: object  # the element whose content is translated
    target: object  # the element to fill (made empty first)
    text: str  # the source's markup
    codes: list  # its inline codes, by number

    def __post_init__(self):
        # its lines and ICU branches, translated apart (nmt.decode.text.messages)
        self.parts = message_parts(self.text)


def _segment(source, target) -> _Segment:
    """`source`'s content to translate into `target`."""
    codes: list = []
    return _Segment(source, target, inline_markup(source, codes, _paired), codes)


def _paired(code) -> bool:
    """Whether an inline code goes around words (as markup's element) rather than between them."""
    return local_name(code.tag) in _PAIRED and code.get("translate") != "no" and code.get("mtype") != "protected"


def _insert_after(anchor, element) -> None:
    """`element` put after `anchor`, indented as `anchor` is."""
    previous = anchor.getprevious()
    before = previous.tail if previous is not None else anchor.getparent().text
    anchor.addnext(element)
    element.tail = anchor.tail
    if before is not None and not before.strip():
        anchor.tail = before


def _empty(element) -> bool:
    return element is None or (not (element.text or "").strip() and len(element) == 0)


def _translatable(element) -> bool:
    """Not marked translate="no", itself or by a group or file around it."""
    return all(ancestor.get("translate") != "no" for ancestor in (element, *element.iterancestors()))


class XliffDocument:
    """An XLIFF file read for translation: its `texts` (each untranslated segment's markup) in,
    the file with their translations out (`write`)."""

    def __init__(self, file: XmlFile, version: int, segments: list[_Segment]):
        self.file, self.version, self.segments = file, version, segments
        self.messages = list(segments)  # every segment to translate, kept ones too (keep_from)
        self.stale: list[int] = []  # (a segment whose source changed is simply translated again)
        self.ns = file.root.tag[:-len("xliff")]  # "{its namespace}"
        self.warnings: list[str] = []

    @classmethod
    def read(cls, data: bytes, name: str) -> "XliffDocument":
        file = XmlFile.read(data, name, "XLIFF files", "xliff", "an XLIFF file")
        root = file.root
        version = root.get("version", "")
        if not re.match(r"[12]\.", version):
            raise NmtError(f"{name}: XLIFF version {version or '(none)'} is not one nmt reads (1.2 or 2.x)")
        ns = root.tag[:-len("xliff")]
        segments = (_segments_1(root, ns) if version.startswith("1.") else _segments_2(root, ns))
        return cls(file, int(version[0]), segments)

    @property
    def target_language(self) -> str | None:
        """The language the file says it is translated into (its first file's, in 1.2), or None."""
        root = self.file.root
        if self.version == 2:
            return root.get("trgLang")
        first = next(root.iter(f"{self.ns}file"), None)
        return first.get("target-language") if first is not None else None

    @property
    def texts(self) -> list[str]:
        """Each segment's parts to translate: its lines, its ICU branches."""
        return [part.model_text for segment in self.segments for part in segment.parts if part.translated]

    @property
    def numbers(self) -> list[int]:
        """Each text's line in the file (for warnings)."""
        return [(segment.source.sourceline or 0) + segment.text[:segment.text.find(part.text)].count("\n")
                for segment in self.segments for part in segment.parts if part.translated]

    def keep_from(self, earlier: "XliffDocument") -> int:
        """The translations of `earlier` (this file's translation before, or the one a template was
        translated into) kept for each segment of the same unit whose source has not changed,
        with their state as a translator left it; how many. Only the others are then translated
        (`texts`): new units and changed sources."""
        before = {key: (source, target) for key, source, target in _units(earlier.file.root, earlier.ns)
                  if not _empty(target)}
        remaining = []
        for segment in self.segments:
            old = before.get(_unit_key(segment.source))
            if old is not None and _content(old[0]) == _content(segment.source):
                _copy_target(old[1], segment.target)
            else:
                remaining.append(segment)
        self.segments = remaining
        stated = earlier.target_language  # as the translation wrote it (de-DE), where the template states none
        if stated and not self.target_language:
            holders = self.file.root.iter(f"{self.ns}file") if self.version == 1 else [self.file.root]
            for holder in holders:
                holder.set("target-language" if self.version == 1 else "trgLang", stated)
        return len(self.messages) - len(remaining)

    @property
    def message_count(self) -> int:
        return len(self.messages)

    def with_kept(self, translations: list[str]) -> list[str]:
        return translations  # (the kept segments are filled already)

    def holds_translations(self) -> bool:
        """Whether a unit has its target."""
        return any(not _empty(target) for _, _, target in _units(self.file.root, self.ns))

    def contents(self) -> dict:
        """Each unit's (segment's) source and target, as written, by its key: what two versions of
        a file must share to say the same."""
        return {key: (_content(source), None if target is None else _content(target))
                for key, source, target in _units(self.file.root, self.ns)}

    def write(self, translations: list[str], target: str) -> bytes:
        translated = iter(translations)
        for segment in self.segments:
            text = joined(segment.parts, translated)
            fill_inline(segment.target, spaced_as_in(text, segment.text), segment.codes)
            if self.version == 1:  # on the target (around a segmented unit's mrk)
                element = next(e for e in (segment.target, *segment.target.iterancestors()) if local_name(e.tag) == "target")
                element.set("state", "needs-review-translation")
                element.set("state-qualifier", "leveraged-mt")
                _mark_trados_segment(element.getparent(), segment.target.get("mid"))
            else:  # on the segment
                segment.target.getparent().set("state", "translated")
                segment.target.getparent().set("subState", "nmt:mt")
        root = self.file.root
        holders = root.iter(f"{self.ns}file") if self.version == 1 else [root]
        attribute = "target-language" if self.version == 1 else "trgLang"
        for holder in holders:
            claim_language(holder, attribute, target, language_tag(target), self.warnings)
        return self.file.bytes()


_SDL = "{http://sdl.com/FileTypes/SdlXliff/1.0}"


def _mark_trados_segment(unit, mid: str | None) -> None:
    """In Trados' .sdlxliff, the segment's own status (sdl:seg-defs): a draft from machine
    translation, as Trados marks one."""
    for definition in unit.iter(f"{_SDL}seg") if mid is not None else ():
        if definition.get("id") == mid:
            definition.set("conf", "Draft")
            definition.set("origin", "mt")


def _segments_1(root, ns: str) -> list[_Segment]:
    """XLIFF 1.2: each trans-unit whose target is missing or empty, or each segment of its
    seg-source whose target segment is (Trados writes an empty mrk for each)."""
    segments = []
    for unit in root.iter(f"{ns}trans-unit"):
        source, target = unit.find(f"{ns}source"), unit.find(f"{ns}target")
        if source is None or not _translatable(unit):
            continue
        seg_source = unit.find(f"{ns}seg-source")
        if not _empty(target):
            if seg_source is not None:
                segments += _empty_target_segments(seg_source, target, ns)
            continue
        if target is None:
            target = unit.makeelement(f"{ns}target", {}, unit.nsmap)
            _insert_after(seg_source if seg_source is not None else source, target)
        target.text = None  # (an empty target's spaces)
        if seg_source is None:
            segments.append(_segment(source, target))
            continue
        # a segmented unit: its target mirrors seg-source, each segment's mrk emptied to be filled
        for child in seg_source:
            target.append(copy.deepcopy(child))
        target.text = seg_source.text
        for copied in target.iter(f"{ns}mrk"):
            if copied.get("mtype") == "seg":
                for child in list(copied):
                    copied.remove(child)
                copied.text = None
        segments += _empty_target_segments(seg_source, target, ns)
    return segments


def _empty_target_segments(seg_source, target, ns: str) -> list[_Segment]:
    """The segments of a segmented unit whose target has a segment of the same mid left empty."""
    empty = {mark.get("mid"): mark for mark in target.iter(f"{ns}mrk") if mark.get("mtype") == "seg" and _empty(mark)}
    segments = []
    for mark in seg_source.iter(f"{ns}mrk"):
        if mark.get("mtype") == "seg" and mark.get("mid") in empty:
            empty[mark.get("mid")].text = None
            segments.append(_segment(mark, empty[mark.get("mid")]))
    return segments


def _segments_2(root, ns: str) -> list[_Segment]:
    """XLIFF 2.x: each segment whose target is missing or empty."""
    segments = []
    for segment in root.iter(f"{ns}segment"):
        source, target = segment.find(f"{ns}source"), segment.find(f"{ns}target")
        if source is None or not _translatable(segment.getparent()) or not _empty(target):
            continue
        if target is None:
            target = segment.makeelement(f"{ns}target", {}, segment.nsmap)
            _insert_after(source, target)
        target.text = None  # (an empty target's spaces)
        if source.get(_XML_SPACE) and not target.get(_XML_SPACE):
            target.set(_XML_SPACE, source.get(_XML_SPACE))
        segments.append(_segment(source, target))
    return segments


def _units(root, ns: str):
    """Each unit's (2.x: segment's; segmented 1.2: seg-source mark's) key, source and target
    (None where it has none)."""
    for unit in root.iter(f"{ns}trans-unit", f"{ns}unit"):
        if local_name(unit.tag) == "unit":
            for segment in unit.iter(f"{ns}segment"):
                yield _unit_key(segment.find(f"{ns}source")), segment.find(f"{ns}source"), segment.find(f"{ns}target")
            continue
        source, target, seg_source = unit.find(f"{ns}source"), unit.find(f"{ns}target"), unit.find(f"{ns}seg-source")
        if seg_source is None:
            yield _unit_key(source), source, target
            continue
        marks = {m.get("mid"): m for m in (target.iter(f"{ns}mrk") if target is not None else ()) if m.get("mtype") == "seg"}
        for mark in seg_source.iter(f"{ns}mrk"):
            if mark.get("mtype") == "seg":
                yield _unit_key(mark), mark, marks.get(mark.get("mid"))


def _unit_key(source) -> tuple:
    """Where a segment's source stands: its file's and unit's names (and its segment's place)."""
    unit = next(e for e in source.iterancestors() if local_name(e.tag) in ("trans-unit", "unit"))
    file = next((e for e in unit.iterancestors() if local_name(e.tag) == "file"), None)
    names = (file.get("original") or file.get("id") if file is not None else None, unit.get("id"))
    if local_name(source.tag) == "mrk":
        return (*names, source.get("mid"))
    if local_name(unit.tag) == "unit":
        segment = source.getparent()
        return (*names, segment.get("id") or list(unit.iter(segment.tag)).index(segment))
    return names


def _content(element) -> str:
    """An element's content (text and children, attributes and all), without its own tag and tail."""
    from lxml import etree

    return (element.text or "") + "".join(etree.tostring(child, encoding="unicode", with_tail=True) for child in element)


def _copy_target(old, new) -> None:
    """`new` (a target, or a target's segment mark) made what `old` is: its content and attributes;
    a 2.x segment's state too."""
    new.text = old.text
    for child in list(new):
        new.remove(child)
    for child in old:
        new.append(copy.deepcopy(child))
    for name, value in old.attrib.items():
        new.set(name, value)
    if local_name(old.getparent().tag) == "segment":
        for name in ("state", "subState"):
            if old.getparent().get(name) is not None:
                new.getparent().set(name, old.getparent().get(name))
