"""A PHP program's messages (nmt.decode.php_messages): Laravel's language files, CodeIgniter's and
phpBB's, their strings translated in place with Laravel's placeholders and plural forms kept, and
everything else byte for byte."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from nmt.cli import app
from nmt.decode.laravel_messages import laravel_forms
from nmt.decode.php_messages import PhpMessages
from nmt.decode.stream import file_format
from nmt.decode.translation_record import RECORD_NAME
from tests.conftest import one_line_error
from tests.decode.conftest import translated_both_ways

# Laravel's lang/en/*.php in the shapes its files take: comment blocks, nested arrays, a list, a
# number as a key, placeholders, plural forms with and without their own numbers
LARAVEL = """<?php

return [

    /*
    |----------------------------------------------------------------------
    | Messages of the app
    |----------------------------------------------------------------------
    */

    'failed' => 'These credentials do not match our records.',
    'throttle' => 'Too many attempts. Please try again in :seconds seconds.', // shown after 5
    "welcome" => "Welcome, :Name!\\nA dog runs.",
    'apples' => ':count apple|:count apples',
    'ranges' => '{0} There are none|[1,19] There are some|[20,*] There are many',
    'title' => 'Home | My Site',
    'between' => [
        'file' => 'The :attribute field must be between :min and :max kilobytes.',
        'days' => ['Monday', 'Tuesday'],
        7 => 'It\\'s the seventh',
    ],
    'next' => 'Next &raquo;',
    'at' => 'Open at 10:30 on http://example.com:8080/dogs',
    'code' => __('auth.failed'),
    'joined' => 'A dog' . ' runs',
    "variable" => "Hello $name",
    'attributes' => [],
];
"""

ASSIGNED = """<?php
defined('BASEPATH') OR exit('No direct script access allowed');

