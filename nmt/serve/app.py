"""`nmt serve`: a trained model behind HTTP.

  POST /translate  {"text": ["...", ...], "beam_size": 4, "nbest": 1, "scores": false,
                    "prefix": ["...", ...], "constraints": [["...", ...], ...],
                    "token_scores": false, "alignments": false,
                    "tgt_lang": "fr" or ["fr", "de", ...], "src_lang": "en" or [per line] or "auto", "zero_shot": false,
                    "markup": true|false (not given: where the text looks like markup)}
                   -> {"translations": ["...", ...]} (+ "scores", "nbest", "token_log_probs",
                      "alignments" when asked; "selection" where decode.mbr or decode.rerank chose;
                      "src_lang": each line's, with "src_lang": "auto")
  GET  /health     -> {"status": "ok", "engine": ..., "direction": ...}
  GET  /           a page to try the model in a browser

One output per input line, empty lines included. Limits on lines per request and characters per
line answer 413 with a JSON error naming the limit; malformed JSON or wrong types answer 422.
"""

from __future__ import annotations

import asyncio
import json
import sys
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError

from nmt.config import DecodeConfig
from nmt.data.languages import Controls
from nmt.decode.engines.capabilities import refusal
from nmt.data.source_language import AUTO
from nmt.decode.request import (Line, LineDirections, LineRequest, RequestLimits, RequestRefused, check_request,
                                hypothesis_record)
from nmt.decode.search import Hypothesis
from nmt.decode.text.end_marks import without_stop_its_source_lacks
from nmt.errors import NmtError
from nmt.serve import files, libretranslate
from nmt.serve.batcher import Batcher
from nmt.serve.models import Served, ServedModels
from nmt.serve.routing import Part, in_request_order, per_line, split_request
from nmt.serve.worker_process import start_workers

try:  # at module level: FastAPI reads the endpoints' annotations (strings here) in this module's names
    from fastapi import Request
except ImportError:  # the serve extra is missing: create_app says so
    Request = None

STATIC = Path(__file__).with_name("static")


@dataclass
class ServeLimits:
    max_lines: int = 64  # lines per request
    max_chars: int = 2000  # characters per line
    max_beam: int = 16
    max_constraints: int = 8  # phrases per line
    max_queued_lines: int = 1024  # lines waiting for a model worker; past this a request gets 503 (0: no limit)


class TranslateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: list[StrictStr]
    beam_size: int | None = Field(default=None, ge=1)
    nbest: int | None = Field(default=None, ge=1)
    length_penalty: float | None = Field(default=None, ge=0.0)
    scores: StrictBool = False
    prefix: list[StrictStr] | None = None  # per line, "" for none: the translation starts with it
    constraints: list[list[StrictStr]] | None = None  # per line, [] for none: phrases the translation contains
    token_scores: StrictBool = False
    alignments: StrictBool = False
    # a multilingual model's target language: one for every line, or one per line
    tgt_lang: StrictStr | list[StrictStr] | None = None
    # the lines' source language: one, or one per line; auto: each line's, identified among the
    # model's (nmt.data.source_language)
    src_lang: StrictStr | list[StrictStr] | None = None
    zero_shot: StrictBool = False  # allow directions the model was not trained on
    # the lines are inline markup: tags kept around the translated words; not given: each line that
    # looks like markup, or is text escaped for it, is (nmt.decode.text.markup.read_as_markup)
    markup: StrictBool | None = None


@dataclass
class Plan:
    """How a /translate request is translated, once every check has passed."""
    cfg: DecodeConfig
    lines: list[Line]  # each line whole: text, prefix, constraints, markup, language tokens
    extras: tuple[str, ...]  # token_scores, alignments
    sources: list[str] | None = None  # each line's source language, where it was identified (src_lang auto)


def check_line_count(n: int, limits: ServeLimits) -> None:
    if n > limits.max_lines:
        raise RequestRefused(f"{n} lines: at most {limits.max_lines} per request (max_lines)", 413, "max_lines",
                             limits.max_lines)


