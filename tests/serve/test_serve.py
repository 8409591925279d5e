"""`nmt serve`: the real server on 127.0.0.1, spoken to over HTTP."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

from nmt.serve.worker_process import LoadSpec, resolve_worker_modes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, *args: str):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen([sys.executable, "-m", "nmt", "serve", *args, "--port", str(self.port)],
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=os.environ | {"PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.process.stdout.read().decode()
            try:
                if self.get("/health")[0] == 200:
                    return
            except OSError:
                time.sleep(0.05)
        raise AssertionError("server did not start within 60 s")

    def request(self, method: str, path: str, body: bytes | None = None,
                content_type: str = "application/json") -> tuple[int, bytes, str]:
        req = urllib.request.Request(self.url + path, data=body, method=method, headers={"Content-Type": content_type})
        try:
            with urllib.request.urlopen(req, timeout=60) as response:
                return response.status, response.read(), response.headers.get("Content-Type", "")
        except urllib.error.HTTPError as e:
            return e.code, e.read(), e.headers.get("Content-Type", "")

    def get(self, path: str) -> tuple[int, dict]:
        status, body, _ = self.request("GET", path)
        return status, json.loads(body)

    def post(self, payload) -> tuple[int, dict]:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        status, reply, content_type = self.request("POST", "/translate", body)
        assert content_type.startswith("application/json"), content_type
        return status, json.loads(reply)

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=30)
        finally:
            self.process.kill()


@pytest.fixture(scope="module")
def server(trained_tiny):
    s = Server(str(trained_tiny.out / "checkpoints" / "best.pt"), "--max-lines", "8", "--max-chars", "200",
               "--batch-wait-ms", "300")
    yield s
    assert s.stop() == 0


def test_translate_health_and_page(server):
    status, health = server.get("/health")
    assert status == 200 and health["status"] == "ok" and health["direction"] == "en-de"
    # the default on a CPU of 2+ cores: two workers, each in a process of its own where memory allows
    spec = LoadSpec(health["model"], "cpu", "torch", "default", 1)
    assert health["workers"] == (2 if os.cpu_count() >= 2 else 1)
    assert [health["worker_mode"]] == resolve_worker_modes("auto", health["workers"], [(spec, "torch")])
    status, reply = server.post({"text": ["A black dog leaps over a log.", "", "Asian man sweeping the walkway."],
                                 "beam_size": 2, "scores": True})
    assert status == 200
    first, empty, third = reply["translations"]
    assert first and third and empty == ""  # an empty string is kept as an empty line
    assert len(reply["scores"]) == 3 and reply["scores"][0] < 0
    status, page, content_type = server.request("GET", "/")
    assert status == 200 and content_type.startswith("text/html") and b"<textarea" in page
    # a file goes to LibreTranslate's file API, its types as /frontend/settings lists them
    assert b'<input id="file" type="file">' in page and b'fetch("/translate_file"' in page
    assert b'fetch("/frontend/settings")' in page and b"supportedFilesFormat" in page


def test_nbest_is_sorted(server):
    status, reply = server.post({"text": ["Two dogs play in the snow."], "beam_size": 4, "nbest": 3})
    assert status == 200
    scores = [h["score"] for h in reply["nbest"][0]]
    assert len(scores) == 3 and scores == sorted(scores, reverse=True)
    assert reply["nbest"][0][0]["text"] == reply["translations"][0]


def test_bad_requests_are_4xx_json_naming_the_problem(server):
    assert server.post(b"{not json") [0] == 422
    status, reply = server.post({"text": [1, 2]})
    assert status == 422 and reply["error"].startswith("text.0")
    status, reply = server.post({"text": "one string"})
    assert status == 422 and reply["error"].startswith("text")
    status, reply = server.post({"text": ["a"], "beam_size": "wide"})
    assert status == 422 and "beam_size" in reply["error"]
    status, reply = server.post({"text": ["a"], "colour": "red"})
    assert status == 422 and "colour" in reply["error"]
    status, reply = server.post({"text": ["a"] * 9})
    assert status == 413 and reply["limit"] == "max_lines" and "max_lines" in reply["error"]
    status, reply = server.post({"text": ["ok", "x" * 201]})
    assert status == 413 and reply["limit"] == "max_chars" and "line 2" in reply["error"]
    assert server.post({"text": []}) == (200, {"translations": []})
    assert server.get("/health")[0] == 200  # still serving


def test_prefixes_token_scores_and_alignments_per_line(server):
    text = ["A black dog leaps over a log.", "A black dog leaps over a log.", ""]
    status, reply = server.post({"text": text, "prefix": ["Zwei Katzen", "", "Ein"], "token_scores": True,
                                 "alignments": True, "beam_size": 2})
    assert status == 200, reply
    first, second, empty = reply["translations"]
    assert first.startswith("Zwei Katzen") and not second.startswith("Zwei") and empty == ""
    assert [len(s) > 0 for s in reply["token_log_probs"]] == [True, True, False]
    assert all(p <= 0 for p in reply["token_log_probs"][0])
    assert reply["alignments"][1].split()[0].endswith("-0") and reply["alignments"][2] == ""
    status, reply = server.post({"text": text, "prefix": ["Ein"]})
    assert status == 422 and reply["error"].startswith("prefix: 1 entries for 3 lines")
    status, reply = server.post({"text": ["a"], "prefix": ["x" * 201]})
    assert status == 413 and reply["limit"] == "max_chars" and reply["error"].startswith("line 1: prefix:")
    status, reply = server.post({"text": ["A black dog leaps over a log.", "A dog."], "constraints": [["Katze"], []]})
    assert status == 200 and "Katze" in reply["translations"][0] and reply["constraints_met"] == [True, True]
    status, reply = server.post({"text": ["a"], "constraints": [["Hund"], []]})
    assert status == 422 and reply["error"].startswith("constraints: 2 entries for 1 lines")
    status, reply = server.post({"text": ["a"], "constraints": [["x"] * 9]})
    assert status == 413 and reply["limit"] == "max_constraints"
    status, reply = server.post({"text": ["a"], "constraints": [[" "]]})
    assert status == 422 and reply["error"] == "line 1: constraints: an empty constraint"


def test_markup_keeps_its_tags_with_the_same_limits(server):
    text = ['A <a href="x>y">black <i>dog</i></a> leaps over a log.', "", "A <b>dog"]
    status, reply = server.post({"text": text, "markup": True})
    assert status == 200, reply
    first, empty, unclosed = reply["translations"]
    assert first.count('<a href="x>y">') == 1 and first.count("<i>") == 1 and first.count("</i>") == 1
    assert first.index('<a href="x>y">') < first.index("<i>") < first.index("</i>") < first.index("</a>")
    assert empty == "" and "<b>" in unclosed
    status, reply = server.post({"text": ["<b>" + "x" * 200 + "</b>"], "markup": True})
    assert status == 413 and reply["limit"] == "max_chars"
    status, reply = server.post({"text": ["a"], "markup": "yes"})
    assert status == 422 and reply["error"].startswith("markup:")
    # not given: a line with well-formed tags is markup, one with a stray "<" text; false: text
    lines = ['A <a href="x>y">black <i>dog</i></a> leaps over a log.', "a < b dog"]
    answers = {markup: server.post({"text": lines} | ({} if markup is None else {"markup": markup}))[1]["translations"]
               for markup in (None, True, False)}
    assert answers[None][0] == answers[True][0] != answers[False][0]
    assert answers[None][1] == answers[False][1]


def test_requests_arriving_together_share_a_model_call(server):
    before = server.get("/health")[1]["served"]
    sentences = ["A man rides a bike.", "Two dogs play in the snow.", "A woman is singing.", "Kids play soccer."]
    replies = [None] * 8

    def client(i: int) -> None:
        replies[i] = server.post({"text": [sentences[i % 4]]})

    threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(status == 200 and len(reply["translations"]) == 1 for status, reply in replies)
    assert replies[0][1] == replies[4][1]  # the same sentence gets the same answer in any company
    after = server.get("/health")[1]["served"]
    assert after["requests"] - before["requests"] == 8
    assert after["model_calls"] - before["model_calls"] < 8


def test_sigterm_answers_the_request_in_flight_then_exits(trained_tiny):
    # (worker threads: the module's server stops its worker processes as it ends; every output at
    # least 60 tokens long, so that the request is still being translated when the signal comes)
    s = Server(str(trained_tiny.out / "checkpoints" / "best.pt"), "--worker-mode", "threads",
               "--set", "decode.min_len=60", "--set", "decode.max_len_b=80")
    reply = {}

    def client() -> None:
        reply.update(zip(("status", "body"), s.post({"text": [f"A dog runs after {n} balls." for n in range(8)]})))
        reply["answered"] = time.monotonic()

    thread = threading.Thread(target=client)
    thread.start()
    deadline = time.monotonic() + 30
    while s.get("/health")[1]["served"]["requests_in_flight"] == 0 and "answered" not in reply:
        assert time.monotonic() < deadline, "the request never reached the server"
        time.sleep(0.002)
    signalled = time.monotonic()
    assert s.stop() == 0
    thread.join(timeout=30)
    assert reply["status"] == 200 and len(reply["body"]["translations"]) == 8
    assert reply["answered"] > signalled  # it was in flight when the signal came, and was answered


def test_an_exported_model_is_served_through_ctranslate2(trained_tiny, tmp_path):
    from nmt.export import export_checkpoint

    export_checkpoint(trained_tiny.out / "checkpoints" / "best.pt", tmp_path / "ct2", quantization="int8")
    s = Server(str(tmp_path / "ct2"))
    try:
        assert s.get("/health")[1]["engine"] == "ctranslate2"
        status, reply = s.post({"text": ["A black dog leaps over a log.", ""], "nbest": 2, "beam_size": 2})
        assert status == 200 and reply["translations"][0] and reply["translations"][1] == ""
        assert len(reply["nbest"][0]) == 2
        status, reply = s.post({"text": ["A black dog leaps over a log."], "prefix": ["Zwei Katzen"], "token_scores": True})
        assert status == 200 and reply["translations"][0].startswith("Zwei Katzen") and reply["token_log_probs"][0]
        status, reply = s.post({"text": ["A dog."], "constraints": [["Hund"]]})
        assert status == 422 and reply["error"].startswith("line 1: constraints: CTranslate2 has no lexical constraints")
        # alignments from the export's penultimate layer (nmt.export.ctranslate2.attention_for_alignments)
        status, reply = s.post({"text": ["A black dog leaps over a log.", "A dog."], "alignments": True})
        assert status == 200 and all(reply["alignments"]) and reply["alignments"][1].split()[0].endswith("-0")
        status, reply = s.post({"text": ["A <b>black</b> dog leaps over a log.<br/>", "A 42 dog."], "markup": True})
        assert status == 200 and reply["translations"][0].count("<b>") == 1 and "</b>" in reply["translations"][0]
        assert reply["translations"][0].endswith("<br/>") and "42" in reply["translations"][1]
    finally:
        assert s.stop() == 0


def test_a_ctranslate2_model_takes_each_workers_call_at_once(trained_tiny, tmp_path):
    """CTranslate2 translates one batch at a time unless told otherwise (inter_threads): the
    server's workers would queue inside it, one core busy (bench/results/serve_load_ctranslate2.json)."""
    from nmt.export import export_checkpoint
    from nmt.serve.models import load_served

    export_checkpoint(trained_tiny.out / "checkpoints" / "best.pt", tmp_path / "ct2")
    for workers in (1, 2):
        served = load_served([tmp_path / "ct2"], threads=1, workers=workers)
        assert served.first.translator.translator.num_translators == workers


