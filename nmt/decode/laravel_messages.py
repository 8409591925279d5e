"""What Laravel reads in a message, in its PHP language files (nmt.decode.php_messages) and its
JSON strings (json_messages): its placeholders and its plural forms.

Placeholders (`:attribute`, `:Name`, `:COUNT`, which Laravel replaces by name in any case) are
given to the model as placeholders it keeps (`{:name}`), and written back as the file has them.
A message of plural forms (`:count file|:count files`, forms joined by `|` without spaces around
it) is translated form by form and given as many forms as Laravel chooses between for the target
language (MessageSelector::getPluralIndex: three for Russian, one for Japanese), each added one
with the translation of the source's form of its category, else of its last, for a reviewer to
adapt. Forms with their own numbers (`{0} None|[1,19] Some|[20,*] Many`) keep them, and their count.
"""

from __future__ import annotations

import re

from nmt.data.languages import language_tag, two_letter
from nmt.decode.text.messages import Message, Part, from_markup, message_parts

# a colon and a name, not after a letter, a digit, a colon or a slash ("10:30", "http://")
_PLACEHOLDER = re.compile(r"(?<![\w:/\\]):[A-Za-z_]\w*")
_MARKED = re.compile(r"\{(:[A-Za-z_]\w*)\}")  # as the model's side sees one: a {placeholder}
_CONDITION = re.compile(r"\s*[{\[]\s*[-+*\d.]+\s*(?:,\s*[-+*\d.]+\s*)?[}\]]\s*")  # a form's own numbers: "{0} ", "[2,*] "

# The plural forms Laravel chooses between, by language, in its order (MessageSelector::getPluralIndex)
_ONE_OTHER = ("one", "other")
_ONE_FEW_MANY = ("one", "few", "many")
_FORMS = {
    **dict.fromkeys(("az", "bo", "dz", "id", "ja", "jv", "ka", "km", "kn", "ko", "ms", "th", "tr", "vi", "zh"), ("other",)),
    **dict.fromkeys(("af", "bn", "bg", "ca", "da", "de", "el", "en", "eo", "es", "et", "eu", "fa", "fi", "fo", "fy", "gl",
                     "gu", "ha", "he", "hu", "is", "it", "ku", "lb", "ml", "mn", "mr", "nb", "ne", "nl", "nn", "no", "om",
                     "or", "pa", "ps", "pt", "so", "sq", "sv", "sw", "ta", "te", "tk", "ur", "zu", "am", "fil", "fr", "hi",
                     "hy", "ln", "mg", "ti", "wa", "mk"), _ONE_OTHER),
    **dict.fromkeys(("be", "bs", "hr", "ru", "sr", "uk", "cs", "sk", "pl", "lt"), _ONE_FEW_MANY),
    "ga": ("one", "two", "other"), "ro": ("one", "few", "other"), "lv": ("zero", "one", "other"),
    "sl": ("one", "two", "few", "other"), "cy": ("one", "two", "many", "other"), "mt": ("one", "few", "many", "other"),
    "ar": ("zero", "one", "two", "few", "many", "other"),
}


def marked(text: str) -> tuple[str, frozenset]:
    """`text` with its placeholders marked (`:name` → `{:name}`), and those placeholders; a text
    that has a `{:` of its own is left as it is."""
    found = frozenset(_PLACEHOLDER.findall(text)) if "{:" not in text else frozenset()
    return (_PLACEHOLDER.sub(lambda m: "{" + m.group(0) + "}", text) if found else text), found


def unmarked(text: str, placeholders: frozenset) -> str:
    """A text with its placeholders as the file writes them (`{:name}` → `:name`)."""
    return _MARKED.sub(lambda m: m.group(1) if m.group(1) in placeholders else m.group(0), text) if placeholders else text


def laravel_forms(language: str) -> tuple[str, ...] | None:
    """The plural categories of Laravel's forms for `language` (de, deu_Latn, pt_BR), in their
    order; None where Laravel does not know it (it then always takes the first form)."""
    return _FORMS.get(two_letter(language) or language_tag(language).split("-")[0].lower())  # (as plural_categories)


class LaravelMessage(Message):
    """A message as Laravel reads it: its plural forms (`forms`, where it is one) cut apart. Made by
    a dataclass whose fields include `markup` (and `laravel`, where a file's messages are Laravel's
    only some of them)."""

    laravel = True
    placeholders: frozenset = frozenset()  # (a dataclass field where it has any: marked() gives them)

    def __post_init__(self):
        # (its own numbers and text, form by form; None: not a plural)
        self.forms = plural_forms(self.markup) if self.laravel else None
        super().__post_init__()

    def cut(self, every_line: bool = False) -> list[Part]:
        """Its parts; a plural's form by form, "|" and each form's own numbers kept as written."""
        if self.forms is None:
            return super().cut(every_line)
        parts = []
        for number, (condition, form) in enumerate(self.forms):
            parts += [Part("|", False)] * bool(number) + [Part(condition, False)] * bool(condition)
            parts += message_parts(form, every_line)
        return parts

    @property
    def plural(self) -> bool:
        return self.forms is not None

    def translation(self, translations) -> str:
        """Its translation, from an iterator of its parts' translations, its placeholders as written."""
        return unmarked(super().translation(translations), self.placeholders)

    def translation_into(self, translations, target: str) -> tuple[str, int]:
        """Its translation; a plural's with as many forms as Laravel chooses between in `target`
        (target_forms), and how many forms were added."""
        if not self.plural:
            return self.translation(translations), 0
        forms, added = target_forms(self, self.form_translations(translations), target)
        return unmarked("|".join(forms), self.placeholders), added

    def form_translations(self, translations) -> list[str]:
        """Each plural form's translation (with its own numbers), from an iterator of its parts'."""
        forms, current = [], []
        for part in self.parts:
            if part.text == "|" and not part.translated:
                forms.append("".join(current))
                current = []
            else:
                current.append(part.written(next(translations)) if part.translated else part.text)
        return [from_markup(form, self.markup) for form in [*forms, "".join(current)]]


def plural_forms(markup: str) -> list[tuple[str, str]] | None:
    """A message's plural forms as (its own numbers, its text), or None where it is not one: forms
    are joined by "|" with no space on both sides ("Title | Site" is a title), each holds text."""
    if "|" not in markup or re.search(r"\s\|\s", markup) or "<" in markup:
        return None
    forms = []
    for form in markup.split("|"):
        condition = _CONDITION.match(form)
        own = condition.group(0) if condition else ""
        if not form[len(own):].strip():
            return None
        forms.append((own, form[len(own):]))
    return forms


_SOURCE_FORMS = {2: ("one", "other"), 3: ("one", "few", "many")}  # a source's forms by their count (English's, Russian's)


def target_forms(message: LaravelMessage, forms: list[str], target: str) -> tuple[list[str], int]:
    """A plural's translated forms, as many as Laravel chooses between in `target`, and how many
    were added: each the source's form of its category, else the source's last. A source's two
    forms are read as one and other (English, German, French, ...), three as one, few and many
    (Russian, Polish, Czech, ...). Forms with their own numbers, and other counts, are kept as
    they are."""
    wanted, had = laravel_forms(target), _SOURCE_FORMS.get(len(forms))
    if wanted is None or had is None or any(condition for condition, _ in message.forms):
        return forms, 0
    by_category = dict(zip(had, forms))
    return [by_category.get(category, forms[-1]) for category in wanted], sum(c not in by_category for c in wanted)
