"""Lexical shortlists: the candidates of a batch by hand, the builders' scores by hand, nmt's
search over the shortlist against a step-by-step argmax over the allowed tokens, and the same
outputs through the CTranslate2 export's vocabulary map."""

from __future__ import annotations

import pytest
import torch
from typer.testing import CliRunner

from tests.conftest import TINY_DATA, one_line_error
from nmt.cli import app
from nmt.decode.engines.engine import load_engine
from nmt.data.vocabulary_map import read_vocabulary_map, write_vocabulary_map
from nmt.decode.shortlist import Shortlist, read_shortlist
from nmt.jobs.shortlist_build import aligned_shortlist, cooccurrence_shortlist, most_frequent
from nmt.decode.translate import translate_lines
from nmt.errors import NmtError
from nmt.special_tokens import BOS, EOS, UNK

runner = CliRunner()
LINES = [line.rstrip("\n") for name in ("valid.en", "train.en") for line in open(TINY_DATA / name, encoding="utf-8")][:16]
LINES += ["A dog runs on the beach.", "Two men are talking while a woman looks at a small red car."]


class Pieces:
    """A stand-in tokenizer: piece i is `names[i]`."""

    def __init__(self, names: list[str]):
        self.names = names

    def piece_to_id(self, piece: str) -> int:
        return self.names.index(piece) if piece in self.names else UNK


def test_a_batchs_candidates_are_the_fixed_tokens_its_ngrams_and_its_forced_tokens(tmp_path):
    tgt = Pieces(["<pad>", "<unk>", "<s>", "</s>", "▁der", "▁Hund", "▁rot", "▁rote", "▁Katze", "."])
    path = tmp_path / "vmap.txt"
    path.write_text("\t▁der .\n▁dog\t▁Hund\n▁red\t▁rot ▁unknown\n▁red ▁cat\t▁rote ▁Katze\n", encoding="utf-8")
    shortlist = read_shortlist(path, tgt)
    assert shortlist.always == [UNK, BOS, EOS, 4, 9]
    assert shortlist.rules == [{"▁dog": [5], "▁red": [6, UNK]}, {"▁red ▁cat": [7, 8]}]
    assert shortlist.candidates([["▁the", "▁dog"]]) == [1, 2, 3, 4, 5, 9]
    assert shortlist.candidates([["▁a", "▁red"], ["▁red", "▁cat"]]) == [1, 2, 3, 4, 6, 7, 8, 9]
    assert shortlist.candidates([["▁cat", "▁red"]], forced=[8]) == [1, 2, 3, 4, 6, 8, 9]  # "red cat" in this order only
    assert Shortlist([{}], [UNK, BOS, EOS]).candidates([[]]) == [UNK, BOS, EOS]


def test_a_shortlist_written_is_read_back_and_a_bad_line_names_the_file_and_line(tmp_path):
    tgt = Pieces(["<pad>", "<unk>", "<s>", "</s>", "▁a", "▁b", "▁c"])
    path = tmp_path / "out" / "shortlist.txt"
    write_vocabulary_map(path, ["▁a"], {"▁x": ["▁b", "▁c"], "▁y": ["▁c"]})
    assert path.read_text(encoding="utf-8") == "\t▁a\n▁x\t▁b ▁c\n▁y\t▁c\n"
    assert read_shortlist(path, tgt).candidates([["▁y"]]) == [1, 2, 3, 4, 6]
    with pytest.raises(NmtError, match="target.*space"):
        write_vocabulary_map(tmp_path / "bad.txt", ["▁a b"], {})
    assert not (tmp_path / "bad.txt").exists()
    # only a line feed ends a line, as written: a piece may hold other line separators
    write_vocabulary_map(path, ["▁a"], {"▁x\u2028": ["▁c\x85"]})
    assert read_vocabulary_map(path) == (["▁a"], {"▁x\u2028": ["▁c\x85"]})
    path.write_text("\t▁a\n▁x ▁b ▁c\n", encoding="utf-8")
    with pytest.raises(NmtError, match=r"shortlist.txt:2: no tab"):
        read_shortlist(path, tgt)


