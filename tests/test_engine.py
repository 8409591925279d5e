"""The engine interface: each engine says what it can do, and one message refuses what it cannot."""

from types import SimpleNamespace

import pytest

from nmt.decode.ctranslate2_engine import CTranslate2Translator
from nmt.decode.engine import CTRANSLATE2, TORCH, refusal, require
from nmt.decode.translate import Translator
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
    assert refusal(export, "alignments").startswith("alignments: come from nmt's own engine")
    with pytest.raises(NmtError, match=r"^line 3: constraints: CTranslate2 has no lexical constraints"):
        require(export, "constraints", line=3)
