"""Word alignments from cross-attention (nmt.decode.text.alignment): the attention weights written
out agree with the layer's own computation, pieces group into words, and a model trained to copy
aligns each word with itself."""

from __future__ import annotations

import random
import unicodedata

import pytest
import torch
import torch.nn.functional as F

from nmt.config import ModelConfig
from nmt.special_tokens import BOS, EOS, PAD
from nmt.decode.text.alignment import align_batch, model_attention, pharaoh
from nmt.data.words import by_rules_alone, piece_words, word_count, word_spans
from nmt.decode.search import greedy_search
from nmt.model.transformer import Transformer, _merge_heads
from tests.decode.test_search import sources, toy_model


def one_each(words: list[int]) -> list[tuple[int, ...]]:
    return [(w,) for w in words]


def test_words_and_links_by_hand():
    assert piece_words(["▁Ein", "▁Hund", "e", "s", "▁", "ü", "."]) == one_each([0, 1, 1, 1, 2, 2, 2])
    assert piece_words(["s", "▁a"]) == one_each([0, 1])
    # Target pieces 0, 1 form word 0 and attend to source word 1 (pieces 1, 2); piece 2 to word 0.
    attention = torch.tensor([[0.1, 0.5, 0.4], [0.2, 0.3, 0.5], [0.9, 0.05, 0.05]])
    assert pharaoh(attention, one_each([0, 1, 1]), one_each([0, 0, 1])) == "1-0 0-1"
    assert pharaoh(attention, [], one_each([0])) == ""
    # Both output words choose source word 0 (word 0 averages its pieces: 0.75, 0.15, 0.1; word 1:
    # 0.5, 0.2, 0.3). Source words 1 and 2 are no output word's choice: each is linked to the
    # output word attending to it most (0.2 > 0.15 and 0.3 > 0.1: output word 1).
    attention = torch.tensor([[0.8, 0.1, 0.1], [0.7, 0.2, 0.1], [0.5, 0.2, 0.3]])
    assert pharaoh(attention, one_each([0, 1, 2]), one_each([0, 0, 1])) == "0-0 0-1 1-1 2-1"
    assert pharaoh(attention, one_each([0, 1, 2]), one_each([0, 0, 1]), cover=False) == "0-0 0-1"


def assert_every_cut_holds_the_words(spelled: str, words: int, cuts: int = 500) -> None:
    """Random cuts of a text as the tokenizer spells it (NFKC, ▁ for each space) into pieces: each
    set of pieces holds as many words as the text."""
    marked = "▁" + spelled.replace(" ", "▁")
    rng = random.Random(0)
    for _ in range(cuts):
        ends = sorted(rng.sample(range(1, len(marked)), rng.randint(1, 20)))
        pieces = [marked[a:b] for a, b in zip([0, *ends], [*ends, len(marked)])]
        assert word_count(piece_words(pieces)) == words, pieces


def test_thai_words_are_the_segmenters_on_both_sides():
    """Thai, without spaces between words: the text's words are PyThaiNLP's (nmt[thai]), and any
    cut into pieces of its NFKC form (which writes SARA AM, ำ, as two characters) holds as many."""
    pythainlp = pytest.importorskip("pythainlp.tokenize")
    text = "สุนัขสีดำ OK"
    assert [text[a:b] for a, b in word_spans(text)] == ["สุนัข", "สี", "ดำ", "OK"]  # dog, colour, black
    text = "สุนัขสีดำกระโดดข้ามท่อนไม้ ชายสองคนทำงาน ราคา100บาท OK"
    words = [text[a:b] for a, b in word_spans(text)]
    assert words == [w for w in pythainlp.word_tokenize(text, engine="newmm") if not w.isspace()] and len(words) > 10
    spelled = unicodedata.normalize("NFKC", text)
    assert spelled != text and len(spelled) == len(text) + 2  # the two SARA AMs
    assert piece_words(["▁สุนัข", "สีด", "ํา", "กระ", "โดด"]) == [(0,), (1, 2), (2,), (3,), (3,)]
    assert_every_cut_holds_the_words(spelled, len(words))


def test_words_by_rules_alone_are_the_same_on_every_machine():
    """The words guided alignment's dice links number (by_rules_alone): Chinese and Japanese
    characters, Khmer clusters and Burmese syllables each a word, Thai and Lao runs whole whether
    their segmenters are installed or not, and the whitespace words of any other text."""
    assert by_rules_alone("一只狗 runs, fast。") == ["一", "只", "狗", "runs,", "fast", "。"]
    assert by_rules_alone("ខ្ញុំចង់ OK") == ["ខ្ញុំ", "ច", "ង់", "OK"]
    assert by_rules_alone("สุนัขสีดำ OK") == ["สุนัขสีดำ", "OK"]  # (word_spans splits it where PyThaiNLP is installed)
    latin = "  A dog\u00a0runs\tfast.  "
    assert by_rules_alone(latin) == latin.split() == [latin[a:b] for a, b in word_spans(latin, dictionaries=False)]
    assert piece_words(["▁สุนัข", "สี", "ดำ"], dictionaries=False) == [(0,), (0,), (0,)]


