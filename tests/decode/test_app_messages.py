"""An app's message files (nmt.decode.json_messages, android_strings, string_catalog, apple_strings,
stringsdict_document, qt_document, resx_document, properties_document, yaml_messages): the messages
read by hand, each written back in the file's own escapes and style, plural forms made the target
language's (nmt.decode.plural_categories), and `nmt translate` of each with the tiny model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from nmt.cli import app
from nmt.decode.plural_categories import plural_categories, plural_forms
from nmt.decode.stream import file_format
from nmt.decode.text.messages import Part
from nmt.decode.translation_record import RECORD_NAME
from tests.conftest import one_line_error, optional_module
from tests.decode.conftest import translated_both_ways

etree, needs_lxml = optional_module("lxml.etree")
_, needs_polib = optional_module("polib")

I18NEXT = """{
  "title": "Dogs & <cats>",
  "greeting": "Hello {{name}}!\\nA dog runs.",
  "files_one": "{{count}} file",
  "files_other": "{{count}} files",
  "menu": {
    "items": [
      "Open",
      "Save file",
      3,
      true,
      null
    ],
    "url": "",
    "nested": "See $t(menu.items)"
  },
  "icu": "You have {n, plural, one {# dog} other {# dogs}}."
}
"""


def _json(data: str):
    from nmt.decode.json_messages import JsonMessages

    return JsonMessages.read(data.encode(), "en.json")


def test_every_string_value_of_a_json_file_is_a_message_written_back_in_its_place():
    document = _json(I18NEXT)
    assert document.texts == ["Dogs &amp; &lt;cats&gt;", "Hello {{name}}!", "A dog runs.", "{{count}} file",
                              "{{count}} files", "Open", "Save file", "See $t(menu.items)",
                              "You have {__n__} dog.", "You have {__n__} dogs."]
    assert document.numbers == [2, 3, 3, 4, 5, 8, 9, 15, 17, 17]
    # each written back as it came: the file byte for byte (a language of one and other)
    assert document.write(document.texts, "de").decode() == I18NEXT.replace(
        "You have {n, plural, one {# dog} other {# dogs}}.", "{n, plural, one {You have # dog.} other {You have # dogs.}}")
    written = json.loads(_json(I18NEXT).write([f"«{text}»" for text in _json(I18NEXT).texts], "de"))
    assert written["title"] == "«Dogs & <cats>»" and written["greeting"] == "«Hello {{name}}!»\n«A dog runs.»"
    assert written["menu"] == {"items": ["«Open»", "«Save file»", 3, True, None], "url": "", "nested": "«See $t(menu.items)»"}


@pytest.mark.parametrize("style", [{"indent": 2}, {"indent": "\t", "ensure_ascii": True}, {"separators": (",", ":")},
                                   {}, {"indent": 4, "separators": (",", " : ")}])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_json_file_is_written_in_its_own_style(style, newline):
    text = json.dumps({"title": "Café <b>au</b> lait", "a": {"b": ["x y", 1.5, None], "c": {}}, "n": []},
                      **({"ensure_ascii": False} | style)).replace("\n", newline) + newline
    document = _json(text)
    assert document.write(document.texts, "de").decode() == text


def test_a_json_file_by_xcode_keeps_its_empty_objects_over_a_blank_line():
    from nmt.decode.json_style import JsonStyle

    text = ('{\n  "sourceLanguage" : "en",\n  "strings" : {\n    "General" : {\n\n    },\n    "{}" : {\n      "comment" : "[]",\n'
            '      "localizations" : {\n\n      }\n    }\n  },\n  "version" : "1.0"\n}')
    assert JsonStyle.of(text).dumps(json.loads(text)).decode() == text
    assert JsonStyle.of(text.replace("{\n\n    }", "{}")).dumps({"a": {}, "b": []}).decode() == (
        '{\n  "a" : {\n\n  },\n  "b" : []\n}')  # (the file wrote no empty list)


def test_what_a_json_format_keeps_for_programmers_is_not_translated():
    document = _json(json.dumps({
        "@@locale": "en", "title": "A dog", "@title": {"description": "The page's title", "placeholders": {}},
        "ext": {"message": "Open $FILE$", "description": "A button", "placeholders": {"file": {"content": "$1"}}},
        "formatjs": {"defaultMessage": "Two cats", "description": "A label"},
        "error": {"message": "Not found", "title": "Error"}}))  # (an object of messages, not a wrapper)
    assert document.texts == ["A dog", "Open $FILE$", "Two cats", "Not found", "Error"]
    written = json.loads(document.write([text.upper() for text in document.texts], "pt_BR"))
    assert written["@@locale"] == "pt_BR" and written["@title"]["description"] == "The page's title"
    assert written["ext"] == {"message": "OPEN $FILE$", "description": "A button", "placeholders": {"file": {"content": "$1"}}}
    assert written["formatjs"]["description"] == "A label"


@pytest.mark.parametrize("target, keys", [
    ("ru", ["files_one", "files_few", "files_many", "files_other"]),
    ("ja", ["files_other"]),
    ("ar", ["files_zero", "files_one", "files_two", "files_few", "files_many", "files_other"]),
    ("de", ["files_one", "files_other"]),
    ("xx", ["files_one", "files_other"]),  # a language not known: the source's
])
def test_i18next_plural_keys_become_the_target_languages(target, keys):
    source = {"before": "A", "files_one": "{{count}} file", "files_other": "{{count}} files", "after": "B",
              "place_ordinal_one": "{{count}}st", "place_ordinal_other": "{{count}}th"}
    document = _json(json.dumps(source))
    written = json.loads(document.write(document.texts, target))
    assert list(written) == ["before", *keys, "after", "place_ordinal_one", "place_ordinal_other"]  # in their place
    assert all(written[key] == source.get(key, source["files_other"]) for key in keys)
    added = len(set(keys) - set(source))
    assert document.warnings == ([f"{added} plural keys added for {target} with their 'other' key's translation "
                                  "(i18next's): review them"] if added else [])


def test_plural_categories_are_cldrs_for_whole_numbers():
    assert plural_categories("de") == plural_categories("deu_Latn") == ("one", "other")
    assert plural_categories("rus_Cyrl") == ("one", "few", "many", "other")
    assert plural_categories("zh-Hant") == ("other",) and plural_categories("cs") == ("one", "few", "other")
    assert plural_categories("cy") == ("zero", "one", "two", "few", "many", "other") and plural_categories("xx") is None
    # a source's zero (a message for none) stays; its other fills what the language adds
    assert plural_forms("pl", {"zero": "Z", "one": "A", "other": "B"}) == (
        {"zero": "Z", "one": "A", "few": "B", "many": "B", "other": "B"}, ["few", "many"])
    assert plural_forms("ru", {"one": "A"}) == ({"one": "A"}, [])  # no other to fill from


def test_a_message_without_an_end_mark_gets_no_full_stop_the_model_added():
    assert Part("Save file", True).written("Datei speichern.") == "Datei speichern"
    assert Part("A <f1>dog</f1>", True).written("Ein <f1>Hund.</f1>") == "Ein <f1>Hund</f1>"
    assert Part("Open {0}", True).written("Öffne {0}.") == "Öffne {0}"
    assert Part("A dog runs.", True).written("Ein Hund rennt.") == "Ein Hund rennt."
    assert Part("Wait", True).written("Warte...") == "Warte..."  # an ellipsis is the model's own


ANDROID = """<?xml version="1.0" encoding="utf-8"?>
<resources xmlns:xliff="urn:oasis:names:tc:xliff:document:1.2">
    <string name="app_name" translatable="false">Dogs</string>
    <string name="welcome">Welcome to <b>Dogs</b>, <xliff:g id="user" example="Anna">%1$s</xliff:g>!</string>
    <string name="dont">Don\\'t let the \\"dog\\" out.\\nIt   runs.</string>
    <string name="spaced">"  Two   spaces  "</string>
    <string name="ref">@string/app_name</string>
    <string name="at">\\@home</string>
    <string name="html"><![CDATA[A <i>big</i> dog]]></string>
    <string name="escaped">A &lt;b>small&lt;/b> cat</string>
    <string-array name="colors">
        <item>Red dog</item>
        <item>@string/ref</item>
    </string-array>
    <plurals name="dogs">
        <item quantity="one">%d dog</item>
        <item quantity="other">%d dogs</item>
    </plurals>
    <color name="red">#f00</color>
    <string name="version" translatable="false">1.0</string>