def plan_request(body: TranslateRequest, translator, limits: ServeLimits, numbers: list[int] | None = None) -> Plan:
    """Check a request against the limits and the engine (each line through the one request
    check, nmt.decode.request) and resolve its settings; RequestRefused (413 naming the limit it
    went over, or 422) for what may not be served. `numbers`: its lines' numbers in errors, where
    it is part of a request split between models (nmt.serve.routing)."""
    n, defaults = len(body.text), translator.recipe.decode
    numbers = numbers or list(range(1, n + 1))
    check_line_count(n, limits)
    if body.prefix is not None and len(body.prefix) != n:
        raise RequestRefused(f"prefix: {len(body.prefix)} entries for {n} lines (one per line, \"\" for none)")
    if body.constraints is not None and len(body.constraints) != n:
        raise RequestRefused(f"constraints: {len(body.constraints)} entries for {n} lines (one list per line)")
    line_limits = RequestLimits(limits.max_chars, limits.max_constraints)
    requests = [LineRequest(text=text, prefix=body.prefix[i] if body.prefix else "",
                            constraints=body.constraints[i] if body.constraints else [], markup=body.markup)
                for i, text in enumerate(body.text)]
    for number, request in zip(numbers, requests):
        check_request(request, translator, number, line_limits)
    line_controls = _line_directions(body, translator, numbers) or [None] * n
    lines = [Line.of(request, controls) for request, controls in zip(requests, line_controls)]
    if body.alignments and (message := refusal(translator, "alignments")):
        raise RequestRefused(message)
    beam = body.beam_size or defaults.beam_size
    if beam > limits.max_beam:
        raise RequestRefused(f"beam_size {beam}: at most {limits.max_beam} (max_beam)", 413, "max_beam", limits.max_beam)
    changes = {"beam_size": beam, "nbest": body.nbest or 1, "sampling": False}
    if body.length_penalty is not None:
        changes["length_penalty"] = body.length_penalty
    try:  # the recipe's own checks of decode settings (nbest within the beam, ...): one place for both verbs
        cfg = DecodeConfig.model_validate(defaults.model_dump() | changes)
    except ValidationError as e:
        raise RequestRefused("; ".join(err["msg"].removeprefix("Value error, ") for err in e.errors())) from None
    extras = tuple(name for name, wanted in (("token_scores", body.token_scores), ("alignments", body.alignments))
                   if wanted)
    sources = [line.controls.languages[0] for line in lines] if body.src_lang == AUTO else None
    return Plan(cfg, lines, extras, sources)


def _line_directions(body: TranslateRequest, translator, numbers: list[int]) -> list[Controls] | None:
    """Each line's language tokens where the request names languages (src_lang and tgt_lang: one,
    or one per line; src_lang auto: each line's identified)."""
    if body.tgt_lang is None and body.src_lang is None:
        return None
    n = len(body.text)
    targets = per_line(body.tgt_lang, n, "tgt_lang")
    sources = [AUTO] * n if body.src_lang == AUTO else per_line(body.src_lang, n, "src_lang")
    directions = LineDirections(translator, zero_shot=body.zero_shot)
    try:
        return [directions.of(*line) for line in zip(body.text, numbers, sources, targets)]
    except RequestRefused as e:
        raise RequestRefused(str(e).replace("--zero-shot", '"zero_shot": true')) from None


def records_of(results: list[list[Hypothesis]], translator) -> list[list[dict]]:
    """Each line's hypotheses as the records `translate --output-format jsonl` writes."""
    return [[hypothesis_record(translator, h) for h in hyps] for hyps in results]


def reply(body: TranslateRequest, records: list[list[dict]], sources: list[str] | None = None) -> dict:
    """The JSON answer: the translations, and what else the request asked for, each field taken
    from the lines' records (records_of)."""
    answer: dict = {"translations": [line[0]["text"] for line in records]}
    if sources is not None:
        answer["src_lang"] = sources
    if body.scores:
        answer["scores"] = [line[0]["score"] for line in records]
    if body.constraints is not None:
        answer["constraints_met"] = [line[0].get("constraints_met") is not False for line in records]
    if body.token_scores:
        answer["token_log_probs"] = [line[0].get("token_log_probs", []) for line in records]
    if body.alignments:
        answer["alignments"] = [line[0].get("alignment") or "" for line in records]
    if any("selection" in line[0] for line in records):  # chosen by decode.mbr or decode.rerank
        answer["selection"] = [line[0].get("selection") for line in records]
    if (body.nbest or 1) > 1:
        answer["nbest"] = [[{key: h[key] for key in ("text", "score", "selection") if key in h} for h in line]
                           for line in records]
    return answer


# The least value each of nmt serve's limits takes: below it a server would refuse every request
# (--max-lines 0, --max-chars 0), or the value means nothing (a negative wait, queue or number of
# workers, no lines per model call).
LEAST = {"max_lines": 1, "max_chars": 1, "max_constraints": 0, "batch_wait_ms": 0, "batch_max_lines": 1,
         "max_queued_lines": 0, "workers": 0}


