"""A Laravel app's strings found in its code (nmt.decode.laravel_strings) become lang/de.json, and
Laravel's placeholders in a JSON string that is its own key reach the model as placeholders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nmt.cli import app
from nmt.decode.json_messages import JsonMessages
from nmt.decode.laravel_strings import LaravelApp, laravel_apps, strings_in_code, strings_source
from nmt.errors import NmtError

COMPOSER = '{"require": {"php": "^8.2", "laravel/framework": "^11.0"}}\n'
VIEW = """<h1>{{ __('A dog runs.') }}</h1>
<p>@lang('Two men walk.') {{ __('auth.failed') }} {{ __("Hello $name") }} {{ $user->__('A cat.') }}</p>
<p>{{ __('Welcome, :name!', ['name' => $user]) }} {{ __("A woman's \\"red\\" hat.") }}</p>
<p>{{ trans_choice(':count dog|:count dogs', $n) }} {{ trans_choice('messages.apples', 2) }}</p>
"""
SCRIPT = """<template><h1>{{ $t('A man walks.') }}</h1><p>{{ trans("A girl's hat.") }}</p></template>
<script setup>
const title = wTrans(`Two dogs play.`), other = this.$t('A boy jumps.'), built = trans(`A ${dog}.`), own = i18n.trans('A cat.')
</script>
"""
CONTROLLER = "<?php\nclass DogController {\n    public function show() { return __('A dog runs.') . trans('It\\'s late.'); }\n}\n"


def _app(root: Path, files: dict[str, str]) -> list[Path]:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content, encoding="utf-8")
    return sorted(path.relative_to(root) for path in root.rglob("*") if path.is_file())


def test_the_strings_looked_up_by_their_text_are_found_once_each_in_the_code(tmp_path):
    """__(), @lang() and trans() with a string literal, and a script's trans(), wTrans() and $t()
    (laravel-vue-i18n's), each string once in the order met; not a PHP file's key (auth.failed),
    a string built at run time ("Hello $name", `A ${dog}.`), another object's method (->__,
    i18n.trans), nor the code of packages (vendor/, node_modules/) and language files.
    trans_choice()'s plural forms are one string."""
    files = _app(tmp_path, {"artisan": "#!/usr/bin/env php\n", "composer.json": COMPOSER,
                            "app/Http/Controllers/DogController.php": CONTROLLER,
                            "resources/views/welcome.blade.php": VIEW,
                            "resources/js/Pages/Dogs.vue": SCRIPT,
                            "resources/js/node_modules/x/index.js": "trans('A module string.')\n",
                            "vendor/laravel/framework/src/x.php": "<?php __('A package string.');\n",
                            "lang/en/auth.php": "<?php\nreturn ['failed' => __('Not code.')];\n"})
    [found] = laravel_apps(tmp_path, files)
    assert found == LaravelApp(Path("."), Path("lang"))
    assert strings_in_code(tmp_path, found, files) == [
        "A dog runs.", "It's late.", "A man walks.", "A girl's hat.", "Two dogs play.", "A boy jumps.",
        "Two men walk.", "Welcome, :name!", 'A woman\'s "red" hat.', ":count dog|:count dogs"]
    assert [found.strings_file(code) for code in ("de", "deu_Latn", "pt-BR", "zho_Hant")] == [
        Path("lang/de.json"), Path("lang/de.json"), Path("lang/pt_BR.json"), Path("lang/zh_TW.json")]
    older = tmp_path / "older"  # before Laravel 9: resources/lang/
    assert laravel_apps(older, _app(older, {"artisan": "", "composer.json": COMPOSER, "resources/lang/en/auth.php": ""})) \
        == [LaravelApp(Path("."), Path("resources/lang"))]
    other = tmp_path / "other"  # an artisan file of another framework's: not Laravel
    assert laravel_apps(other, _app(other, {"artisan": "", "composer.json": '{"require": {"php": "^8.2"}}'})) == []