</resources>
"""


def _android(data: str):
    from nmt.decode.android_strings import AndroidStrings

    return AndroidStrings.read(data.encode(), "strings.xml")


@needs_lxml
def test_android_strings_are_read_with_their_escapes_and_written_back_in_them():
    document = _android(ANDROID)
    assert document.texts == ["Welcome to <f1>Dogs</f1>, <p2/>!", "Don't let the \"dog\" out.", "It runs.",
                              "Two   spaces", "@home", "A <i>big</i> dog", "A <b>small</b> cat", "Red dog",
                              "%d dog", "%d dogs"]
    assert document.numbers == [4, 5, 5, 6, 8, 9, 10, 12, 16, 17]
    written = document.write(document.texts, "de").decode()
    # as it came (each string unchanged as written), but for what is not to be translated and what is
    # not a string (a colour: the default file's, for every language): gone
    assert written == (ANDROID.replace('    <string name="app_name" translatable="false">Dogs</string>\n', "")
                       .replace('\n    <color name="red">#f00</color>', "")
                       .replace('\n    <string name="version" translatable="false">1.0</string>', ""))
    translated = _android(ANDROID)
    root = etree.fromstring(translated.write([f"«{text}»" for text in translated.texts], "de"))
    strings = {element.get("name"): element for element in root.iter("string")}
    assert etree.tostring(strings["welcome"], encoding="unicode", with_tail=False).replace(
        ' xmlns:xliff="urn:oasis:names:tc:xliff:document:1.2"', "") == (
        '<string name="welcome">«Welcome to <b>Dogs</b>, <xliff:g id="user" example="Anna">%1$s</xliff:g>!»</string>')
    assert strings["dont"].text == "«Don\\'t let the \\\"dog\\\" out.»\\n«It runs.»"
    assert strings["spaced"].text == '"  «Two   spaces»  "' and strings["ref"].text == "@string/app_name"
    assert strings["at"].text == "«@home»"  # (no longer first: no escape needed)
    written = _android(ANDROID).write([text.replace("dog", "cat") for text in document.texts], "de").decode()
    assert "<string name=\"dont\">Don\\'t let the \\\"cat\\\" out.\\nIt runs.</string>" in written  # (runs of spaces as one)
    assert '<string name="escaped">A &lt;b>small&lt;/b> cat</string>' in written  # (unchanged, as written)


@needs_lxml
@pytest.mark.parametrize("target, quantities", [("ru", ["one", "few", "many", "other"]), ("ja", ["other"]),
                                                ("de", ["one", "other"])])
def test_android_plurals_get_the_target_languages_quantities(target, quantities):
    document = _android(ANDROID)
    written = document.write(document.texts, target).decode()
    plurals = etree.fromstring(written.encode()).find("plurals")
    assert [(item.get("quantity"), item.text) for item in plurals] == [
        (quantity, "%d dog" if quantity == "one" else "%d dogs") for quantity in quantities]
    assert "</item>\n    </plurals>" in written and all(f'\n        <item quantity="{q}"' in written for q in quantities)
    added = len(set(quantities) - {"one", "other"})
    assert document.warnings == ([f"{added} plural quantities added for {target} with their 'other' item's "
                                  "translation: review them"] if added else [])


def _unit(value: str, state: str = "translated") -> dict:
    return {"stringUnit": {"state": state, "value": value}}


def _plural(one: str, other: str, state: str = "translated") -> dict:
    return {"variations": {"plural": {"one": _unit(one, state), "other": _unit(other, state)}}}


CATALOG = {"sourceLanguage": "en", "strings": {
    "%@": {},
    "Hello %@": {"comment": "A greeting", "localizations": {"fr": _unit("Bonjour %@")}},
    "key.save": {"extractionState": "manual", "localizations": {"en": _unit("Save file")}},
    "%lld dogs": {"localizations": {"en": _plural("%lld dog", "%lld dogs")}},
    "Brand": {"shouldTranslate": False},
    "Old": {"extractionState": "stale"},
    "Done": {"localizations": {"de": _unit("Fertig")}},
    "%#@dogs@ run": {"localizations": {"en": {"stringUnit": {"state": "translated", "value": "%#@dogs@ run"},
                                              "substitutions": {"dogs": {"argNum": 1, "formatSpecifier": "lld",
                                                                         **_plural("%arg dog", "%arg dogs")}}}}},
}, "version": "1.0"}


def _catalog(catalog: dict, target: str):
    from nmt.decode.string_catalog import StringCatalog

    text = json.dumps(catalog, indent=2, separators=(",", " : "), ensure_ascii=False) + "\n"  # as Xcode writes it
    return StringCatalog.read(text.encode(), "Localizable.xcstrings").for_target(target), text


def test_a_string_catalog_gets_the_localizations_its_target_lacks_marked_for_review():
    document, text = _catalog(CATALOG, "de")
    # from the source's localization, else from the key; not what de has, nor what is not to be translated
    assert document.texts == ["Hello %@", "Save file", "%lld dog", "%lld dogs", "%#@dogs@ run", "%arg dog", "%arg dogs"]
    assert document.numbers == [5, 16, 27, 27, 65, 65, 65]  # each string's key
    written = json.loads(document.write([f"«{t}»" for t in document.texts], "de"))["strings"]
    review = "needs_review"
    assert written["Hello %@"]["localizations"] == {"de": _unit("«Hello %@»", review), "fr": _unit("Bonjour %@")}
    assert list(written["key.save"]["localizations"]) == ["de", "en"]  # in Xcode's order
    assert written["key.save"]["localizations"]["de"] == _unit("«Save file»", review)
    assert written["%lld dogs"]["localizations"]["de"] == _plural("«%lld dog»", "«%lld dogs»", review)
    substituted = written["%#@dogs@ run"]["localizations"]["de"]
    assert substituted["stringUnit"] == {"state": review, "value": "«%#@dogs@ run»"}
    assert substituted["substitutions"]["dogs"] == {"argNum": 1, "formatSpecifier": "lld", **_plural("«%arg dog»", "«%arg dogs»", review)}
    for key in ("%@", "Brand", "Old", "Done"):
        assert written[key] == CATALOG["strings"][key]
    # translated again into de: nothing left to do, the file as it was
    again, text = _catalog(json.loads(document.write([f"«{t}»" for t in document.texts], "de")), "de")
    assert again.texts == [] and again.write([], "de").decode() == text


def test_a_string_catalogs_plurals_get_the_target_languages_categories():
    document, _ = _catalog(CATALOG, "ru")
    written = json.loads(document.write(document.texts, "ru"))["strings"]
    plural = written["%lld dogs"]["localizations"]["ru"]["variations"]["plural"]
    assert plural == {"few": _unit("%lld dogs", "needs_review"), "many": _unit("%lld dogs", "needs_review"),
                      "one": _unit("%lld dog", "needs_review"), "other": _unit("%lld dogs", "needs_review")}
    assert list(written["%#@dogs@ run"]["localizations"]["ru"]["substitutions"]["dogs"]["variations"]["plural"]) == [
        "few", "many", "one", "other"]
    assert document.warnings == ["4 plural categories added for ru with their 'other' form's translation: review them"]
    # a localization the catalog has already is left as it is, its plural forms too
    catalog = json.loads(json.dumps(CATALOG))
    catalog["strings"]["%lld dogs"]["localizations"]["ru"] = _plural("%lld собака", "%lld собак")
    document, _ = _catalog(catalog, "ru")
    written = json.loads(document.write(document.texts, "ru"))["strings"]
    assert written["%lld dogs"]["localizations"]["ru"] == _plural("%lld собака", "%lld собак")


APPLE_STRINGS = """/* The title */
"title" = "A dog runs";
// a comment
"greeting" = "Hello %@!\\nA \\"big\\" dog.";
NSCameraUsageDescription  =  "Take a photo of your dog" ;
"empty" = "";
"cafe" = "Caf\\U00E9 au lait";
"""


def _strings(data: bytes):
    from nmt.decode.apple_strings import AppleStrings

    return AppleStrings.read(data, "Localizable.strings")


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
def test_an_apple_strings_files_values_are_translated_the_rest_kept(encoding):
    document = _strings(APPLE_STRINGS.encode(encoding))
    assert document.texts == ["A dog runs", "Hello %@!", 'A "big" dog.', "Take a photo of your dog", "Café au lait"]
    assert document.numbers == [2, 4, 4, 5, 7]
    written = document.write(document.texts, "de")
    assert written == APPLE_STRINGS.replace("Caf\\U00E9", "Café").encode(encoding)  # (with UTF-16's byte-order mark)
    written = _strings(APPLE_STRINGS.encode(encoding)).write([f"«{t}»" for t in document.texts], "de").decode(encoding)
    assert '"greeting" = "«Hello %@!»\\n«A \\"big\\" dog.»";' in written
    assert 'NSCameraUsageDescription  =  "«Take a photo of your dog»" ;' in written


STRINGSDICT = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>%d dogs</key>
	<dict>
		<key>NSStringLocalizedFormatKey</key>
		<string>%#@dogs@ run</string>
		<key>dogs</key>
		<dict>
			<key>NSStringFormatSpecTypeKey</key>
			<string>NSStringPluralRuleType</string>
			<key>NSStringFormatValueTypeKey</key>
			<string>d</string>
			<key>one</key>
			<string>%d dog</string>
			<key>other</key>
			<string>%d dogs</string>
		</dict>
	</dict>
</dict>
</plist>
"""


