"""An XML file read with lxml and written back as it was but for what was changed: its
declaration as written (lxml's own has other quotes), its encoding, what followed its root
element, an empty element written with an end tag (`<translation></translation>`, as Qt's
lupdate writes it) kept so, where lxml would close it in one tag, quotes in text written as
`&apos;` and `&quot;` where the file wrote them so (lupdate, again), `>` as itself where it was, an empty element's tag ending
in " />" where the file's did (Visual Studio's), a start tag that declares namespaces as written
(lxml writes the declarations first), and a byte-order mark. Entities are not resolved and
nothing is fetched from the network."""

from __future__ import annotations

import re

from nmt.errors import NmtError

_DECLARATION = re.compile(rb"\s*<\?xml[^>]*\?>[ \t]*\r?\n?")
_EMPTY_PAIR = re.compile(rb"<([\w:.-]+)(?:\s[^<>]*)?></\1>")
_MARKUP = re.compile(r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<[^>]*>", re.S)  # what is not text
_QUOTES = {"'": "&apos;", '"': "&quot;"}  # written as references where the file did; ">" as itself
_ATTRIBUTE = re.compile(r"""([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")


class XmlFile:
    def __init__(self, tree, declaration: bytes | None, end: bytes, quotes: str = "", spaced: bool = False,
                 declaring: dict | None = None):
        self.tree, self.declaration = tree, declaration  # (the declaration with a byte-order mark before it)
        self.end = end  # what followed the root element (lxml drops it): a line break, as a rule
        self.quotes = quotes  # the quotes the file's text writes as references
        self.spaced = spaced  # whether an empty element's tag ends in " />", as Visual Studio writes it
        self.declaring = declaring or {}  # the start tags that declare namespaces, as written, by _tag_key

    @classmethod
    def read(cls, data: bytes, name: str, needs: str, root_name: str | None = None, what: str = "") -> "XmlFile":
        """`data` parsed; an NmtError naming `name`'s line where it is not well-formed XML, `needs`
        (what reads this kind of file: "XLIFF files") where lxml is missing, and `what` the file
        should be ("an XLIFF file") where its root element is not named `root_name`."""
        try:
            from lxml import etree
        except ImportError:
            raise NmtError(f"{needs} need lxml: pip install 'nmt[localization]'") from None
        parser = etree.XMLParser(resolve_entities=False, no_network=True, remove_blank_text=False, strip_cdata=False)
        try:
            root = etree.fromstring(data, parser)
        except etree.XMLSyntaxError as e:
            line = getattr(e, "lineno", None) or (e.position[0] if e.position else 0)
            message = str(e.msg if hasattr(e, "msg") else e).split(",")[0].split(" (line")[0]
            raise NmtError(f"{name}:{line}: not well-formed XML ({message})") from None
        bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
        found = root.tag.rsplit("}", 1)[-1] if isinstance(root.tag, str) else ""
        if root_name and found != root_name:
            raise NmtError(f"{name}: not {what} (its root element is <{found}>, not <{root_name}>)")
        declaration = _DECLARATION.match(data, len(bom))
        utf16 = data.startswith((b"\xff\xfe", b"\xfe\xff"))
        end = b"" if utf16 else data[len(data.rstrip()):]
        quotes = ""
        if not utf16:
            _keep_end_tags(root, data)
            quotes = "".join(q for q, ref in _QUOTES.items() if re.search(rb">[^<]*" + ref.encode(), data))
            if re.search(rb">[^<]*>", re.sub(rb"<!--.*?-->|<!\[CDATA\[.*?\]\]>", b"", data, flags=re.S)):
                quotes += ">"  # (a > in text, as it may be written)
        spaced = len(re.findall(rb" />", data)) > len(re.findall(rb"[^ ]/>", data))
        text = data.decode(root.getroottree().docinfo.encoding or "utf-8", errors="replace") if not utf16 else ""
        declaring = {_tag_key(tag): tag for tag in re.findall(r"<[\w:.-]+\s[^<>]*xmlns[^<>]*>", text)}
        return cls(root.getroottree(), bom + (declaration.group(0) if declaration else b"") or None, end, quotes, spaced,
                   declaring)

    @property
    def root(self):
        return self.tree.getroot()

    def bytes(self) -> bytes:
        from lxml import etree

        encoding = self.tree.docinfo.encoding or "UTF-8"
        if self.declaration is None and encoding.upper() not in ("UTF-8", "ASCII"):  # (UTF-16: lxml's own)
            return etree.tostring(self.tree, xml_declaration=True, encoding=encoding)
        written = etree.tostring(self.tree, encoding=encoding, xml_declaration=False)
        if self.quotes or self.spaced or self.declaring:
            written = _as_written(written.decode(encoding), self.quotes, self.spaced, self.declaring).encode(encoding)
        return (self.declaration or b"") + written + self.end


def claim_language(holder, attribute: str, target: str, written: str, warnings: list[str]) -> None:
    """An XML element's language attribute (XLIFF's target-language, Qt's language) set to the
    target (as `written`) where it has none; one that names another language warned about."""
    from nmt.data.languages import two_letter

    stated = holder.get(attribute)
    if not stated:
        holder.set(attribute, written)
    elif two_letter(stated) != two_letter(target):
        line = f" (line {holder.sourceline})" if holder.sourceline else ""
        warnings.append(f"its {attribute} is {stated}{line}, but the model translates into {target} "
                        "(a multilingual model's --tgt-lang chooses another)")


def remove_element(element) -> None:
    """An element taken out with its line (lxml takes its tail, the line break and indentation
    after it, with it); the last one's tail, what comes before the closing tag, kept."""
    previous, parent = element.getprevious(), element.getparent()
    if element.getnext() is None:
        if previous is not None:
            previous.tail = element.tail
        else:
            parent.text = element.tail
    parent.remove(element)


def _keep_end_tags(root, data: bytes) -> None:
    """Each empty element that `data` writes with an end tag given an empty text, which lxml
    writes so (each found by its name and line)."""
    pairs = {(m.group(1).decode(), data.count(b"\n", 0, m.start()) + 1) for m in _EMPTY_PAIR.finditer(data)}
    if not pairs:
        return
    for element in root.iter():
        if isinstance(element.tag, str) and element.text is None and len(element) == 0:
            name = element.tag.rsplit("}", 1)[-1]
            if ((f"{element.prefix}:{name}" if element.prefix else name), element.sourceline) in pairs:
                element.text = ""


def _tag_key(tag: str) -> tuple:
    """A start tag's name and attributes, in any order and either quotes."""
    return (re.match(r"<([\w:.-]+)", tag).group(1), frozenset((m.group(1), m.group(2) if m.group(2) is not None else m.group(3))
                                                             for m in _ATTRIBUTE.finditer(tag)))


def _as_written(xml: str, quotes: str, spaced: bool, declaring: dict) -> str:
    """`xml` with the `quotes` in its text (not in tags, comments or CDATA) written as references,
    where `spaced`, each empty element's tag ending in " />", and each start tag that declares
    namespaces as the file wrote it (lxml writes the declarations first)."""
    pieces, position = [], 0
    for markup in _MARKUP.finditer(xml):
        text, tag = xml[position:markup.start()], markup.group(0)
        for quote in quotes:
            text = re.sub(r"(?<!\]\])&gt;", ">", text) if quote == ">" else text.replace(quote, _QUOTES[quote])
        if "xmlns" in tag and not tag.startswith(("<!", "<?")):
            tag = declaring.get(_tag_key(tag), tag)
        if spaced and tag.endswith("/>") and not tag.endswith(" />") and not tag.startswith("<!"):
            tag = tag[:-2] + " />"
        pieces += [text, tag]
        position = markup.end()
    return "".join(pieces) + xml[position:]
