"""The engine interface: each engine says what it can do, and one message refuses what it cannot;
one request model and one check for jsonl lines and served lines."""

from types import SimpleNamespace

import pytest

from nmt.decode.engines.ctranslate2_engine import CTranslate2Translator
from nmt.decode.engines.capabilities import CTRANSLATE2, TORCH, refusal, require
from nmt.decode.engines.torch_engine import Translator
from nmt.errors import NmtError


def test_each_engine_declares_its_capabilities():
    assert Translator.capabilities is TORCH and CTranslate2Translator.capabilities is CTRANSLATE2
    assert TORCH.constraints and TORCH.alignments and TORCH.prefixes
    assert not CTRANSLATE2.constraints and not CTRANSLATE2.alignments and CTRANSLATE2.prefixes


def test_a_missing_capability_is_refused_with_one_message_naming_the_line():
    torch_engine, export = SimpleNamespace(capabilities=TORCH), SimpleNamespace(capabilities=CTRANSLATE2)
    assert refusal(torch_engine, "constraints") is None and refusal(torch_engine, "alignments") is None
    require(torch_engine, "constraints", line=3)  # nothing to refuse
    assert refusal(export, "constraints").startswith("constraints: CTranslate2 has no lexical constraints")
    assert refusal(export, "alignments").startswith("alignments: this CTranslate2 export returns no attention")
    assert refusal(export, "epsilon") == ("epsilon: CTranslate2 has no epsilon sampling (decode.epsilon); translate "
                                          "with the checkpoint, not an export") and refusal(torch_engine, "epsilon") is None
    with pytest.raises(NmtError, match=r"^line 3: constraints: CTranslate2 has no lexical constraints"):
        require(export, "constraints", line=3)


def test_one_request_check_for_jsonl_lines_and_served_lines():
    from nmt.decode.request import LineRequest, RequestLimits, RequestRefused, check_request, parse_request

    torch_engine, export = SimpleNamespace(capabilities=TORCH), SimpleNamespace(capabilities=CTRANSLATE2)
    request = parse_request('{"text": "A dog.", "prefix": "Ein", "constraints": ["Hund"]}', 1)
    assert request == LineRequest(text="A dog.", prefix="Ein", constraints=["Hund"])
    check_request(request, torch_engine, 1)
    for line, message in (('{"text": 3}', "line 2: text: a string is expected"),
                          ('{"prefix": "x"}', "line 2: text: missing"),
                          ('{"text": "a", "colour": 1}', "line 2: colour: unknown field"),
                          ('{"text": "a", "constraints": "Hund"}', "line 2: constraints: a list of strings is expected"),
                          ("[1]", "line 2: a JSON object is expected"), ("{", "line 2: not JSON")):
        with pytest.raises(RequestRefused, match=f"^{message}"):
            parse_request(line, 2)
    refusals = [(request, export, RequestLimits(), "line 4: constraints: CTranslate2 has no lexical constraints", 422),
                (LineRequest(text="a\nb"), torch_engine, RequestLimits(), "line 4: text: a line may not contain", 422),
                (LineRequest(text="a", constraints=[" "]), torch_engine, RequestLimits(), "line 4: constraints: an empty", 422),
                (LineRequest(text="abc", prefix="abcd"), torch_engine, RequestLimits(max_chars=3),
                 r"line 4: prefix: 4 characters, at most 3 \(max_chars\)", 413),
                (LineRequest(text="a", constraints=["x", "y"]), torch_engine, RequestLimits(max_constraints=1),
                 r"line 4: constraints: 2 phrases, at most 1 \(max_constraints\)", 413)]
    for bad, engine, limits, message, status in refusals:
        with pytest.raises(RequestRefused, match=f"^{message}") as refused:
            check_request(bad, engine, 4, limits)
        assert refused.value.status == status and (refused.value.limit is not None) == (status == 413)


def test_a_request_travels_whole_from_jsonl_and_serve_down_to_translation(trained_tiny, monkeypatch):
    """What a line asks (text, prefix, constraints, markup, language tokens) reaches translation as
    one Line, from `translate --input-format jsonl` and from `serve` alike."""
    from nmt.decode import stream
    from nmt.decode.engines.engine import load_engine
    from nmt.decode.request import Line
    from nmt.serve.app import ServeLimits, TranslateRequest, plan_request

    translator = load_engine([trained_tiny.out / "checkpoints" / "last.pt"])
    seen = []
    real = stream.translate
    monkeypatch.setattr(stream, "translate", lambda t, requests, *args: seen.extend(requests) or real(t, requests, *args))
    jsonl = ['{"text": "A dog.", "prefix": "Ein", "constraints": ["Hund"], "markup": true}', "not json"]
    list(stream.translate_stream(translator, jsonl, trained_tiny.decode, "jsonl", input_format="jsonl"))
    assert seen == [Line("A dog.", "Ein", ("Hund",), True), Line("")]
    plan = plan_request(TranslateRequest(text=["A dog.", "A cat."], prefix=["Ein", ""], constraints=[["Hund"], []],
                                         markup=True), translator, ServeLimits())
    assert plan.lines == [Line("A dog.", "Ein", ("Hund",), True), Line("A cat.", "", (), True)]


