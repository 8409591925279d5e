"""`nmt export --format onnx`: the encoder and decoder-step graphs on onnxruntime give nmt's own
next-token log-probabilities step by step, and the translator (nmt.decode.onnx_translator)
translates every line as nmt does, greedy (its numpy reference too) and in beams, with the
recipe's search or another, for each model variant; the export as `nmt translate`'s and `nmt
serve`'s engine (nmt.decode.engines.onnx_engine); int8; errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from nmt.cli import app
from nmt.decode.engines.engine import load_engine
from nmt.decode.translate import decode_settings, translate_lines
from nmt.errors import NmtError
from nmt.special_tokens import EOS
from nmt.data.tokenizer import output_text
from tests.conftest import exported_variant, one_line_error, optional_module, trained_once
from tests.export.test_export import LINES, VARIANTS

onnxruntime, pytestmark = optional_module("onnxruntime")
runner = CliRunner()
AS_WRITTEN = ["decode.split_sentences=false", "decode.normalize_case=false", "decode.copy_verbatim=false",
              "decode.copy_names=false",
              "decode.precision=fp32"]  # the ONNX translator's lines are sentences, as they are written
GREEDY = ["decode.beam_size=1", "decode.no_repeat_ngram_size=0", *AS_WRITTEN]
# Settings that each change some line's output here (beam_search's rules on a tiny model).
SEARCHES = {"beam_size": 5, "length_penalty": 1.0, "length_penalty_form": "gnmt", "patience": 2.0, "min_len": 3,
            "no_repeat_ngram_size": 2}


@pytest.fixture(scope="module", params=list(VARIANTS))
def exported(request, trained_tiny, tmp_path_factory):
    return exported_variant(tmp_path_factory, trained_tiny, VARIANTS[request.param], "onnx")


@pytest.fixture(scope="module")
def tiny_export(trained_tiny, tmp_path_factory) -> Path:
    """The tiny model's ONNX export: the one its variant of `exported` reads (tests that edit it copy it)."""
    return exported_variant(tmp_path_factory, trained_tiny, (), "onnx")[1]


def nmt_outputs(engine, lines: list[str], settings: list[str]) -> list[str]:
    cfg = decode_settings(engine.recipe, None, {}, settings)
    return [output_text(engine.tgt_tokenizer, h[0].tokens) for h in translate_lines(engine, lines, cfg)]


def numpy_greedy(translator, lines: list[str]) -> list[str]:
    """OnnxTranslator.greedy's outputs, "" for an empty line."""
    encoded = [translator.source.encode(line) for line in lines]
    found = iter(translator.greedy([ids for ids in encoded if ids]))
    return [output_text(translator.target, next(found)) if ids else "" for ids in encoded]


def test_the_translator_translates_every_line_as_nmt_does(exported):
    """The recipe's beam search and greedy search (nmt's over the graphs, and the numpy
    reference): each line's output equals nmt's with the same settings."""
    from nmt.decode.onnx_translator import OnnxTranslator

    ckpt, out = exported
    own, translator = load_engine([ckpt]), OnnxTranslator(out)
    assert own.recipe.decode.beam_size > 1
    assert translator.encoder.get_session_options().intra_op_num_threads == torch.get_num_threads()
    assert translator.translate(LINES) == nmt_outputs(own, LINES, AS_WRITTEN)
    greedy = nmt_outputs(own, LINES, GREEDY)
    assert translator.translate(LINES, beam_size=1) == greedy
    assert numpy_greedy(translator, LINES) == greedy