@needs_lxml
@pytest.mark.parametrize("target, categories", [("de", ["one", "other"]), ("ru", ["one", "few", "many", "other"]),
                                                ("ja", ["other"])])
def test_a_stringsdicts_formats_and_plural_forms_are_translated_and_made_the_target_languages(target, categories):
    from nmt.decode.stringsdict_document import StringsdictDocument

    document = StringsdictDocument.read(STRINGSDICT.encode(), "Localizable.stringsdict")
    assert document.texts == ["%#@dogs@ run", "%d dog", "%d dogs"] and document.numbers == [8, 16, 18]
    written = document.write(["%#@dogs@ rennen", "%d Hund", "%d Hunde"], target).decode()
    forms = "".join(f"\t\t\t<key>{c}</key>\n\t\t\t<string>%d Hund{'' if c == 'one' else 'e'}</string>\n" for c in categories)
    assert written == (STRINGSDICT.replace("%#@dogs@ run", "%#@dogs@ rennen")
                       .replace("\t\t\t<key>one</key>\n\t\t\t<string>%d dog</string>\n\t\t\t<key>other</key>\n"
                                "\t\t\t<string>%d dogs</string>\n", forms))
    added = len(set(categories) - {"one", "other"})
    assert document.warnings == ([f"{added} plural forms added for {target} with their 'other' form's translation: "
                                  "review them"] if added else [])


QT = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1">
<context>
    <name>MainWindow</name>
    <message>
        <location filename="../main.cpp" line="12"/>
        <source>&amp;File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tom &amp; Jerry &amp;&amp; %1</source>
        <comment>a show</comment>
        <translation type="unfinished"/>
    </message>
    <message numerus="yes">
        <source>%n file(s)</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Done</source>
        <translation>Fertig</translation>
    </message>
    <message>
        <source>Old</source>
        <translation type="vanished"></translation>
    </message>
</context>
</TS>
"""


def _qt(data: str):
    from nmt.decode.qt_document import QtDocument

    return QtDocument.read(data.encode(), "app_de.ts")


@needs_lxml
@pytest.mark.parametrize("target, forms", [("de", 2), ("ru", 3), ("ja", 1)])
def test_a_qt_files_unfinished_messages_are_translated_their_shortcuts_and_numerus_forms_kept(target, forms):
    document = _qt(QT)
    assert document.texts == ["File", "Tom &amp; Jerry &amp;&amp; %1", "%n file(s)"]  # (the shortcut's & out)
    assert document.numbers == [8, 12, 17]
    written = document.write(["Datei", "Tom &amp; Jerry &amp;&amp; %1", "%n Datei(en)"], target).decode()
    root = etree.fromstring(written.encode())
    translations = [message.find("translation") for message in root.iter("message")]
    assert [t.text for t in translations[:2]] == ["&Datei", "Tom & Jerry && %1"]  # the shortcut at the first letter
    assert [form.text for form in translations[2]] == ["%n Datei(en)"] * forms
    assert [t.get("type") for t in translations] == ["unfinished"] * 3 + [None, "vanished"]
    assert root.get("language") == target and "<!DOCTYPE TS>" in written and not document.warnings
    if forms == 2:  # written as lupdate writes it
        assert written == (QT.replace('<TS version="2.1">', f'<TS version="2.1" language="{target}">')
                           .replace('unfinished"></translation>\n    </message>\n    <message>\n        <source>Tom',
                                    'unfinished">&amp;Datei</translation>\n    </message>\n    <message>\n        <source>Tom')
                           .replace('<translation type="unfinished"/>', '<translation type="unfinished">Tom &amp; Jerry &amp;&amp; %1</translation>')
                           .replace("<numerusform></numerusform>", "<numerusform>%n Datei(en)</numerusform>"))
    document = _qt(QT.replace('<TS version="2.1">', '<TS version="2.1" language="fr_FR">'))
    document.write(document.texts, "de")
    assert document.warnings == ["its language is fr_FR (line 3), but the model translates into de "
                                 "(a multilingual model's --tgt-lang chooses another)"]


RESX = """<?xml version="1.0" encoding="utf-8"?>
<root>
  <resheader name="resmimetype">
    <value>text/microsoft-resx</value>
  </resheader>
  <data name="Greeting" xml:space="preserve">
    <value>Hello {0}, a dog runs.</value>
    <comment>Shown at start</comment>
  </data>
  <data name="button1.Text" xml:space="preserve">
    <value>Save file</value>
  </data>
  <data name="&gt;&gt;button1.Name" xml:space="preserve">
    <value>button1</value>
  </data>
  <data name="button1.Size" type="System.Drawing.Size, System.Drawing">
    <value>75, 23</value>
  </data>
  <data name="Empty" xml:space="preserve">
    <value></value>
  </data>
</root>
"""


@needs_lxml
def test_a_resx_files_strings_are_translated_into_a_file_of_its_strings_alone():
    """The translation (Form1.de.resx) holds the strings, their comments and the header; the
    designer's entries, sizes and empty strings stay the default file's, as .NET falls back to it."""
    from nmt.decode.resx_document import ResxDocument

    document = ResxDocument.read(RESX.encode(), "Resources.resx")
    assert document.texts == ["Hello {0}, a dog runs.", "Save file"] and document.numbers == [7, 11]
    strings_alone = RESX[:RESX.index('  <data name="&gt;&gt;button1.Name"')] + "</root>\n"
    assert document.write(document.texts, "de").decode() == strings_alone
    written = ResxDocument.read(RESX.encode(), "Resources.resx").write(["Hallo {0}, ein Hund rennt.", "Datei speichern"], "de")
    assert b"<value>Hallo {0}, ein Hund rennt.</value>\n    <comment>Shown at start</comment>" in written
    assert b"<value>Datei speichern</value>" in written and b"75, 23" not in written and b"button1.Name" not in written
    # updated: the earlier translation's own resources stay (a button made wider for German)
    earlier = written.decode().replace("</root>", '  <data name="button1.Size" type="System.Drawing.Size, System.Drawing">\n'
                                                  '    <value>120, 23</value>\n  </data>\n</root>')
    document = ResxDocument.read(RESX.encode(), "Resources.resx")
    assert document.keep_from(ResxDocument.read(earlier.encode(), "Resources.de.resx")) == 2
    assert document.write(document.with_kept([]), "de").decode() == earlier


PROPERTIES = """# Messages of the app
app.title = A dog runs
greeting=Hello {0}, don''t go!
plain: don't stop
multi = first line \\
        second line
tab\\ key\\=x = Tab\\there\\nNew line
lead =\\  spaced
empty =
cafe = Caf\\u00e9
"""


@pytest.mark.parametrize("encoding", ["latin-1", "utf-8"])
def test_a_properties_files_values_are_translated_with_javas_escapes_and_messageformats_quotes(encoding):
    from nmt.decode.properties_document import PropertiesDocument

    source = PROPERTIES if encoding == "latin-1" else PROPERTIES.replace("Caf\\u00e9", "Café")
    document = PropertiesDocument.read(source.encode(encoding), "messages.properties")
    assert document.texts == ["A dog runs", "Hello {0}, don't go!", "don't stop", "first line second line", "Tab\there",
                              "New line", "spaced", "Café"]
    assert document.numbers == [2, 3, 4, 5, 7, 7, 8, 10]
    written = document.write(document.texts, "de").decode(encoding)
    assert written == source.replace("first line \\\n        second line", "first line second line")
    written = PropertiesDocument.read(source.encode(encoding), "m").write(
        ["Ein Hund rennt", "Hallo {0}, geh' nicht!", "hör' nicht auf", "eins", "Tab\tdort", "Neu", "Raum", "Café"], "de")
    assert "greeting=Hallo {0}, geh'' nicht!\n" in written.decode(encoding)  # (MessageFormat's quote)
    assert "plain: h\\u00f6r' nicht auf\n" in written.decode(encoding) if encoding == "latin-1" else (
        "plain: hör' nicht auf\n" in written.decode(encoding))


RAILS = """# The app's messages
en:
  hello: "Hello %{name}"
  plain: can't be blank
  single: 'It''s here'
  block: |
    Line one
    Line two
  folded: >-
    A long
    text
  inbox:
    one: 1 message
    other: "%{count} messages"
  days: [Sunday, Monday]
  count: 3
  date: "%Y-%m-%d"
  defaults: &defaults
    title: Default title
  page:
    <<: *defaults