def test_serve_and_jsonl_answer_with_the_same_hypothesis_records(trained_tiny):
    """One output schema: serve's fields are those of `translate --output-format jsonl`'s records,
    line for line; and n-best beyond the beam is refused by the recipe's own decode check."""
    from nmt.decode.engines.engine import load_engine
    from nmt.decode.request import RequestRefused, hypothesis_record
    from nmt.decode.translate import translate_lines
    from nmt.serve.app import ServeLimits, TranslateRequest, plan_request, records_of, reply

    translator = load_engine([trained_tiny.out / "checkpoints" / "last.pt"])
    lines = ["A dog runs.", "Two men sit on a bench."]
    body = TranslateRequest(text=lines, beam_size=2, nbest=2, scores=True, token_scores=True)
    plan = plan_request(body, translator, ServeLimits())
    results = translate_lines(translator, lines, plan.cfg, extras=plan.extras)
    answer = reply(body, records_of(results, translator))
    records = [[hypothesis_record(translator, h) for h in hyps] for hyps in results]
    assert answer["translations"] == [line[0]["text"] for line in records]
    assert answer["scores"] == [line[0]["score"] for line in records]
    assert answer["token_log_probs"] == [line[0]["token_log_probs"] for line in records]
    assert answer["nbest"] == [[{"text": h["text"], "score": h["score"]} for h in line] for line in records]
    with pytest.raises(RequestRefused, match=r"nbest \(3\) must not exceed beam_size \(2\)"):
        plan_request(TranslateRequest(text=lines, beam_size=2, nbest=3), translator, ServeLimits())


