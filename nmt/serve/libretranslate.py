"""LibreTranslate's API beside nmt's own, so that its clients (libretranslatepy, LibreTranslate's
web and mobile clients, the apps that speak to a LibreTranslate server) can use `nmt serve`:

  POST /translate  q=..., source=en|auto, target=de, format=text|html, alternatives=N, api_key=...
                   (a JSON object, or a form: URL-encoded as libretranslatepy sends it, or multipart)
                   -> {"translatedText": "..."} (a list where q is a list; + "alternatives",
                      + "detectedLanguage" where source was auto)
  GET  /languages  -> [{"code": "en", "name": "English", "targets": ["de"]}, ...]
  POST /detect     q=... (a text or a list) -> [{"confidence": 97.5, "language": "en"}, ...]
  GET  /frontend/settings -> what LibreTranslate's web client asks first (limits, default languages)
  POST /translate_file  file=(.txt, .srt, .vtt, .html or .htm), source, target (a multipart form)
                   -> {"translatedFileUrl": ".../download_file/NAME"} (nmt.serve.files)

Errors are {"error": "..."}, status 400 (413 where a serve limit is passed). A text of several
lines is translated line by line and joined again; format html reads it as an HTML page or a
fragment of one (nmt.decode.html_document: each block whole, as markup whose tags are kept around
the words they wrap; alt and title texts too), text as plain text. A language may be named by another code of it
(de for a model's deu_Latn) where one served code has it. source auto takes the model's source language
where it reads only one; where it reads several, the language identifier (py3langid, `pip install
'nmt[langid]'`) chooses among them, as LibreTranslate does: each text of more than 40 characters
its own language, a shorter one the whole request's (its texts' probabilities averaged, weighted
by their lengths), and without the identifier the request is an error naming them. Each text
goes to the model of its language (nmt.serve.routing). /detect ranks the server's source
languages by the identifier's probability (0-100, as LibreTranslate's confidence), each text's
weighted by its length.
api_key is accepted and not checked.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass

from nmt.data.language_filter import identifier, identifier_label
from nmt.data.languages import language_name, same_language
from nmt.decode.html_document import HtmlDocument
from nmt.errors import NmtError

FORMATS = ("text", "html")


class LibreError(ValueError):
    """A request LibreTranslate would refuse: 400 with {"error": message}."""


@dataclass
class LibreRequest:
    texts: list[str]  # q, always as a list
    as_list: bool  # q was a list: answer with one
    source: str
    target: str
    markup: bool  # format html
    alternatives: int = 0
    detected: bool = False  # source was auto
    confidences: list[float] | None = None  # with source auto: each text's probability of its source, 0-100
    sources: list[str] | None = None  # with source auto: each text's language (`source`: the whole request's)

    def text_sources(self) -> list[str]:
        """Each text's source language."""
        return self.sources or [self.source] * len(self.texts)


FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


def is_form(content_type: str) -> bool:
    """A form body: URL-encoded, as libretranslatepy posts it, or multipart, as a browser's
    FormData does; both are LibreTranslate's (nmt's own API takes JSON only)."""
    return content_type.startswith(FORMS)


def is_libre_json(body: bytes) -> bool:
    """Whether a JSON POST /translate body is LibreTranslate's: an object with q."""
    try:
        parsed = json.loads(body or b"null")
    except ValueError:
        return False
    return isinstance(parsed, dict) and "q" in parsed


def form_fields(items: list[tuple[str, object]]) -> dict:
    """A form's fields as a JSON body holds them: q given more than once is a list. A file part
    is not a field of /translate and is left out."""
    fields: dict[str, list[str]] = {}
    for key, value in items:
        if isinstance(value, str):
            fields.setdefault(key, []).append(value)
    return {key: values if key == "q" and len(values) > 1 else values[-1] for key, values in fields.items()}