"""


def _rails():
    from nmt.decode.yaml_messages import YamlMessages

    return YamlMessages.read(RAILS.encode(), "en.yml")


def test_a_rails_locale_files_strings_are_translated_in_their_place_and_style():
    document = _rails()
    assert document.texts == ["Hello %{name}", "can't be blank", "It's here", "Line one", "Line two", "A long text",
                              "1 message", "%{count} messages", "Sunday", "Monday", "Default title"]  # (an alias once)
    assert document.numbers == [3, 4, 5, 6, 6, 9, 13, 14, 15, 15, 19]
    assert document.write(document.texts, "de").decode() == RAILS.replace("\nen:", "\nde:")  # unchanged: as written
    document = _rails()
    written = document.write([f"«{t}» a: b, c" for t in document.texts], "ru").decode()
    assert written.startswith("# The app's messages\nru:\n  hello: \"«Hello %{name}» a: b, c\"\n")
    assert "  plain: \"«can't be blank» a: b, c\"\n  single: '«It''s here» a: b, c'\n" in written  # quoted where plain would not read
    assert "  block: |\n    «Line one» a: b, c\n    «Line two» a: b, c\n  folded: >-\n    «A long text» a: b, c\n" in written
    assert ('  inbox:\n    one: "«1 message» a: b, c"\n    few: "«%{count} messages» a: b, c"\n'
            '    many: "«%{count} messages» a: b, c"\n    other: "«%{count} messages» a: b, c"\n') in written
    assert '  days: ["«Sunday» a: b, c", "«Monday» a: b, c"]\n  count: 3\n  date: "%Y-%m-%d"\n' in written
    assert yaml.safe_load(written)["ru"]["page"]["title"] == "«Default title» a: b, c"
    assert document.warnings == ["2 plural keys added for ru with their 'other' key's translation: review them"]
    document = _rails()  # Japanese has other alone: one's line goes
    written = document.write(document.texts, "ja").decode()
    assert '  inbox:\n    other: "%{count} messages"\n  days:' in written and written.startswith("# The app's messages\nja:\n")
    document = _rails()  # in a list on one line, what a plain scalar there would misread is quoted
    written = document.write([{"Sunday": "So?", "Monday": "Mo #1"}.get(t, t) for t in document.texts], "de").decode()
    assert '  days: ["So?", "Mo #1"]\n' in written and yaml.safe_load(written)["de"]["days"] == ["So?", "Mo #1"]


HUGO = """# The theme's strings
home = "Home"
search = 'Search the site' # a comment
"quoted key" = "Read \\"more\\"\\u00e9"
count = 3

[readingTime]
one = "One minute to read"
other = "{{ .Count }} minutes to read"

[PersonCats]
description = "The number of cats a person has"
hash = "sha1-abc"
other = "{{.Name}} has {{.Count}} cats."
"""


def _hugo():
    from nmt.decode.toml_messages import TomlMessages

    return TomlMessages.read(HUGO.encode(), "en.toml")


def test_hugos_and_go_i18ns_toml_strings_are_translated_in_their_place_and_quotes():
    import tomllib

    document = _hugo()
    assert document.texts == ["Home", "Search the site", 'Read "more"é', "One minute to read", "{{ .Count }} minutes to read",
                              "{{.Name}} has {{.Count}} cats."]  # (a go-i18n message's description and hash: data)
    assert document.numbers == [2, 3, 4, 8, 9, 14]
    assert document.write(document.texts, "de").decode() == HUGO  # unchanged: as written
    document = _hugo()
    written = document.write([f"«{t}» it's \\ \"x\"" for t in document.texts], "ru").decode()
    assert tomllib.loads(written)["readingTime"] == {
        "one": "«One minute to read» it's \\ \"x\"", **{category: "«{{ .Count }} minutes to read» it's \\ \"x\""
                                                         for category in ("few", "many", "other")}}
    assert "search = \"«Search the site» it's \\\\ \\\"x\\\"\" # a comment\n" in written  # in double quotes: it holds a '
    assert tomllib.loads(written)["PersonCats"]["description"] == "The number of cats a person has"
    assert document.warnings == ["2 plural keys added for ru with their 'other' key's translation: review them"]
    document = _hugo()  # Japanese has other alone: one's line goes
    written = document.write(document.texts, "ja").decode()
    assert tomllib.loads(written)["readingTime"] == {"other": "{{ .Count }} minutes to read"}
    assert "[readingTime]\nother =" in written


def test_without_tomllib_toml_files_are_read_by_tomli_alike():
    """Python 3.10 has no tomllib: the tomli package reads TOML message files there (pyproject.toml's
    dependency for 3.10), with the same texts, output and one-line errors. Run in a Python whose
    tomllib cannot be imported."""
    import subprocess
    import sys

    from nmt.errors import NmtError

    script = """import json, sys
sys.modules["tomllib"] = None  # import tomllib: ModuleNotFoundError, as on 3.10
from nmt.decode import toml_messages
from nmt.errors import NmtError
document = toml_messages.TomlMessages.read(sys.stdin.buffer.read(), "en.toml")
try:
    toml_messages.TomlMessages.read(b'title = "unterminated\\n', "bad.toml")
except NmtError as e:
    error = str(e)
print(json.dumps({"parser": toml_messages.tomllib.__name__, "texts": document.texts,
                  "written": document.write(document.texts, "ja").decode(), "error": error}))
