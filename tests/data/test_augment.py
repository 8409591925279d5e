"""Training pairs in capitals, Title Case, with typos, tags and verbatim items (data.augment,
nmt.data.augment), and the word dictionary that places tags (nmt.data.word_pairs)."""

from __future__ import annotations

import math

import pytest
from typer.testing import CliRunner

from nmt.cli import app
from nmt.config import AugmentConfig, load_recipe
from nmt.errors import NmtError
from nmt.data.augment import augment_pair, title_case
from tests.conftest import TINY, one_line_error, prepared_tiny

PAIRS = [(f"A black dog number {i} leaps over the log.", f"Ein schwarzer Hund Nummer {i} springt über den Baumstamm.")
         for i in range(20_000)]


def augment_pairs(pairs: list[tuple[str, str]], first_index: int, cfg: AugmentConfig) -> list[tuple[str, str]]:
    """`pairs`, numbered from `first_index` in their corpus, as `nmt prepare` rewrites them."""
    return [augment_pair(s, t, index, cfg) for index, (s, t) in enumerate(pairs, first_index)]


def one_edit_apart(a: str, b: str) -> bool:
    """b is a with two neighbouring characters swapped, one dropped or one doubled."""
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
        return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    short, long = sorted((a, b), key=len)
    return len(long) == len(short) + 1 and any(long[:i] + long[i + 1:] == short for i in range(len(long)))


def test_rates_by_counting_and_both_sides_consistent():
    cfg = AugmentConfig(uppercase=0.1, titlecase=0.2, typos=0.3, seed=7)
    out = augment_pairs(PAIRS, 0, cfg)
    counts = {"upper": 0, "title": 0, "typo": 0}
    for (src, tgt), (new_src, new_tgt) in zip(PAIRS, out):
        if new_tgt == tgt.upper():
            counts["upper"] += 1
            cased_src = src.upper()
        elif new_tgt == title_case(tgt):
            counts["title"] += 1
            cased_src = title_case(src)
        else:
            assert new_tgt == tgt  # the target is only ever re-cased
            cased_src = src
        if new_src != cased_src:
            counts["typo"] += 1
            assert one_edit_apart(cased_src, new_src), (cased_src, new_src)
    n = len(PAIRS)
    for kind, rate in (("upper", 0.1), ("title", 0.2), ("typo", 0.3)):
        assert abs(counts[kind] - rate * n) < 4 * math.sqrt(n * rate * (1 - rate)), (kind, counts)


def test_the_same_seed_gives_the_same_pairs_however_they_are_chunked():
    cfg = AugmentConfig(uppercase=0.2, typos=0.5, seed=3)
    whole = augment_pairs(PAIRS[:2000], 0, cfg)
    assert augment_pairs(PAIRS[:700], 0, cfg) + augment_pairs(PAIRS[700:2000], 700, cfg) == whole
    assert augment_pairs(PAIRS[:2000], 0, cfg.model_copy(update={"seed": 4})) != whole
    assert augment_pairs(PAIRS[:2000], 0, AugmentConfig()) == PAIRS[:2000]


def test_rates_and_keys_are_checked(tmp_path):
    with pytest.raises(NmtError, match=r"data.augment.uppercase: Input should be less than or equal to 1"):
        load_recipe(TINY, ["data.augment.uppercase=1.5"])
    with pytest.raises(NmtError, match=r"data.augment.upcase: unknown key"):
        load_recipe(TINY, ["data.augment.upcase=0.1"])
    with pytest.raises(NmtError, match=r"uppercase \+ titlecase: 1.2, more than 1"):
        load_recipe(TINY, ["data.augment.uppercase=0.6", "data.augment.titlecase=0.6"])
    result = CliRunner().invoke(app, ["train", str(TINY), "--set", "data.augment.typos=-0.1",
                                      "--set", f"output_dir={tmp_path}"])
    one_line_error(result, "data.augment.typos")


