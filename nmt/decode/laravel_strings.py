"""A Laravel app's translation strings, found in its code: `__('Log in')`, `@lang('...')`,
`trans('...')`, `Lang::get('...')` and, with plural forms, `trans_choice('...', $n)` in its PHP
files and Blade views, and laravel-vue-i18n's `trans('...')`, `wTrans('...')`, `$t('...')` and
`transChoice('...', n)` in its scripts and Vue components (which read the same files). Laravel
looks such a string up in lang/de.json, keyed by the text itself; an app that has no
lang/en.json (most do not: `php artisan lang:publish` makes the PHP files alone) has nothing else
that lists them. A folder
translated (nmt.decode.folders) gets lang/de.json from them, as if from an en.json of each string
under its own text: a string already in lang/de.json keeps its translation there (and so does a
string the code no longer shows: a package's, a script's), and only new ones are translated.

A string that is a key of the PHP files (`__('auth.failed')`: a word, a dot, a word), one built
at run time (`"Hello $name"`) and one given as a variable are not such strings.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from nmt.data.languages import language_tag
from nmt.decode.php_messages import string_value
from nmt.errors import NmtError

# a call that looks a string up, with a string literal as its first argument: PHP's, and a script's
_CALL = re.compile(r"""(?:(?<![\w$>:])__|(?<![\w$>:])trans(?:_choice)?|@lang|@choice|Lang::(?:get|choice))\(\s*('(?:[^'\\]|\\.)*'|"(?:[^"\\$]|\\.)*")\s*[,)]""")
_SCRIPT_CALL = re.compile(r"""(?:(?<![\w$.])(?:__|trans|wTrans|transChoice|wTransChoice)|\$tChoice|\$t)\(\s*('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\$]|\\.)*`)\s*[,)]""")
_SCRIPTS_SUFFIXES = (".vue", ".js", ".ts", ".jsx", ".tsx")
_KEY = re.compile(r"[\w-]+(?:\.[\w-]+)+")  # auth.failed, validation.required: a PHP file's key
_NOT_CODE = {"vendor", "node_modules", "storage", "bootstrap", "lang", "tests", "public"}  # folders of no app code
_SCRIPT_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}  # (any other escaped character: itself)
# Laravel's locales for a script: laravel-lang's names
_SCRIPTS = {"zh-Hans": "zh_CN", "zh-Hant": "zh_TW"}


@dataclass
class LaravelApp:
    """A Laravel app in a folder translated: its folder and its language folder (lang/, or
    resources/lang/ before Laravel 9), both relative to the folder translated."""
    root: Path
    lang: Path

    def strings_file(self, target: str) -> Path:
        """Where Laravel reads its strings in `target` (a model's language code): lang/de.json, lang/pt_BR.json."""
        tag = language_tag(target)
        return self.lang / f"{_SCRIPTS.get(tag, tag.replace('-', '_'))}.json"


def laravel_apps(folder: Path, files: list[Path]) -> list[LaravelApp]:
    """The Laravel apps among `files` (paths in `folder`): a folder with `artisan` and a
    composer.json that requires laravel/framework."""
    apps = []
    for path in files:
        composer = folder / path.parent / "composer.json"
        if path.name == "artisan" and composer.is_file() and b'"laravel/framework"' in composer.read_bytes():
            root = path.parent
            older = root / "resources" / "lang"
            lang = older if (folder / older).is_dir() and not (folder / root / "lang").is_dir() else root / "lang"
            apps.append(LaravelApp(root, lang))
    return apps


def strings_in_code(folder: Path, app: LaravelApp, files: list[Path]) -> list[str]:
    """The strings the app's PHP files and Blade views look up by their text, each once, in the
    order of the files' paths and of the calls in each."""
    found: dict[str, None] = {}
    for path in files:
        if path.suffix not in (".php", *_SCRIPTS_SUFFIXES) or not path.is_relative_to(app.root):
            continue
        inside = path.relative_to(app.root).parts[:-1]
        if inside[:1] and inside[0] in _NOT_CODE or inside[:2] == ("resources", "lang") or "node_modules" in inside:
            continue
        text = (folder / path).read_text(encoding="utf-8", errors="replace")
        script = path.suffix != ".php"
        for literal in (_SCRIPT_CALL if script else _CALL).findall(text):
            string = _script_unquoted(literal) if script else string_value(literal)
            if string.strip() and not _KEY.fullmatch(string):
                found.setdefault(string)
    return list(found)


def strings_source(strings: list[str], translation: Path) -> str:
    """What lang/de.json is translated from: a JSON object of each string under its own text, the
    strings `translation` (lang/de.json, where it exists) has first, in its order, then the new
    ones; indented as Laravel's own files are."""
    earlier: dict = {}
    if translation.is_file():
        try:
            earlier = json.loads(translation.read_text(encoding="utf-8-sig"))
        except (ValueError, UnicodeDecodeError) as e:
            raise NmtError(f"{translation}: not a JSON object of strings, as Laravel reads one ({e})") from None
        if not isinstance(earlier, dict):
            raise NmtError(f"{translation}: not a JSON object of strings, as Laravel reads one")
    keys = [key for key, value in earlier.items() if isinstance(value, str)]
    keys += [string for string in strings if string not in earlier]
    return json.dumps({key: key for key in keys}, ensure_ascii=False, indent=4) + "\n"


def _script_unquoted(literal: str) -> str:
    """A JavaScript string literal's text, its escapes undone."""
    return re.sub(r"\\(.)", lambda m: _SCRIPT_ESCAPES.get(m.group(1), m.group(1)), literal[1:-1])