"""
    run = subprocess.run([sys.executable, "-c", script], input=HUGO.encode(), capture_output=True, check=True)
    found = json.loads(run.stdout)
    document = _hugo()
    assert found["parser"] == "tomli" and found["texts"] == document.texts
    assert found["written"] == document.write(document.texts, "ja").decode()
    with pytest.raises(NmtError) as here:
        _hugo().read(b'title = "unterminated\n', "bad.toml")
    assert found["error"] == str(here.value) and found["error"].startswith("bad.toml:1: ")


@needs_lxml
def test_translate_writes_app_message_files_and_refuses_what_is_not_one(trained_tiny, translator, cfg, tmp_path):
    from nmt.decode.android_strings import AndroidStrings
    from nmt.decode.json_messages import JsonMessages

    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    (tmp_path / "values").mkdir()
    from nmt.decode.apple_strings import AppleStrings
    from nmt.decode.properties_document import PropertiesDocument
    from nmt.decode.qt_document import QtDocument
    from nmt.decode.resx_document import ResxDocument
    from nmt.decode.string_catalog import StringCatalog
    from nmt.decode.stringsdict_document import StringsdictDocument
    from nmt.decode.toml_messages import TomlMessages
    from nmt.decode.yaml_messages import YamlMessages

    for name, content, read in (("en.json", I18NEXT, JsonMessages.read), ("app_en.arb", '{"title": "a dog runs"}\n', JsonMessages.read),
                                ("values/strings.xml", ANDROID, AndroidStrings.read), ("Localizable.strings", APPLE_STRINGS, AppleStrings.read),
                                ("Localizable.xcstrings", json.dumps(CATALOG), lambda data, name: StringCatalog.read(data, name).for_target("de")),
                                ("app_de.ts", QT, QtDocument.read), ("Resources.resx", RESX, ResxDocument.read),
                                ("messages.properties", PROPERTIES, PropertiesDocument.read), ("en.yml", RAILS, YamlMessages.read),
                                ("en.toml", HUGO, TomlMessages.read),
                                ("Localizable.stringsdict", STRINGSDICT, StringsdictDocument.read)):
        (tmp_path / name).write_text(content)
        written, expected = translated_both_ways(checkpoint, translator, cfg, tmp_path / name, tmp_path / f"out.{name.replace('/', '.')}",
                                                 lambda data, read=read: read(data, "in"))
        assert written == expected != content.encode()
    assert [file_format(name) for name in ("a.json", "b.ARB", "res/values-de/strings.xml", "page.xml", "a.xcstrings",
                                           "InfoPlist.strings", "app_de.ts", "a.resx", "b.properties", "Resources.resw", "en.yml", "de.YAML", "a.stringsdict", "en.toml")] == [
        "json", "json", "android", None, "xcstrings", "strings", "qt", "resx", "properties", "resx", "yaml", "yaml", "stringsdict", "toml"]
    for name, content, problem in (
            ("bad.json", '{"a": "b",\n "c"}', "bad.json:2:5: not valid JSON (Expecting ':' delimiter)"),
            ("list.json", '["a dog"]', "list.json: not a file of messages (its top level is a list, not an object)"),
            ("latin.json", '{"a": "Gr\xfc\xdfe"}', "latin.json:1: invalid UTF-8 at byte 9"),
            ("values/bad.xml", "<resources>\n<string></resources>", "bad.xml:2: not well-formed XML"),
            ("values/page.xml", "<html/>", "page.xml: not Android string resources (its root element is <html>, not <resources>)"),
            ("bad.strings", '"a" = "b";\n"c" = d;', 'bad.strings:2: not a .strings file (an entry is "key" = "value";)'),
            ("odd.strings", '"a" = "b";\n\n#x', "odd.strings:3: not a .strings file (unexpected '#')"),
            ("list.xcstrings", '{"version": "1.0"}', 'list.xcstrings: not a String Catalog (no "strings" object at its top)'),
            ("page.ts", "<html/>", "page.ts: not a Qt translation file (its root element is <html>, not <TS>)"),
            ("page.resx", "<html/>", "page.resx: not a .NET resource file (a <root> of <data> and <resheader> elements)"),
            ("bad.yml", "en:\n  a: b\n c: d\n", "bad.yml:3: not valid YAML"), ("list.yml", "- a dog\n", "list.yml: not a file of messages"),
            ("bad.toml", 'a = "b"\nc = \n', "bad.toml:2: not valid TOML")):
        (tmp_path / name).write_bytes(content.encode("latin-1"))
        result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / name), "-o", str(tmp_path / "x.out")])
        one_line_error(result, problem)
        assert not (tmp_path / "x.out").exists()


@needs_lxml
def test_a_folder_translates_an_apps_message_files_under_the_targets_names_and_keeps_what_was_translated(trained_tiny, tmp_path):
    """An app's folder (English to German): each message file in the source language stays as it is
    and gets its German beside it, under the platform's name for it; German already there keeps its
    messages; French is copied; files of settings, layouts and code are copied."""
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    app_folder = tmp_path / "app"
    files = {"locales/en/common.json": '{"title": "a dog runs", "more": "a cat"}\n',
             "locales/de/common.json": '{"title": "Ein Hund rennt (geprüft)"}\n',
             "locales/fr/common.json": '{"title": "un chien court"}\n', "en-US.json": '{"title": "a cat"}\n',
             "res/values/strings.xml": '<resources><string name="a">A dog</string></resources>\n',
             "res/values/colors.xml": '<resources><color name="red">#f00</color></resources>\n',
             "package.json": '{"name": "dogs", "description": "An app for dogs"}\n', "res/layout/main.xml": "<LinearLayout/>\n",
             "i18n/app_de.ts": QT, "src/main.ts": 'const title: string = "A dog";\n',
             "src/messages_en.properties": "title = A dog runs\n", "src/application.properties": "app.name = A dog app\n",
             "config/locales/en.yml": "en:\n  title: A dog runs\n", "docker-compose.yml": "services:\n  app: A dog app\n"}
    for name, content in files.items():
        (app_folder / name).parent.mkdir(parents=True, exist_ok=True)
        (app_folder / name).write_text(content)
    runner = CliRunner()
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(app_folder), "-o", str(tmp_path / "de")])
    assert result.exit_code == 0, result.output
    out = tmp_path / "de"
    written = {str(path.relative_to(out)) for path in out.rglob("*") if path.is_file()}
    made = {"de.json", "res/values-de/strings.xml", "src/messages_de.properties", "config/locales/de.yml"}
    assert written == set(files) | made | {RECORD_NAME}  # (no values-de/colors.xml: nothing in it to translate)
    changed = {name for name, content in files.items() if (out / name).read_text() != content}
    assert changed == {"i18n/app_de.ts", "locales/de/common.json"}  # a Qt file names its language inside
    german = json.loads((out / "locales/de/common.json").read_text())
    assert german["title"] == "Ein Hund rennt (geprüft)" and list(german) == ["title", "more"] and german["more"] != "a cat"
    assert yaml.safe_load((out / "config/locales/de.yml").read_text())["de"]["title"] != "A dog runs"
    alone = tmp_path / "alone.xml"  # each as nmt translate writes it alone
    assert runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(app_folder / "res/values/strings.xml"),
                               "-o", str(alone)]).exit_code == 0
    assert (out / "res/values-de/strings.xml").read_bytes() == alone.read_bytes()
    assert "config/locales/en.yml → config/locales/de.yml, en-US.json → de.json, locales/en/common.json → " \
        "locales/de/common.json and 2 more" in result.output
    assert "locales/fr/common.json copied as it is" in result.output
    assert "1 of 2 messages kept from the translations already in the folder, 1 translated" in result.output


@needs_lxml
def test_a_folder_updated_in_place_gets_only_its_target_languages_files(trained_tiny, tmp_path):
    """`-i FOLDER --update FOLDER`: the German of each English message file written or brought up to
    date (what a reviewer wrote kept), a Qt file for German filled; nothing else touched, nor
    anything in node_modules/, build/ or .git/."""
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    app_folder = tmp_path / "app"
    files = {"res/values/strings.xml": '<resources><string name="a">A dog</string><string name="b">A cat</string></resources>\n',
             "res/values-de/strings.xml": '<resources><string name="a">Ein Hund (geprüft)</string></resources>\n',
             "res/values-fr/strings.xml": '<resources><string name="a">Un chien</string></resources>\n',
             "locales/en.json": '{"title": "a dog runs"}\n', "i18n/strings.json": '{"title": "a dog runs"}\n',
             "i18n/app_de.ts": QT, "i18n/app_fr.ts": QT.replace("<TS ", '<TS language="fr" '), "README.md": "A dog.\n",
             # another project's messages, a build's copy of the app's, the version control's files: not the app's
             "node_modules/dogs/locales/en.json": '{"title": "a dog runs"}\n', ".git/notes.txt": "A dog.\n",
             "build/intermediates/res/values/strings.xml": '<resources><string name="a">A dog</string></resources>\n'}
    for name, content in files.items():
        (app_folder / name).parent.mkdir(parents=True, exist_ok=True)
        (app_folder / name).write_text(content)
    runner = CliRunner()
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(app_folder), "--update", str(app_folder)])
    assert result.exit_code == 0, result.output
    written = {str(path.relative_to(app_folder)) for path in app_folder.rglob("*") if path.is_file()}
    assert written == set(files) | {"locales/de.json", RECORD_NAME} and not list(tmp_path.glob(".*"))
    changed = {name for name, content in files.items() if (app_folder / name).read_text() != content}
    assert changed == {"res/values-de/strings.xml", "i18n/app_de.ts"}
    german = (app_folder / "res/values-de/strings.xml").read_text()
    assert '<string name="a">Ein Hund (geprüft)</string>' in german and '<string name="b">' in german
    assert "i18n/app_de.ts, locales/de.json, res/values-de/strings.xml written" in result.output
    assert "1 of 2 messages kept" in result.output
    before = {path: path.read_bytes() for path in app_folder.rglob("*") if path.is_file()}
    again = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(app_folder), "--update", str(app_folder)])
    assert again.exit_code == 0 and "its translations are up to date; nothing written" in again.output, again.output
    assert {path: path.read_bytes() for path in app_folder.rglob("*") if path.is_file()} == before
    for args, words in ((["--update", str(tmp_path)], "or holding it; name the folder an earlier -o translated it into"),
                        (["--update", str(app_folder), "-o", str(tmp_path / "x")], "leave out -o")):
        one_line_error(runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(app_folder), *args]), words)
    assert not (tmp_path / "x").exists()


@needs_lxml
@pytest.mark.parametrize("name", ["messages.xlf", "messages.en.xlf"])
def test_an_angular_template_is_translated_into_its_languages_file_and_merged_with_it(trained_tiny, tmp_path, name):
    """Angular's src/locale/messages.xlf (no target language; or messages.en.xlf) becomes
    messages.de.xlf; updated in place again after the template gained a unit, the German kept
    where its source is unchanged."""
    from tests.decode.test_localization_files import ANGULAR_TEMPLATE

    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    locale = tmp_path / "app" / "src" / "locale"
    locale.mkdir(parents=True)
    (locale / name).write_text(ANGULAR_TEMPLATE.replace("A new cat", "A cat"), encoding="utf-8")
    (locale / "other.xlf").write_text(ANGULAR_TEMPLATE.replace('source-language="en-US"',
                                                               'source-language="en-US" target-language="fr"'))
    runner = CliRunner()
    update = ["translate", "-c", checkpoint, "-i", str(tmp_path / "app"), "--update", str(tmp_path / "app")]
    result = runner.invoke(app, update)
    assert result.exit_code == 0, result.output
    assert sorted(path.name for path in locale.iterdir()) == sorted(["messages.de.xlf", name, "other.xlf"])
    first = (locale / "messages.de.xlf").read_text(encoding="utf-8")
    assert 'target-language="de"' in first and first.count("<target") == 3
    reviewed = first.replace('state="needs-review-translation" state-qualifier="leveraged-mt"', 'state="translated"', 1)
    (locale / "messages.de.xlf").write_text(reviewed, encoding="utf-8")
    (locale / name).write_text(ANGULAR_TEMPLATE, encoding="utf-8")  # "A cat" now "A new cat"
    result = runner.invoke(app, update)
    assert result.exit_code == 0 and "2 of 3 messages kept" in result.output, result.output
    second = (locale / "messages.de.xlf").read_text(encoding="utf-8")
    assert second.count('state="translated"') == 1 and second.count('state="needs-review-translation"') == 2
    assert "other.xlf" not in result.output.split("written")[0]  # a French file is not the German's to fill


def test_a_multilingual_model_updates_a_folder_into_each_of_its_target_languages(toy_corpus, tmp_path_factory, tmp_path):
    """`--tgt-lang xa,xb --update FOLDER`: one run writes each language's translation under its name
    (the toy model answers xa with "Alpha ...", xb with "Beta ..."); a language the model lacks stops
    the run before anything is written, and several languages need a folder updated in place."""
    from tests.conftest import trained_once

    checkpoint = str(trained_once(tmp_path_factory, "train.max_steps=240", "train.valid_every=120",
                                  "train.valid_bleu_sentences=8", toy_corpus=toy_corpus).out / "checkpoints" / "best.pt")
    app_folder = tmp_path / "app"
    (app_folder / "en.lproj").mkdir(parents=True)
    lines = (toy_corpus / "train.en").read_text(encoding="utf-8").splitlines()[:4]
    (app_folder / "en.lproj" / "Localizable.strings").write_text(
        "".join(f'"k{i}" = "{line}";\n' for i, line in enumerate(lines)), encoding="utf-8")
    runner = CliRunner()
    for args, words in ((["--tgt-lang", "xa,zz"], "zz"), (["--tgt-lang", "xa,xb", "-o", str(tmp_path / "x")], "several target languages")):
        refused = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(app_folder), "--update", str(app_folder), *args]
                                if "-o" not in args else ["translate", "-c", checkpoint, "-i", str(app_folder), *args])
        one_line_error(refused, words)
        assert sorted(path.name for path in app_folder.iterdir()) == ["en.lproj"]
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(app_folder), "--update", str(app_folder),
                                 "--tgt-lang", "xa,xb"])
    assert result.exit_code == 0, result.output
    assert "xa.lproj/Localizable.strings written" in result.output and "xb.lproj/Localizable.strings written" in result.output
    assert "another language" not in result.output  # (xb's files, while xa's are written, are the run's own)
    for language, marker in (("xa", "Alpha"), ("xb", "Beta")):
        written = (app_folder / f"{language}.lproj" / "Localizable.strings").read_text(encoding="utf-8").splitlines()
        assert len(written) == 4 and sum(line.split(" = ")[1].startswith(f'"{marker} ') for line in written) >= 3, written


@pytest.mark.parametrize("files, template, catalog", [
    (["po/app.pot", "po/fr.po", "po/LINGUAS"], "po/app.pot", "po/pt_BR.po"),  # autotools, meson
    (["messages.pot", "translations/fr/LC_MESSAGES/messages.po"], "messages.pot",
     "translations/pt_BR/LC_MESSAGES/messages.po"),  # Babel
    (["languages/my-plugin.pot", "languages/my-plugin-fr_FR.po"], "languages/my-plugin.pot",
     "languages/my-plugin-pt_BR.po"),  # WordPress
    (["locale/django.pot"], "locale/django.pot", "locale/pt_BR.po")])  # no other language yet
def test_a_gettext_templates_catalog_goes_where_the_folder_keeps_the_other_languages(files, template, catalog):
    from nmt.decode.locale_paths import catalog_path

    assert str(catalog_path(Path(template), "pt_BR", [Path(f) for f in files])) == catalog


@needs_polib
def test_a_gettext_template_updates_its_catalog_in_place(trained_tiny, tmp_path):
    """po/app.pot and po/de.po, updated in place: de.po merged with the template, what was
    translated kept, the new message translated; fr.po left as it is."""
    from tests.decode.test_localization_files import POT

    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    po = tmp_path / "app" / "po"
    po.mkdir(parents=True)
    (po / "app.pot").write_text(POT, encoding="utf-8")
    header = 'msgid ""\nmsgstr ""\n"Language: {}\\n"\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
    (po / "de.po").write_text(header.format("de") + 'msgid "A dog"\nmsgstr "Ein Hund (geprüft)"\n', encoding="utf-8")
    (po / "fr.po").write_text(header.format("fr") + 'msgid "A dog"\nmsgstr ""\n', encoding="utf-8")
    (po / "LINGUAS").write_text("# the languages built\nfr\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "app"), "--update", str(tmp_path / "app")])
    assert result.exit_code == 0 and "po/de.po written" in result.output, result.output
    assert "1 of 3 messages kept" in result.output
    assert "note: po/LINGUAS does not list de: add it, or the build leaves po/de.po out" in result.output
    german = (po / "de.po").read_text(encoding="utf-8")
    assert 'msgstr "Ein Hund (geprüft)"' in german and 'msgid "A cat"' in german and german.count("#, fuzzy") == 2
    assert (po / "fr.po").read_text(encoding="utf-8") == header.format("fr") + 'msgid "A dog"\nmsgstr ""\n'
    assert sorted(path.name for path in po.iterdir()) == ["LINGUAS", "app.pot", "de.po", "fr.po"]


@pytest.mark.parametrize("path, kind, language, german, brazilian", [
    ("res/values/strings.xml", "android", None, "res/values-de/strings.xml", "res/values-pt-rBR/strings.xml"),
    ("res/values-en-rUS-night/strings.xml", "android", "en-US", "res/values-de-night/strings.xml", "res/values-pt-rBR-night/strings.xml"),
    ("res/values-v21/strings.xml", "android", None, "res/values-de-v21/strings.xml", "res/values-pt-rBR-v21/strings.xml"),
    ("res/values-b+zh+Hans/strings.xml", "android", "zh-Hans", "res/values-de/strings.xml", "res/values-pt-rBR/strings.xml"),
    ("res/values-zh-rTW/strings.xml", "android", "zh-TW", "res/values-de/strings.xml", "res/values-pt-rBR/strings.xml"),
    ("res/values-car/strings.xml", "android", None, "res/values-de-car/strings.xml", "res/values-pt-rBR-car/strings.xml"),
    ("Base.lproj/Main.strings", "strings", None, "de.lproj/Main.strings", "pt-BR.lproj/Main.strings"),
    ("en-GB.lproj/Localizable.stringsdict", "stringsdict", "en-GB", "de.lproj/Localizable.stringsdict", "pt-BR.lproj/Localizable.stringsdict"),
    ("Properties/Resources.resx", "resx", None, "Properties/Resources.de.resx", "Properties/Resources.pt-BR.resx"),
    ("Properties/Resources.en-US.resx", "resx", "en-US", "Properties/Resources.de.resx", "Properties/Resources.pt-BR.resx"),
    ("Strings/en-US/Resources.resw", "resx", "en-US", "Strings/de/Resources.resw", "Strings/pt-BR/Resources.resw"),
    ("src/messages.properties", "properties", None, "src/messages_de.properties", "src/messages_pt_BR.properties"),
    ("src/messages_en_US.properties", "properties", "en_US", "src/messages_de.properties", "src/messages_pt_BR.properties"),
    ("locales/en/common.json", "json", "en", "locales/de/common.json", "locales/pt-BR/common.json"),
    ("_locales/en_US/messages.json", "json", "en_US", "_locales/de/messages.json", "_locales/pt_BR/messages.json"),
    ("en-us.json", "json", "en-us", "de.json", "pt-br.json"),
    ("lib/l10n/app_en.arb", "json", "en", "lib/l10n/app_de.arb", "lib/l10n/app_pt_BR.arb"),
    ("config/locales/devise.en.yml", "yaml", "en", "config/locales/devise.de.yml", "config/locales/devise.pt-BR.yml"),
    ("i18n/strings.json", "json", "", None, None), ("locales/my_app.json", "json", "", None, None),
    ("Localizable.strings", "strings", "", None, None)])
def test_a_message_files_path_names_its_language_and_its_translations_as_its_platform_does(path, kind, language, german,
                                                                                           brazilian):
    from pathlib import Path

    from nmt.decode.locale_paths import is_language, path_language, translated_path

    named = path_language(Path(path), kind)
    if language == "":  # names none, and the platform has no place for the default language's
        assert named is None
        return
    assert named.code == language
    assert str(translated_path(Path(path), kind, named, "deu_Latn")) == german
    assert str(translated_path(Path(path), kind, named, "pt_BR")) == brazilian
    for target, written in (("de", german), ("pt-BR", brazilian)):  # the translation's path names its language
        assert is_language(path_language(Path(written), kind), target)


@pytest.mark.parametrize("target, folder", [("heb_Hebr", "values-iw"), ("ind_Latn", "values-in"),
                                            ("zho_Hans", "values-zh-rCN"), ("zho_Hant", "values-zh-rTW"),
                                            ("srp_Latn", "values-b+sr+Latn")])
def test_android_folders_name_languages_as_android_reads_them(target, folder):
    """Hebrew and Indonesian under the codes Android names them by (as Android Studio writes them),
    Chinese by the region every Android version reads; a folder so named is that language's."""
    from nmt.decode.locale_paths import PathLanguage, is_language, path_language, translated_path

    made = translated_path(Path("res/values/strings.xml"), "android", PathLanguage(None), target)
    assert str(made) == f"res/{folder}/strings.xml"
    others = {"heb_Hebr", "ind_Latn", "zho_Hans", "zho_Hant", "srp_Latn"} - {target}
    named = path_language(made, "android")
    assert is_language(named, target) and not any(is_language(named, other) for other in others)


