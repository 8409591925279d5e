"""Training pairs rewritten into the forms users type (`data.augment`): a share of the pairs in
capitals or Title Case on both sides (the translation of a headline in capitals is in capitals),
a share with a typo in the source only (the model learns to read through it; its output
stays clean), a share with a tag (an element around 1 to 3 words and the target words linked to
them, or a point such as `<br/>` or `{0}` between words) on both sides, and a share with a verbatim
item (a number, URL, e-mail address, emoji, ...) inserted identically on both sides, so that a
model learns to keep tags and copy such items itself. Which target words correspond to which
source words, the corpus's Dice dictionary says (nmt.data.word_pairs, built in `nmt prepare`).

It happens once, in `nmt prepare`, on the text before it is tokenized: the shards hold token ids
made once, so the data, its epochs and an exact resume are what they are without augmentation.
Each pair's fate is drawn from its own generator, seeded by `seed` and the pair's place in its
corpus, so it does not depend on how the corpus is read in chunks. OpusTrainer's modifiers do the
same on the fly; its package pins sentencepiece 0.1.99, draws from Python's global generator,
and its Tags modifier needs word alignments given beside each pair, so nmt has its own.
"""

from __future__ import annotations

import random
import re

from nmt.config import AugmentConfig
from nmt.data.word_pairs import WordPairs
from nmt.data.words import has_character_words, spans_by_rules_alone

_TYPOS = ("swap", "drop", "double")


def title_case(text: str) -> str:
    """Every word's first letter a capital (the rest as it was), as in OpusTrainer's TitleCase."""
    return " ".join(word[:1].upper() + word[1:] for word in text.split(" "))


def with_typo(text: str, rng: random.Random) -> str:
    """One typo in one word of 3 or more letters: two neighbouring letters swapped, one lost, or
    one doubled. A text without such a word is returned as it is."""
    words = text.split(" ")
    candidates = [i for i, w in enumerate(words) if sum(c.isalpha() for c in w) >= 3]
    if not candidates:
        return text
    i = rng.choice(candidates)
    word = words[i]
    letters = [j for j, c in enumerate(word) if c.isalpha()]
    kind = rng.choice(_TYPOS)
    at = rng.choice(letters[:-1])  # a letter with a letter after it
    if kind == "swap" and word[at + 1].isalpha():
        word = word[:at] + word[at + 1] + word[at] + word[at + 2:]
    elif kind == "drop":
        word = word[:at] + word[at + 1:]
    else:
        word = word[:at] + word[at] + word[at:]
    words[i] = word
    return " ".join(words)


def augment_pair(source: str, target: str, index: int, cfg: AugmentConfig,
                 word_pairs: WordPairs | None = None) -> tuple[str, str]:
    """Pair number `index` of its corpus, rewritten as `cfg` draws it: at most one change of case,
    maybe a typo, maybe a tag and maybe a verbatim item (placed by `word_pairs`, the corpus's
    dictionary; an element only where it links a target word to a wrapped source word)."""
    rng = random.Random(f"{cfg.seed}:{index}")
    original = source, target  # tags and items go by the indices of its words
    case = rng.random()
    if case < cfg.uppercase:
        source, target = source.upper(), target.upper()
    elif case < cfg.uppercase + cfg.titlecase:
        source, target = title_case(source), title_case(target)
    if rng.random() < cfg.typos:
        source = with_typo(source, rng)
    inserts = []
    if cfg.tags and rng.random() < cfg.tags:
        inserts.append(_tag)
    if cfg.verbatim and rng.random() < cfg.verbatim:
        inserts.append(_verbatim)
    if inserts and word_pairs is not None:
        (source_words, source_gaps), (target_words, target_gaps) = _words(source), _words(target)
        original_words = [_words(text)[0] for text in original]
        counts = (len(source_words), len(target_words))
        if min(counts) > 0 and counts == tuple(map(len, original_words)):  # (a typo may drop a word)
            links = word_pairs.links(*original_words)
            for insert in inserts:
                insert(source_words, target_words, links, rng)
            source, target = _joined(source_words, source_gaps), _joined(target_words, target_gaps)
    return source, target


def _words(text: str) -> tuple[list[str], list[str]]:
    """A text's words, as the dictionary reads them (each Chinese or Japanese character one:
    nmt.data.words.spans_by_rules_alone), and the gaps around them: the text is gaps[0] +
    words[0] + gaps[1] + ... + words[-1] + gaps[-1]."""
    spans = spans_by_rules_alone(text)
    edges = [0, *(edge for span in spans for edge in span), len(text)]
    return [text[a:b] for a, b in spans], [text[edges[i]:edges[i + 1]] for i in range(0, len(edges), 2)]