def languages(directions: set[tuple[str, str]]) -> list[dict]:
    """LibreTranslate's /languages: each source language with the targets it is translated into
    (`directions`: the (source, target) pairs of every model served)."""
    targets: dict[str, set[str]] = {}
    for source, target in directions:
        targets.setdefault(source, set()).add(target)
    return [{"code": code, "name": language_name(code), "targets": sorted(targets[code])} for code in sorted(targets)]


def texts_of(fields: dict) -> tuple[list[str], bool]:
    """q as a list of texts, and whether it was given as a list; LibreError where it is missing."""
    q = fields.get("q")
    if isinstance(q, str):
        return [q], False
    if isinstance(q, list) and all(isinstance(t, str) for t in q):
        return q, True
    raise LibreError("Invalid request: missing q parameter (a text, or a list of texts)")


def can_detect() -> bool:
    """Whether py3langid is installed (without loading its model, a second's work)."""
    return importlib.util.find_spec("py3langid") is not None


def probabilities(texts: list[str], sources: list[str]) -> list[dict[str, float]]:
    """Each text's probability of each of `sources` by the identifier, 0-100 (0 for a language
    it does not know, and for an empty text); LibreError where py3langid is missing."""
    try:
        ident = identifier("language detection (/detect, source auto)", probabilities=True)
    except NmtError as e:
        raise LibreError(str(e)) from None
    labels = {code: identifier_label(ident, code) for code in sources}
    found = []
    for text in texts:
        ranked = dict(ident.rank(text)) if text.strip() else {}
        found.append({code: 100 * ranked.get(label, 0.0) for code, label in labels.items()})
    return found


def detections(texts: list[str], sources: list[str], found: list[dict[str, float]] | None = None) -> list[dict]:
    """LibreTranslate's /detect over `sources` (the served source languages): each one's
    probability, 0-100, averaged over the texts weighted by their lengths, most likely first
    (`found`: the texts' `probabilities`, where already known)."""
    found = probabilities(texts, sources) if found is None else found
    weight = sum(len(text) for text in texts if text.strip())
    ranked = [{"confidence": round(sum(p[code] * len(text) for p, text in zip(found, texts)) / weight, 2)
               if weight else 0.0, "language": code} for code in sources]
    return sorted(ranked, key=lambda d: -d["confidence"])


def parse(fields: dict, directions: set[tuple[str, str]]) -> LibreRequest:
    """A LibreTranslate request checked against the served directions; LibreError naming the field."""
    texts, as_list = texts_of(fields)
    source, target = fields.get("source"), fields.get("target")
    if not isinstance(source, str) or not source:
        raise LibreError("Invalid request: missing source parameter")
    if not isinstance(target, str) or not target:
        raise LibreError("Invalid request: missing target parameter")
    text_format = fields.get("format", "text") or "text"
    if text_format not in FORMATS:
        raise LibreError(f"Invalid request: format {text_format}: choose text or html")
    try:
        alternatives = int(fields.get("alternatives", 0) or 0)
    except (TypeError, ValueError):
        raise LibreError("Invalid request: alternatives must be a number") from None
    offered = {entry["code"]: entry["targets"] for entry in languages(directions)}
    target = as_served(target, {t for targets in offered.values() for t in targets})
    source = source if source == "auto" else as_served(source, offered)
    detected, confidences, sources = source == "auto", None, None
    if detected:
        source, sources, confidences = _detected_sources(
            texts, target, [code for code, into in offered.items() if target in into])
    if source not in offered:
        raise LibreError(f"{source} is not supported: this server translates from {', '.join(offered)}")
    if target not in offered[source]:
        raise LibreError(f"{target} is not supported from {source}: choose {', '.join(offered[source])}")
    return LibreRequest(texts, as_list, source, target, text_format == "html", max(alternatives, 0), detected,
                        confidences, sources)


OWN_DETECTION = 40  # characters: a longer text gets its own language (LibreTranslate's bar), a shorter the request's