def test_the_source_keeps_the_translations_order_and_a_string_the_code_no_longer_shows(tmp_path):
    earlier = tmp_path / "de.json"
    earlier.write_text(json.dumps({"A package string.": "Ein Paket.", "A dog runs.": "Ein Hund rennt."}), encoding="utf-8")
    source = json.loads(strings_source(["A dog runs.", "A cat."], earlier))
    assert list(source.items()) == [("A package string.",) * 2, ("A dog runs.",) * 2, ("A cat.",) * 2]
    earlier.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(NmtError) as refused:
        strings_source([], earlier)
    assert str(refused.value) == f"{earlier}: not a JSON object of strings, as Laravel reads one"


def test_a_string_that_is_its_own_key_is_read_as_laravel_reads_it():
    """Laravel's lang/en.json: its placeholders reach the model as placeholders, and its plural
    forms are translated form by form and made the target language's (three for Russian, the
    forms with their own numbers kept); a string under another key is any JSON file's."""
    strings = {"Welcome, :name!": "Welcome, :name!", ":count dog|:count dogs": ":count dog|:count dogs",
               "{0} No dogs|[1,*] :count dogs": "{0} No dogs|[1,*] :count dogs", "greeting": "Hi :name|Hey"}
    document = JsonMessages.read(json.dumps(strings).encode(), "en.json")
    assert document.texts == ["Welcome, {:name}!", "{:count} dog", "{:count} dogs", "No dogs", "{:count} dogs",
                              "Hi :name|Hey"]
    written = json.loads(document.write(["Добро пожаловать, {:name}!", "{:count} собака", "{:count} собак", "Нет собак",
                                         "{:count} собак", "Привет :name|Эй"], "ru"))
    assert written == {"Welcome, :name!": "Добро пожаловать, :name!",
                       ":count dog|:count dogs": ":count собака|:count собак|:count собак",
                       "{0} No dogs|[1,*] :count dogs": "{0} Нет собак|[1,*] :count собак", "greeting": "Привет :name|Эй"}
    assert document.warnings == ["2 plural forms added for ru with the translation of the source's form of their kind, "
                                 "else of its last (Laravel's): review them"]


def test_a_laravel_app_gets_lang_de_json_from_its_code_and_keeps_what_it_had(trained_tiny, tmp_path):
    """`-i APP --update APP` writes lang/de.json from the code's strings; run again after a
    reviewer's edit and a new string in a view, it keeps the reviewed one and a string of
    lang/de.json the code does not show (a package's), and translates the new one alone. The
    code is not touched; `-o` writes the same file into the new folder; an app with its own
    lang/en.json has that translated as before, its code not read."""
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    site = tmp_path / "app"
    files = {"artisan": "#!/usr/bin/env php\n", "composer.json": COMPOSER,
             "resources/views/welcome.blade.php": "<h1>{{ __('A dog runs.') }}</h1>\n<p>{{ __('Welcome, :name!') }}</p>\n"}
    _app(site, files)
    runner = CliRunner()

    def update():
        result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(site), "--update", str(site)])
        assert result.exit_code == 0, result.output
        return json.loads((site / "lang" / "de.json").read_text(encoding="utf-8"))

    german = update()
    assert list(german) == ["A dog runs.", "Welcome, :name!"] and german["A dog runs."] != "A dog runs."
    assert ":name" in german["Welcome, :name!"]
    assert all((site / name).read_text(encoding="utf-8") == content for name, content in files.items())
    german["A dog runs."] = "Ein Hund rennt (geprüft)."
    german["A package string."] = "Ein Paket."
    (site / "lang" / "de.json").write_text(json.dumps(german, ensure_ascii=False, indent=4), encoding="utf-8")
    view = site / "resources" / "views" / "welcome.blade.php"
    view.write_text(files["resources/views/welcome.blade.php"] + "<p>{{ __('A cat sleeps.') }}</p>\n", encoding="utf-8")
    again = update()
    assert list(again) == ["A dog runs.", "Welcome, :name!", "A package string.", "A cat sleeps."]
    assert {key: again[key] for key in german} == german and again["A cat sleeps."] != "A cat sleeps."

    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(site), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0 and "__() in the code → lang/de.json" in result.output, result.output
    assert json.loads((tmp_path / "out" / "lang" / "de.json").read_text(encoding="utf-8")) == again

    (site / "lang" / "en.json").write_text(json.dumps({"A man walks.": "A man walks."}), encoding="utf-8")
    assert list(update()) == ["A man walks."]  # (en.json's: the translation of the app's own list)