def test_khmer_clusters_and_burmese_syllables_are_the_words_on_both_sides():
    """Khmer and Burmese, without spaces between words and without a segmenter: each Khmer
    character cluster and each Burmese syllable is a word, as each Han character is; their digits
    together, each sign of punctuation apart, a zero-width space no word; NFKC keeps them as they
    are written, and any cut into pieces holds as many words."""
    def words(text: str) -> list[str]:
        return [text[a:b] for a, b in word_spans(text)]

    # I want to go to the market. The subscripts (្ញ, ្ស) stay with their base; the final ង់ and រ,
    # written as bases, are clusters of their own
    assert words("ខ្ញុំចង់ទៅផ្សារ។") == ["ខ្ញុំ", "ច", "ង់", "ទៅ", "ផ្សា", "រ", "។"]
    assert words("10គីឡូ ២០២៤ ខ្ញុំ\u200bចង់") == ["10", "គី", "ឡូ", "២០២៤", "ខ្ញុំ", "ច", "ង់"]
    # I am going to Mandalay: a final consonant killed by ASAT stays in its syllable, and so does
    # one stacked by VIRAMA with the consonant under it (မန္တ); DOT BELOW may stand before ASAT (ကြည့်)
    assert words("ကျွန်တော်မန္တလေးကိုသွားမယ်။") == ["ကျွန်", "တော်", "မန္တ", "လေး", "ကို", "သွား", "မယ်", "။"]
    assert words("ကြည့်ပါ ၁၀၀ ကျပ် OK") == ["ကြည့်", "ပါ", "၁၀၀", "ကျပ်", "OK"]
    assert piece_words(["▁ខ្ញុំ", "ចង់", "ទៅ"]) == [(0,), (1, 2), (3,)]
    assert piece_words(["▁ကျွန်", "တော်မ", "န္တ", "လေး"]) == [(0,), (1, 2), (2,), (3,)]
    for text in ("ខ្ញុំចង់ទៅផ្សារ។ ឆ្កែខ្មៅលោតរំលងឈើ ២០២៤ OK", "ကျွန်တော်မန္တလေးကိုသွားမယ်။ ခွေးနက်ခုန်တယ် ၁၀၀ OK"):
        assert unicodedata.normalize("NFKC", text) == text
        assert_every_cut_holds_the_words(text, len(word_spans(text)))


def test_lao_words_are_the_segmenters_on_both_sides():
    """Lao, likewise, with LaoNLP (nmt[lao]). NFKC writes the vowel sign AM (ຳ) and the ligatures ໜ
    and ໝ as two characters each, which the dictionary reads otherwise (ຄຳເວົ້າ, one word, would be
    ຄໍ|າ|ເວົ້າ), so a piece's text is read with them put back."""
    laonlp = pytest.importorskip("laonlp.tokenize")
    text = "ນ້ຳໜັກຂອງໝູ ຄຳເວົ້າ OK"
    assert [text[a:b] for a, b in word_spans(text)] == ["ນ້ຳໜັກ", "ຂອງ", "ໝູ", "ຄຳເວົ້າ", "OK"]  # weight of pig; speech
    text = "ໝາສີດຳແລ່ນຂ້າມທ່ອນໄມ້ ຜູ້ຊາຍສອງຄົນເຮັດວຽກ ລາຄາ100ກີບ ນ້ຳໜັກຂອງໝູ ຄຳເວົ້າ OK"
    words = [text[a:b] for a, b in word_spans(text)]
    assert words == [w for w in laonlp.word_tokenize(text) if not w.isspace()] and len(words) > 10
    spelled = unicodedata.normalize("NFKC", text)
    assert len(spelled) == len(text) + 6  # its six ຳ, ໜ and ໝ, two characters each
    assert_every_cut_holds_the_words(spelled, len(words))


