"""A server's warm-up with decode.compile (nmt.decode.warm_up), and decode.compile's one-line
error where torch.compile cannot run."""

from __future__ import annotations

import torch

import nmt.decode.warm_up as warm_up_module
import nmt.model.compiled_decoding as compiled_decoding
from nmt.config import DecodeConfig, MbrConfig
from tests.cli.test_cli import nmt
from tests.conftest import TINY_DATA, one_line_error


def recorded_calls(monkeypatch) -> list[tuple[int, int, DecodeConfig]]:
    calls = []
    monkeypatch.setattr(warm_up_module, "translate_lines",
                        lambda translator, lines, cfg: calls.append((cfg.beam_size, len(lines), cfg)))
    return calls


def test_warm_up_compiles_each_kind_of_step_shape_before_the_first_request(monkeypatch):
    calls = recorded_calls(monkeypatch)
    assert warm_up_module.warm_up(object(), DecodeConfig(beam_size=5)) == 0 and not calls  # no decode.compile
    cfg = DecodeConfig(beam_size=5, compile=True, nbest=3, mbr=MbrConfig(candidates=3), max_len_b=1)
    assert warm_up_module.warm_up(object(), cfg) == 4
    # by beams and by one row, one sentence and several
    assert [(beams, lines) for beams, lines, _ in calls] == [(5, 1), (5, 2), (1, 1), (1, 2)]
    for _, _, used in calls:  # every output long enough to reach the compiled steps, nothing else asked
        assert used.min_len == compiled_decoding.MIN_PAST + 1 and used.max_len_b > used.min_len
        assert used.compile and used.nbest == 1 and not used.mbr.candidates and not used.sampling
    calls.clear()
    warm_up_module.warm_up(object(), DecodeConfig(beam_size=1, compile=True))
    assert [(beams, lines) for beams, lines, _ in calls] == [(1, 1), (1, 2)]


def test_a_server_with_decode_compile_warms_up_before_it_serves(trained_tiny, monkeypatch):
    from nmt.serve.models import load_served

    warmed, notes = [], []
    monkeypatch.setattr(warm_up_module, "warm_up", lambda translator, cfg: warmed.append(cfg.compile))
    checkpoint = trained_tiny.out / "checkpoints" / "best.pt"
    load_served([checkpoint], note=notes.append)
    assert not warmed and not notes
    load_served([checkpoint], overrides=["decode.compile=true"], note=notes.append)
    assert warmed == [True] and "compiling its decoding steps (decode.compile" in notes[0]


def test_decode_compile_where_torch_compile_fails_is_a_one_line_error_and_writes_nothing(trained_tiny, tmp_path,
                                                                                         monkeypatch):
    def broken(device: torch.device, backend: str) -> None:
        raise RuntimeError("no C compiler found\nand more")

    monkeypatch.setattr(compiled_decoding, "compile_smoke_test", broken)
    monkeypatch.setattr(compiled_decoding, "_CHECKED", {})
    out = tmp_path / "out.de"
    result = nmt("translate", "-c", trained_tiny.out / "checkpoints" / "best.pt", "-i", TINY_DATA / "valid.en",
                 "-o", out, "--set", "decode.compile=true")
    one_line_error(result, "decode.compile=true, but torch.compile fails on this machine (RuntimeError: no C compiler "
                           "found); set decode.compile=false")
    assert not out.exists()
