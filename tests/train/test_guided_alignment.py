"""Guided alignment (train.guided_alignment, data.word_alignments): word links mapped onto pieces
by hand, the loss by hand, links written by `nmt prepare` (dice and a Pharaoh file, with its
errors), a guided head that learns the links, and a CTranslate2 export that returns the same
attention and carries markup as nmt's own engine does."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from tests.conftest import TINY_DATA, prepared_tiny, tiny_recipe, trained_once
from nmt.data.shards import Shard
from nmt.data.word_alignments import (ALIGN_SPLIT, BARE_START, AlignmentWriter, PieceWords, dice_links,
                                      pair_alignment, piece_words, word_starts)
from nmt.data.word_pairs import WordPairs
from nmt.errors import NmtError
from nmt.model.guided_alignment import guided_alignment_loss

GUIDED = ("data.word_alignments=dice", "train.guided_alignment.weight=1.0", "train.guided_alignment.layer=-1",
          "train.guided_alignment.heads=2")

class HandVocabulary:
    """A sentencepiece model's answers about pieces written by hand, the first 4 control tokens."""

    def __init__(self, pieces: list[str]):
        self.pieces = pieces

    def get_piece_size(self) -> int:
        return len(self.pieces)

    def id_to_piece(self, i: int) -> str:
        return self.pieces[i]

    def is_control(self, i: int) -> bool:
        return i < 4


# 0-3 control tokens, then ▁a, b, ▁c, ▁d, ▁ (alone), and Chinese: ▁我 们喜 欢 猫
VOCABULARY = HandVocabulary(["<pad>", "<2xx>", "<s>", "</s>", "▁a", "b", "▁c", "▁d", "▁", "▁我", "们喜", "欢", "猫"])
STARTS = word_starts(VOCABULARY)
SPACES, RULES = PieceWords(VOCABULARY), PieceWords(VOCABULARY, by_rules=True)  # a file's words, dice's


def test_word_starts_flag_each_piece():
    assert STARTS.tolist() == [-1, -1, -1, -1, 1, 0, 1, 1, BARE_START, 1, 0, 0, 0]


def test_pieces_take_their_words_links():
    src = np.array([3, 4, 5, 6])  # a control token (a language tag), then "▁a b ▁c": words 0 0 1
    tgt = np.array([7, 4, 5])  # "▁d ▁a b": words 0 1 1
    assert piece_words(src, STARTS).tolist() == [-1, 0, 0, 1]
    assert piece_words(np.array([5, 6]), STARTS).tolist() == [0, 1]  # the first piece always starts a word
    # "▁" alone starts a word ("▁ b" spells " b"), but before a control token it is the space in front
    # of a language token written as text (MADLAD-400's "<2de> b ▁c": ▁ <2de> ▁ b ▁c)
    assert piece_words(np.array([4, 8, 5]), STARTS).tolist() == [0, 1, 1]
    assert piece_words(np.array([8, 3, 8, 5, 6]), STARTS).tolist() == [-1, -1, 0, 0, 1]
    # source word 1 -> target word 0, source word 0 -> target words 1
    matrix = pair_alignment(src, tgt, np.array([1, 0, 0, 1]), SPACES, SPACES)
    assert matrix.tolist() == [[0, 0, 0, 1], [0, 0.5, 0.5, 0], [0, 0.5, 0.5, 0]]
    # a target word linked to two source words: its rows spread over both words' pieces
    matrix = pair_alignment(src, tgt, np.array([0, 0, 1, 0]), SPACES, SPACES)
    assert np.allclose(matrix[0], [0, 1 / 3, 1 / 3, 1 / 3]) and not matrix[1:].any()
    assert not pair_alignment(src, tgt, np.array([], dtype=np.int64), SPACES, SPACES).any()
    # pieces without Chinese characters make the same words either way
    links = np.array([1, 0, 0, 1])
    assert np.array_equal(pair_alignment(src, tgt, links, RULES, RULES),
                          pair_alignment(src, tgt, links, SPACES, SPACES))


