"""`nmt serve`: a trained model behind HTTP.

  POST /translate  {"text": ["...", ...], "beam_size": 4, "nbest": 1, "scores": false,
                    "prefix": ["...", ...], "constraints": [["...", ...], ...],
                    "token_scores": false, "alignments": false,
                    "tgt_lang": "fr" or ["fr", "de", ...], "src_lang": ..., "zero_shot": false,
                    "markup": false}
                   -> {"translations": ["...", ...]} (+ "scores", "nbest", "token_log_probs",
                      "alignments" when asked)
  GET  /health     -> {"status": "ok", "engine": ..., "direction": ...}
  GET  /           a page to try the model in a browser

One output per input line, empty lines included. Limits on lines per request and characters per
line answer 413 with a JSON error naming the limit; malformed JSON or wrong types answer 422.
"""

from __future__ import annotations

import functools
import sys
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr

from nmt.data.languages import direction_control_ids
from nmt.decode.casing import hypothesis_text
from nmt.decode.capabilities import refusal
from nmt.decode.request import LineRequest, RequestLimits, RequestRefused, check_request
from nmt.errors import NmtError
from nmt.serve.batcher import Batcher

STATIC = Path(__file__).with_name("static")


@dataclass
class ServeLimits:
    max_lines: int = 64  # lines per request
    max_chars: int = 2000  # characters per line
    max_beam: int = 16
    max_constraints: int = 8  # phrases per line


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
    src_lang: StrictStr | None = None
    zero_shot: StrictBool = False  # allow directions the model was not trained on
    markup: StrictBool = False  # the lines are inline markup: tags kept around the translated words


def require_fastapi():
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise NmtError("the server is not installed: pip install 'nmt[serve]'") from None


def create_app(translator, limits: ServeLimits = ServeLimits(), batch_wait_ms: float = 5.0,
               batch_max_lines: int = 256, model_name: str = ""):
    """The ASGI app for one loaded translator (nmt.decode.translate.load_engine)."""
    require_fastapi()
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import FileResponse, JSONResponse

    batcher: Batcher | None = None

    @asynccontextmanager
    async def lifespan(app):
        nonlocal batcher
        batcher = Batcher(translator, batch_wait_ms, batch_max_lines)
        app.state.batcher = batcher
        yield
        batcher.close()

    app = FastAPI(title="nmt", lifespan=lifespan, docs_url=None, redoc_url=None)
    engine = translator.capabilities.name
    data = translator.recipe.data
    defaults = translator.recipe.decode

    def error(status: int, message: str, **extra) -> JSONResponse:
        return JSONResponse({"error": message, **extra}, status_code=status)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(part) for part in first.get("loc", ()) if part != "body") or "body"
        return error(422, f"{where}: {first.get('msg', 'invalid request')}")

    @app.get("/health")
    async def health() -> dict:
        s = batcher.stats
        return {"status": "ok", "engine": engine, "model": model_name,
                "direction": f"{data.src_lang}-{data.tgt_lang}",
                "directions": [f"{s}-{t}" for s, t in data.directions()],
                "served": {"requests": s.requests, "lines": s.lines, "model_calls": s.calls,
                           "busy_seconds": round(s.busy_seconds, 3)}}

    @app.get("/")
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    @app.post("/translate")
    async def translate(body: TranslateRequest):
        if len(body.text) > limits.max_lines:
            return error(413, f"{len(body.text)} lines: at most {limits.max_lines} per request (max_lines)",
                         limit="max_lines", value=limits.max_lines)
        if body.prefix is not None and len(body.prefix) != len(body.text):
            return error(422, f"prefix: {len(body.prefix)} entries for {len(body.text)} lines (one per line, \"\" for none)")
        if body.constraints is not None and len(body.constraints) != len(body.text):
            return error(422, f"constraints: {len(body.constraints)} entries for {len(body.text)} lines (one list per line)")
        line_limits = RequestLimits(limits.max_chars, limits.max_constraints)
        for number, text in enumerate(body.text, start=1):
            request = LineRequest(text=text, prefix=body.prefix[number - 1] if body.prefix else "",
                                  constraints=body.constraints[number - 1] if body.constraints else [])
            try:
                check_request(request, translator, number, line_limits)
            except RequestRefused as e:
                extra = {"limit": e.limit, "value": e.value} if e.limit else {}
                return error(e.status, str(e), **extra)
        line_control_ids = None
        if body.tgt_lang is not None or body.src_lang is not None:
            wanted = body.tgt_lang if isinstance(body.tgt_lang, list) else [body.tgt_lang] * len(body.text)
            if len(wanted) != len(body.text):
                return error(422, f"tgt_lang: {len(wanted)} entries for {len(body.text)} lines (one, or one per line)")
            prefixes_of: dict = {}
            try:
                for lang in dict.fromkeys(wanted):
                    _, prefixes_of[lang] = direction_control_ids(translator.src_tokenizer, data, body.src_lang, lang,
                                                            body.zero_shot)
            except NmtError as e:
                return error(422, str(e).replace("--tgt-lang", "tgt_lang").replace("--zero-shot", '"zero_shot": true'))
            line_control_ids = [prefixes_of[lang] for lang in wanted]
        if body.alignments and (message := refusal(translator, "alignments")):
            return error(422, message)
        beam = body.beam_size or defaults.beam_size
        if beam > limits.max_beam:
            return error(413, f"beam_size {beam}: at most {limits.max_beam} (max_beam)",
                         limit="max_beam", value=limits.max_beam)
        nbest = body.nbest or 1
        if nbest > max(beam, 1):
            return error(422, f"nbest {nbest}: at most beam_size ({beam})")
        cfg = defaults.model_copy(update={
            "beam_size": beam, "nbest": nbest, "sampling": False,
            "length_penalty": defaults.length_penalty if body.length_penalty is None else body.length_penalty})
        extras = tuple(name for name, wanted in (("token_scores", body.token_scores), ("alignments", body.alignments))
                       if wanted)
        results = (await batcher.translate(body.text, cfg, body.prefix, extras, body.constraints, line_control_ids,
                                           body.markup) if body.text else [])
        detok = functools.partial(hypothesis_text, translator.tgt_tokenizer)
        reply: dict = {"translations": [detok(hyps[0]) for hyps in results]}
        if body.scores:
            reply["scores"] = [round(hyps[0].score, 4) for hyps in results]
        if body.constraints is not None:
            reply["constraints_met"] = [hyps[0].constraints_met is not False for hyps in results]
        if body.token_scores:
            reply["token_log_probs"] = [[round(p, 4) for p in hyps[0].token_log_probs or []] for hyps in results]
        if body.alignments:
            reply["alignments"] = [hyps[0].alignment or "" for hyps in results]
        if nbest > 1:
            reply["nbest"] = [[{"text": detok(h), "score": round(h.score, 4)} for h in hyps]
                              for hyps in results]
        return reply

    return app


def serve(translator, host: str, port: int, limits: ServeLimits, batch_wait_ms: float, batch_max_lines: int,
          model_name: str, log_level: str = "info") -> None:
    """Run the app under uvicorn until SIGINT/SIGTERM (requests in flight are answered first)."""
    import signal

    import uvicorn

    # uvicorn shuts down gracefully, then re-raises the signal it caught: SIGTERM then ends the
    # process with exit code 0 (a requested stop), Ctrl-C with 130 (through the CLI).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

    app = create_app(translator, limits, batch_wait_ms, batch_max_lines, model_name)
    uvicorn.run(app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=30)