def test_a_folder_of_many_languages_has_one_source_for_each_translation(tmp_path):
    """pdf.js' locale/: a folder per language, some the tables here do not know (ach, ast), English in
    three countries; its index of languages in sections ([de]) is not Java's messages. Translated
    from English into German: en-US/ is the source (English of its own country), de/ its
    earlier translation, every other folder another language's."""
    from nmt.decode.folders import FolderReport, _steps

    names = ["locale/ach/viewer.properties", "locale/ast/viewer.properties", "locale/de/viewer.properties",
             "locale/en-CA/viewer.properties", "locale/en-GB/viewer.properties", "locale/en-US/viewer.properties",
             "locale/fr/viewer.properties", "locale/locale.properties"]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("[de]\n@import url(de/viewer.properties)\n" if name.endswith("locale.properties")
                                     else "open_file.title = Open File\n")
    report = FolderReport()
    steps = _steps([Path(name) for name in names], tmp_path, ("en", "de"), report)
    translated = [(str(step.source), str(step.target), str(step.earlier)) for step in steps if step.translated]
    assert translated == [("locale/en-US/viewer.properties", "locale/de/viewer.properties", "locale/de/viewer.properties")]
    assert sorted(map(str, report.other_languages)) == [
        "locale/ach/viewer.properties", "locale/ast/viewer.properties", "locale/en-CA/viewer.properties",
        "locale/en-GB/viewer.properties", "locale/fr/viewer.properties"]
    assert sorted(str(step.source) for step in steps if not step.translated) == sorted(set(names) - {"locale/de/viewer.properties"})