$lang['email_must_be_array'] = 'The email method must be passed an array.';
$lang['email_invalid'] = "Invalid email address: %s";
$string['welcome'] = 'Welcome, {$a->firstname}!';
$lang = array_merge($lang, array(
\t'ACP_BOARD'\t=> 'Board settings',
\t'NESTED' => array('ONE' => 'A dog runs.'),
));
$text = <<<EOT
Not a 'message'
EOT;
"""


def _read(text: str) -> PhpMessages:
    return PhpMessages.read(text.encode(), "en.php")


def test_every_message_string_is_read_with_its_key_and_written_back_in_its_place():
    document = _read(LARAVEL)
    assert [m.key for m in document.messages] == [
        ("failed",), ("throttle",), ("welcome",), ("apples",), ("ranges",), ("title",), ("between", "file"),
        ("between", "days", 0), ("between", "days", 1), ("between", "7"), ("next",), ("at",)]
    assert document.numbers[:4] == [11, 12, 13, 13]  # (the two lines of "welcome")
    assert document.write(document.texts, "de").decode() == LARAVEL  # unchanged: byte for byte
    document = _read(LARAVEL)
    written = document.write([f"«{text}» l'été \\ \"$x\"" for text in document.texts], "de").decode()
    # each in its own quotes, PHP's escapes written for it; comments, code and keys as they were
    assert "'failed' => '«These credentials do not match our records.» l\\'été \\\\ \"$x\"'," in written
    assert "\"welcome\" => \"«Welcome, :Name!» l'été \\\\ \\\"\\$x\\\"\\n«A dog runs.» l'été \\\\ \\\"\\$x\\\"\"," in written
    assert "// shown after 5\n" in written and "'code' => __('auth.failed')," in written
    assert "'joined' => 'A dog' . ' runs'," in written and '"variable" => "Hello $name",' in written
    assert written.count("'attributes' => [],") == 1
    assert PhpMessages.read(written.encode(), "de.php").texts == [
        f"«{text}» l'été \\ \"$x\"" for text in _read(LARAVEL).texts]  # it reads back as written


def test_laravels_placeholders_reach_the_model_as_placeholders_and_come_back_as_written():
    document = _read(LARAVEL)
    texts = dict(zip(document.numbers, document.texts))
    assert texts[12] == "Too many attempts. Please try again in {:seconds} seconds."
    assert texts[23] == "Open at 10:30 on http://example.com:8080/dogs"  # a time and a URL are not placeholders
    # the model's side moves a placeholder; the file gets it back in Laravel's form
    written = document.write([t.replace("{:seconds} seconds", "seconds {:seconds}") for t in document.texts], "de")
    assert "'throttle' => 'Too many attempts. Please try again in seconds :seconds.'," in written.decode()


@pytest.mark.parametrize("target, forms", [("de", 2), ("ru", 3), ("ja", 1), ("ar", 6), ("xx", 2)])
def test_plural_forms_become_as_many_as_laravel_chooses_between_in_the_target(target, forms):
    document = _read(LARAVEL)
    assert "{:count} apple" in document.texts and "There are some" in document.texts  # each form apart, its numbers kept
    written = document.write([f"¡{text}!" for text in document.texts], target).decode()
    apples = next(line for line in written.splitlines() if "'apples'" in line)
    one, other = "¡:count apple!", "¡:count apples!"
    expected = {1: [other], 2: [one, other], 3: [one, other, other], 6: [other, one, other, other, other, other]}
    assert apples == f"    'apples' => '{'|'.join(expected[forms])}',"
    # forms with their own numbers keep them and their count; a title with " | " is one text
    assert "'ranges' => '{0} ¡There are none!|[1,19] ¡There are some!|[20,*] ¡There are many!'," in written
    assert "'title' => '¡Home | My Site!'," in written
    added = {"ru": 2, "ar": 4}.get(target)  # (Russian's few and many, Arabic's zero, two, few and many)
    assert document.warnings == ([f"{added} plural forms added for {target} with the translation of the source's form "
                                  "of their kind, else of its last: review them"] if added else [])
    assert laravel_forms("deu_Latn") == ("one", "other") and laravel_forms("pt_BR") == ("one", "other")


def test_codeigniters_moodles_and_phpbbs_files_give_their_strings_and_keep_their_code():
    document = _read(ASSIGNED)
    assert [m.key for m in document.messages] == [("email_must_be_array",), ("email_invalid",), ("welcome",),
                                                  ("ACP_BOARD",), ("NESTED", "ONE")]
    assert document.texts == ["The email method must be passed an array.", "Invalid email address: %s",
                              "Welcome, {$a-&gt;firstname}!", "Board settings", "A dog runs."]  # (as markup)
    written = document.write(["X" * n for n in range(1, 6)], "de").decode()
    assert written == ASSIGNED.replace("'The email method must be passed an array.'", "'X'").replace(
        '"Invalid email address: %s"', '"XX"').replace("'Welcome, {$a->firstname}!'", "'XXX'").replace(
        "'Board settings'", "'XXXX'").replace("'A dog runs.'", "'XXXXX'")


def test_translate_writes_a_php_file_of_messages_and_refuses_what_is_not_one(trained_tiny, translator, cfg, tmp_path):
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    source = tmp_path / "auth.php"
    source.write_text(LARAVEL, encoding="utf-8")
    written, expected = translated_both_ways(checkpoint, translator, cfg, source, tmp_path / "de.php",
                                             lambda data: PhpMessages.read(data, "in"))
    assert written == expected != LARAVEL.encode()
    german = written.decode()
    assert ":seconds" in german and ":Name" in german and ":attribute" in german and ":min" in german
    assert [m.key for m in PhpMessages.read(written, "de.php").messages] == [m.key for m in _read(LARAVEL).messages]
    (tmp_path / "moodle.php").write_text(ASSIGNED, encoding="utf-8")  # Moodle's {$a->name} kept too
    assert CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "moodle.php"), "-o",
                                    str(tmp_path / "moodle.de.php")]).exit_code == 0
    assert "{$a->firstname}" in (tmp_path / "moodle.de.php").read_text(encoding="utf-8")
    assert file_format("lang/en/auth.php") == "php"
    template = tmp_path / "index.php"  # a page's template: no messages; said so, and the file written as it is
    template.write_text("<html><body><?php echo 'Hello'; ?> A dog.</body></html>\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(template), "-o", str(tmp_path / "index.de.php")])
    assert result.exit_code == 0 and "no messages (strings in an array)" in result.output and "--input-format html" in result.output
    assert (tmp_path / "index.de.php").read_bytes() == template.read_bytes()
    for name, content, problem in (
            ("open.php", "<?php\nreturn [\n  'a' => 'a dog,\n];\n", "open.php:3: a string whose closing quote (') never comes"),
            ("plain.php", "return ['a' => 'b'];\n", "plain.php:1: not a PHP file (no <?php)"),
            ("latin.php", "<?php return ['a' => 'Gr\xfc\xdfe'];", "latin.php:1: invalid UTF-8 at byte 24")):
        (tmp_path / name).write_bytes(content.encode("latin-1"))
        result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / name), "-o", str(tmp_path / "x.php")])
        one_line_error(result, problem)
        assert not (tmp_path / "x.php").exists()


def test_a_laravel_apps_folder_gets_its_language_files_beside_the_english_and_keeps_its_code(trained_tiny, tmp_path):
    """`-i APP --update APP`: lang/en/*.php gets lang/de/*.php (a reviewer's German kept by key,
    a changed English translated again); the app's code, in .php files too, is not touched."""
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    files = {"lang/en/auth.php": "<?php\n\nreturn [\n    'failed' => 'A dog runs.',\n    'throttle' => 'A cat.',\n];\n",
             "app/Http/Controllers/DogController.php": "<?php\n\nclass DogController\n{\n    public $title = 'A dog runs.';\n}\n",
             "config/app.php": "<?php\n\nreturn [\n    'name' => 'A dog app',\n];\n",
             # code whose name says locale: not a file of messages either
             "app/Http/Middleware/SetLocale.php": "<?php\n\nreturn ['names' => ['A dog runs.']];\n"}
    for name, content in files.items():
        (tmp_path / "app" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "app" / name).write_text(content, encoding="utf-8")
    runner = CliRunner()
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "app"), "--update", str(tmp_path / "app")])
    assert result.exit_code == 0, result.output
    german = tmp_path / "app" / "lang" / "de" / "auth.php"
    first = PhpMessages.read(german.read_bytes(), "de.php")
    assert [m.key for m in first.messages] == [("failed",), ("throttle",)] and "A dog runs." not in first.texts
    for name, content in files.items():
        assert (tmp_path / "app" / name).read_text(encoding="utf-8") == content
    written = {str(p.relative_to(tmp_path / "app")) for p in (tmp_path / "app").rglob("*") if p.is_file()}
    assert written == {*files, "lang/de/auth.php", RECORD_NAME}
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "app"), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output  # a new folder: the code copied there as it is
    assert all((tmp_path / "out" / name).read_text(encoding="utf-8") == content for name, content in files.items()
               if not name.startswith("lang/"))
    german.write_text(german.read_text(encoding="utf-8").replace(first.texts[0], "Ein Hund rennt (geprüft)"), encoding="utf-8")
    english = tmp_path / "app" / "lang" / "en" / "auth.php"
    english.write_text(files["lang/en/auth.php"].replace("A cat.", "Two cats."), encoding="utf-8")
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "app"), "--update", str(tmp_path / "app")])
    assert result.exit_code == 0, result.output
    again = PhpMessages.read(german.read_bytes(), "de.php")
    assert again.texts[0] == "Ein Hund rennt (geprüft)" and again.texts[1] != first.texts[1]


@pytest.mark.parametrize("target, folder", [("de", "german"), ("deu_Latn", "german"), ("pt-BR", "portuguese-brazilian"),
                                            ("zho_Hant", "traditional-chinese"), ("xx", "xx")])
def test_codeigniter_3s_language_folders_are_named_in_english(target, folder):
    """CodeIgniter 3 keeps a language's messages in a folder of its English name (language/english/,
    its translations' german/, portuguese-brazilian/); a language without a name here keeps its tag.
    Elsewhere a folder so named is not a language (docs/english/)."""
    from pathlib import Path

    from nmt.decode.locale_paths import is_language, path_language, translated_path

    path = Path("application/language/english/email_lang.php")
    named = path_language(path, "php")
    assert is_language(named, "en") and not is_language(named, "de")
    assert translated_path(path, "php", named, target) == Path(f"application/language/{folder}/email_lang.php")
    assert path_language(Path("docs/english/intro.md"), "markdown") is None


def test_a_codeigniter_3_apps_english_folder_gets_a_german_one_beside_it(trained_tiny, tmp_path):
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    files = {"application/language/english/email_lang.php": "<?php\n$lang['email_sent'] = 'A dog runs.';\n",
             "application/controllers/Welcome.php": "<?php\nclass Welcome { public $title = 'A dog runs.'; }\n"}
    for name, content in files.items():
        (tmp_path / "app" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "app" / name).write_text(content, encoding="utf-8")
    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "app"), "--update",
                                      str(tmp_path / "app")])
    assert result.exit_code == 0, result.output
    written = {str(p.relative_to(tmp_path / "app")) for p in (tmp_path / "app").rglob("*") if p.is_file()}
    assert written == {*files, "application/language/german/email_lang.php", RECORD_NAME}
    german = PhpMessages.read((tmp_path / "app" / "application/language/german/email_lang.php").read_bytes(), "de")
    assert [m.key for m in german.messages] == [("email_sent",)] and german.texts != ["A dog runs."]
    assert all((tmp_path / "app" / name).read_text(encoding="utf-8") == content for name, content in files.items())
