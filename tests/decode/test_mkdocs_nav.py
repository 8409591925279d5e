"""MkDocs' navigation for the i18n plugin (nmt.decode.mkdocs_nav): the titles a language's entry
does not map yet added to its nav_translations, the rest of mkdocs.yml as it was."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from nmt.cli import app
from nmt.decode.mkdocs_nav import translate_nav, untranslated_titles
from nmt.errors import NmtError

CONFIG = """site_name: Dogs
markdown_extensions:
  - pymdownx.emoji:
      emoji_index: !!python/name:material.extensions.emoji.twemoji
nav:
  - Home: index.md
  - Guide:
    - A dog runs: guide/run.md
    - guide/other.md
plugins:
  - search
  - i18n:
      docs_structure: suffix
      languages:
        - locale: en
          default: true
        - locale: de
          name: Deutsch  # German
        - locale: fr
          nav_translations:
            Home: Accueil
extra: {x: 1}
"""


def _upper(titles: list[str]) -> list[str]:
    return [title.upper() + "." for title in titles]  # (a full stop the title lacks: dropped)


def test_each_title_a_language_lacks_is_added_to_its_entry_the_file_kept_as_it_was():
    assert untranslated_titles(CONFIG, "de") == ["Home", "Guide", "A dog runs"]
    assert untranslated_titles(CONFIG, "fr") == ["Guide", "A dog runs"] and untranslated_titles(CONFIG, "ja") == []
    german = translate_nav(CONFIG, "de", _upper)
    assert german == CONFIG.replace("          name: Deutsch  # German\n", "          name: Deutsch  # German\n"
                                    '          nav_translations:\n            "Home": "HOME"\n            "Guide": "GUIDE"\n'
                                    '            "A dog runs": "A DOG RUNS"\n')
    both = translate_nav(german, "fr", _upper)
    assert both == german.replace("            Home: Accueil\n", '            Home: Accueil\n            "Guide": "GUIDE"\n'
                                  '            "A dog runs": "A DOG RUNS"\n')
    assert untranslated_titles(both, "de") == untranslated_titles(both, "fr") == []
    assert translate_nav(both, "de", _upper) == both


def test_the_titles_go_after_the_entrys_last_line_where_another_entry_follows():
    config = CONFIG.replace("          name: Deutsch  # German\n", "          theme:\n            palette:\n"
                                                                  "              primary: green\n\n")
    assert translate_nav(config, "de", _upper) == config.replace(
        "              primary: green\n", '              primary: green\n          nav_translations:\n'
        '            "Home": "HOME"\n            "Guide": "GUIDE"\n            "A dog runs": "A DOG RUNS"\n')


def test_a_language_written_in_flow_style_or_not_listed_is_left_and_broken_yaml_named():
    flow = CONFIG.replace("        - locale: de\n          name: Deutsch  # German\n", "        - {locale: de, name: Deutsch}\n")
    assert translate_nav(flow, "de", _upper) == flow
    with pytest.raises(NmtError, match=r"mkdocs.yml:3: not valid YAML"):
        untranslated_titles("nav:\n - a: [\n", "de")


def test_an_mkdocs_site_updated_in_place_gets_its_navigation_translated(trained_tiny, tmp_path):
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    site = tmp_path / "site"
    (site / "docs").mkdir(parents=True)
    (site / "mkdocs.yml").write_text("site_name: A\nnav:\n  - A dog: index.md\nplugins:\n  - i18n:\n      languages:\n"
                                     "        - locale: en\n        - locale: de\n")
    (site / "docs" / "index.md").write_text("A dog runs.\n")
    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(site), "--update", str(site)])
    assert result.exit_code == 0, result.output
    config = (site / "mkdocs.yml").read_text()
    assert config.startswith("site_name: A\nnav:\n  - A dog: index.md\nplugins:\n  - i18n:\n      languages:\n"
                             "        - locale: en\n        - locale: de\n          nav_translations:\n"
                             '            "A dog": "') and (site / "docs" / "index.de.md").is_file()
    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(site), "--update", str(site)])
    assert "up to date" in result.output and (site / "mkdocs.yml").read_text() == config