def test_chinese_characters_are_words_of_dices_links():
    """Dice's links number the words nmt finds without a dictionary: in "我们喜欢猫" (no spaces),
    each character, so a piece may hold two words ("们喜"); a file's links number whitespace words,
    of which the sentence is one."""
    tgt = np.array([9, 10, 11, 12, 3])  # "▁我 们喜 欢 猫" and EOS
    assert RULES.incidence(tgt).tolist() == [[1, 0, 0, 0, 0], [0, 1, 1, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 1],
                                             [0, 0, 0, 0, 0]]
    assert SPACES.incidence(tgt).tolist() == [[1], [1], [1], [1], [0]]
    src = np.array([1, 4, 5, 6, 7])  # "<2xx> ▁a b ▁c ▁d": words ab, c, d
    links = np.array([0, 2, 2, 4])  # ab -> 喜, d -> 猫
    assert pair_alignment(src, tgt, links, RULES, RULES).tolist() == [
        [0, 0, 0, 0, 0], [0, 0.5, 0.5, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 1], [0, 0, 0, 0, 0]]
    assert not pair_alignment(src, tgt, links, SPACES, SPACES).any()  # past the one target word: left out
    # the dictionary counts characters too, and links them one to one
    pairs = [("猫喝水", "the cat drinks water"), ("狗喝水", "the dog drinks water"), ("猫吃鱼", "the cat eats fish"),
             ("狗吃肉", "the dog eats meat")]
    assert dice_links(WordPairs(pairs), pairs[:2]) == [[(0, 1), (1, 2), (2, 3)], [(0, 1), (1, 2), (2, 3)]]


def test_a_pair_keeps_its_links_where_its_pieces_spell_its_words(tmp_path):
    """The writer keeps dice's links of a Chinese pair (its pieces make its characters' words) and
    drops a pair whose pieces spell other words than its text."""
    writer = AlignmentWriter(tmp_path, RULES, RULES)
    rows = writer.add([("ab", "我们喜欢猫"), ("ab", "我们")], [[4, 5, 3]] * 2, [[9, 10, 11, 12, 3]] * 2,
                      [[(0, 2)], [(0, 1)]])
    assert rows == [[0, 2], []] and writer.mismatched == 1
    writer.close()


def test_loss_by_hand():
    # one pair, T = 2 target positions, S = 3 source positions (the last one padding)
    probabilities = torch.tensor([[[0.5, 0.5, 0.0], [0.2, 0.8, 0.0]],
                                  [[0.3, 0.7, 0.0], [0.6, 0.4, 0.0]]])  # (heads, T, S)
    log_attention = probabilities.log().unsqueeze(0)  # -inf at the padding
    alignment = torch.tensor([[[0.0, 1.0, 0.0], [0.5, 0.5, 0.0]]])
    # the mean of the two heads: row 0 (0.4, 0.6), row 1 (0.4, 0.6)
    expected = -(math.log(0.6) + 0.5 * math.log(0.4) + 0.5 * math.log(0.6))
    assert guided_alignment_loss(log_attention, alignment).item() == pytest.approx(expected, rel=1e-6)
    assert guided_alignment_loss(log_attention[:, :1], alignment).item() == pytest.approx(
        -(math.log(0.5) + 0.5 * math.log(0.2) + 0.5 * math.log(0.8)), rel=1e-6)
    assert guided_alignment_loss(log_attention, torch.zeros_like(alignment)).item() == 0
    # through padding (-inf in every head) the gradient stays finite
    scores = torch.tensor([[1.0, 2.0, float("-inf")]]).expand(2, 2, 3).unsqueeze(0).clone().requires_grad_()
    guided_alignment_loss(scores.log_softmax(dim=-1), alignment).backward()
    assert torch.isfinite(scores.grad).all()