def test_prepare_without_augmentation_writes_the_same_shards_and_with_it_counts_what_it_changed(tmp_path):
    plain = prepared_tiny(tmp_path / "plain")
    zeros = prepared_tiny(tmp_path / "zeros", "data.augment.seed=5", "data.augment.uppercase=0", "data.augment.tags=0")
    augmented = prepared_tiny(tmp_path / "augmented", "data.augment.uppercase=0.3", "data.augment.typos=0.3",
                              "data.augment.tags=0.3", "data.augment.verbatim=0.3")
    names = sorted(p.name for p in (plain.out / "data").glob("*.bin"))
    assert names
    for name in names:
        assert (plain.out / "data" / name).read_bytes() == (zeros.out / "data" / name).read_bytes(), name
    assert (plain.out / "data" / "train.src.bin").read_bytes() != (augmented.out / "data" / "train.src.bin").read_bytes()
    assert (plain.out / "data" / "valid.src.bin").read_bytes() == (augmented.out / "data" / "valid.src.bin").read_bytes()
    import json

    report = json.loads((augmented.out / "data" / "report.json").read_text())
    kept = report["splits"]["train"]["kept"]
    assert 0.5 * kept < report["splits"]["train"]["augmented"] < 0.9 * kept  # 1 - 0.7 · 0.7 · 0.7 · 0.7 = 0.76


# A corpus whose word correspondence is known: each target word the translation of one source word, in order.
LEXICON = {"dog": "Hund", "cat": "Katze", "man": "Mann", "woman": "Frau", "runs": "rennt", "sleeps": "schläft",
           "red": "rote", "big": "große", "small": "kleine", "ball": "Ball", "park": "Park", "street": "Straße",
           "plays": "spielt", "with": "mit", "in": "im", "near": "nahe", "house": "Haus", "tree": "Baum"}
WORDS = sorted(LEXICON)


def lexicon_pairs(n: int, seed: int = 0) -> list[tuple[str, str]]:
    import random

    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(4, 10))]
        pairs.append((" ".join(words) + ".", " ".join(LEXICON[w] for w in words) + "."))
    return pairs


def test_word_pairs_dice_by_hand_and_links():
    from nmt.data.word_pairs import WordPairs

    pairs = [("a dog.", "ein Hund."), ("a cat", "eine Katze"), ("the dog", "der Hund"), ("The dog!", "der Hund")]
    word_pairs = WordPairs(pairs, chunk=3)  # two chunks
    # c(dog) = 3, c(hund) = 3, both 3: 2·3/6; c(a) = 2, c(ein) = 1, both 1: 2·1/3; c(the) = 2, c(katze) = 1, both 0
    assert word_pairs.dice("Dog", "Hund.") == 1.0
    assert word_pairs.dice("a", "ein") == pytest.approx(2 / 3)
    assert word_pairs.dice("the", "Katze") == 0.0 and word_pairs.dice("unseen", "Hund") == 0.0
    assert word_pairs.links(["the", "dog"], ["der", "Hund"]) == {0: 0, 1: 1}
    assert WordPairs(pairs, limit=1).dice("dog", "Hund") == 1.0 and WordPairs(pairs, limit=1).dice("cat", "Katze") == 0


def _between_tags(text: str) -> list[str]:
    """The words of each element's content, outermost first (an element per line here)."""
    import re

    return [" ".join(w.strip(".") for w in m.group(2).split()) for m in re.finditer(r"<(\w+)[^>]*>(.*?)</\1>", text)]


