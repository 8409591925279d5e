"""Input in capitals or in Title Case, which a model trained on ordinary text mistranslates (it
has seen few such lines): the line, or the sentence of a line (a headline before its paragraph),
is translated in sentence case instead, and the translation of one in capitals is given in
capitals (`decode.normalize_case`). A line with a prefix or constraints is left as it is: they are
written in the case the output should have."""

from __future__ import annotations

import re

from nmt.data.tokenizer import output_text
from nmt.decode.search import Hypothesis

_SENTENCE_START = re.compile(r"(^|[.!?][\"'”»)]*\s+)(\W*)(\w)")


def source_case(line: str) -> str | None:
    """"upper" for a line in capitals, "title" for one in Title Case (every word of 3 or more
    capitalized and nothing else in capitals), None otherwise."""
    letters = "".join(filter(str.isalpha, line))
    if len(letters) >= 2 and all(map(str.isupper, letters)):
        return "upper"
    words = [w for w in line.split() if w[:1].isalpha()]
    if len(words) >= 3 and all(w[0].isupper() and w[1:] == w[1:].lower() for w in words):
        return "title"
    return None


def sentence_case(line: str) -> str:
    """Lower case, with the first letter of each sentence capitalized."""
    return _SENTENCE_START.sub(lambda m: m.group(1) + m.group(2) + m.group(3).upper(), line.lower())


def hypothesis_text(tokenizer, hypothesis: Hypothesis) -> str:
    """The output text of a hypothesis, in capitals where its source was (or as markup and
    verbatim spans made it: `Hypothesis.text`)."""
    if hypothesis.text is not None:
        return hypothesis.text
    text = output_text(tokenizer, hypothesis.tokens)
    return text.upper() if hypothesis.upper else text