def test_the_recipe_names_what_guided_alignment_lacks(tmp_path):
    with pytest.raises(NmtError, match="train.guided_alignment needs data.word_alignments"):
        tiny_recipe(tmp_path, "train.guided_alignment.weight=0.1")
    with pytest.raises(NmtError, match="layer 2: the decoder has 2 layers"):
        tiny_recipe(tmp_path, "data.word_alignments=dice", "train.guided_alignment.weight=0.1",
                    "train.guided_alignment.layer=2")
    with pytest.raises(NmtError, match="heads 5: the model has 4 heads"):
        tiny_recipe(tmp_path, "data.word_alignments=dice", "train.guided_alignment.weight=0.1",
                    "train.guided_alignment.heads=5")
    with pytest.raises(NmtError, match="augment.tags and augment.verbatim insert words"):
        tiny_recipe(tmp_path, f"data.word_alignments={tmp_path / 'links'}", "data.augment.tags=0.1")


def _written_links(recipe) -> list[list[tuple[int, int]]]:
    shard = Shard(recipe.out / "data" / ALIGN_SPLIT)
    return [sorted(zip(shard[i][0::2].tolist(), shard[i][1::2].tolist())) for i in range(len(shard))]


def test_prepare_writes_dice_links_and_a_files_links(tmp_path):
    dice = prepared_tiny(tmp_path / "dice", "data.word_alignments=dice")
    report = json.loads((dice.out / "data" / "report.json").read_text())["splits"]["train"]["word_alignments"]
    links = _written_links(dice)
    assert report["pairs"] == len(links) == 48 and report["links"] == sum(map(len, links)) > 48
    sources = (TINY_DATA / "train.en").read_text().splitlines()
    targets = (TINY_DATA / "train.de").read_text().splitlines()
    for pair, (s, t) in zip(links, zip(sources, targets)):  # one to one, within the words
        assert len({a for a, _ in pair}) == len({b for _, b in pair}) == len(pair)
        assert all(a < len(s.split()) and b < len(t.split()) for a, b in pair)
    # a file: each line's first word to the last, then the diagonal
    lines = [" ".join([f"0-{len(t.split()) - 1}"] + [f"{i}-{i}" for i in range(1, min(len(s.split()), len(t.split())))])
             for s, t in zip(sources, targets)]
    (tmp_path / "train.align").write_text("\n".join(lines) + "\n")
    given = prepared_tiny(tmp_path / "file", f"data.word_alignments={tmp_path / 'train.align'}")
    assert _written_links(given) == [sorted(tuple(map(int, x.split("-"))) for x in line.split()) for line in lines]


@pytest.mark.parametrize("line, problem", [
    ("0-0 1:1", "7: '1:1' is not a word link"),
    ("0-0 0-40", "7: link 0-40 is past the pair's words"),
    (None, " 47 lines, but the training corpus has more"),  # a line short of the corpus's 48
])
def test_a_bad_alignment_file_is_a_one_line_error_naming_its_line(tmp_path, line, problem):
    lines = ["0-0"] * 48
    if line is None:
        lines.pop()
    else:
        lines[6] = line
    path = tmp_path / "train.align"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(NmtError) as error:
        prepared_tiny(tmp_path / "run", f"data.word_alignments={path}")
    assert str(error.value).startswith(f"{path}:{problem}")


@pytest.fixture(scope="module")
def guided(tmp_path_factory):
    return trained_once(tmp_path_factory, *GUIDED)


def test_the_guided_heads_learn_the_links(guided):
    """On the training pairs, teacher-forced: each linked target piece's guided attention peaks on
    a piece of the source word it is linked to (the dice links, which the heads were trained on)."""
    from nmt.data.shards import ParallelShards
    from nmt.decode.engines.engine import load_engine
    from nmt.train.training_data import TrainingData

    engine = load_engine([guided.out / "checkpoints" / "best.pt"])
    assert engine.model.alignment_heads == (1, 2)
    data, pairs = TrainingData(guided), ParallelShards(guided.out / "data", "train")
    sources = [pairs.src[i].tolist() for i in range(len(pairs))]
    targets = [pairs.tgt[i].tolist() for i in range(len(pairs))]
    attention = engine.alignment_attention(sources, targets)
    wanted = data.alignment_targets(pairs, np.arange(len(pairs)), tuple(attention.shape))
    linked = wanted.sum(dim=-1) > 0
    hits = wanted.gather(-1, attention.argmax(dim=-1, keepdim=True)).squeeze(-1) > 0
    assert linked.sum() > 200 and hits[linked].float().mean() > 0.9