def _joined(words: list[str], gaps: list[str]) -> str:
    return "".join(gap + word for gap, word in zip(gaps, words)) + gaps[-1]


def _space_beside(word: str) -> str:
    """What goes between an inserted item and `word` (tags it has gained included): nothing where
    it is a character that is a word of its own (Chinese, Japanese, Khmer, Burmese: writing
    without spaces), else a space."""
    return "" if has_character_words(word) else " "


# Tags as web pages and software strings have them: elements around words, and points between them.
_ELEMENTS = (("<b>", "</b>"), ("<i>", "</i>"), ("<em>", "</em>"), ("<strong>", "</strong>"), ("<u>", "</u>"),
             ('<span class="{word}">', "</span>"), ('<a href="https://{word}.example.org/{number}">', "</a>"))
_POINTS = ("<br/>", "{{0}}", "{{{word}}}", "%s", "%d")
_EMOJI = ("🎉", "👍", "👍🏽", "😀", "🙂", "❤️", "🔥", "✨", "🚀", "⭐", "🌍", "📷", "🎵", "☕", "⚽", "🐶")
_CORE = re.compile(r"^(\W*)(.*?)(\W*)$")  # a word's punctuation before, its letters, its punctuation after


def _has_word(word: str) -> bool:
    return any(c.isalnum() for c in word)


def _filled(template: str, rng: random.Random) -> str:
    word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 8)))
    return template.format(word=word, number=rng.randint(1, 9999))


def verbatim_item(rng: random.Random) -> str:
    """Text a translation should copy unchanged: a number, date, time, price, percentage, URL,
    e-mail address, emoji, code or handle, drawn at random."""
    word = _filled("{word}", rng)
    n = rng.randint(0, 99999)
    kinds = (str(n), f"{n / 100:.2f}", f"{rng.randint(1990, 2030)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
             f"{rng.randint(0, 23)}:{rng.randint(0, 59):02d}", f"${n / 100:.2f}", f"{rng.randint(1, 100)}%",
             f"https://www.{word}.com/{_filled('{word}', rng)}?id={n}", f"www.{word}.org",
             f"{_filled('{word}', rng)}@{word}.com", rng.choice(_EMOJI),
             f"{word[:1].upper()}-{rng.randint(1, 99)}{word[1:3].upper()}", f"{word.upper()[:5]}-{rng.randint(1, 99)}",
             f"#{word}", f"@{word}_{rng.randint(1, 99)}")
    return rng.choice(kinds)


def _insert_point(source_words: list[str], target_words: list[str], links: dict[int, int], item: str,
                  rng: random.Random) -> None:
    """`item` between two source words, and before the target word linked to the word after it
    (else after the one linked to the word before it, else at the same share of the target)."""
    at = rng.randint(0, len(source_words))
    if at in links:
        to = links[at]
    elif at - 1 in links:
        to = links[at - 1] + 1
    else:
        to = round(at * len(target_words) / max(len(source_words), 1))
    for words, i in ((source_words, at), (target_words, to)):
        if i < len(words):  # one slot, so that the other words keep their indices
            words[i] = f"{item}{_space_beside(words[i])}{words[i]}"
        else:
            words[-1] = f"{words[-1]}{_space_beside(words[-1])}{item}"


def _verbatim(source_words, target_words, links, rng) -> None:
    _insert_point(source_words, target_words, links, verbatim_item(rng), rng)


def _tag(source_words: list[str], target_words: list[str], links: dict[int, int], rng: random.Random) -> None:
    """An element around 1 to 3 source words and the target words linked to them (from the first to
    the last; punctuation at the edges left outside), or a point; nothing where none is linked."""
    if rng.random() < 0.25:
        _insert_point(source_words, target_words, links, _filled(rng.choice(_POINTS), rng), rng)
        return
    width = rng.randint(1, 3)
    first = rng.randrange(len(source_words))
    last = min(first + width, len(source_words)) - 1
    linked = [links[i] for i in range(first, last + 1) if i in links]
    if not linked or max(linked) - min(linked) > last - first + 2:
        return
    if not all(_has_word(words[i]) for words, i in ((source_words, first), (source_words, last),
                                                   (target_words, min(linked)), (target_words, max(linked)))):
        return
    opening, closing = rng.choice(_ELEMENTS)
    opening = _filled(opening, rng)
    for words, start, end in ((source_words, first, last), (target_words, min(linked), max(linked))):
        lead = _CORE.match(words[start]).group(1)
        trail = _CORE.match(words[end]).group(3)
        words[start] = f"{lead}{opening}{words[start][len(lead):]}"
        words[end] = f"{words[end][:len(words[end]) - len(trail)]}{closing}{trail}"