def test_each_chinese_or_japanese_character_is_a_word_on_both_sides():
    """Text without spaces: the text's words and its pieces' words agree character by character,
    whatever the pieces (a piece of two characters holds two words, a lone ▁ joins the next)."""
    text = "一只狗在公园里跑 COVID-19 ３０００元。"
    assert [text[a:b] for a, b in word_spans(text)] == ["一", "只", "狗", "在", "公", "园", "里", "跑", "COVID-19",
                                                        "３０００", "元", "。"]
    pieces = ["▁一只", "狗", "在", "▁", "公园", "里跑", "▁CO", "VID", "-19", "▁3000", "元", "。"]  # as NFKC pieces them
    assert piece_words(pieces) == [(0, 1), (2,), (3,), (4,), (4, 5), (6, 7), (8,), (8,), (8,), (9,), (10,), (11,)]
    assert word_count(piece_words(pieces)) == len(word_spans(text))
    japanese = "わたしはAIです"
    assert [japanese[a:b] for a, b in word_spans(japanese)] == ["わ", "た", "し", "は", "AI", "で", "す"]
    assert piece_words(["▁Hund", "狗", "s"]) == [(0,), (1,), (2,)]  # a word ends at the character, and after it
    # Any cut of a text into pieces (▁ before each whitespace word, as sentencepiece marks them)
    # holds as many words as the text has, whatever mix of scripts.
    rng = random.Random(0)
    for _ in range(2000):
        text = " ".join("".join(rng.choice("abc12-.,狗猫在跑。がは３") for _ in range(rng.randint(1, 5)))
                        for _ in range(rng.randint(0, 6)))
        marked = "".join("▁" + word for word in text.split())
        cuts = sorted(rng.sample(range(1, len(marked)), min(len(marked) - 1, rng.randint(0, 6)))) if marked else []
        pieces = [marked[a:b] for a, b in zip([0, *cuts], [*cuts, len(marked)])] if marked else []
        assert word_count(piece_words(pieces)) == len(word_spans(text)), (text, pieces)
    # A piece of two characters counts in both its words: source words 0 and 1 (piece 0) take its
    # attention whole. Output word 0 (pieces 0, 1) averages theirs: 0.6, 0.6, 0.4 over the source
    # words, the first of the two largest chosen; output word 1: 0.1, 0.1, 0.9. Source word 1, no
    # output word's choice, goes to the one attending to it most (0.6 > 0.1: output word 0).
    attention = torch.tensor([[0.7, 0.3], [0.5, 0.5], [0.1, 0.9]])
    assert pharaoh(attention, [(0, 1), (2,)], [(0,), (0,), (1,)], cover=False) == "0-0 2-1"
    assert pharaoh(attention, [(0, 1), (2,)], [(0,), (0,), (1,)]) == "0-0 1-0 2-1"


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_written_out_weights_give_the_layers_attention_output(norm):
    model = toy_model(norm=norm)
    src = sources()
    tgt_in = torch.randint(4, 40, (4, 6))
    tgt_in[:, 0] = BOS
    memory, src_mask = model.encode(src)
    layer = model.decoder_layers[1]
    x = model.decoder_layers[0](model.tgt_embed(tgt_in), memory, src_mask)
    kv = layer.cross_attn.project_kv(memory)
    weights = model.cross_attention(src, tgt_in)[1]
    assert torch.allclose(weights.sum(-1), torch.ones(4, 4, 6), atol=1e-5)
    assert (weights.masked_select(~src_mask) == 0).all()  # nothing on padding
    y = layer.self_sublayer(x, lambda z: layer.self_attn(z, causal=True))
    y = layer.cross_sublayer.norm(y) if norm == "pre" else y
    expected = layer.cross_attn(y, mask=src_mask, kv=kv)
    assert torch.allclose(layer.cross_attn.out_proj(_merge_heads(weights @ kv[1])), expected, atol=1e-5)


@pytest.mark.slow
def test_a_model_trained_to_copy_aligns_each_word_with_itself():
    # One layer each learns to copy in 250 updates (two each needed 300, at 2.5 times the time, and
    # their mean attention was less diagonal: on seeds 0-2, 38-40 of 40 copied, all aligned).
    torch.manual_seed(0)
    vocab = 24
    model = Transformer(ModelConfig(encoder_layers=1, decoder_layers=1, d_model=64, heads=4, d_ff=128, dropout=0.0,
                                    max_positions=32), vocab, vocab)
    optimizer = torch.optim.Adam(model.parameters(), lr=4e-3, betas=(0.9, 0.98))

    def batch(n):
        src, tgt_in, tgt_out = (torch.full((n, 9), PAD) for _ in range(3))
        for i, length in enumerate(torch.randint(3, 9, (n,)).tolist()):
            x = torch.randint(4, vocab, (length,))
            src[i, :length], src[i, length] = x, EOS
            tgt_in[i, 0], tgt_in[i, 1:length + 1] = BOS, x
            tgt_out[i, :length], tgt_out[i, length] = x, EOS
        return src, tgt_in, tgt_out

    for _ in range(250):
        src, tgt_in, tgt_out = batch(64)
        loss = F.cross_entropy(model(src, tgt_in).flatten(0, 1), tgt_out.flatten(), ignore_index=PAD)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    src = batch(40)[0]
    words = [[t for t in row.tolist() if t not in (PAD, EOS)] for row in src]
    outputs = [h.tokens for h in greedy_search(model, src)]
    copied = [i for i, (w, o) in enumerate(zip(words, outputs)) if w == o]
    assert len(copied) >= 35
    pieces = [[f"▁{t}" for t in w] for w in words]  # one piece per word
    sources, outs = [words[i] for i in copied], [outputs[i] for i in copied]
    lines = align_batch(model_attention(model, sources, outs), sources, outs,
                        [pieces[i] for i in copied], [pieces[i] for i in copied])
    diagonal = [" ".join(f"{j}-{j}" for j in range(len(words[i]))) for i in copied]
    assert sum(a == d for a, d in zip(lines, diagonal)) >= 0.9 * len(copied), lines