def test_workers_and_threads_share_the_cores(monkeypatch):
    from nmt.serve.worker_process import workers_and_threads

    monkeypatch.setattr("os.cpu_count", lambda: 8)
    assert workers_and_threads(0, 0, "cpu") == (2, 4)
    assert workers_and_threads(3, 0, "cpu") == (3, 2)
    assert workers_and_threads(0, 6, "cpu") == (2, 6)  # threads given: kept
    assert workers_and_threads(0, 0, "cuda") == (1, 0)
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    assert workers_and_threads(0, 0, "cpu") == (1, 1)


def test_a_port_that_cannot_be_listened_on_is_a_one_line_error_before_loading(tmp_path):
    """A port in use or out of range: one line and exit code 2 at once, not uvicorn's log after
    the models have loaded (the checkpoint here does not exist, so loading would fail otherwise)."""
    from typer.testing import CliRunner

    from nmt.cli import app
    from tests.conftest import one_line_error

    never_loaded = str(tmp_path / "missing.pt")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        one_line_error(CliRunner().invoke(app, ["serve", never_loaded, "--port", str(port)]),
                       f"127.0.0.1:{port}: cannot listen there")
    one_line_error(CliRunner().invoke(app, ["serve", never_loaded, "--port", "70000"]), "--port 70000")