class ListsRefused:
    """A sentencepiece processor that records every text it encodes and refuses a list of them."""

    def __init__(self, processor):
        self.processor, self.encoded = processor, []

    def encode(self, text, *args, **kwargs):
        assert isinstance(text, str), f"sentencepiece asked to encode a list of {len(text)} texts"
        self.encoded.append(text)
        return self.processor.encode(text, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.processor, name)


def test_translation_encodes_line_by_line_never_a_list(trained_tiny):
    """Sentencepiece's encode of a list starts a pool of threads at every call, milliseconds per
    request beside torch's threads (nmt.data.tokenizer.encode_lines): every text on the way to the
    search (sentences, prefixes, constraints, the words that place tags) is encoded alone, to the
    same translations."""
    from nmt.data.tokenizer import encode_lines
    from nmt.decode.engines.engine import load_engine
    from nmt.decode.translate import translate_lines

    translator = load_engine([trained_tiny.out / "checkpoints" / "last.pt"])
    lines = ["A dog runs. A cat sleeps.", "A <b>man</b> smiles.", "", "A woman sings."]
    asks = {"prefixes": ["Ein", "", "", ""], "constraints": [[], [], [], ["Frau"]], "markup": [False, True, False, False]}
    before = [[h.text for h in hyps] for hyps in translate_lines(translator, lines, trained_tiny.decode, **asks)]
    source, target = ListsRefused(translator.src_tokenizer), ListsRefused(translator.tgt_tokenizer)
    translator.src_tokenizer, translator.tgt_tokenizer = source, target
    after = [[h.text for h in hyps] for hyps in translate_lines(translator, lines, trained_tiny.decode, **asks)]
    assert after == before and len(after) == len(lines)
    assert {"A dog runs.", "A cat sleeps."} <= set(source.encoded) and {"Ein", "Frau"} <= set(target.encoded)
    assert encode_lines(source.processor, lines) == source.processor.encode(lines)


def test_a_compute_type_or_device_an_engine_lacks_is_a_one_line_error_before_anything_loads(tmp_path):
    """--compute-type is CTranslate2's: the torch engine refuses it rather than ignore it, and
    CTranslate2 is asked which devices and compute types it has here before any conversion."""
    ctranslate2 = pytest.importorskip("ctranslate2")
    from nmt.decode.engines.engine import load_engine

    never_read = [tmp_path / "missing.pt"]  # every check comes before the checkpoint is opened
    lacking = sorted({"float16", "bfloat16", "int8_float16"} - ctranslate2.get_supported_compute_types("cpu"))[0]
    for options, message in (({"compute_type": "int8"}, r"--compute-type int8 is CTranslate2's \(add --engine"),
                             ({"engine": "ctranslate2", "compute_type": "int4"}, r"--compute-type int4: choose one of"),
                             ({"engine": "ctranslate2", "compute_type": lacking},
                              rf"--compute-type {lacking}: CTranslate2 on cpu computes in .*float32"),
                             ({"engine": "ctranslate2", "device": "gpu"}, r"--device gpu: CTranslate2 runs on cpu, cuda"),
                             ({"engine": "ctranslate2", "device": "cpu:1"}, r"--device cpu:1: CTranslate2 runs on"),
                             ({"engine": "ctranslate2", "device": f"cuda:{ctranslate2.get_cuda_device_count()}"},
                              r"--device cuda:\d+: CTranslate2 sees (no|\d+) CUDA device")):
        with pytest.raises(NmtError, match=f"^{message}"):
            load_engine(never_read, **options)


def test_a_directory_that_is_not_a_model_nmt_translates_is_named_for_what_it_is(tmp_path):
    from nmt.decode.engines.engine import load_engine

    onnx, hf, run = tmp_path / "onnx", tmp_path / "hf", tmp_path / "run"
    for folder, marker in ((onnx, "onnx_config.json"), (hf, "config.json"), (run / "checkpoints", "best.pt")):
        folder.mkdir(parents=True)
        (folder / marker).write_text("{}")
    for path, message in ((onnx, r"this ONNX export was written by nmt \(unknown\) without its recipe; export it again"),
                          (hf, r"a Hugging Face transformers model; translate the checkpoint it came from, or `nmt import"),
                          (run, r"a directory, neither a checkpoint nor a CTranslate2 or ONNX export \(it holds checkpoints/best.pt\)$")):
        with pytest.raises(NmtError, match=f"^{path}: {message}"):
            load_engine([path])
