"""Translation memories (TMX: `*.tmx`, or compressed: `.tmx.gz`, `.xz`, `.bz2`) as a parallel
corpus: how OPUS, ParaCrawl, the EU's DGT-TM and CAT tools hand out their pairs.

Each translation unit (`<tu>`) holding a segment in both languages is one pair. A unit's
variant (`<tuv>`) is in a language by its `xml:lang` (or TMX 1.1's `lang`), matched to the
recipe's code by nmt.data.languages.language_match (`en` takes `en-GB`, `eng_Latn` takes `en`). A unit without
both languages is not a pair and is left out (a translation memory of several languages rarely
has every unit in every one). A segment's inline codes (`<bpt>`, `<ept>`, `<ph>`, `<it>`, `<ut>`:
the original document's formatting) are left out, the text marked by `<hi>` kept, and its
whitespace runs, line breaks included, made one space.

The file is read as a stream (a WMT-sized memory is gigabytes), in the encoding its XML
declaration names (UTF-16 too, as some CAT tools write it). XML that is not well formed is an
error naming the file, line and column.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from pathlib import Path

from nmt.data.corpus import Corpus, file_fingerprint, opened
from nmt.data.languages import language_match
from nmt.errors import NmtError

XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_NO_ELEMENTS = 3  # expat's code for a document without an element (an empty file)
_INLINE_CODES = {"bpt", "ept", "ph", "it", "ut"}  # the original document's native codes, not text


def segment_text(seg: ElementTree.Element) -> str:
    """A `<seg>`'s text: its inline codes left out, `<hi>`'s text kept, whitespace runs made one
    space."""
    parts = [seg.text or ""]
    for child in seg:
        if local_name(child.tag) not in _INLINE_CODES:
            parts.append(segment_text(child))
        parts.append(child.tail or "")
    return " ".join("".join(parts).split())


def local_name(tag) -> str:
    """An XML element's name without its namespace ("" for lxml's comments and entities, whose tag
    is not a name)."""
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def not_well_formed(path: Path, error: ElementTree.ParseError) -> NmtError:
    """The one-line error of a file that is not well-formed XML, naming its line and column."""
    line, column = error.position
    return NmtError(f"{path}:{line}:{column + 1}: not well-formed XML ({str(error).split(':')[0]})")


class Tmx(Corpus):
    """One TMX file's pairs in two of its languages."""

    def __init__(self, path: str, src_lang: str, tgt_lang: str):
        self.path = Path(path)
        if not self.path.is_file():
            raise NmtError(f"{path}: file not found")
        self.src_lang, self.tgt_lang = src_lang, tgt_lang
        self.left_out = 0  # units of the last reading without both languages (nmt prepare reports them)

    def pairs(self) -> Iterator[tuple[str, str]]:
        seen: set[str] = set()
        count = self.left_out = 0
        for variants in self._units():
            pair = []
            for wanted in (self.src_lang, self.tgt_lang):
                best = max(variants, key=lambda variant: language_match(wanted, variant[0]), default=None)
                if best is not None and language_match(wanted, best[0]):
                    pair.append(best[1])
            if len(pair) == 2:
                count += 1
                yield pair[0], pair[1]
                continue
            self.left_out += 1
            if len(seen) < 100:
                seen.update(language for language, _ in variants)
        if count == 0:
            found = ", ".join(sorted(seen)) or "none"
            raise NmtError(f"{self.path}: no translation unit has segments in both {self.src_lang!r} and "
                           f"{self.tgt_lang!r} (the languages found: {found})")

    def _units(self) -> Iterator[list[tuple[str, str]]]:
        """Each `<tu>`'s variants as (language, text), in the file's order."""
        with opened(self.path) as raw:
            events = ElementTree.iterparse(raw, events=("start", "end"))
            parents: list[ElementTree.Element] = []
            try:
                for event, element in events:
                    tag = local_name(element.tag)
                    if event == "start":
                        if not parents and tag != "tmx":
                            raise NmtError(f"{self.path}: not a TMX file (its root element is <{tag}>, not <tmx>)")
                        parents.append(element)
                        continue
                    parents.pop()
                    if tag != "tu":
                        continue
                    variants = []
                    for variant in element:
                        seg = variant.find("{*}seg") if local_name(variant.tag) == "tuv" else None
                        if seg is not None:
                            language = variant.get(XML_LANG) or variant.get("lang") or ""
                            variants.append((language.strip().lower().replace("_", "-"), segment_text(seg)))
                    yield variants
                    parents[-1].clear()  # the units read so far (a stream of millions would fill memory)
            except ElementTree.ParseError as e:
                line, column = e.position
                if not parents and (line, column) == (1, 0) and e.code == _NO_ELEMENTS:
                    raise NmtError(f"{self.path}: empty file (no translation units)") from None
                raise not_well_formed(self.path, e) from None

    def fingerprint(self):
        return {"files": [file_fingerprint(self.path)], "languages": [self.src_lang, self.tgt_lang]}

    def count_pairs(self):
        """The units in the file, counted in its bytes (those without both languages included)."""
        count, tail, end = 0, b"", b"</tu>"
        with opened(self.path) as raw:
            while block := raw.read(1 << 20):
                if not tail and block[:2] in (b"\xff\xfe", b"\xfe\xff"):  # UTF-16, as its byte order mark says
                    end = "</tu>".encode("utf-16-le" if block[:2] == b"\xff\xfe" else "utf-16-be")
                count += (tail + block).count(end)  # the tail, shorter than `end`, holds none whole
                tail = block[-len(end) + 1:]
        return count

    def __str__(self):
        return str(self.path)
