"""Apple's .stringsdict files in and out (`--input-format stringsdict`, the default for .stringsdict
files; lxml, `pip install 'nmt[localization]'`): an app's plural rules as a property list, which
Xcode wrote before String Catalogs, translated into the file of the target language's .lproj
folder.

Each entry's format (`NSStringLocalizedFormatKey`, where it holds words) and each plural form of
its variables is translated; a variable's rule type and value type stay. A variable's plural forms
become the target language's (nmt.decode.plural_categories): a category it lacks is added with the
translation of `other`, for a reviewer to adapt, and one the language does not use is left out (but
`zero`, which Apple's files may give any language). Placeholders (`%d`, `%#@files@`, `%@`) are kept.
"""

from __future__ import annotations

import copy

from nmt.data.tmx import local_name
from nmt.decode.plural_categories import ORDER, plural_forms
from nmt.decode.message_file import ElementText, MessageFile
from nmt.decode.xml_file import XmlFile
from nmt.errors import NmtError

_RULE_KEYS = {"NSStringFormatSpecTypeKey", "NSStringFormatValueTypeKey"}


def _pairs(plist_dict) -> list[tuple[object, object]]:
    """A property list's <dict> as its (<key>, value element) pairs, in order."""
    children = [child for child in plist_dict if isinstance(child.tag, str)]
    return [(children[i], children[i + 1]) for i in range(0, len(children) - 1, 2) if local_name(children[i].tag) == "key"]


class StringsdictDocument(MessageFile):
    """A .stringsdict file read for translation: its `texts` in, the file with their translations
    out (`write`)."""

    def __init__(self, file: XmlFile, strings: list[ElementText], variables: list):
        self.file, self.messages, self.variables = file, strings, variables
        self.warnings: list[str] = []

    @classmethod
    def read(cls, data: bytes, name: str) -> "StringsdictDocument":
        file = XmlFile.read(data, name, "Apple's .stringsdict files")
        top = file.root.find("dict")
        if local_name(file.root.tag) != "plist" or top is None:
            raise NmtError(f"{name}: not a .stringsdict file (a property list of <dict> entries)")
        strings, variables = [], []
        for name, entry in _pairs(top):
            if local_name(entry.tag) != "dict":
                continue
            for key, value in _pairs(entry):
                if local_name(value.tag) == "string" and key.text == "NSStringLocalizedFormatKey":
                    strings.append(ElementText.of(value, (name.text, key.text)))
                elif local_name(value.tag) == "dict":  # a variable: its rule, and a string for each category
                    variables.append(((name.text, key.text), value))
                    strings += [ElementText.of(form, (name.text, key.text, category.text)) for category, form in _pairs(value)
                                if category.text not in _RULE_KEYS and local_name(form.tag) == "string"]
        return cls(file, [s for s in strings if s.to_translate], variables)

    target_language = None  # (Apple names it in the folder: de.lproj)

    def write(self, translations: list[str], target: str) -> bytes:
        translated = iter(translations)
        for string in self.messages:
            text = string.translation(translated)
            if text != (string.element.text or ""):  # (unchanged: as written)
                string.element.text = text
        added = sum(_plural_forms(variable, target, key, self.earlier) for key, variable in self.variables)
        if added:
            self.warnings.append(f"{added} plural forms added for {target} with their 'other' form's translation: "
                                 "review them")
        return self.file.bytes()


def _plural_forms(variable, target: str, key_path: tuple, earlier: dict) -> int:
    """A variable's plural forms made the target language's (in place), a form added taken from
    `earlier` translations where they have it; how many were added from `other`."""
    pairs = [(key, value) for key, value in _pairs(variable) if key.text not in _RULE_KEYS]
    forms = {key.text: (key, value) for key, value in pairs}
    if not forms or not set(forms) <= set(ORDER):
        return 0
    chosen, added = plural_forms(target, forms)
    if list(chosen) == list(forms):
        return 0
    key_to_value = pairs[0][0].tail  # (line breaks and indentation, as the file has them)
    value_to_key = pairs[0][1].tail if len(pairs) > 1 else key_to_value
    after_last = pairs[-1][1].tail
    for key, value in pairs:
        variable.remove(key)
        variable.remove(value)
    for number, (category, (key, value)) in enumerate(chosen.items()):  # (in CLDR's order)
        if category in added:
            kept = earlier.get((*key_path, category))
            key, value = copy.deepcopy(key), copy.deepcopy(kept.element if kept is not None else value)
            key.text = category
        key.tail, value.tail = key_to_value, (value_to_key if number < len(chosen) - 1 else after_last)
        variable.append(key)
        variable.append(value)
    return sum((*key_path, category) not in earlier for category in added)