@pytest.mark.parametrize("export", ["ctranslate2", "onnx"])
def test_an_export_returns_the_guided_heads_and_carries_markup(guided, tmp_path, export):
    """The export's engine (CTranslate2's attention output, the ONNX decoder graph's) gives the
    guided heads' attention of the checkpoint, and with it the same markup and alignments."""
    pytest.importorskip("ctranslate2" if export == "ctranslate2" else "onnxruntime")
    from nmt.decode.engines.engine import load_engine
    from nmt.decode.translate import translate_lines
    from nmt.export import export_checkpoint
    from nmt.export.onnx import export_onnx

    checkpoint = guided.out / "checkpoints" / "best.pt"
    (export_checkpoint if export == "ctranslate2" else export_onnx)(checkpoint, tmp_path / export)
    own, exported = load_engine([checkpoint]), load_engine([tmp_path / export])
    assert exported.capabilities.alignments and exported.capabilities.name == export
    words = [line.split() for line in (TINY_DATA / "valid.en").read_text().splitlines()]
    sources = own.src_tokenizer.encode([" ".join(w) for w in words])
    outputs = [h[0].tokens for h in own.translate_batch(sources, own.recipe.decode.model_copy(update={"beam_size": 1}))]
    expected, got = own.alignment_attention(sources, outputs), exported.alignment_attention(sources, outputs)
    for i, (s, o) in enumerate(zip(sources, outputs)):  # CTranslate2 leaves out the source EOS's column
        assert torch.allclose(got[i, :len(o), :len(s)], expected[i, :len(o), :len(s)], atol=1e-5)
    marked = [" ".join([w[0], f"<b>{w[1]}", f"{w[2]}</b>", *w[3:]]) for w in words]
    cfg = own.recipe.decode
    by_own = translate_lines(own, marked, cfg, markup=True, extras=("alignments",))
    by_export = translate_lines(exported, marked, cfg, markup=True, extras=("alignments",))
    assert [(h[0].text, h[0].alignment) for h in by_export] == [(h[0].text, h[0].alignment) for h in by_own]
    assert all(h[0].text.count("<b>") == h[0].text.count("</b>") == 1 for h in by_export)
    if export == "ctranslate2":  # an export written before exports recorded their attention: the recipe's heads
        info_file = tmp_path / export / "nmt_export.json"
        info = json.loads(info_file.read_text())
        info_file.write_text(json.dumps({k: v for k, v in info.items() if k != "alignment_attention"}))
        assert info["alignment_attention"] == {"layer": 1, "heads": 2}
        older = load_engine([tmp_path / export])
        assert older.capabilities.alignments and torch.equal(older.alignment_attention(sources, outputs), got)


def test_nmt_info_says_where_a_guided_models_alignments_come_from(guided):
    from nmt.info import checkpoint_info, describe

    info = checkpoint_info(guided.out / "checkpoints" / "best.pt")
    assert info["alignment_heads"] == (1, 2)
    assert "alignments   from decoder layer 1's first 2 heads" in "\n".join(describe(info))


def test_the_alignment_loss_is_logged_and_falls(guided):
    from nmt.train.metrics import read_metrics

    logged = [r["alignment_loss"] for r in read_metrics(guided.out / "metrics.jsonl") if r["kind"] == "train"]
    assert len(logged) == 6 and logged[-1] < 0.5 * logged[0]


def test_training_without_prepared_links_says_to_prepare_again(tmp_path):
    from nmt.train.training_data import TrainingData

    prepared_tiny(tmp_path)  # prepared before data.word_alignments was set
    with pytest.raises(NmtError, match="no word alignments for train.guided_alignment .*run `nmt prepare` again"):
        TrainingData(tiny_recipe(tmp_path, *GUIDED))