def test_cooccurrence_ranks_by_dice_and_alignment_by_the_share_of_links():
    sources = [["a", "b"], ["a", "c"], ["a", "b"], ["c"]]
    targets = [["A", "B", "x"], ["A", "C", "x"], ["A", "B", "x"], ["C", "x"]]
    assert most_frequent(targets, 2) == ["x", "A"]  # 4 and 3 occurrences
    always, rules = cooccurrence_shortlist(sources, targets, best=2, frequent=1, min_count=2)
    assert always == ["x"]
    # Dice(a, A) = 2·3/(3+3) = 1; Dice(a, B) = 2·2/(3+2) = 0.8; Dice(a, C) = 2·1/(3+2) = 0.4.
    assert rules["a"] == ["A", "B"]
    # b: Dice(b, B) = 2·2/(2+2) = 1, Dice(b, A) = 2·2/(2+3) = 0.8; c: Dice(c, C) = 1, Dice(c, A) = 0.5.
    assert rules["b"] == ["B", "A"] and rules["c"] == ["C", "A"]
    _, rare = cooccurrence_shortlist(sources, targets, best=2, frequent=1, min_count=3)
    assert set(rare) == {"a"}  # b and c occur in 2 pairs each

    links = [[(0, 0), (1, 1)], [(0, 0), (1, 1)], [(0, 2), (1, 1)], [(0, 0)]]
    always, rules = aligned_shortlist(sources, targets, links, best=5, frequent=1, min_count=1)
    # a: linked to A twice and to x once (x is always allowed); c: to C twice.
    assert always == ["x"] and rules == {"a": ["A"], "b": ["B"], "c": ["C"]}


@pytest.fixture(scope="module")
def shortlist_file(trained_tiny, tmp_path_factory):
    path = tmp_path_factory.mktemp("shortlist") / "shortlist.txt"
    result = runner.invoke(app, ["shortlist", "-c", str(trained_tiny.out / "checkpoints" / "best.pt"),
                                 "--source", str(TINY_DATA / "train.en"), "--target", str(TINY_DATA / "train.de"),
                                 "-o", str(path), "--best", "3", "--frequent", "10"])
    assert result.exit_code == 0, result.output
    assert "10 target pieces always allowed, up to 3 more" in result.output
    return path


def test_an_unrestricted_shortlist_changes_nothing(trained_tiny, tmp_path):
    translator = load_engine([trained_tiny.out / "checkpoints" / "best.pt"])
    sp = translator.tgt_tokenizer
    everything = tmp_path / "all.txt"
    write_vocabulary_map(everything, [sp.id_to_piece(i) for i in range(4, sp.get_piece_size())], {})
    for update in ({"beam_size": 1}, {"beam_size": 4, "nbest": 2}):
        cfg = translator.recipe.decode.model_copy(update={"precision": "fp32", **update})
        full = translate_lines(translator, LINES, cfg)
        listed = translate_lines(translator, LINES, cfg.model_copy(update={"shortlist": str(everything)}))
        assert [[h.tokens for h in hyps] for hyps in listed] == [[h.tokens for h in hyps] for hyps in full]
        assert [h.score for hyps in listed for h in hyps] == pytest.approx([h.score for hyps in full for h in hyps],
                                                                          abs=1e-5)


def test_greedy_search_over_a_shortlist_is_the_argmax_over_the_allowed_tokens(trained_tiny, shortlist_file):
    translator = load_engine([trained_tiny.out / "checkpoints" / "best.pt"])
    cfg = translator.recipe.decode.model_copy(update={"precision": "fp32", "beam_size": 1,
                                                      "shortlist": str(shortlist_file)})
    shortlist = read_shortlist(shortlist_file, translator.tgt_tokenizer)
    size = translator.tgt_tokenizer.get_piece_size()
    changed = 0
    for line in LINES:
        [[hypothesis]] = translate_lines(translator, [line], cfg)
        src_ids = translator.src_tokenizer.encode(line)
        allowed = shortlist.candidates([[translator.src_tokenizer.id_to_piece(i) for i in src_ids]])
        assert len(allowed) < size / 2
        banned = torch.ones(size, dtype=torch.bool)
        banned[allowed] = False
        # Independent of the search: the whole output so far re-read at each step (no cache).
        src, tokens = torch.tensor([src_ids + [EOS]]), []
        for _ in range(len(hypothesis.tokens) + 1):
            with torch.inference_mode():
                log_probs = translator.model.teacher_forced_log_probs(src, torch.tensor([[BOS] + tokens]))[0, -1]
            best = int(log_probs.masked_fill(banned, float("-inf")).argmax())
            changed += best != int(log_probs.argmax())
            if best == EOS:
                break
            tokens.append(best)
        assert tokens == hypothesis.tokens, line
    assert changed > 0  # the shortlist did take the model's first choice away somewhere