def test_each_search_setting_the_export_keeps_reaches_the_search(trained_tiny, tiny_export, tmp_path):
    """onnx_config.json keeps the recipe's search; each setting changed (one at a time, then all
    together) changes the translator's outputs as it changes nmt's."""
    from nmt.decode.onnx_translator import OnnxTranslator

    ckpt = trained_tiny.out / "checkpoints" / "best.pt"
    shutil.copytree(tiny_export, tmp_path / "onnx")  # its onnx_config.json is edited below
    own, translator = load_engine([ckpt]), OnnxTranslator(tmp_path / "onnx")
    recipe_search = {key: getattr(own.recipe.decode, key) for key in SEARCHES}
    assert json.loads((tmp_path / "onnx" / "onnx_config.json").read_text())["search"] == recipe_search
    recipe_outputs, changed = nmt_outputs(own, LINES, AS_WRITTEN), 0
    for update in [*({key: value} for key, value in SEARCHES.items()), SEARCHES]:
        translator.settings = translator.settings.model_copy(update={**recipe_search, **update})
        expected = nmt_outputs(own, LINES, [*AS_WRITTEN, *(f"decode.{k}={v}" for k, v in update.items())])
        assert translator.translate(LINES) == expected, update
        changed += expected != recipe_outputs
    assert changed >= 3  # the settings reach the search
    # Batches of the recipe's decode.max_tokens source tokens (all the lines at once here), or of
    # fewer, or of a number of lines: the same outputs.
    assert translator.config["max_tokens"] == own.recipe.decode.max_tokens >= 200
    translator.settings = translator.settings.model_copy(update={**recipe_search, "max_tokens": 24})
    assert translator.translate(LINES) == translator.translate(LINES, batch_size=3) == recipe_outputs
    # An export written before "encoder_side" takes the encoder side per row, repeated for each
    # beam (this graph takes either: a row per sentence is a sentence of one beam).
    config = json.loads((tmp_path / "onnx" / "onnx_config.json").read_text())
    del config["encoder_side"]
    (tmp_path / "onnx" / "onnx_config.json").write_text(json.dumps(config))
    per_row = OnnxTranslator(tmp_path / "onnx")
    assert not per_row.graphs.shared and per_row.translate(LINES) == recipe_outputs


def assert_same_hypotheses(found: list, expected: list) -> None:
    """Each sentence's n-best: the same tokens, in the same order, with scores within 1e-4."""
    assert [[h.tokens for h in nbest] for nbest in found] == [[h.tokens for h in nbest] for nbest in expected]
    for nbest, own in zip(found, expected):
        for h, o in zip(nbest, own):
            assert h.score == pytest.approx(o.score, abs=1e-4) and h.log_prob == pytest.approx(o.log_prob, abs=1e-4)


