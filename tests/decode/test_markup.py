"""Inline markup and verbatim spans carried across a translation (nmt.decode.text.markup,
nmt.decode.text.verbatim): reading, placing by hand-made alignments, and the guarantees that hold
for any alignment (the output is well-formed and keeps exactly the source's tags)."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest

from nmt.data.words import word_spans
from nmt.decode.text.asides import ASIDE
from nmt.decode.text.markup import (MarkupError, escaped_text, looks_like_markup, mark, mark_lines, monotone_alignment,
                                    read_as_markup, render, walk)
from nmt.decode.text.paragraphs import join_alignments
from nmt.decode.text.verbatim import quantity_spans, stands_alone, unreadable_spans, verbatim_spans


def spans(text: str) -> list[str]:
    return [text[s:e] for s, e in verbatim_spans(text)]


def tags(line: str) -> Counter:
    """The tags of a line that must nest (MarkupError otherwise), as written."""
    items = mark(line, markup=True, verbatim=False).items
    return Counter(tag for item in walk(items) for tag in (item.open, item.close) if tag)


def test_verbatim_spans_are_numbers_urls_emails_emoji_codes_and_handles():
    # programs' placeholders, in plain text too; one that labels the line with its colon
    assert spans("%s: delete {count} files from %(dir)s, {{ user }}, at 50% off") == [
        "%s:", "{count}", "%(dir)s", "{{ user }}", "50%"]
    # a number with its unit of measure, but for a plain number before a word kept in place ("50 km")
    assert spans("Over a 1.5 m fence, the 100m dash at 30°C, 25 °C or 60 mph; 5 in a row, the 1950s, 10 ms.") == [
        "1.5 m", "100m", "30°C", "25 °C", "60 mph", "5", "10"]
    # quotes or brackets that hold just a span go with it (the model would make words of them, empty)
    assert spans('A man with 42 balloons paid $19.99 (15%) on 2024-05-17 at "10:30" (or 11:00 am).') == [
        "42", "$19.99", "(15%)", "2024-05-17", '"10:30"', "11:00 am"]
    # angle brackets around an address, as plain text and Markdown write one; not a heart's "<3"
    assert spans("Write to <anna@example.com> or see <https://example.org/a>, I <3 it.") == [
        "<anna@example.com>", "<https://example.org/a>", "<3"]
    assert spans("See https://example.org/a_(b). Or www.x.com, or mail info@example.com!") == [
        "https://example.org/a_(b)", "www.x.com", "info@example.com"]
    assert spans("Party 🎉 thumbs 👍🏽 family 👨\u200d👩\u200d👧 ok") == ["🎉", "👍🏽", "👨\u200d👩\u200d👧"]
    # times of day with their half of the day, whole; a final stop that ends the line stays outside
    assert spans("At 5 pm, 10am and 7:15 AM; at 5:30 p.m. or 12:00am, not 13 pm nor 5 people.") == [
        "5 pm", "10am", "7:15 AM", "5:30 p.m.", "12:00am", "13", "5"]
    assert spans("We meet at 5:30 p.m.") == ["5:30 p.m"]
    # emoticons between spaces, or before a sentence's punctuation; not inside times, URLs or words
    assert spans("Great :-) and ;) or :D xD <3 ^_^ :'( :/ :P.") == [
        ":-)", ";)", ":D", "xD", "<3", "^_^", ":'(", ":/", ":P"]
    assert spans("Note:D at 3:30, see http://x.org/:) or (:") == ["3:30", "http://x.org/"]
    assert spans("C-3PO and R2-D2 meet COVID-19 fans #nmt @nmt_user.") == ["C-3PO", "R2-D2", "COVID-19", "#nmt", "@nmt_user"]
    # a number joined to a word is translated with it; plain words and a lone hyphen are not spans
    assert spans("A 3-year-old boy and a well-known 1st-rate dog - fine.") == []
    # Chinese and Japanese written against a URL or an address without a space are not part of it
    assert spans("网址https://example.com/a，谢谢。邮箱是abc@example.com。") == ["https://example.com/a", "abc@example.com"]
    assert spans("見てwww.example.com）。メールtaro@example.jpです") == ["www.example.com", "taro@example.jp"]
    assert spans("See https://zh.wikipedia.org/wiki/中国 now") == ["https://zh.wikipedia.org/wiki/中国"]
    assert spans("关注@nmt_user吧，#nmt很好") == ["@nmt_user", "#nmt"]
    # numbers and codes written against Chinese, Japanese or Korean letters, as those languages write them
    assert spans("我有3000元，价格是$25.99，日期2024-05-01，会议在10:30开始。") == ["3000", "$25.99", "2024-05-01", "10:30"]
    assert spans("COVID-19疫情和R2-D2。2024年5月1日に3000원") == ["COVID-19", "R2-D2", "2024", "5", "1", "3000"]


def latin(char: str) -> bool:
    """A vocabulary of Latin script alone (up to Latin Extended-B), but for "ï"."""
    return ord(char) < 0x250 and char != "ï"


def test_text_in_letters_the_vocabulary_lacks_is_a_span_from_letter_to_letter():
    def unread(text):
        return [text[s:e] for s, e in unreadable_spans(text, latin)]

    assert unread("A man eats 寿司 at a table.") == ["寿司"]
    # a run goes on over spaces and punctuation, not over a readable word
    assert unread("Мужчина, женщина и ребёнок. Sushi and 寿司 and 刺身!") == ["Мужчина, женщина и ребёнок", "寿司", "刺身"]
    # a run ends at quotes and brackets; as verbatim spans, those that hold just it go with it
    line = 'It says "Добро пожаловать" and «Привет» (Пока), "Да, yes" [Нет.'
    assert unread(line) == ["Добро пожаловать", "Привет", "Пока", "Да", "Нет"]
    assert [line[s:e] for s, e in verbatim_spans(line, readable=latin)] == [
        '"Добро пожаловать"', "«Привет»", "(Пока)", "Да", "Нет"]
    # in writing without spaces, the letters beside a rare one are other words
    assert [line[s:e] for line in ["我们吃寿司了。"] for s, e in unreadable_spans(line, lambda c: c not in "寿司")] == [
        "寿司"]
    # the readable letters and digits of a word with an unreadable one, and unreadable punctuation
    # beside it ("。"); unreadable symbols alone are left to the model
    assert unread("A naïve dog sees 3D男が乗る。 → here ✓") == ["naïve", "3D男が乗る。"]
    assert unread("A plain line, all readable: café, 42.") == []
    # with numbers, URLs and the like: one span where they meet or overlap, each once
    line = "See https://x.org/寿司 then 5寿司 and Москва 2024 ok"
    assert [line[s:e] for s, e in verbatim_spans(line, readable=latin)] == [
        "https://x.org/寿司", "5寿司", "Москва", "2024"]
    assert [line[s:e] for s, e in verbatim_spans(line)] == ["https://x.org/寿司", "5", "2024"]
    # such text inside a name stays in its sentence, where the line has words the model reads
    def names(text):
        return [(m.start(), m.end()) for m in re.finditer(r"Москва|Мужчина", text)]

    assert [line[s:e] for line in ["Two men visit Москва and 寿司."] for s, e in verbatim_spans(line, None, latin, names)] == [
        "寿司"]
    assert verbatim_spans("Мужчина", None, latin, names) == [(0, 7)]
    # a line with such text says so once, naming it, and is taken apart like any other
    warnings = []
    marked = mark_lines(["Two men eat 寿司 and 刺身 here.", "Two men eat."], [False, False], True, [False, False],
                        warnings.append, [4, 5], readable=latin)
    assert marked[0].text == "Two men eat and here." and marked[1] is None
    assert warnings == ['line 4: "寿司" and 1 more: letters the model\'s source vocabulary lacks; copied as written']


def test_quantities_are_plain_numbers_before_a_word_and_may_stay_in_the_text():
    line = "3 people and 2 Кошки paid $5 for 42.5 kg at 10:30, 7 km, 1102; the 3-year-old saw 8"
    def quantities(text, keep=lambda _: True):
        return [text[start:end] for start, end in quantity_spans(text, keep)]

    assert quantities(line) == ["3", "2", "7"]
    taken_out = [line[s:e] for s, e in verbatim_spans(line, keep=lambda number: number != "7")]
    assert taken_out == ["$5", "42.5 kg", "10:30", "7 km", "1102", "8"]  # a number taken out takes its unit
    assert quantities(line, keep=lambda number: number != "7") == ["3", "2"]
    assert quantities("我有3000元 and 5\tdogs") == ["5"]  # a quantity is followed by whitespace, then a letter
    marked = mark("<b>3 people</b> paid $5.", markup=True, verbatim=True, keep_quantity=lambda _: True)
    assert marked.text == "3 people paid." and [i.open for i in walk(marked.items)] == ["<b>", "$5"]
    assert [stands_alone("3", text) for text in ("3 Leute", "(3)", "5-3 gewonnen", "3个人", "33 Leute", "3er", "x3")] == [
        True, True, True, True, False, False, False]
    # nothing to take out: translated as written
    assert mark_lines(["3 people sit."], [False], True, [False], print, [1], keep_quantity=lambda _: True) == [None]
    assert mark_lines(["3 people sit."], [False], True, [False], print, [1])[0].text == "people sit."


def test_markup_is_read_into_text_and_items_at_offsets():
    marked = mark('A <a href="x>y" title=\'q"\'>big <i>brown</i> dog</a> runs<br/> fast &amp; far.', True, False)
    assert marked.text == "A big brown dog runs fast & far."
    [link, br] = marked.items
    assert link.open == '<a href="x>y" title=\'q"\'>' and link.close == "</a>"
    assert marked.text[link.start:link.end] == "big brown dog"
    assert [c.open for c in link.children] == ["<i>"] and marked.text[link.children[0].start:link.children[0].end] == "brown"
    assert br.point and br.open == "<br/>" and marked.text[:br.start] == "A big brown dog runs"
    placeholders = mark("Hello {name}, you have %d messages <!-- x -->", True, False)
    assert [i.open for i in placeholders.items] == ["{name}", "%d", "<!-- x -->"]
    # the placeholders of programs' messages (printf's, Python's, .NET's, template engines', Qt's,
    # Ruby's, browser extensions', i18next's)
    formats = ["%r", "%(count)d", "%5.2f", "%-10s", "%1$s", "%ld", "%@", "%%", "{0!r}", "{value:,.2f}", "{}",
               "{{ user }}", "${name}", "%1", "%L2", "%n", "%Ln", "%{name}", "%#@files@", "%arg", "$USER$", "$t(menu.open)", '$t(files, {"count": 2})']
    marked = mark(" a ".join(formats) + " b", True, False)
    assert [i.open for i in marked.items] == formats and marked.text == " ".join(["a"] * (len(formats) - 1)) + " b"
    assert mark("A 50% discount, 100% done.", True, False).items == []  # a percent sign in text
    assert mark("It costs $5 or $10 to $20$.", True, False).items == []  # prices
    assert mark("3 < 5 and x>2", True, False).items == []  # a "<" that starts no tag is text


def test_code_and_elements_marked_not_to_be_translated_are_points_copied_whole():
    line = ('Type <code>ls <b>-l</b></code> or <kbd>Ctrl</kbd> at <span translate="no">Big Dog</span> '
            "in <i class='x notranslate'>A <i>park</i></i>, <span translate=\"yes\">not</span> <em class=translated>so</em>.")
    marked = mark(line, True, False)
    assert marked.text == "Type or at in, not so."
    assert [(i.open, i.point) for i in marked.items] == [
        ("<code>ls <b>-l</b></code>", True), ("<kbd>Ctrl</kbd>", True), ('<span translate="no">Big Dog</span>', True),
        ("<i class='x notranslate'>A <i>park</i></i>", True), ('<span translate="yes">', False),
        ("<em class=translated>", False)]
    assert render(marked, "Tippe oder bei in, nicht so.", monotone_alignment(6, 6)).startswith(
        "Tippe <code>ls <b>-l</b></code> oder <kbd>Ctrl</kbd> bei")
    # never closed: an ordinary tag, so the line's markup does not nest
    with pytest.raises(MarkupError, match="<code> is not closed"):
        mark("A <code>dog", True, False)


def test_markup_that_does_not_nest_is_an_error_or_with_lenient_kept_as_points():
    for line, message in (("A <b>dog", "<b> is not closed"), ("A dog</b>", "</b> closes no open tag"),
                          ("<b><i>x</b></i>", "</b> closes <i>")):
        with pytest.raises(MarkupError, match=message):
            mark(line, True, False)
    lenient = mark("A <b>big <i>dog</i> runs", True, False, lenient=True)
    assert lenient.text == "A big dog runs" and [i.open for i in lenient.items] == ["<b>", "<i>"]
    assert lenient.items[0].point and not lenient.items[1].point
    warnings = []
    marked = mark_lines(["fine <b>x</b>", "A <b>dog"], [True, True], False, [False, False], warnings.append, [7, 8])
    assert warnings == ["line 8: markup: <b> is not closed; its unmatched tags are kept where they stand"]
    assert render(marked[1], "Ein Hund", "0-0 1-1") == "Ein <b> Hund"


def test_tags_follow_the_alignment_with_edge_punctuation_outside():
    marked = mark("A <b>red</b> hat.", True, False)
    assert render(marked, "Ein roter Hut.", "0-0 1-1 2-2") == "Ein <b>roter</b> Hut."
    # reordering: "seen him" -> "ihn gesehen"; the full stop stays outside as in the source
    marked = mark("I have <i>seen him</i>.", True, False)
    assert render(marked, "Ich habe ihn gesehen.", "0-0 1-1 3-2 2-3") == "Ich habe <i>ihn gesehen</i>."
    marked = mark('"<b>Dog</b>" and cat', True, False)
    assert render(marked, '"Hund" und Katze', "0-0 1-1 2-2") == '"<b>Hund</b>" und Katze'
    # a point at an element's edge is its edge: "Fig." with its number after it does not end the element
    marked = mark("A dog runs <i>see Fig. 1</i>.", True, True)
    assert render(marked, "Ein Hund rennt siehe Abbildung.", "0-0 1-1 2-2 3-3 4-4") == \
        "Ein Hund rennt <i>siehe Abbildung 1</i>."
    # nested, with attributes whose values hold quotes and ">"
    marked = mark('A <a href="x>y">big <i>brown</i> dog</a> runs.', True, False)
    assert render(marked, "Ein großer brauner Hund rennt.", "0-0 1-1 2-2 3-3 4-4") == \
        'Ein <a href="x>y">großer <i>brauner</i> Hund</a> rennt.'


def test_tags_go_around_chinese_and_japanese_words_without_spaces():
    """Text without spaces: each Chinese or Japanese character is a word of the alignment
    (nmt.data.words), so tags wrap the characters aligned to their words, punctuation the
    source kept outside stays outside, and no space is added; sentences joined without a space
    (Hypothesis.joins) keep their tags too, and a verbatim number sits between characters unspaced."""
    marked = mark("<b>A dog.</b> A <i>cat</i>.", True, False)  # source words: A, dog., A, cat.
    joined = "0-0 0-1 1-2 1-3 2-4 2-5 3-6 3-7"  # 一 只 狗 。 一 只 猫 。
    assert render(marked, "一只狗。一只猫。", joined, (4,)) == "<b>一只狗。</b>一只<i>猫</i>。"
    assert render(marked, "一只狗。 一只猫。", joined) == "<b>一只狗。</b> 一只<i>猫</i>。"
    marked = mark("A dog. A <i>cat</i> runs.", True, False)
    assert render(marked, "狗。猫 跑。", "1-0 1-1 3-2 4-3 4-4", (2,)) == "狗。<i>猫</i> 跑。"
    marked = mark("一只<b>狗</b>在<i>公园</i>里跑。", True, False)  # into English: 一 只 狗 在 公 园 里 跑 。
    assert render(marked, "A dog runs in the park.", "0-0 1-0 2-1 7-2 3-3 6-3 3-4 4-5 5-5 8-5") == \
        "A <b>dog</b> runs in the <i>park</i>."
    marked = mark("The <b>dog</b> runs in the park.", True, False)  # into Japanese: 犬 が 公 園 で 走 る 。
    assert render(marked, "犬が公園で走る。", "1-0 0-1 5-2 5-3 3-4 2-5 2-6 2-7") == "<b>犬</b>が公園で走る。"
    marked = mark("I have 3000 yuan.", False, True)  # verbatim: 3000 between "have" and "yuan."
    assert marked.text == "I have yuan."
    assert render(marked, "我有元。", "0-0 1-1 2-2 2-3") == "我有3000元。"
    assert render(marked, "Ich habe Yuan.", "0-0 1-1 2-2") == "Ich habe 3000 Yuan."


def test_tags_go_around_thai_words_found_by_the_segmenter(monkeypatch):
    """Thai writes no spaces between words: with nmt[thai], PyThaiNLP's words are the alignment's,
    so tags wrap the aligned words on either side, and a verbatim number sits between them
    unspaced; without it a run between spaces is one word and the tag takes it whole."""
    pytest.importorskip("pythainlp")
    marked = mark("The <b>black dog</b> jumps.", True, False)  # into Thai: สุนัข สี ดำ กระโดด
    assert render(marked, "สุนัขสีดำกระโดด", "0-0 2-0 1-1 1-2 3-3") == "<b>สุนัขสีดำ</b>กระโดด"
    marked = mark("<b>สุนัข</b>สีดำกระโดด", True, False)  # from Thai: สุนัข สี ดำ กระโดด
    assert render(marked, "A black dog jumps.", "1-1 2-1 0-2 3-3") == "A black <b>dog</b> jumps."
    marked = mark("I have 3000 baht.", False, True)
    assert render(marked, "ฉันมีบาท", "0-0 1-1 2-2") == "ฉันมี3000บาท"
    monkeypatch.setattr("nmt.data.words.segmenter", lambda script: None)
    marked = mark("The <b>black dog</b> jumps.", True, False)
    assert render(marked, "สุนัขสีดำกระโดด", "0-0 1-0 2-0 3-0") == "<b>สุนัขสีดำกระโดด</b>"


def test_tags_go_around_lao_words_found_by_the_segmenter():
    """Lao, likewise, with LaoNLP (nmt[lao]): ໝາ ສີດຳ ແລ່ນ, dog black runs."""
    pytest.importorskip("laonlp")
    marked = mark("The <b>black dog</b> jumps.", True, False)
    assert render(marked, "ໝາສີດຳແລ່ນ", "1-1 2-0 3-2") == "<b>ໝາສີດຳ</b>ແລ່ນ"
    marked = mark("<b>ໝາ</b>ສີດຳແລ່ນ", True, False)
    assert render(marked, "A black dog runs.", "1-1 0-2 2-3") == "A black <b>dog</b> runs."


def test_tags_go_around_khmer_clusters_and_burmese_syllables():
    """Khmer and Burmese: tags wrap the character clusters and syllables aligned to the words they
    wrapped, on either side, and a verbatim number sits between them unspaced."""
    marked = mark("The <b>black dog</b> jumps.", True, False)  # into Khmer: ឆ្កែ ខ្មៅ លោ|ត, dog black jumps
    assert render(marked, "ឆ្កែខ្មៅលោត", "2-0 1-1 3-2 3-3") == "<b>ឆ្កែខ្មៅ</b>លោត"
    assert render(marked, "ခွေးနက်ခုန်တယ်", "2-0 1-1 3-2 3-3") == "<b>ခွေးနက်</b>ခုန်တယ်"  # Burmese
    marked = mark("<b>ခွေး</b>နက်ခုန်တယ်", True, False)  # from Burmese
    assert render(marked, "A black dog jumps.", "1-1 0-2 2-3 3-3") == "A black <b>dog</b> jumps."
    marked = mark("I have 3000 riel.", False, True)  # ខ្ញុំ មា|ន រៀ|ល, I have riel
    assert render(marked, "ខ្ញុំមានរៀល", "0-0 1-1 1-2 2-3 2-4") == "ខ្ញុំមាន3000រៀល"


def test_an_element_whose_words_have_no_output_is_written_empty_and_points_stay_between_words():
    marked = mark("A <b>very</b> big dog<br/> runs.", True, False)
    assert render(marked, "Ein großer Hund rennt.", "0-0 2-1 3-2 4-3") == "Ein <b></b> großer Hund <br/> rennt."
    assert render(mark("<br/>", True, False), "", "") == "<br/>"  # a tag-only line


def test_markup_output_escapes_the_text_and_keeps_references_in_tags():
    marked = mark("Tom &amp; Jerry <b>&lt;run&gt;</b>", True, False)
    assert marked.text == "Tom & Jerry <run>"
    assert render(marked, "Tom & Jerry <rennen>", "0-0 1-1 2-2 3-3") == "Tom &amp; Jerry <b>&lt;rennen&gt;</b>"
    # punctuation the source did not tag stays outside the tags
    assert render(mark("Tom &amp; Jerry <b>run</b>", True, False), "Tom & Jerry <rennen>", "0-0 1-1 2-2 3-3") == \
        "Tom &amp; Jerry &lt;<b>rennen</b>&gt;"


def test_characters_the_source_wrote_as_references_are_written_so_again():
    """A reference other than &amp;, &lt; and &gt; (which escaping writes anyway) comes back as the
    source spelled it, where the source never wrote the character itself."""
    marked = mark("&copy; ACME &amp; Co. &quot;Hi&quot; &#39;x&#39; 3&nbsp;km", True, False)
    assert marked.text == "© ACME & Co. \"Hi\" 'x' 3 km"  # (a no-break space read as any space)
    assert marked.references == {"©": "&copy;", '"': "&quot;", "'": "&#39;"}
    output = "© ACME & Co. \"Hallo\" 'x' 3 km <3"
    assert render(marked, output, monotone_alignment(8, 9)) == \
        "&copy; ACME &amp; Co. &quot;Hallo&quot; &#39;x&#39; 3 km &lt;3"
    # a character the source also wrote as itself is left as the model wrote it
    assert mark("\"Hi\" &quot;you&quot;", True, False).references == {}
    assert mark("&NotEqualTilde; x", True, False).references == {}  # two characters: left out


def test_a_reference_is_read_whole_where_verbatim_spans_and_asides_are_found():
    """Spans are found in the text as the model reads it: "&#39;" is an apostrophe, never the
    hashtag "#39" cut out of it; a span keeps its references as written."""
    marked = mark("<b>A</b> man&#39;s dog &#38; a cat.", True, True)
    assert marked.text == "A man's dog & a cat." and [i.open for i in marked.items] == ["<b>"]
    marked = mark("See https://a.org/?a=1&amp;b=2 &amp; write &lt;anna@example.com&gt; (the &quot;team&quot;).",
                  True, True, asides=True)
    assert marked.text == "See & write the \"team\"."  # (the aside's parentheses an element's tags)
    assert [i.open for i in walk(marked.items) if i.point] == ["https://a.org/?a=1&amp;b=2", "&lt;anna@example.com&gt;"]
    [aside] = [i for i in marked.items if i.name == ASIDE]
    assert marked.text[aside.start:aside.end] == 'the "team"'


def test_text_escaped_for_markup_keeps_its_markdown_marks():
    """"A **black** dog &amp; a cat." (no tags): its references read and its Markdown marks taken
    out as any plain line's, the output escaped; a link's address and a code span as written."""
    [marked] = mark_lines(["A **black** dog &amp; a [cat](https://x.org/?a=1&amp;b=2) `a &amp; b`."], [True], False,
                          [False], print, [1], markdown=True)
    assert marked.text == "A black dog & a cat." and marked.escape
    assert render(marked, "Ein schwarzer Hund & eine Katze.", "0-0 1-1 2-2 3-3 4-4 5-5") == \
        "Ein **schwarzer** Hund &amp; eine [Katze](https://x.org/?a=1&amp;b=2) `a &amp; b`."
    [tagged] = mark_lines(["A <b>black</b> **dog**."], [True], False, [False], print, [1], markdown=True)
    assert tagged.text == "A black **dog**."  # (a line with tags: markup's rules alone, as before)


@pytest.mark.parametrize("line, expected", [
    ("Tom &amp; Jerry &lt;3 the park.", True), ("A man&#39;s dog &#x26; a cat.", True), ("&copy; 2024 ACME", True),
    ("AT&T &amp; co", False), ("Fish &chips; here", False), ("a &gt; b > c", False), ("Tom & Jerry", False),
    ("x &#0; y", False), ("no references at all", False)])
def test_text_escaped_for_markup_has_references_and_no_bare_ampersand_or_bracket(line, expected):
    assert escaped_text(line) is expected
    assert read_as_markup(line) is expected and not looks_like_markup(line)  # (messages keep the tags-only rule)


def test_verbatim_text_goes_before_the_word_aligned_to_the_word_after_it():
    marked = mark("A man with 42 balloons.", False, True)
    assert marked.text == "A man with balloons." and marked.items[0].open == "42"
    assert render(marked, "Ein Mann mit Ballons.", "0-0 1-1 2-2 3-3") == "Ein Mann mit 42 Ballons."
    assert render(marked, "Ballons hat ein Mann.", "3-0 2-1 0-2 1-3") == "42 Ballons hat ein Mann."
    ended = mark("Visit https://example.org.", False, True)
    assert ended.text == "Visit."  # no space left before the full stop
    assert render(ended, "Besuche es.", "0-0 0-1") == "Besuche es https://example.org."
    assert render(mark("Visit it. 🎉", False, True), "Besuche es.", "0-0 1-1") == "Besuche es. 🎉"
    assert render(mark("Visit it 🎉", False, True), "Besuche es.", "0-0 1-1") == "Besuche es 🎉."
    # not markup: a tag-like text is left to the model, the output is not escaped
    assert mark("a <b> & 5", False, True).text == "a <b> &"


def test_any_alignment_gives_well_formed_output_with_exactly_the_source_tags():
    """Random trees of tags (empty elements inside words too) and random alignments, crossing and
    many-to-one included; sources and outputs in words between spaces, in Chinese characters, or
    in Thai words without spaces (where nmt[thai] is installed, its segmenter's words)."""
    rng = random.Random(0)
    thai = ["สุนัข", "สี", "ดำ", "กระโดด", "ข้าม", "ทำงาน", "ใน"]
    for case in range(900):
        script = ("latin", "chinese", "thai")[case % 3]  # (nmt.data.words)
        words = [rng.choice("狗猫在跑。") if script == "chinese" else rng.choice(thai) if script == "thai" else f"w{i}"
                 for i in range(rng.randint(0, 7))]
        line = _random_markup(rng, words)
        marked = mark(line, True, True)
        n_out, roll = rng.randint(0, 8), rng.random()
        output = ("".join(rng.choice("犬が走る。") for _ in range(n_out)) if roll < 0.33 else
                  "".join(rng.choice(thai) for _ in range(n_out)) if roll < 0.67 else
                  " ".join(f"v{j}" + rng.choice(["", ".", ","]) for j in range(n_out)))
        n_src = len(word_spans(marked.text))
        alignment = " ".join(f"{rng.randrange(n_src)}-{j}" for j in range(n_out) if n_src and rng.random() < 0.8)
        out = render(marked, output, alignment)
        assert tags(out) == tags(line), (line, alignment, out)
        text = mark(out, True, False).text  # the output's words, and the verbatim spans once each
        for point in _points(marked):
            assert point in text, (line, out)
            text = text.replace(point, "", 1)
        assert "".join(text.split()) == "".join(output.split()), (line, alignment, out)


def _points(marked) -> list[str]:
    """The verbatim spans of a line, which are text in the output (tags are not)."""
    return [item.open for item in walk(marked.items) if item.point and not item.open.startswith(("<", "{", "%"))]


def _random_markup(rng: random.Random, words: list[str]) -> str:
    out, stack = [], []
    for word in words:
        roll = rng.random()
        if roll < 0.25:
            name = rng.choice(["b", "i", "span"])
            out.append(f'<{name} class="c{rng.randint(0, 9)}">' if name == "span" else f"<{name}>")
            stack.append(name)
        elif roll < 0.35:
            out.append(rng.choice(["<br/>", "{0}", "42", "🎉"]))
        elif roll < 0.4:  # an empty element inside the word
            word = f"{word}<i></i>x"
        out.append(word)
        if stack and rng.random() < 0.4:
            out.append(f"</{stack.pop()}>")
    out += [f"</{name}>" for name in reversed(stack)]
    return " ".join(out)


def test_a_monotone_alignment_runs_along_the_diagonal():
    assert monotone_alignment(2, 4) == "0-0 0-1 1-2 1-3"
    assert monotone_alignment(3, 3) == "0-0 1-1 2-2" and monotone_alignment(0, 3) == ""


def test_alignments_of_sentences_join_with_offsets():
    assert join_alignments(["0-0 1-1 1-2", "", "1-0 0-1"], [2, 3, 2]) == "0-0 1-1 1-2 6-3 5-4"
    assert join_alignments(["0-0 1-0 1-1", "0-0"], [2, 1]) == "0-0 1-0 1-1 2-2"  # two links of output word 0