def test_tags_and_verbatim_items_by_counting_on_both_sides_consistently():
    from collections import Counter

    from nmt.data.word_pairs import WordPairs
    from nmt.decode.text.markup import mark, walk

    pairs = lexicon_pairs(4000)
    word_pairs = WordPairs(pairs)
    cfg = AugmentConfig(tags=0.3, verbatim=0.2, seed=2)
    out = [augment_pair(s, t, i, cfg, word_pairs) for i, (s, t) in enumerate(pairs)]
    tagged = itemized = 0
    for (src, tgt), (new_src, new_tgt) in zip(pairs, out):
        marked_src, marked_tgt = mark(new_src, markup=True, verbatim=False), mark(new_tgt, markup=True, verbatim=False)
        tags = [Counter((i.open, i.close) for i in walk(m.items)) for m in (marked_src, marked_tgt)]
        assert tags[0] == tags[1], (new_src, new_tgt)  # the same tags on both sides, well nested
        tagged += bool(tags[0])
        for source_part, target_part in zip(_between_tags(new_src), _between_tags(new_tgt)):
            words = [w for w in source_part.split() if w in LEXICON]
            assert " ".join(LEXICON[w] for w in words) == " ".join(w for w in target_part.split()
                                                                   if w in LEXICON.values())
        extra = [[w for w in m.text.split() if w.strip(".") not in LEXICON and w.strip(".") not in LEXICON.values()]
                 for m in (marked_src, marked_tgt)]
        assert extra[0] == extra[1]  # an item, identical on both sides
        itemized += bool(extra[0])
        for m, original, item in ((marked_src, src, extra[0]), (marked_tgt, tgt, extra[1])):
            assert [w for w in m.text.split() if w not in item] == original.split()  # nothing else changed
    n = len(pairs)
    for count, rate in ((tagged, 0.3), (itemized, 0.2)):
        assert abs(count - rate * n) < 4 * math.sqrt(n * rate * (1 - rate)), (count, rate)
    again = [augment_pair(s, t, i, cfg, word_pairs) for i, (s, t) in enumerate(pairs)]
    assert again == out and [augment_pair(s, t, i, cfg.model_copy(update={"seed": 3}), word_pairs)
                             for i, (s, t) in enumerate(pairs)] != out


HAN = {"dog": "狗", "cat": "猫", "man": "男", "woman": "女", "runs": "跑", "sleeps": "睡", "red": "红", "big": "大",
       "small": "小", "ball": "球", "park": "园", "street": "街", "plays": "玩", "with": "和", "in": "在", "near": "近",
       "house": "房", "tree": "树"}


def test_tags_and_items_go_around_characters_where_a_side_is_written_without_spaces():
    """Into writing without spaces (each word one Chinese character here), the dictionary links
    characters, tags wrap the characters linked to the wrapped source words, glued to them as
    such writing has it, and an item is glued in too: no space is added to that side."""
    from collections import Counter

    from nmt.data.word_pairs import WordPairs
    from nmt.decode.text.markup import mark, walk

    pairs = [(s, "".join(HAN[w] for w in s[:-1].split()) + "。") for s, _ in lexicon_pairs(4000)]
    word_pairs = WordPairs(pairs)
    cfg = AugmentConfig(tags=0.3, verbatim=0.2, seed=2)
    tagged = itemized = 0
    for i, (src, tgt) in enumerate(pairs):
        new_src, new_tgt = augment_pair(src, tgt, i, cfg, word_pairs)
        marked_src, marked_tgt = mark(new_src, markup=True, verbatim=False), mark(new_tgt, markup=True, verbatim=False)
        tags = [Counter((i.open, i.close) for i in walk(m.items)) for m in (marked_src, marked_tgt)]
        assert tags[0] == tags[1], (new_src, new_tgt)
        tagged += bool(tags[0])
        [item] = [w for w in marked_src.text.split() if w.strip(".") not in HAN] or [None]
        itemized += item is not None
        for source_part, target_part in zip(_between_tags(new_src), _between_tags(new_tgt)):
            content = target_part if item is None else target_part.replace(item, "")
            # the characters of the wrapped words, and at most two more (links of a repeated word may cross)
            wrapped = Counter(HAN[w] for w in source_part.split() if w in HAN)
            assert wrapped <= Counter(content) and len(content) <= wrapped.total() + 2, (new_src, new_tgt)
        text = marked_tgt.text if item is None else marked_tgt.text.replace(item, "", 1)
        assert text == tgt, (new_src, new_tgt)  # the item glued in, no space added
    n = len(pairs)
    for count, rate in ((tagged, 0.3), (itemized, 0.2)):
        assert abs(count - rate * n) < 4 * math.sqrt(n * rate * (1 - rate)), (count, rate)