def test_nmt_translate_and_serve_take_the_export_as_they_take_its_checkpoint(trained_tiny, tiny_export, tmp_path):
    """An export directory is an engine (nmt.decode.engines.onnx_engine): nmt's searches over the
    graphs give the checkpoint's n-best (greedy, the recipe's beam, sampling, lexical constraints
    and prefixes), forced decoding its scores; `nmt translate -c DIR` writes the checkpoint's
    file, jsonl with token scores and word alignments included; `nmt serve DIR` answers as it;
    what does not fit an export is a one-line error."""
    from fastapi.testclient import TestClient

    from nmt.serve.app import create_app
    from nmt.serve.models import load_served

    ckpt, out = trained_tiny.out / "checkpoints" / "best.pt", tiny_export
    own, onnx = load_engine([ckpt]), load_engine([out])
    assert onnx.capabilities.name == "onnx" and onnx.quantization == "float32" and onnx.recipe == own.recipe
    # onnxruntime's threads: torch's count (1 in this suite) unless --threads says, never its own every core
    for engine, threads in ((onnx, torch.get_num_threads()), (load_engine([out], threads=3), 3)):
        sessions = (engine.model.encoder, engine.model.decoder)
        assert [s.get_session_options().intra_op_num_threads for s in sessions] == [threads, threads]
    sources = [own.src_tokenizer.encode(line) for line in LINES if line]
    for settings in (GREEDY, [*AS_WRITTEN, "decode.nbest=3"],
                     [*AS_WRITTEN, "decode.sampling=true", "decode.top_k=8", "decode.seed=3"]):
        cfg = decode_settings(own.recipe, None, {}, settings)
        assert_same_hypotheses(onnx.translate_batch(sources, cfg), own.translate_batch(sources, cfg))
    cfg = decode_settings(own.recipe, None, {}, AS_WRITTEN)
    greedy = [nbest[0].tokens for nbest in own.translate_batch(sources, decode_settings(own.recipe, None, {}, GREEDY))]
    rolled = greedy[1:] + greedy[:1]  # each line held to another line's tokens: a change the search must make
    constraints, prefixes = [[output[1:3]] for output in rolled], [output[:1] for output in rolled]
    constrained = own.translate_batch(sources, cfg, prefixes, constraints)
    assert [nbest[0].tokens[:1] for nbest in constrained] == prefixes and all(h[0].constraints_met for h in constrained)
    assert_same_hypotheses(onnx.translate_batch(sources, cfg, prefixes, constraints), constrained)
    for found, expected in zip(onnx.score_batch(sources, greedy), own.score_batch(sources, greedy)):
        assert found == pytest.approx(expected, abs=1e-4)

    source = tmp_path / "in.en"
    source.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    written = {}
    for model in (ckpt, out):
        for fmt in ("text", "jsonl"):
            target = tmp_path / f"{model.name}.{fmt}"
            options = ["--output-format", "jsonl", "--nbest", "2", "--token-scores", "--alignments"] if fmt == "jsonl" else []
            result = runner.invoke(app, ["translate", "-c", str(model), "-i", str(source), "-o", str(target), *options])
            assert result.exit_code == 0, result.output
            written[model, fmt] = target.read_text(encoding="utf-8")
    assert written[out, "text"] == written[ckpt, "text"] and written[out, "text"].count("\n") == len(LINES)
    scored = 0
    for line, own_line in zip(*(written[model, "jsonl"].splitlines() for model in (out, ckpt))):
        found, expected = json.loads(line), json.loads(own_line)
        assert [(h["text"], h.get("alignment")) for h in found["hypotheses"]] == \
            [(h["text"], h.get("alignment")) for h in expected["hypotheses"]]
        for h, o in zip(found["hypotheses"], expected["hypotheses"]):  # (written to 4 decimals; none for an empty line)
            assert h.get("token_log_probs") == pytest.approx(o.get("token_log_probs"), abs=2e-4)
            scored += bool(o.get("token_log_probs"))
    assert scored >= len(LINES) and '"alignment": "0-0' in written[out, "jsonl"]
    with TestClient(create_app(load_served([out]))) as client:
        assert client.get("/health").json()["engine"] == "onnx"
        answer = client.post("/translate", json={"text": LINES[:4]})
        assert answer.status_code == 200 and answer.json()["translations"] == written[ckpt, "text"].splitlines()[:4]
        aligned = client.post("/translate", json={"text": LINES[:2], "alignments": True}).json()["alignments"]
        assert aligned == [json.loads(line)["hypotheses"][0]["alignment"] for line in written[ckpt, "jsonl"].splitlines()[:2]]

    described = runner.invoke(app, ["info", str(out)]).output  # nmt info: what the export holds, and whence
    assert f"{out}: ONNX (encoder and decoder-step graphs for onnxruntime), float32" in described
    assert f"exported     from {ckpt} at step 300" in described and "`nmt serve` run it" in described
    facts = json.loads(runner.invoke(app, ["info", str(out), "--json"]).output)
    own_facts = json.loads(runner.invoke(app, ["info", str(ckpt), "--json"]).output)
    assert facts["format"] == "onnx" and facts["step"] == own_facts["step"] == 300
    assert {k: facts[k] for k in ("model", "vocabulary", "direction", "recipe")} == \
        {k: own_facts[k] for k in ("model", "vocabulary", "direction", "recipe")}

    translate = ["translate", "-c", str(out), "-i", str(source), "-o", str(tmp_path / "refused")]
    for options, message in ((["--device", "cuda"], "--device cuda: an ONNX export runs on the CPU"),
                             (["--compute-type", "int8"], "--compute-type int8 is CTranslate2's"),
                             (["--engine", "ctranslate2"], "an ONNX export runs on onnxruntime"),
                             (["-c", str(ckpt)], "an exported model is translated on its own"),
                             (["--set", f"decode.shortlist={source}"], "decode.shortlist: an ONNX export decodes over")):
        one_line_error(runner.invoke(app, [*translate, *options]), message)
        assert not (tmp_path / "refused").exists()


@pytest.mark.parametrize("beams", [1, 3])
def test_each_step_gives_nmts_log_probabilities(exported, beams):
    """The graphs against Transformer.decode_step on a batch of two sources of different lengths,
    each with `beams` rows fed different tokens (the encoder side once per sentence, as the
    encoder gives it): the log-probabilities agree at every step within 1e-4."""
    ckpt, out = exported
    assert json.loads((out / "onnx_config.json").read_text())["encoder_side"] == "per_sentence"
    assert_steps_match(load_engine([ckpt]).model, out, torch.tensor([[11, 12, 13, 14, EOS], [15, 16, EOS, 0, 0]]),
                       beams, steps=6)


