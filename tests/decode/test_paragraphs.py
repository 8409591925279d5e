"""Lines of several sentences translated sentence by sentence (decode.split_sentences)."""

from __future__ import annotations

import pytest

from tests.conftest import TINY_DATA, prepared_tiny

from nmt.decode.text.paragraphs import (_sentence_parts, join_hypotheses, join_texts, parts_within, pieces_of_word,
                                       sentences_of)
from nmt.decode.search import Hypothesis
from nmt.decode.engines.engine import load_engine
from nmt.decode.translate import translate_lines
from nmt.data.tokenizer import output_text
from nmt.decode.text.casing import hypothesis_text

SENTENCES = ["A black dog leaps over a log.", "Two cats sit on a wall!", "Is the man cold?"]


def test_the_splitter_keeps_urls_decimals_and_abbreviations_whole():
    assert sentences_of("A man rides a bike. Two dogs play!  Is it cold?", "en") == [
        "A man rides a bike.", "Two dogs play!", "Is it cold?"]
    whole = "Visit https://example.com/a.b or e.g. Dr. Smith at 3.5 p.m. today."
    assert sentences_of(whole, "en") == [whole]
    assert sentences_of("", "en") == [""] and sentences_of("No full stop", "en") == ["No full stop"]
    german = "Dr. Müller kam am 3. Mai. Er ging."  # an imported model's code names the same language
    assert sentences_of(german, "deu_Latn") == sentences_of(german, "de") == ["Dr. Müller kam am 3. Mai.", "Er ging."]
    # Khmer's full stop (។) and section end (៕), with a space after them or without; not before a quote's end
    khmer = ["ខ្ញុំចង់ទៅផ្សារ។", "គាត់មិនទៅទេ៕", "«ល្អ។»"]  # I want to go to the market. He is not going. "Good."
    assert sentences_of(" ".join(khmer), "km") == sentences_of("".join(khmer), "khm_Khmr") == khmer
    assert sentences_of("ကျွန်တော်မန္တလေးကိုသွားမယ်။ ခွေးနက်ခုန်တယ်။", "my") == ["ကျွန်တော်မန္တလေးကိုသွားမယ်။", "ခွေးနက်ခုန်တယ်။"]


def test_a_paragraph_translates_as_its_sentences_one_per_line(translator, trained_tiny):
    """The independent truth: each sentence translated on a line of its own, the outputs joined."""
    cfg = trained_tiny.decode.model_copy(update={"precision": "fp32"})
    alone = [h[0].tokens for h in translate_lines(translator, SENTENCES, cfg)]
    lines = [" ".join(SENTENCES), "", SENTENCES[0], "  ".join(SENTENCES[1:])]
    out = translate_lines(translator, lines, cfg)
    assert len(out) == len(lines) and out[1][0].tokens == []  # one output per line, empty kept
    assert out[0][0].tokens == alone[0] + alone[1] + alone[2]
    assert out[2][0].tokens == alone[0] and out[3][0].tokens == alone[1] + alone[2]
    text = output_text(translator.tgt_tokenizer, out[0][0].tokens)
    assert text == " ".join(output_text(translator.tgt_tokenizer, t) for t in alone)


def test_a_prefix_goes_on_the_first_sentence_and_constraints_keep_the_line_whole(translator, trained_tiny):
    cfg = trained_tiny.decode.model_copy(update={"precision": "fp32"})
    paragraph = " ".join(SENTENCES[:2])
    [with_prefix] = translate_lines(translator, [paragraph], cfg, prefixes=["Zwei"])
    first = translate_lines(translator, [SENTENCES[0]], cfg, prefixes=["Zwei"])[0][0].tokens
    second = translate_lines(translator, [SENTENCES[1]], cfg)[0][0].tokens
    assert with_prefix[0].tokens == first + second
    whole = cfg.model_copy(update={"split_sentences": False})
    constrained = translate_lines(translator, [paragraph], cfg, constraints=[["Hund"]])
    assert constrained[0][0].tokens == translate_lines(translator, [paragraph], whole, constraints=[["Hund"]])[0][0].tokens


