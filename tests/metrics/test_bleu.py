"""BLEU's tokenizer for the target language, and the tokenizers that cannot run here (nmt.metrics.bleu)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import sacrebleu

from nmt.errors import NmtError
from nmt.metrics import bleu
from nmt.train.validate import ValidSet, translation_scores
from tests.conftest import TINY_DATA

SACREBLEU = Path(sys.executable).parent / "sacrebleu"
HYPOTHESES, REFERENCES = ["我是学生。", "他是老师。"], ["我是一个学生。", "他是老师。"]


def test_nmt_takes_sacrebleus_tokenizer_for_the_target_where_it_can_run(monkeypatch):
    assert bleu.target_tokenizer("zh") == "zh" and bleu.target_tokenizer("de") is None
    assert bleu.target_tokenizer("th") == "char" and bleu.target_tokenizer(None) is None
    monkeypatch.setattr(bleu, "_installed", lambda tokenize: True)
    assert (bleu.target_tokenizer("ja"), bleu.target_tokenizer("ko")) == ("ja-mecab", "ko-mecab")
    monkeypatch.setattr(bleu, "_installed", lambda tokenize: False)  # without MeCab: characters, or 13a
    assert (bleu.target_tokenizer("ja"), bleu.target_tokenizer("ko")) == ("char", None)


def test_a_target_language_is_known_by_any_of_its_codes():
    from nmt.data.languages import two_letter
    from nmt.score import pair_tokenizer

    assert [two_letter(code) for code in ("zh", "zho_Hans", "zh_CN", "zh-TW", "jpn_Jpan", "xx")] == \
        ["zh", "zh", "zh", "zh", "ja", "xx"]
    assert [pair_tokenizer(pair) for pair in ("en-zh", "eng_Latn-zho_Hans", "zh-en", "en-ko")] == \
        ["zh", "zh", None, "ko-mecab"]


def test_dev_bleu_of_chinese_is_sacrebleus_with_its_chinese_tokenizer():
    """13a sees each of these sentences as one word, so BLEU would be 0 whatever the model did."""
    valid = ValidSet("", None, REFERENCES, ["I am a student.", "He is a teacher."], bleu_tokenize="zh")
    score = translation_scores(HYPOTHESES, valid, "bleu", None)["bleu"]
    assert score == sacrebleu.corpus_bleu(HYPOTHESES, [REFERENCES], tokenize="zh").score
    assert score > 50 and sacrebleu.corpus_bleu(HYPOTHESES, [REFERENCES]).score == 0


def test_rerank_tuning_scores_chinese_as_sacrebleu_does():
    from nmt.jobs.rerank_tuning import corpus_score

    assert corpus_score("bleu", HYPOTHESES, REFERENCES, "zh") == \
        sacrebleu.corpus_bleu(HYPOTHESES, [REFERENCES], tokenize="zh").score > 50
    assert corpus_score("bleu", HYPOTHESES, REFERENCES) == 0  # 13a
    # chrF and chrF++ (word bigrams too) as sacrebleu's, which differ
    chrf, chrf_plus = (sacrebleu.corpus_chrf(HYPOTHESES, [REFERENCES], word_order=order).score for order in (0, 2))
    assert (corpus_score("chrf", HYPOTHESES, REFERENCES), corpus_score("chrf++", HYPOTHESES, REFERENCES)) == (chrf, chrf_plus)
    assert chrf != chrf_plus
    # and validation's, which train.valid_metric chrf++ picks best.pt by
    from types import SimpleNamespace

    from nmt.train.validate import translation_scores

    valid = SimpleNamespace(bleu_tokenize="zh", references=REFERENCES)
    assert translation_scores(HYPOTHESES, valid, "chrf++", None)["chrf++"] == chrf_plus
    assert translation_scores(HYPOTHESES, valid, "chrf", None)["chrf"] == chrf


def test_a_tokenizer_that_cannot_run_here_is_a_one_line_error(monkeypatch, tmp_path):
    monkeypatch.setattr(bleu, "_installed", lambda tokenize: False)
    with pytest.raises(NmtError, match=r"--tokenize ja-mecab needs MeCab: pip install 'sacrebleu\[ja\]'"):
        bleu.make_bleu("ja-mecab")
    monkeypatch.setattr("sacrebleu.utils.SACREBLEU_DIR", str(tmp_path))
    with pytest.raises(NmtError, match="flores200: its SentencePiece model is not at .*nmt downloads nothing"):
        bleu.make_bleu("flores200")
    assert list(tmp_path.iterdir()) == []  # nothing fetched, nothing left behind


def test_spbleu_with_the_model_on_disk_is_sacrebleus(monkeypatch, tmp_path):
    """flores200 with a SentencePiece model where sacreBLEU keeps it (here one trained on the tiny
    corpus): the same score and signature as the sacrebleu command line with SACREBLEU set."""
    import sentencepiece

    model = bleu.spm_model("flores200").name
    (tmp_path / "models").mkdir()
    sentencepiece.SentencePieceTrainer.train(input=str(TINY_DATA / "train.de"), model_prefix=str(tmp_path / "spm"),
                                             vocab_size=100, minloglevel=2)
    (tmp_path / "spm.model").rename(tmp_path / "models" / model)
    monkeypatch.setattr("sacrebleu.utils.SACREBLEU_DIR", str(tmp_path))
    monkeypatch.setattr("sacrebleu.tokenizers.tokenizer_spm.SACREBLEU_DIR", str(tmp_path))
    references = (TINY_DATA / "valid.de").read_text(encoding="utf-8").splitlines()
    hypotheses = [line.replace("Ein", "Der") for line in references]
    metric = bleu.make_bleu("flores200")
    ours = metric.corpus_score(hypotheses, [references])
    hyp = tmp_path / "hyp.de"
    hyp.write_text("\n".join(hypotheses) + "\n", encoding="utf-8")
    theirs = subprocess.run([SACREBLEU, TINY_DATA / "valid.de", "-i", hyp, "-tok", "flores200", "-b", "-w", "4"],
                            capture_output=True, text=True, check=True, env=os.environ | {"SACREBLEU": str(tmp_path)})
    assert 0 < ours.score < 100 and f"{ours.score:.4f}" == theirs.stdout.strip()
    assert "tok:flores200" in str(metric.get_signature())