def test_two_files_that_would_be_translated_into_one_are_an_error_before_anything_is_written(tmp_path):
    """Where each line's source language is identified (--src-lang auto), every message file not in
    the target language is a source; two of them translated into one file stop the run."""
    from nmt.decode.folders import FolderReport, _steps
    from nmt.errors import NmtError

    for name in ("locales/en.json", "locales/fr.json", "locales/de.json"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text('{"a": "b c"}\n')
    files = [Path(name) for name in ("locales/de.json", "locales/en.json")]
    steps = _steps(files, tmp_path, (None, "de"), FolderReport())
    assert [(str(step.source), str(step.target), step.translated, str(step.earlier)) for step in steps] == [
        ("locales/en.json", "locales/en.json", False, "None"), ("locales/en.json", "locales/de.json", True, "locales/de.json")]
    with pytest.raises(NmtError, match="locales/en.json and .*locales/fr.json: both would be translated into .*locales/de.json"):
        _steps([*files, Path("locales/fr.json")], tmp_path, (None, "de"), FolderReport())


@needs_lxml
@pytest.mark.parametrize("kind, sample", [("json", I18NEXT), ("android", ANDROID), ("strings", APPLE_STRINGS), ("qt", QT),
                                          ("resx", RESX), ("properties", PROPERTIES), ("yaml", RAILS),
                                          ("stringsdict", STRINGSDICT), ("xcstrings", json.dumps(CATALOG))])
def test_every_file_written_reads_back_with_the_translations_it_was_given(kind, sample):
    """Translations made of the characters each format escapes or quotes (quotes, backslashes,
    braces, "#", "%", ":", ...), written and read again: the same texts, in every format."""
    import html
    import random

    from nmt.decode.qt_document import _with_shortcut
    from nmt.decode.stream import read_document

    rng = random.Random(kind)
    pieces = ['"', "'", "''", "&", "\\", "{", "}", "%", ":", "#", "@", "?", "ü", "\\n", "\\u00e9", "|", "*", "[", "]", ",", "=",
              "yes", "1", " - "]
    for _ in range(25):
        document = read_document(kind, sample.encode(), "in")
        if kind == "xcstrings":
            document.for_target("de")
        translations = [html.escape("Hund" + "".join(rng.choice(pieces) for _ in range(rng.randrange(6))).rstrip(), quote=False)
                        for _ in document.texts]
        data = document.write(translations, "de")
        written = read_document(kind, data, "out")
        if kind == "xcstrings":  # (its de strings are done: read them from the file)
            values = [unit["stringUnit"]["value"] for entry in json.loads(data)["strings"].values()
                      for unit in [entry.get("localizations", {}).get("de", {})] if "stringUnit" in unit]
            assert values[:2] == [html.unescape(t) for t in translations[:2]]
            continue
        if kind == "qt":  # (its messages are done: read them from the file; the first with its shortcut)
            values = [t.text if len(t) == 0 else t[0].text for t in etree.fromstring(data).iter("translation")][:3]
            assert values == [_with_shortcut(html.unescape(translations[0])), *map(html.unescape, translations[1:3])]
            continue
        # (HTML in a string, and a MessageFormat pattern, read back as such only while they keep their tags and arguments)
        kept = [i for i, text in enumerate(document.texts) if "<" not in text and "{0}" not in text]
        assert [written.texts[i] for i in kept] == [translations[i] for i in kept]


@needs_lxml
@pytest.mark.parametrize("kind, source, earlier, kept, new", [
    ("json", '{"a": "A dog", "b": "Two cats", "n_one": "{{count}} dog", "n_other": "{{count}} dogs"}',
     '{"a": "Ein Hund (geprüft)", "n_one": "{{count}} Hund", "n_few": "{{count}} Hunde (few)", '
     '"n_many": "{{count}} Hunde (many)", "n_other": "{{count}} Hunde"}',
     ["Ein Hund (geprüft)", "{{count}} Hund", "{{count}} Hunde (few)", "{{count}} Hunde (many)", "{{count}} Hunde"], ["Two cats"]),
    ("android", '<resources><string name="a">A dog</string><string name="b">Two cats</string><plurals name="n">'
                '<item quantity="one">%d dog</item><item quantity="other">%d dogs</item></plurals></resources>',
     '<resources><string name="a">Ein Hund (geprüft)</string><plurals name="n"><item quantity="one">%d Hund</item>'
     '<item quantity="few">%d Hunde (few)</item><item quantity="many">%d Hunde (many)</item>'
     '<item quantity="other">%d Hunde</item></plurals></resources>',
     ["Ein Hund (geprüft)", "%d Hund", "%d Hunde (few)", "%d Hunde (many)", "%d Hunde"], ["Two cats"]),
    ("yaml", "en:\n  a: A dog\n  b: Two cats\n  n:\n    one: \"%{count} dog\"\n    other: \"%{count} dogs\"\n",
     "ru:\n  a: Ein Hund (geprüft)\n  n:\n    one: \"%{count} Hund\"\n    few: \"%{count} Hunde (few)\"\n"
     "    many: \"%{count} Hunde (many)\"\n    other: \"%{count} Hunde\"\n",
     ["Ein Hund (geprüft)", "%{count} Hund", "%{count} Hunde (few)", "%{count} Hunde (many)", "%{count} Hunde"], ["Two cats"]),
    ("properties", "a = A dog\nb = Two cats\n", "a = Ein Hund (gepr\\u00fcft)\n", ["Ein Hund (geprüft)"], ["Two cats"]),
])
def test_an_earlier_translations_messages_are_kept_by_key_and_only_new_ones_translated(kind, source, earlier, kept, new):
    """--update: a message whose key the earlier translation has keeps its text there, a plural
    form the target language adds too (Russian's few and many, as a reviewer wrote them); only new
    keys are translated."""
    from nmt.decode.stream import read_document

    document = read_document(kind, source.encode(), "en")
    assert document.keep_from(read_document(kind, earlier.encode(), "ru")) == len(document.messages) - len(new)
    assert document.texts == new
    written = document.write(document.with_kept(["Zwei Katzen"]), "ru").decode()
    assert "Zwei Katzen" in written and all(text in written.replace("\\u00fc", "ü") for text in kept)
    assert getattr(document, "warnings", []) == []  # (the forms added came from the earlier file)


def test_laravels_json_strings_copied_as_their_own_keys_are_translated_not_kept():
    """Laravel's lang/de.json keys each string by its English text; its exporters write a string
    not translated yet as that text. --update translates those and keeps the others, one a
    reviewer left as the English (a value that differs from its key's source) included."""
    from nmt.decode.json_messages import JsonMessages

    source = '{"A dog runs.": "A dog runs.", "Two cats.": "Two cats.", "OK": "OK", "title": "Home"}'
    earlier = '{"A dog runs.": "A dog runs.", "Two cats.": "Zwei Katzen (geprüft).", "OK": "OK", "title": "Home"}'
    document = JsonMessages.read(source.encode(), "en.json")
    assert document.keep_from(JsonMessages.read(earlier.encode(), "de.json")) == 2
    assert document.texts == ["A dog runs."]  # ("OK" is kept as written either way: two capitals)
    assert json.loads(document.write(document.with_kept(["Ein Hund rennt."]), "de")) == {
        "A dog runs.": "Ein Hund rennt.", "Two cats.": "Zwei Katzen (geprüft).", "OK": "OK", "title": "Home"}


@needs_lxml
@pytest.mark.parametrize("kind, source, earlier, stale_line", [
    ("json", '{\n"a": "Hello {{name}}",\n"b": "{{count}} files in {{folder}}",\n"c": "50%% off %s"\n}',
     '{"a": "Hallo {{user}}", "b": "{{count}} Dateien", "c": "%s: 50%% Rabatt"}', 2),
    ("android", '<resources>\n<string name="a">%1$s and %2$s</string>\n<string name="b">%1$d dogs</string>\n'
                '<string name="c">A dog</string>\n</resources>',
     '<resources><string name="a">%1$s und %3$s</string><string name="b">Hunde</string>'
     '<string name="c">Ein Hund</string></resources>', 2)])
def test_a_kept_translation_with_a_placeholder_the_source_lost_is_translated_again(kind, source, earlier, stale_line):
    """A placeholder renamed or removed in the source ({{name}} now {{user}}, %3$s gone) would show
    in the program or fail there: that message is translated again. One that leaves a placeholder
    out ("Hunde" for "%1$d dogs", as a reviewer may write) is kept."""
    from nmt.decode.stream import read_document

    document = read_document(kind, source.encode(), "en")
    assert document.keep_from(read_document(kind, earlier.encode(), "de")) == 2
    assert document.stale == [stale_line] and len(document.texts) == 1 and document.texts[0].startswith(("Hello", "%1$s"))


def test_update_keeps_a_translators_text_whole_where_a_source_would_keep_it_as_written(trained_tiny, tmp_path):
    """--update keeps what a translator wrote for a message nmt itself keeps as written ("00:00,0"
    for "00:00.0", "Okay" for "OK"), a translation of two capitals ("JA" for "YES"), and one with
    other lines than its source, whole; a new message of that kind is still kept as written."""
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    source = {"a": "YES", "b": "00:00.0", "c": "OK", "d": "Line one\nline two\nline three", "e": "12:30", "f": "a dog runs",
              "g": "You can only edit your events"}
    earlier = {"a": "JA", "b": "00:00,0", "c": "Okay", "d": "Zeile eins und zwei\n Zeile drei",
               "g": "Du kannst nur deine Events bearbeiten."}  # (its full stop the translator's: kept)
    (tmp_path / "en.json").write_text(json.dumps(source, indent=2))
    (tmp_path / "de.json").write_text(json.dumps(earlier, indent=2))
    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "en.json"),
                                      "-o", str(tmp_path / "out.json"), "--update", str(tmp_path / "de.json")])
    assert result.exit_code == 0, result.output
    assert "5 of 6 messages kept" in result.output  # ("12:30", kept as written, is not one to translate)
    written = json.loads((tmp_path / "out.json").read_text())
    assert {key: written[key] for key in earlier} == earlier
    assert written["e"] == "12:30" and written["f"] not in ("", "a dog runs")