def test_nbest_of_a_split_line_joins_the_nth_best_of_each_sentence():
    a = [Hypothesis([5, 6], -1.0, -2.0, [-1.0, -1.0]), Hypothesis([7], -1.5, -3.0, [-3.0])]
    b = [Hypothesis([8], -0.5, -0.5, [-0.5])]
    joined = join_hypotheses([a, b])
    assert [h.tokens for h in joined] == [[5, 6, 8], [7, 8]]
    assert joined[0].log_prob == -2.5 and joined[1].score == -2.0 and joined[1].token_log_probs == [-3.0, -0.5]


def test_sentences_join_by_a_space_or_by_nothing_after_chinese_and_japanese():
    """By hand: Chinese and Japanese sentences follow each other without a space; a sentence
    after one of theirs ending in ASCII punctuation too, where it starts in their script."""
    assert join_texts(["Ein Hund rennt.", "", "Zwei Katzen!"]) == ("Ein Hund rennt. Zwei Katzen!", ())
    assert join_texts(["我是学生。", "他是老师！", "你呢？"]) == ("我是学生。他是老师！你呢？", (5, 10))
    assert join_texts(["すごい!", "次は東京です。"]) == ("すごい!次は東京です。", (4,))
    assert join_texts(["I see.", "我是学生。", "OK."]) == ("I see. 我是学生。OK.", (12,))
    assert join_texts(["Wow!", "次は"]) == ("Wow! 次は", ())  # after Latin letters: a space
    assert join_texts(["한국어입니다.", "네."]) == ("한국어입니다. 네.", ())  # Korean is written with spaces
    assert join_texts(["", "我。"]) == ("我。", ())
    a = [Hypothesis([5], -1.0, -1.0, text="我是学生。"), Hypothesis([6], -2.0, -2.0, text="I am.")]
    b = [Hypothesis([7], -0.5, -0.5, text="他是老师。")]
    joined = join_hypotheses([a, b])
    assert [(h.text, h.joins) for h in joined] == [("我是学生。他是老师。", (5,)), ("I am. 他是老师。", ())]


def test_a_line_longer_than_the_model_translates_every_sentence(translator, trained_tiny):
    """60 sentences, about 300 tokens where the model reads 127: each translated, none left out."""
    warnings = []
    cfg = trained_tiny.decode.model_copy(update={"precision": "fp32", "beam_size": 1})
    sentence = "A dog runs."
    assert 60 * len(translator.src_tokenizer.encode(sentence)) > translator.max_positions
    [[alone]], [[line]] = (translate_lines(translator, [text], cfg, warn=warnings.append)
                           for text in (sentence, " ".join([sentence] * 60)))
    assert line.tokens == alone.tokens * 60 and not warnings


def test_an_over_long_sentence_is_cut_between_words_at_a_clause_end_near_the_limit():
    """By hand: parts as long as fit, ending at their last clause end where that keeps at least
    half their words."""
    words = "a, b c d; e f".split()
    assert parts_within(" ".join(words), [1] * 6, 4) == ["a, b c d;", "e f"]
    assert parts_within("a, b c d e", [1] * 5, 4) == ["a, b c d", "e"]  # the comma is too early to cut at
    assert parts_within("a b, c d e", [1] * 5, 4) == ["a b,", "c d e"]
    assert parts_within("a b c, d e f g", [1] * 7, 5) == ["a b c,", "d e f g"]
    assert parts_within("a b c", [2, 5, 1], 4) == ["a", "b", "c"]  # a word longer than the limit is a part alone
    assert parts_within("a b c d", [2, 2, 2, 2], 5) == ["a b", "c d"]