def assert_steps_match(model, out, src: torch.Tensor, beams: int, steps: int, rtol: float = 0.0) -> None:
    """The export in `out` and `model` fed the same tokens, `beams` rows per source of `src`, give
    the same log-probabilities at each of `steps` steps (within 1e-4, and `rtol`)."""
    encoder = onnxruntime.InferenceSession(str(out / "encoder.onnx"))
    decoder = onnxruntime.InferenceSession(str(out / "decoder.onnx"))
    keys, values, bias = encoder.run(None, {"src_ids": src.numpy()})
    config = json.loads((out / "onnx_config.json").read_text())
    rows = len(src) * beams
    past = np.zeros((config["decoder_layers"], rows, config["heads"], 0, config["head_dim"]), dtype=np.float32)
    past_keys, past_values = past, past.copy()
    with torch.no_grad():
        memory, src_mask = model.encode(src)
        state = model.start_decoding(memory, src_mask, beams=beams)
        tokens = torch.full((rows,), model.start_token)
        for step in range(steps):
            expected = model.decode_step(tokens, state)
            log_probs, past_keys, past_values, _ = decoder.run(None, {
                "tokens": tokens.numpy(), "position": np.array([step]), "src_bias": bias, "memory_keys": keys,
                "memory_values": values, "past_keys": past_keys, "past_values": past_values})
            np.testing.assert_allclose(log_probs, expected.numpy(), rtol=rtol, atol=1e-4)
            tokens = torch.arange(rows) * 5 + 7 + step  # any tokens: both sides are fed the same


def test_int8_export_and_bad_requests(trained_tiny, tmp_path):
    from nmt.decode.onnx_translator import OnnxTranslator

    ckpt = str(trained_tiny.out / "checkpoints" / "best.pt")
    out = tmp_path / "int8"
    result = runner.invoke(app, ["export", ckpt, "-o", str(out), "--format", "onnx", "--quantization", "int8"])
    assert result.exit_code == 0 and "int8" in result.output, result.output
    assert json.loads((out / "onnx_config.json").read_text())["quantized"] is True
    assert all(OnnxTranslator(out).translate(LINES[:4]))
    config = json.loads((out / "onnx_config.json").read_text())
    del config["search"]  # as an export of nmt 0.1 wrote it: greedy search
    (out / "onnx_config.json").write_text(json.dumps(config))
    translator = OnnxTranslator(out)
    assert translator.settings.beam_size == 1 and translator.translate(LINES[:4]) == numpy_greedy(translator, LINES[:4])
    engine = load_engine([out])
    assert engine.quantization == "int8" and all(nmt_outputs(engine, LINES[:4], GREEDY))
    recipe = config.pop("recipe")  # as an export of nmt 0.1 wrote it: OnnxTranslator reads it, nmt translate asks for a new one
    (out / "onnx_config.json").write_text(json.dumps(config))
    assert OnnxTranslator(out).translate(LINES[:4]) == translator.translate(LINES[:4])
    one_line_error(runner.invoke(app, ["translate", "-c", str(out)], input="A dog.\n"), "without its recipe; export it again")
    described = runner.invoke(app, ["info", str(out)])
    assert described.exit_code == 0 and "recipe       not kept by this export" in described.output
    assert "run it" not in described.output and "160 source, 160 target pieces" in described.output
    config["recipe"] = recipe
    del config["outputs"]  # as an export written before the decoder's attention output: no alignments
    (out / "onnx_config.json").write_text(json.dumps(config))
    assert not load_engine([out]).capabilities.alignments
    one_line_error(runner.invoke(app, ["translate", "-c", str(out), "--output-format", "jsonl", "--alignments"],
                                 input="A dog.\n"), "alignments: this ONNX export's graphs give no attention")
    config["search"] = {"beam_size": 0}
    (out / "onnx_config.json").write_text(json.dumps(config))
    with pytest.raises(NmtError, match="onnx_config.json: not a readable search"):
        OnnxTranslator(out)
    before = sorted(p.name for p in out.iterdir())
    one_line_error(runner.invoke(app, ["export", ckpt, "-o", str(out), "--format", "onnx"]), "already exists")
    assert sorted(p.name for p in out.iterdir()) == before
    one_line_error(runner.invoke(app, ["export", ckpt, "-o", str(tmp_path / "f16"), "--format", "onnx",
                                       "--quantization", "float16"]), "float32, or int8")
    one_line_error(runner.invoke(app, ["export", ckpt, "-o", str(tmp_path / "s"), "--format", "onnx", "--shortlist",
                                       str(tmp_path / "x")]), "--shortlist")
    assert not (tmp_path / "f16").exists() and not (tmp_path / "s").exists()
    for broken in ("{", "[1]"):
        (out / "onnx_config.json").write_text(broken)
        with pytest.raises(NmtError, match="onnx_config.json: not a readable export description"):
            OnnxTranslator(out)