def check_limits(**options: float) -> None:
    """A one-line error naming the first option below its least value (LEAST)."""
    for name, value in options.items():
        if value < LEAST[name]:
            raise NmtError(f"--{name.replace('_', '-')} {value:g}: at least {LEAST[name]}")


def require_fastapi():
    try:
        import fastapi  # noqa: F401
        import python_multipart  # noqa: F401  (LibreTranslate's form requests)
        import uvicorn  # noqa: F401
    except ImportError:
        raise NmtError("the server is not installed: pip install 'nmt[serve]'") from None


def create_app(models, limits: ServeLimits = ServeLimits(), batch_wait_ms: float = 5.0,
               batch_max_lines: int = 64, model_name: str = "", workers: int = 1):
    """The ASGI app for the models served (nmt.serve.models.ServedModels), or for one loaded
    translator (nmt.decode.engines.engine.load_engine) named `model_name`."""
    require_fastapi()
    from fastapi import FastAPI
    from fastapi.concurrency import run_in_threadpool
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import FileResponse, JSONResponse, Response
    from starlette.exceptions import HTTPException

    if not isinstance(models, ServedModels):
        models = ServedModels([Served(models, model_name)])

    @asynccontextmanager
    async def lifespan(app):
        for served in models.models:
            processes = None
            if served.worker_mode == "processes":
                try:
                    processes = start_workers(served.spec, served.translator.recipe, served.translator.controls, workers)
                except (NmtError, OSError) as e:  # the model is loaded here: threads can still serve it
                    print(f"{served.name}: its worker processes did not start ({e}); its workers run as threads",
                          file=sys.stderr, flush=True)
                    served.worker_mode = "threads"
            served.batcher = Batcher(served.translator, batch_wait_ms, batch_max_lines, workers, processes,
                                     limits.max_queued_lines)
        yield
        for served in models.models:
            served.batcher.close()

    app = FastAPI(title="nmt", lifespan=lifespan, docs_url=None, redoc_url=None)
    first = models.first
    translated_files = files.TranslatedFiles()  # POST /translate_file's, for GET /download_file

    def error(status: int, message: str, **extra) -> JSONResponse:
        busy = {"Retry-After": "1"} if status == 503 else None  # the queue drains within seconds
        return JSONResponse({"error": message, **extra}, status_code=status, headers=busy)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error(422, _validation_message(exc))

    def counters(served: Served) -> dict:
        s = served.batcher.stats
        return {"requests": s.requests, "lines": s.lines, "model_calls": s.calls,
                "busy_seconds": round(s.busy_seconds, 3), "queued_lines": served.batcher.queued_lines,
                "requests_in_flight": served.batcher.in_flight}

    @app.get("/health")
    async def health() -> dict:
        """The first model's engine, direction and counters; every model's under "models"."""
        data = first.data
        return {"status": "ok", "engine": first.translator.capabilities.name, "model": first.name,
                "workers": workers, "worker_mode": first.worker_mode, "direction": f"{data.src_lang}-{data.tgt_lang}",
                "directions": [f"{s}-{t}" for s, t in data.directions()], "served": counters(first),
                "models": [{"model": m.name, "engine": m.translator.capabilities.name, "worker_mode": m.worker_mode,
                            "directions": sorted(f"{s}-{t}" for s, t in m.directions()), "served": counters(m)}
                           for m in models.models]}

    @app.get("/")
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    @app.post("/translate")
    async def translate(request: Request):
        raw, content_type = await request.body(), request.headers.get("content-type", "")
        if libretranslate.is_form(content_type):
            try:
                form = await request.form()
            except HTTPException as e:  # a malformed form (starlette's parser, within an app)
                return JSONResponse({"error": f"Invalid request: {e.detail}"}, status_code=400)
            return await translate_libre(libretranslate.form_fields(form.multi_items()))
        if libretranslate.is_libre_json(raw):
            return await translate_libre(json.loads(raw))
        try:
            body = TranslateRequest.model_validate_json(raw or b"null")
        except ValidationError as e:
            return error(422, _validation_message(e))
        try:
            if body.src_lang == AUTO:  # (the identifier reads its model on first use: off the event loop)
                parts, plans, sources = await run_in_threadpool(plan_parts, body)
            else:
                parts, plans, sources = plan_parts(body)
            records = await translate_parts(parts, plans)
        except RequestRefused as e:
            return error(e.status, str(e), **({"limit": e.limit, "value": e.value} if e.limit else {}))
        return reply(body, records, sources)

    def plan_parts(body: TranslateRequest) -> tuple[list[Part], list[Plan], list[str] | None]:
        """The request split between the models of its lines' languages, each part planned, and
        each line's source language where src_lang auto identified it."""
        check_line_count(len(body.text), limits)
        parts, identified = split_request(body, models)
        plans = [plan_request(part.body, part.served.translator, limits, part.numbers) for part in parts]
        return parts, plans, identified if identified is not None else plans[0].sources if len(plans) == 1 else None

    async def translate_parts(parts: list[Part], plans: list[Plan]) -> list[list[dict]]:
        """Each line's records, every model translating its part at once, in the request's order."""
        results = await asyncio.gather(*(part.served.batcher.translate(plan.lines, plan.cfg, plan.extras)
                                         if plan.lines else asyncio.sleep(0, []) for part, plan in zip(parts, plans)))
        return in_request_order(parts, [records_of(result, part.served.translator) for part, result in zip(parts, results)])

    async def translate_libre(fields: dict) -> JSONResponse:
        """LibreTranslate's POST /translate (nmt.serve.libretranslate), by the model of its direction."""
        try:
            asked, texts, counts = await libre_translations(fields)
        except libretranslate.LibreError as e:
            return JSONResponse({"error": str(e)}, status_code=400)
        except RequestRefused as e:
            return error(400 if e.status == 422 else e.status, str(e))
        return JSONResponse(libretranslate.answer(asked, texts, counts))

    async def libre_translations(fields: dict, markup_where_it_looks_so: bool = False, pages: bool = True,
                                 markup_of_texts: list[bool] | None = None) -> tuple:
        """A LibreTranslate request translated: the request, each line's outputs (best first) and
        each text's count of lines. Its lines are markup as its format says, or (a file's) where
        they look like markup, or (a documentation page's texts) as `markup_of_texts` says of each;
        with format html, each text is an HTML page read block by block (`pages`; a file's texts
        are blocks already)."""
        # (source auto reads the identifier's model on first use: off the event loop)
        asked = await run_in_threadpool(libretranslate.parse, fields, models.directions())
        lines, counts = libretranslate.lines_of(asked, pages)
        check_line_count(len(lines), limits)
        line_markup = [flag for flag, count in zip(markup_of_texts, counts) for _ in range(count)] \
            if markup_of_texts is not None else None
        line_sources = [code for code, count in zip(asked.text_sources(), counts) for _ in range(count)]
        parts, plans = [], []
        for index, taken in models.for_lines(line_sources, [asked.target] * len(lines)).items():
            part = Part(models.models[index], taken, libre_body(
                asked, models.models[index], [lines[i] for i in taken], [line_sources[i] for i in taken],
                None if markup_where_it_looks_so else asked.markup))
            parts.append(part)
            plans.append(plan_request(part.body, part.served.translator, limits, part.numbers))
            if line_markup is not None:
                plans[-1].lines = [replace(line, markup=line_markup[i], page=True) for line, i in zip(plans[-1].lines, taken)]
        records = await translate_parts(parts, plans)
        return asked, [[record["text"] for record in line] for line in records], counts

    def libre_body(asked, served: Served, lines: list[str], sources: list[str], markup: bool | None) -> TranslateRequest:
        """A LibreTranslate request's lines for one model, as nmt's API asks for them."""
        hypotheses = 1 + asked.alternatives
        beam = max(hypotheses, served.translator.recipe.decode.beam_size) if asked.alternatives else None
        return TranslateRequest(text=lines, markup=markup, nbest=hypotheses, beam_size=beam,
                                **({"src_lang": sources, "tgt_lang": asked.target} if served.multidirectional else {}))

    @app.post("/translate_file")
    async def translate_file(request: Request):
        """LibreTranslate's file translation (nmt.serve.files): a multipart form with the file,
        source and target; the answer names where to download the translated file."""
        try:
            if not request.headers.get("content-type", "").startswith("multipart/form-data"):
                raise libretranslate.LibreError("Invalid request: a multipart form with file, source and target")
            try:
                form = await request.form()
            except HTTPException as e:  # a malformed form (starlette's parser, within an app)
                raise libretranslate.LibreError(f"Invalid request: {e.detail}") from None
            upload = form.get("file")
            if upload is None or isinstance(upload, str) or not upload.filename:
                raise libretranslate.LibreError("Invalid request: missing file parameter")
            fields = {key: value for key, value in libretranslate.form_fields(form.multi_items()).items()
                      if key in ("source", "target")}
            source = files.read_upload(upload.filename, await upload.read(), models.models[0].translator.recipe.decode,
                                       fields.get("target"), fields.get("source"))
            if source.markup is True:
                fields["format"] = "html"
            each = source.markup if isinstance(source.markup, list) else None
            asked, texts, _ = await libre_translations({**fields, "q": source.texts or [""]},
                                                       markup_where_it_looks_so=source.markup is None, pages=False,
                                                       markup_of_texts=each or None)
        except libretranslate.LibreError as e:
            return JSONResponse({"error": str(e)}, status_code=400)
        except RequestRefused as e:
            return error(400 if e.status == 422 else e.status, str(e))
        translations = [outputs[0] or (text if source.whole else "") for outputs, text in zip(texts, source.texts)]
        if source.stops:
            translations = [without_stop_its_source_lacks(text, out) for text, out in zip(source.texts, translations)]
        key = translated_files.add(source.name, source.write(translations, asked.target))
        return JSONResponse({"translatedFileUrl": str(request.url_for("download_file", filename=key))})

    @app.get("/download_file/{filename}")
    async def download_file(filename: str):
        """A file translated by POST /translate_file, while it is among the last kept."""
        found = translated_files.get(filename)
        if found is None:
            return JSONResponse({"error": f"{filename}: no such translated file (or no longer kept)"}, status_code=404)
        name, content, media_type = found
        return Response(content, media_type=media_type, headers={"Content-Disposition": f'attachment; filename="{name}"'})

    @app.get("/languages")
    async def languages() -> list:
        """LibreTranslate's list of languages, each with its targets, over every model served."""
        return libretranslate.languages(models.directions())

    @app.post("/detect")
    async def detect(request: Request):
        """LibreTranslate's language detection, among the served source languages."""
        raw, content_type = await request.body(), request.headers.get("content-type", "")
        try:
            if libretranslate.is_form(content_type):
                fields = libretranslate.form_fields((await request.form()).multi_items())
            else:
                fields = json.loads(raw or b"null")
            texts, _ = libretranslate.texts_of(fields if isinstance(fields, dict) else {})
            sources = sorted({source for source, _ in models.directions()})
            # the identifier's first use reads its model: off the event loop
            return await run_in_threadpool(libretranslate.detections, texts, sources)
        except (HTTPException, ValueError) as e:  # a malformed form or JSON body, or a LibreError
            detail = e.detail if isinstance(e, HTTPException) else str(e)
            return JSONResponse({"error": detail if isinstance(e, libretranslate.LibreError)
                                 else f"Invalid request: {detail}"}, status_code=400)

    @app.get("/frontend/settings")
    async def frontend_settings() -> dict:
        return libretranslate.frontend_settings(models.directions(), limits.max_chars, files.FORMATS)

    return app


