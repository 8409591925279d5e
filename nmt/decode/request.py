"""One translation request and the one shape of its answer. A line of `nmt translate
--input-format jsonl`, or one line of a `nmt serve` /translate call: both read it into
`LineRequest` and pass it through `check_request` (the engine's capabilities, then the limits),
so a refusal has one message wherever it comes from, naming the line and the field. Both answer
with `hypothesis_record`'s fields."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, StrictBool, StrictStr, ValidationError

from nmt.data.languages import Controls, direction_controls, language_match
from nmt.data.source_language import AUTO, SourceGuess
from nmt.decode.engines.capabilities import refusal
from nmt.decode.engines.engine import Engine
from nmt.decode.search import Hypothesis
from nmt.decode.text.casing import hypothesis_text
from nmt.decode.text.markup import read_as_markup
from nmt.errors import NmtError


class LineRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: StrictStr
    prefix: StrictStr = ""  # the translation starts with it
    constraints: list[StrictStr] = []  # phrases the translation contains
    # the text is inline markup, its tags kept in the translation (nmt.decode.text.markup); not given:
    # markup where it looks like markup or is text escaped for it (nmt.decode.text.markup.read_as_markup)
    markup: StrictBool | None = None
    # a multilingual model's target language for this line (`nmt translate --input-format jsonl`;
    # a server's request names it for all its lines); not given: the run's --tgt-lang
    tgt_lang: StrictStr | None = None
    # its source language (a model with source language tokens needs it), or "auto": identified
    # (nmt.data.source_language); not given: the run's --src-lang
    src_lang: StrictStr | None = None


FIELDS = tuple(LineRequest.model_fields)


@dataclass(frozen=True)
class Line:
    """One line on its way to the engine, whole: what every caller hands translation (a jsonl
    request, a serve request, a plain or markup line), instead of parallel lists of texts,
    prefixes, constraints and flags."""
    text: str
    prefix: str = ""  # the translation starts with it
    constraints: tuple[str, ...] = ()  # phrases the translation contains
    markup: bool = False  # the text is inline markup, its tags kept in the translation
    controls: Controls | None = None  # a multilingual model's language tokens for it; None: the engine's direction
    page: bool = False  # a documentation page's text (Markdown): its inline HTML tags read with its marks
    bbcode: bool = False  # where it is not markup but has BBCode, its tags kept as markup's (nmt.decode.text.bbcode)

    @classmethod
    def of(cls, request: LineRequest, controls: Controls | None = None) -> "Line":
        return cls(request.text, request.prefix, tuple(request.constraints), markup_of(request.text, request.markup),
                   controls, bbcode=request.markup is None)


def markup_of(text: str, asked: bool | None) -> bool:
    """Whether a line is read as markup: as asked, or where not asked, where it looks like markup."""
    return read_as_markup(text) if asked is None else asked


@dataclass(frozen=True)
class RequestLimits:
    """Bounds a server sets on what one line may ask (None: unbounded, as on the command line)."""
    max_chars: int | None = None  # characters of the text, the prefix and each phrase
    max_constraints: int | None = None  # phrases per line


class RequestRefused(NmtError):
    """A request that cannot be translated: 422, or 413 with the limit it went over."""

    def __init__(self, message: str, status: int = 422, limit: str | None = None, value: int | None = None):
        super().__init__(message)
        self.status, self.limit, self.value = status, limit, value


def _problem(error: dict) -> str:
    field = str(error["loc"][0])
    kind = error["type"]
    if kind == "extra_forbidden":
        return f"{field}: unknown field (known: {', '.join(FIELDS)})"
    if kind == "missing":
        return f"{field}: missing"
    if field == "constraints":
        return "constraints: a list of strings is expected"
    if field == "markup":
        return "markup: true or false is expected"
    return f"{field}: a string is expected"


def parse_request(line: str, number: int) -> LineRequest:
    """A jsonl line, {"text": "...", "prefix": "...", "constraints": ["...", ...], "markup": false,
    "tgt_lang": "de"} (all but text optional); anything else a RequestRefused naming the line and the field."""
    try:
        raw = json.loads(line)
    except json.JSONDecodeError as e:
        raise RequestRefused(f"line {number}: not JSON ({e.msg} at column {e.colno})") from None
    if not isinstance(raw, dict):
        raise RequestRefused(f"line {number}: a JSON object is expected, with a \"text\" field")
    try:
        return LineRequest.model_validate(raw)
    except ValidationError as e:
        errors = sorted(e.errors(), key=lambda error: FIELDS.index(error["loc"][0]) if error["loc"][0] in FIELDS else -1)
        raise RequestRefused(f"line {number}: {_problem(errors[0])}") from None


class LineDirections:
    """The language tokens of lines that name their languages, or whose source is identified
    (the run's --src-lang auto, or a line's "src_lang": "auto"), each direction's found once per
    stream. A line's languages not named are the run's, zero-shot as the run allows."""

    def __init__(self, engine: Engine, zero_shot: bool | None = None, warn: Callable[[str], None] = lambda _: None):
        self.engine, self.warn = engine, warn
        self.others: set[str] = set()  # languages identified that the model does not read (warned once each)
        self.zero_shot = getattr(engine, "zero_shot", False) if zero_shot is None else zero_shot
        self.auto = getattr(engine, "source_guess", None)  # the run's --src-lang auto
        self.guess = self.auto or SourceGuess(engine.recipe.data, self.zero_shot)
        self.known: dict[tuple[str, str], Controls] = {}

    def of(self, text: str, number: int, src_lang: str | None = None, tgt_lang: str | None = None) -> Controls | None:
        """Line `number`'s language tokens; None: the run's direction. RequestRefused where the
        model has no such direction, naming the line."""
        if src_lang is None and self.auto is not None:
            src_lang = AUTO
        if src_lang is None and tgt_lang is None:
            return None
        engine = self.engine
        source, target = engine.controls.languages or (engine.recipe.data.src_lang, engine.recipe.data.tgt_lang)
        target = tgt_lang or target
        try:
            if src_lang == AUTO:
                source = self._identified(text, target, number)
            else:
                source = src_lang or source
            if (source, target) not in self.known:
                _, self.known[source, target] = direction_controls(
                    engine.src_tokenizer, engine.tgt_tokenizer, engine.recipe.data, source, target, self.zero_shot)
        except NmtError as e:
            message = str(e).replace("--tgt-lang", "tgt_lang").replace("--src-lang", "src_lang")
            raise RequestRefused(f"line {number}: {message}") from None
        return self.known[source, target]

    def of_request(self, request: LineRequest, number: int) -> Controls | None:
        return self.of(request.text, number, request.src_lang, request.tgt_lang)

    def identifies(self, request: LineRequest) -> bool:
        """Whether a request's source language is identified (its own "auto", or the run's)."""
        return request.src_lang == AUTO or (request.src_lang is None and self.auto is not None)

    def _identified(self, text: str, target: str, number: int) -> str:
        source, other = self.guess.identify(text, target)
        if other and other[0] not in self.others:
            self.others.add(other[0])
            self.warn(f"line {number}: {other[1]:.0%} {other[0]} by the language identifier, which the model does not "
                      f"translate from into {target}: read as {source} (its first such line only)")
        return source


def check_request(request: LineRequest, engine: Engine, number: int, limits: RequestLimits = RequestLimits()) -> None:
    """Refuse (RequestRefused) what the engine cannot do or the limits do not allow."""
    if request.constraints and (message := refusal(engine, "constraints")):
        raise RequestRefused(f"line {number}: {message}")
    if "\n" in request.text or "\r" in request.text:
        raise RequestRefused(f"line {number}: text: a line may not contain a line break")
    if any(not phrase.strip() for phrase in request.constraints):
        raise RequestRefused(f"line {number}: constraints: an empty constraint")
    chars, most = limits.max_chars, limits.max_constraints
    if chars is not None:
        for field, value in (("text", request.text), ("prefix", request.prefix),
                             *(("constraints", phrase) for phrase in request.constraints)):
            if len(value) > chars:
                raise RequestRefused(f"line {number}: {field}: {len(value)} characters, at most {chars} (max_chars)",
                                     413, "max_chars", chars)
    if most is not None and len(request.constraints) > most:
        raise RequestRefused(f"line {number}: constraints: {len(request.constraints)} phrases, at most {most} "
                             "(max_constraints)", 413, "max_constraints", most)


def hypothesis_record(translator, h: Hypothesis) -> dict:
    """One hypothesis as every JSON output gives it (`translate --output-format jsonl` and `serve`):
    its text, score, log-probability and pieces; each token's log-probability, its word alignment,
    whether its constraints were met and the score that chose it (decode.mbr, decode.rerank), where
    they were asked for."""
    out = {"text": hypothesis_text(translator.tgt_tokenizer, h), "score": round(h.score, 4),
           "log_prob": round(h.log_prob, 4), "tokens": [translator.tgt_tokenizer.id_to_piece(t) for t in h.tokens]}
    if h.token_log_probs is not None:
        out["token_log_probs"] = [round(p, 4) for p in h.token_log_probs]
    if h.alignment is not None:
        out["alignment"] = h.alignment
    if h.constraints_met is not None:
        out["constraints_met"] = h.constraints_met
    if h.selection is not None:
        out["selection"] = round(h.selection, 4)
    return out


def document_target(engine: Engine, stated: str | None, warn: Callable[[str], None]) -> Controls | None:
    """The language tokens of the target a document names (an XLIFF file's target-language, a
    gettext catalog's Language), for a multilingual model whose target was not chosen (--tgt-lang):
    the model's code for that language (deu_Latn for de-DE; nmt.data.languages.language_match).
    None: the run's direction, where the document names none, the model has one target, or it does
    not translate into the one named (warned)."""
    data = engine.recipe.data
    if not stated or getattr(engine, "target_chosen", True) or data.language_token == "none":
        return None
    codes = data.target_languages()
    best = max(codes, key=lambda code: language_match(code, stated))
    current = (engine.controls.languages or (data.src_lang, data.tgt_lang))[1]
    if not language_match(best, stated):
        warn(f"its target language {stated} is not one the model translates into; translated into {current} "
             "(--tgt-lang chooses another)")
        return None
    if best == current:
        return None
    try:
        return LineDirections(engine).of("", 0, tgt_lang=best)
    except RequestRefused as e:
        warn(f"its target language {stated}: {str(e).removeprefix('line 0: ')}; translated into {current}")
        return None