def _detected_sources(texts: list[str], target: str, readers: list[str]) -> tuple[str, list[str], list[float]]:
    """source auto among `readers` (those translated into `target`): the request's language (the
    most likely for its texts together), each text's (its own where longer than OWN_DETECTION
    characters), and each text's probability of its language (100 for the one reader where
    py3langid is missing)."""
    if not readers:
        raise LibreError(f"source auto: this server translates into {target} from no language")
    try:
        found = probabilities(texts, readers)
    except LibreError:
        if len(readers) > 1:
            raise LibreError(f"source auto: this server translates into {target} from {', '.join(readers)}: "
                             "name the source, or install nmt[langid] to detect it") from None
        return readers[0], [readers[0]] * len(texts), [100.0] * len(texts)
    source = detections(texts, readers, found)[0]["language"] if len(readers) > 1 else readers[0]
    sources = [max(readers, key=lambda code: p[code]) if len(text) > OWN_DETECTION else source
               for text, p in zip(texts, found)]
    return source, sources, [round(p[code], 2) for p, code in zip(found, sources)]


def as_served(code: str, served) -> str:
    """`code` as the server names its language: itself where served, else the one served code of
    the same language (de for deu_Latn, eng for en: clients often know ISO 639-1 codes only)."""
    if code in served:
        return code
    same = same_language(code, served)
    return same[0] if len(same) == 1 else code


def lines_of(request: LibreRequest, pages: bool = True) -> tuple[list[str], list[int]]:
    """Every text's lines, in one list, and how many lines each text has: a text of several lines
    is translated line by line, or with format html (and `pages`) as an HTML document, block by
    block (nmt.decode.html_document: a page or a fragment of one, its attributes too)."""
    lines, counts = [], []
    for text in request.texts:
        parts = _page(text).texts if pages and request.markup else text.split("\n")
        lines += parts
        counts.append(len(parts))
    return lines, counts


def _page(text: str) -> HtmlDocument:
    return HtmlDocument.read(text.split("\n"))


def _joining(request: LibreRequest, text: str, pages: bool):
    """How a text's translated lines (lines_of's) make its translation."""
    if pages and request.markup:
        page = _page(text)
        return lambda outputs: "\n".join(page.write(outputs, request.target))
    return "\n".join


def answer(request: LibreRequest, translated: list[list[str]], counts: list[int], pages: bool = True) -> dict:
    """The JSON answer: `translated` holds each line's outputs (of lines_of), best first."""
    texts, alternatives, at = [], [], 0
    for text, count in zip(request.texts, counts):
        lines = translated[at: at + count]
        at += count
        joined = _joining(request, text, pages)
        texts.append(joined([outputs[0] for outputs in lines]))
        alternatives.append([joined([outputs[k] if k < len(outputs) else outputs[0] for outputs in lines])
                             for k in range(1, request.alternatives + 1)])
    out: dict = {"translatedText": texts if request.as_list else texts[0]}
    if request.alternatives:
        out["alternatives"] = alternatives if request.as_list else alternatives[0]
    if request.detected:
        detected = [{"language": code, "confidence": c} for code, c in zip(request.text_sources(), request.confidences)]
        out["detectedLanguage"] = detected if request.as_list else detected[0]
    return out


def frontend_settings(directions: set[tuple[str, str]], max_chars: int, file_formats: tuple[str, ...] = ()) -> dict:
    """What LibreTranslate's web client reads first: the character limit, no API keys or
    suggestions, the file formats it translates (`file_formats`, none: no file translation), and
    its default languages (source auto where the identifier can detect it, else the first source;
    that source's first target)."""
    offered = languages(directions)
    first = offered[0] if offered else {"code": "", "name": "", "targets": [""]}
    source = {"code": "auto", "name": "Auto Detect"} if can_detect() else {"code": first["code"], "name": first["name"]}
    target = first["targets"][0]
    return {"charLimit": max_chars, "frontendTimeout": 500, "apiKeys": False, "keyRequired": False,
            "suggestions": False, "filesTranslation": bool(file_formats), "supportedFilesFormat": list(file_formats),
            "language": {"source": source, "target": {"code": target, "name": language_name(target)}}}
