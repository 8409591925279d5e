"""`nmt env`: what the machine offers nmt, as the library itself decides it."""

from __future__ import annotations

import json

import torch
from typer.testing import CliRunner

from nmt.cli import app
from nmt.machine import cpu_identity, extras
from nmt.model.precision import inference_precision, training_precision

runner = CliRunner()


def test_the_report_says_what_auto_becomes_here_as_training_and_translation_decide_it(monkeypatch):
    """For a CPU with AVX512-BF16 and one without (monkeypatched: the test does not depend on the
    host), the report's bf16 arithmetic and `auto` precisions are those training and translation
    take; the vector instructions are torch's own; the lines say the same."""
    for capabilities, arithmetic in (({"avx512_bf16": True}, "AVX512-BF16"), ({}, None)):
        monkeypatch.setattr(torch.cpu, "get_capabilities", lambda capabilities=capabilities: capabilities)
        result = runner.invoke(app, ["env", "--json"])
        assert result.exit_code == 0, result.output
        report = json.loads(result.output)
        cpu = torch.device("cpu")
        assert report["cpu"]["bf16_arithmetic"] == arithmetic
        assert report["auto"]["cpu"] == {"train.precision": training_precision("auto", cpu)[0],
                                         "decode.precision": inference_precision("auto", cpu)}
        assert report["auto"]["cpu"]["train.precision"] == ("bf16" if arithmetic else "fp32")
        assert report["cpu"]["vectors"] == torch.backends.cpu.get_cpu_capability()
        assert report["torch"] == torch.__version__ and report["gpus"] == []  # (CI has no GPU)
        lines = runner.invoke(app, ["env"]).output.splitlines()
        assert f"bf16 arithmetic: {arithmetic or 'none (emulated)'}" in lines[1]
        assert f"auto on cpu: train.precision {'bf16' if arithmetic else 'fp32'}, decode.precision fp32" in lines


def test_each_extra_lists_the_distributions_it_lacks():
    """From nmt's requirement strings: an extra whose distributions are all installed lacks none,
    one with a missing distribution names it, the developers' extras are left out; the installed
    nmt's own extras include ctranslate2, which `make install` puts in."""
    requirements = ['torch>=2.9', 'ctranslate2>=4.3; extra == "ctranslate2"', 'no-such-dist-xyz>=1; extra == "argos"',
                    'torch; extra == "argos"', 'pytest>=8; extra == "dev"', "eflomal>=2; extra == 'bench'"]
    assert extras(requirements) == {"argos": ["no-such-dist-xyz"], "ctranslate2": []}
    installed = extras()
    assert installed["ctranslate2"] == [] and "dev" not in installed and "comet" in installed


def test_the_processor_is_named_by_family_and_model(tmp_path):
    """Two hosts both called "AMD EPYC" differed twofold in oneDNN's fp32 rate: the first
    processor's family and model numbers tell such generations apart; a cpuinfo without them
    (an ARM machine's) gives what it has, and no file nothing."""
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\n"
                       "model name\t: AMD EPYC 9B45\nstepping\t: 1\n\nprocessor\t: 1\ncpu family\t: 25\n"
                       "model\t\t: 17\nmodel name\t: AMD EPYC\n")
    assert cpu_identity(cpuinfo) == {"model name": "AMD EPYC 9B45", "cpu_family": 26, "cpu_model": 2}
    cpuinfo.write_text("processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n")
    assert cpu_identity(cpuinfo) == {}
    assert cpu_identity(tmp_path / "missing") == {}