def test_an_over_long_sentence_translates_as_its_parts_do(translator, trained_tiny):
    warnings = []
    cfg = trained_tiny.decode.model_copy(update={"precision": "fp32", "beam_size": 1})
    clause = "a man in a blue shirt rides a bike on the street,"
    sentence = " ".join([clause] * 12) + " and a dog runs."
    limit = translator.max_positions - 1
    parts = parts_within(sentence, [len(ids) for ids in translator.src_tokenizer.encode(sentence.split())], limit)
    assert len(parts) > 1 and all(p.endswith(",") for p in parts[:-1])
    assert all(len(ids) <= limit for ids in translator.src_tokenizer.encode(parts))
    [[line]] = translate_lines(translator, [sentence], cfg, warn=warnings.append)
    alone = translate_lines(translator, parts, cfg)
    assert line.tokens == [t for [h] in alone for t in h.tokens]
    assert warnings == [f"line 1: a sentence of {len(translator.src_tokenizer.encode(sentence))} tokens, more than "
                        f"the model's {limit} (model.max_positions): translated in {len(parts)} parts, cut between words"]


def test_text_without_spaces_past_the_limit_is_cut_at_a_clause_mark_near_it():
    """By hand, a character a token: pieces as long as fit, ending after their last clause mark
    where that keeps at least half their characters."""
    def count(texts):
        return [len(text) for text in texts]

    assert pieces_of_word("一二三，四五六七八九", count, 6) == ["一二三，", "四五六七八九"]
    assert pieces_of_word("一，二三四五六七", count, 6) == ["一，二三四五", "六七"]  # the mark is too early
    assert pieces_of_word("一二三四五六七八九十", count, 4) == ["一二三四", "五六七八", "九十"]
    assert pieces_of_word("一二三", count, 6) == ["一二三"]
    assert pieces_of_word("กินข้าว", count, 4) == ["กิน", "ข้าว"]  # not "้าว": a combining mark stays on its letter
    # whether a part goes on with the word of the one before: not between Chinese characters,
    # each a word of its own (nmt.data.words); inside a Thai word (กินข้าว is one), yes
    assert _sentence_parts("一二三四五六七八九十", count, 4) == (["一二三四", "五六七八", "九十"], [False, False, False])
    assert _sentence_parts("กินข้าว", count, 4) == (["กิน", "ข้าว"], [False, True])


def test_thai_past_the_limit_is_cut_between_its_words(monkeypatch):
    """With nmt[thai], a Thai run is cut at the end of its last word that keeps at least half the
    characters (สุนัข สี ดำ | กระโดด ข้าม | ท่อนไม้), and each part starts a word; without the
    segmenter, as long as fits, each part going on with the word before."""
    pytest.importorskip("pythainlp")

    def count(texts):
        return [len(text) for text in texts]

    thai = "สุนัขสีดำกระโดดข้ามท่อนไม้"
    assert _sentence_parts(thai, count, 10) == (["สุนัขสีดำ", "กระโดดข้าม", "ท่อนไม้"], [False, False, False])
    monkeypatch.setattr("nmt.data.words.segmenter", lambda script: None)
    assert _sentence_parts(thai, count, 10) == (["สุนัขสีดำก", "ระโดดข้าม", "ท่อนไม้"], [False, True, True])


def test_a_sentence_without_spaces_past_the_limit_translates_as_its_pieces_do(translator, trained_tiny):
    """A word of 200 "dog"s (as a sentence of Chinese or Japanese is, for nmt's word counts) is
    cut into pieces that each fit, translated as they are alone; alignments still count it as one
    source word."""
    warnings = []
    cfg = trained_tiny.decode.model_copy(update={"precision": "fp32", "beam_size": 1})
    word, limit = "dog" * 200, translator.max_positions - 1
    pieces = pieces_of_word(word, lambda texts: [len(ids) for ids in translator.src_tokenizer.encode(texts)], limit)
    assert len(pieces) > 1 and "".join(pieces) == word
    assert all(len(ids) <= limit for ids in translator.src_tokenizer.encode(pieces))
    [[out]] = translate_lines(translator, [word], cfg, warn=warnings.append)
    assert out.tokens == [t for [h] in translate_lines(translator, pieces, cfg) for t in h.tokens]
    assert len(warnings) == 1 and f"translated in {len(pieces)} parts" in warnings[0], warnings
    assert "inside text without spaces" in warnings[0]
    [[aligned]] = translate_lines(translator, [f"A dog runs. {word} sits."], cfg, extras=("alignments",))
    links = [tuple(int(x) for x in pair.split("-")) for pair in aligned.alignment.split()]
    assert {s for s, _ in links} == {0, 1, 2, 3, 4}  # A dog runs. | the long word | sits.