@pytest.mark.parametrize("option, value, least", [("--max-lines", "0", "1"), ("--batch-max-lines", "0", "1"),
                                                  ("--max-chars", "0", "1"), ("--batch-wait-ms", "-1", "0"),
                                                  ("--max-queued-lines", "-5", "0"), ("--workers", "-1", "0")])
def test_limits_that_would_refuse_every_request_or_mean_nothing_are_one_line_errors(tmp_path, option, value, least):
    """--max-lines 0 or --max-chars 0 would refuse every request, a negative wait or number of
    workers means nothing: refused before the models load."""
    from typer.testing import CliRunner

    from nmt.cli import app
    from tests.conftest import one_line_error

    one_line_error(CliRunner().invoke(app, ["serve", str(tmp_path / "missing.pt"), option, value]),
                   f"{option} {value}: at least {least}")


def test_the_fork_server_starts_before_the_models_load_where_their_workers_will_be_processes(monkeypatch, tmp_path,
                                                                                             trained_tiny):
    """`nmt serve` starts its workers' fork server before it loads the models (its imports run on
    another core meanwhile) exactly where workers_and_threads and resolve_worker_modes will put the
    workers in processes: a checkpoint on the torch engine, on a CPU, two workers or more, in memory."""
    from nmt.serve import worker_process

    started = []
    monkeypatch.setattr(worker_process, "start_fork_server", lambda: started.append(True))
    monkeypatch.setattr("os.cpu_count", lambda: 4)
    memory = [64 * 2**30]
    monkeypatch.setattr(worker_process, "available_memory_bytes", lambda: memory[0])
    checkpoint = trained_tiny.out / "checkpoints" / "best.pt"

    def starts(paths=(checkpoint,), device="cpu", engine="torch", workers=0, mode="auto") -> bool:
        started.clear()
        worker_process.start_fork_server_where_forking(list(paths), device, engine, workers, 0, mode)
        return started == [True]

    assert starts() and starts(workers=3) and starts(mode="processes", workers=1)
    assert starts(paths=(tmp_path, checkpoint))  # the checkpoint's workers, beside an export's
    assert not starts(workers=1) and not starts(device="cuda") and not starts(engine="ctranslate2")
    assert not starts(paths=(tmp_path,)) and not starts(mode="threads")
    assert not starts(mode="bogus") and not starts(workers=-1)  # refused later, in one line
    memory[0] = 2**20
    assert not starts()  # too little memory for a copy each: threads