@pytest.mark.parametrize("quantization", ["float32", "int8"])
def test_graphs_past_the_one_file_limit_keep_their_tensors_beside_them(trained_tiny, tmp_path, monkeypatch,
                                                                         quantization):
    """A graph of more tensor bytes than protobuf's 2 GiB allow (the limit lowered to 0 here, as a
    model of a billion parameters passes it) is saved with its tensors in one file beside it,
    (every tensor but those under 1 kB, none in other files), and translates as the graph in one file."""
    import onnx

    from nmt.decode.onnx_translator import OnnxTranslator
    from nmt.export import onnx as onnx_export

    ckpt = str(trained_tiny.out / "checkpoints" / "best.pt")
    args = ["--quantization", "int8"] if quantization == "int8" else []
    assert runner.invoke(app, ["export", ckpt, "-o", str(tmp_path / "one"), "--format", "onnx", *args]).exit_code == 0
    monkeypatch.setattr(onnx_export, "ONE_FILE_LIMIT", 0)
    result = runner.invoke(app, ["export", ckpt, "-o", str(tmp_path / "beside"), "--format", "onnx", *args])
    assert result.exit_code == 0, result.output
    one, beside = (sorted(p.name for p in (tmp_path / d).iterdir()) for d in ("one", "beside"))
    assert beside == sorted([*one, "decoder.onnx.data", "encoder.onnx.data"])
    for name in ("encoder", "decoder"):
        graph = onnx.load(str(tmp_path / "beside" / f"{name}.onnx"), load_external_data=False)
        places = {entry.value for tensor in graph.graph.initializer for entry in tensor.external_data
                  if entry.key == "location"}
        assert places == {f"{name}.onnx.data"}
        inline = [tensor.ByteSize() for tensor in graph.graph.initializer if not tensor.external_data]
        assert max(inline) < 1200  # onnx keeps tensors under 1 kB in the graph
    translations = [OnnxTranslator(tmp_path / d).translate(LINES, beam_size=2) for d in ("one", "beside")]
    assert translations[0] == translations[1] and sum(map(bool, translations[0])) >= len(LINES) - 2


@pytest.mark.parametrize("language_token", ["source", "target"])
def test_a_multilingual_model_translates_each_direction_as_nmt_does(language_token, tmp_path_factory, toy_corpus,
                                                                     tmp_path):
    """The toy en→{xa, xb} models (as tests/languages train them): the driver puts the target's
    token in front of the source, or feeds it to the decoder first, as onnx_config.json lists them,
    and translates each direction as nmt's greedy and beam search do; a language without a token is a
    one-line error, and so is a direction the model was not trained on, unless zero_shot."""
    from nmt.decode.onnx_translator import OnnxTranslator

    overrides = ["train.max_steps=240", "train.valid_every=120", "train.valid_bleu_sentences=8"]
    recipe = trained_once(tmp_path_factory, *([] if language_token == "source" else ["data.language_token=target"]),
                          *overrides, toy_corpus=toy_corpus)
    ckpt, out = recipe.out / "checkpoints" / "best.pt", tmp_path / "onnx"
    result = runner.invoke(app, ["export", str(ckpt), "-o", str(out), "--format", "onnx"])
    assert result.exit_code == 0, result.output
    config = json.loads((out / "onnx_config.json").read_text())
    assert (config["language_token"], set(config["source_language_tokens"]), set(config["target_language_tokens"])) == (
        language_token, {"xa", "xb"} if language_token == "source" else set(),
        {"xa", "xb"} if language_token == "target" else set())
    lines = (toy_corpus / "valid.en").read_text(encoding="utf-8").splitlines()
    for lang, marker in (("xa", "Alpha"), ("xb", "Beta")):
        own, translator = load_engine([ckpt], tgt_lang=lang), OnnxTranslator(out, tgt_lang=lang)
        got = translator.translate(lines, beam_size=1)
        assert got == nmt_outputs(own, lines, GREEDY)
        assert sum(line.split()[0] == marker for line in got) >= 0.9 * len(lines), got[:3]
        if lang == "xa":  # the recipe's beams, the forced token their prefix
            assert translator.translate(lines) == nmt_outputs(own, lines, AS_WRITTEN)
        # the export as nmt translate's engine: the direction's tokens chosen as for the checkpoint
        assert nmt_outputs(load_engine([out], tgt_lang=lang), lines, GREEDY) == got
    with pytest.raises(NmtError, match="xc: the model has no language token for it \\(it has xa, xb\\)"):
        OnnxTranslator(out, tgt_lang="xc")
    with pytest.raises(NmtError, match="xa-xb: not a direction the model was trained on \\(en-xa, en-xb\\)"):
        OnnxTranslator(out, src_lang="xa", tgt_lang="xb")
    assert OnnxTranslator(out, src_lang="xa", tgt_lang="xb", zero_shot=True).translate(lines[:2])  # as nmt's --zero-shot