def test_a_paragraph_into_chinese_joins_its_sentences_without_spaces(tmp_path):
    """A model whose output is written in Han characters (the tiny German targets, each letter a
    Han character and each full stop "。", briefly trained): a line of three sentences comes out
    as the three sentences' outputs alone, joined by nothing, and tags still find their words."""
    from nmt.train.trainer import train
    from nmt.train.validate import valid_sets

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    han = {c: chr(0x4E00 + 7 * i) for i, c in enumerate("abcdefghijklmnopqrstuvwxyzäöüß")}
    for split in ("train", "valid"):
        (corpus / f"{split}.en").write_text((TINY_DATA / f"{split}.en").read_text(encoding="utf-8"), encoding="utf-8")
        german = (TINY_DATA / f"{split}.de").read_text(encoding="utf-8").lower().splitlines()
        chinese = ["".join(han.get(c, "。" if c == "." else "") for c in line) for line in german]
        (corpus / f"{split}.zh").write_text("\n".join(chinese) + "\n", encoding="utf-8")
    recipe = prepared_tiny(tmp_path / "run", f"data.train={corpus / 'train'}", f"data.valid={corpus / 'valid'}",
                           "data.test=null", "data.tgt_lang=zh", "tokenizer.joint=false",
                           "model.share_embeddings=false", "train.max_steps=20", "train.valid_every=20")
    train(recipe, show_progress=False)
    assert valid_sets(recipe, recipe.out / "data")[0].bleu_tokenize == "zh"  # dev BLEU as sacrebleu -l en-zh counts it
    translator = load_engine([recipe.out / "checkpoints" / "last.pt"])
    cfg = recipe.decode.model_copy(update={"precision": "fp32", "beam_size": 1})
    alone = [hypothesis_text(translator.tgt_tokenizer, h) for [h] in translate_lines(translator, SENTENCES, cfg)]
    # each ends in a Han character, or in the full stop or its source's mark written in Chinese (decode.end_marks)
    assert all(alone) and all("\u4e00" <= text[-1] <= "\u9fff" or text[-1] in "。？！" for text in alone), alone
    assert alone[1].endswith("！") and alone[2].endswith("？")
    [[line]] = translate_lines(translator, [" ".join(SENTENCES)], cfg)
    assert hypothesis_text(translator.tgt_tokenizer, line) == "".join(alone)
    assert line.joins == (len(alone[0]), len(alone[0]) + len(alone[1]))
    [[listed]] = translate_lines(translator, ["• " + " ".join(SENTENCES)], cfg)  # a list's marker in front
    assert listed.text == "• " + "".join(alone) and listed.joins == (len(alone[0]) + 2, len(alone[0]) + len(alone[1]) + 2)
    [[marked]] = translate_lines(translator, ["<b>" + SENTENCES[0] + "</b> " + " ".join(SENTENCES[1:])], cfg,
                                 markup=True)
    assert marked.text == f"<b>{alone[0]}</b>{alone[1]}{alone[2]}" and marked.joins == ()


def test_a_part_that_fills_the_limit_is_not_completed_past_it(translator, trained_tiny):
    """decode.complete_sentences gives a sentence typed without a full stop one; where the last
    part of a sentence cut to the model's positions fills them, the stop would not fit and the part
    stays as cut, instead of losing its last token to truncation (and a warning saying so)."""
    warnings = []
    cfg = trained_tiny.decode.model_copy(update={"precision": "fp32", "beam_size": 1, "complete_sentences": True})
    limit = translator.max_positions - 1
    sentence = " ".join(["a"] * (2 * limit))  # two parts of `limit` tokens each, the second ending the line
    assert len(translator.src_tokenizer.encode(sentence)) == 2 * limit
    translate_lines(translator, [sentence], cfg, warn=warnings.append)
    assert warnings == [f"line 1: a sentence of {2 * limit} tokens, more than the model's {limit} "
                        "(model.max_positions): translated in 2 parts, cut between words"]