def _validation_message(e) -> str:
    """A request's first problem (pydantic's or FastAPI's validation error), as "field: what is wrong"."""
    first = e.errors()[0] if e.errors() else {}
    where = ".".join(str(part) for part in first.get("loc", ()) if part != "body") or "body"
    return f"{where}: {first.get('msg', 'invalid request')}"


def check_listening(host: str, port: int) -> None:
    """An NmtError where the server could not listen on host:port (a port in use or out of range,
    an address not this machine's), said before minutes of loading models, not after."""
    import socket

    if not 0 <= port <= 65535:
        raise NmtError(f"--port {port}: a port is a number from 0 to 65535")
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except OSError as e:
        raise NmtError(f"--host {host}: {e.strerror or e}") from None
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind(address)
        except OSError as e:
            raise NmtError(f"{host}:{port}: cannot listen there ({e.strerror or e})") from None


def serve(models, host: str, port: int, limits: ServeLimits, batch_wait_ms: float, batch_max_lines: int,
          model_name: str = "", log_level: str = "info", workers: int = 1) -> None:
    """Run the app under uvicorn until SIGINT/SIGTERM (requests in flight are answered first)."""
    import signal

    import uvicorn

    # uvicorn shuts down gracefully, then re-raises the signal it caught: SIGTERM then ends the
    # process with exit code 0 (a requested stop), Ctrl-C with 130 (through the CLI).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

    app = create_app(models, limits, batch_wait_ms, batch_max_lines, model_name, workers)
    uvicorn.run(app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=30)