def test_both_engines_translate_alike_over_the_exported_shortlist(trained_tiny, shortlist_file, tmp_path):
    pytest.importorskip("ctranslate2")
    ckpt = trained_tiny.out / "checkpoints" / "best.pt"
    plain, with_map = tmp_path / "plain", tmp_path / "with_map"
    assert runner.invoke(app, ["export", str(ckpt), "-o", str(plain)]).exit_code == 0
    result = runner.invoke(app, ["export", str(ckpt), "-o", str(with_map), "--shortlist", str(shortlist_file)])
    assert result.exit_code == 0 and "with its shortlist" in result.output, result.output
    assert (with_map / "vmap.txt").read_bytes() == shortlist_file.read_bytes() and not (plain / "vmap.txt").exists()
    own, ct2 = load_engine([ckpt]), load_engine([with_map])
    for update in ({"beam_size": 1}, {}, {"length_penalty": 1.0, "nbest": 3},
                   {"min_len": 4, "no_repeat_ngram_size": 2}, {"beam_size": 1, "min_len": 4, "no_repeat_ngram_size": 2}):
        cfg = own.recipe.decode.model_copy(update={"precision": "fp32", "shortlist": str(shortlist_file),
                                                   "max_tokens": 1, **update})  # one sentence per batch
        ours, theirs = translate_lines(own, LINES, cfg), translate_lines(ct2, LINES, cfg)
        assert [[h.tokens for h in hyps] for hyps in theirs] == [[h.tokens for h in hyps] for hyps in ours]
        assert [h.score for hyps in theirs for h in hyps] == pytest.approx([h.score for hyps in ours for h in hyps],
                                                                          abs=1e-3)
        unrestricted = translate_lines(own, LINES, cfg.model_copy(update={"shortlist": None}))
        assert [h[0].tokens for h in unrestricted] != [h[0].tokens for h in ours]
    with pytest.raises(NmtError, match="has no shortlist; export it with `nmt export --shortlist"):
        translate_lines(load_engine([plain]), LINES[:1], cfg)
    # a file of another kind is refused before anything is written
    refused = runner.invoke(app, ["export", str(ckpt), "-o", str(tmp_path / "other"), "--shortlist",
                                  str(TINY_DATA / "valid.en")])
    assert refused.exit_code == 2 and "valid.en:1: no tab between the source n-gram" in refused.output, refused.output
    assert not (tmp_path / "other").exists()


def test_constraints_are_met_over_a_shortlist_that_lacks_their_tokens(trained_tiny, shortlist_file):
    translator = load_engine([trained_tiny.out / "checkpoints" / "best.pt"])
    cfg = translator.recipe.decode.model_copy(update={"precision": "fp32", "shortlist": str(shortlist_file)})
    shortlist = read_shortlist(shortlist_file, translator.tgt_tokenizer)
    line = "A dog runs on the beach."
    allowed = shortlist.candidates([translator.src_tokenizer.encode(line, out_type=str)])
    phrase = next([i] for i in range(4, translator.tgt_tokenizer.get_piece_size()) if i not in allowed)
    [[hypothesis]] = translator.translate_batch([translator.src_tokenizer.encode(line)], cfg, constraints=[[phrase]])
    assert hypothesis.constraints_met and phrase[0] in hypothesis.tokens
    assert set(hypothesis.tokens) <= set(allowed) | set(phrase)


def test_translate_takes_the_shortlist_as_a_setting_and_a_bad_corpus_is_a_one_line_error(trained_tiny, shortlist_file,
                                                                                        tmp_path):
    ckpt = str(trained_tiny.out / "checkpoints" / "best.pt")
    result = runner.invoke(app, ["translate", "-c", ckpt, "--set", f"decode.shortlist={shortlist_file}"],
                           input="A dog runs.\n\nTwo men.\n")
    assert result.exit_code == 0 and len(result.stdout.split("\n")) == 4, result.output
    missing = runner.invoke(app, ["translate", "-c", ckpt, "--set", f"decode.shortlist={tmp_path / 'none.txt'}"],
                            input="A dog runs.\n")
    one_line_error(missing, "none.txt", "cannot read the shortlist")
    short = tmp_path / "short.de"
    short.write_text("Ein Hund.\n", encoding="utf-8")
    uneven = runner.invoke(app, ["shortlist", "-c", ckpt, "--source", str(TINY_DATA / "train.en"), "--target", str(short),
                                 "-o", str(tmp_path / "out.txt")])
    one_line_error(uneven, "short.de", "same number of lines")
    negative = runner.invoke(app, ["shortlist", "-c", ckpt, "--source", str(TINY_DATA / "train.en"), "--target",
                                   str(TINY_DATA / "train.de"), "-o", str(tmp_path / "out.txt"), "--best", "-1"])
    one_line_error(negative, "--best -1", "may be negative")
    assert not (tmp_path / "out.txt").exists()