@pytest.mark.parametrize("earlier, written", [("a = Gerät\n", "a = Gerät\nb = Zwei Kätzchen\n"),
                                              ("a = Ger\\u00e4t\n", "a = Ger\\u00e4t\nb = Zwei K\\u00e4tzchen\n")])
def test_a_bundles_translation_stays_in_the_encoding_it_was_written_in(earlier, written):
    """An English bundle is ASCII; its German, written in UTF-8 before (Java 9 and Spring read it
    so), stays UTF-8 when updated, and one written with escapes keeps them."""
    from nmt.decode.stream import read_document
    from nmt.decode.text.messages import read_as_translation

    with read_as_translation():
        document = read_document("properties", b"a = Device\nb = Two kittens\n", "messages.properties")
        assert document.keep_from(read_document("properties", earlier.encode(), "messages_de.properties")) == 1
    assert document.write(document.with_kept(["Zwei Kätzchen"]), "de").decode() == written


@needs_lxml
def test_translate_update_keeps_an_earlier_translation_in_place(trained_tiny, tmp_path):
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    (tmp_path / "en.json").write_text('{\n  "a": "a dog runs",\n  "b": "a cat",\n  "c": "a dog {{name}}"\n}\n')
    (tmp_path / "de.json").write_text('{\n  "a": "Ein Hund rennt (geprüft)",\n  "c": "ein Hund {{dog}}"\n}\n')
    runner = CliRunner()
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "en.json"), "-o", str(tmp_path / "de.json"),
                                 "--update", str(tmp_path / "de.json")])
    assert result.exit_code == 0, result.output
    assert f"{tmp_path / 'en.json'}: 1 of 3 messages kept from {tmp_path / 'de.json'} (--update), 2 translated" in result.output
    assert (f"warning: {tmp_path / 'en.json'}: 1 message(s) translated again (line 4): their translation in "
            f"{tmp_path / 'de.json'} has placeholders the source no longer has") in result.output
    written = json.loads((tmp_path / "de.json").read_text())
    assert list(written) == ["a", "b", "c"] and written["a"] == "Ein Hund rennt (geprüft)" and written["b"] != "a cat"
    assert "{{name}}" in written["c"]
    # up to date, in an order and layout of its own: written as it was
    (tmp_path / "de.json").write_text(json.dumps(dict(reversed(written.items())), indent=4, ensure_ascii=False))
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "en.json"), "-o", str(tmp_path / "de2.json"),
                                 "--update", str(tmp_path / "de.json")])
    assert result.exit_code == 0 and "3 of 3 messages kept" in result.output, result.output
    assert (tmp_path / "de2.json").read_bytes() == (tmp_path / "de.json").read_bytes()
    # a translation there already is not replaced unasked
    before = (tmp_path / "de.json").read_bytes()
    one_line_error(runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "en.json"), "-o",
                                       str(tmp_path / "de.json")]), f"{tmp_path / 'de.json'}: holds translations already; --update")
    assert (tmp_path / "de.json").read_bytes() == before
    (tmp_path / "page.md").write_text("A dog.\n")
    for args, words in (([str(tmp_path / "page.md"), "--update", str(tmp_path / "de.json")], "not a translation of"),
                        ([str(tmp_path), "--update", str(tmp_path / "de.json")], "(of a folder: the folder itself, -i FOLDER --update FOLDER"),
                        ([str(tmp_path / "en.json"), "--update", str(tmp_path / "none.json")], "none.json: file not found (--update)")):
        one_line_error(runner.invoke(app, ["translate", "-c", checkpoint, "-i", args[0], "-o", str(tmp_path / "x"), *args[1:]]), words)
        assert not (tmp_path / "x").exists()
