"""`nmt translate` of a folder (nmt.decode.folders): each file of a format nmt translates as that
file alone is translated, every other copied, the subfolders alike; the new folder appears whole or
not at all, and never over anything the user has."""

from __future__ import annotations

from typer.testing import CliRunner

from nmt.cli import app
from nmt.decode.translation_record import RECORD_NAME, TranslationRecord
from tests.conftest import one_line_error


def _folder_translated(checkpoint: str, folder, files: dict[str, str], out) -> tuple[str, set[str]]:
    """`files` (path: content) written under `folder`, the folder translated into `out` with the
    checkpoint: what the run said, and the files `out` then holds, relative to it."""
    for name, content in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(content, encoding="utf-8")
    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(folder), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return result.output, {str(path.relative_to(out)) for path in out.rglob("*") if path.is_file()}


def test_a_folder_is_translated_file_by_file_into_a_new_one(trained_tiny, tmp_path):
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    site = tmp_path / "site"
    (site / "docs").mkdir(parents=True)
    (site / "img").mkdir()
    (site / "index.html").write_text("<html><body>\n<p>A black dog leaps\nover a log.</p>\n</body></html>\n", encoding="utf-8")
    (site / "docs" / "guide.md").write_text("# Asian man\n\n```\nA black dog.\n```\n", encoding="utf-8")
    (site / "docs" / "index.adoc").write_text("= Asian man\n\n* A black dog.\n\n----\nA black dog.\n----\n", encoding="utf-8")
    (site / "notes.txt").write_text("A black dog leaps over a log.\n", encoding="utf-8")
    (site / "style.css").write_text("p { color: red } /* A black dog */\n", encoding="utf-8")
    (site / "robots.txt").write_text("User-agent: *\nDisallow: /drafts/\n", encoding="utf-8")  # read by a program: copied
    (site / "LICENSE.md").write_text("A dog may use this.\n", encoding="utf-8")  # binding as written: copied
    (site / "COPYING.adoc").write_text("A dog may use this.\n", encoding="utf-8")
    (site / "img" / "a.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    runner = CliRunner()
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(site), "-o", str(tmp_path / "out" / "site.de")])
    assert result.exit_code == 0, result.output
    out = tmp_path / "out" / "site.de"
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == [
        "COPYING.adoc", "LICENSE.md", "docs/guide.md", "docs/index.adoc", "img/a.png", "index.html", RECORD_NAME, "notes.txt",
        "robots.txt", "style.css"]  # (and what each was made from, for an update: test_translation_updates)
    assert all((out / name).read_bytes() == (site / name).read_bytes() for name in ("robots.txt", "LICENSE.md", "COPYING.adoc"))
    for name in ("index.html", "docs/guide.md", "docs/index.adoc", "notes.txt"):  # each as nmt translate writes it alone
        alone = tmp_path / "alone" / name
        assert runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(site / name), "-o", str(alone)]).exit_code == 0
        assert (out / name).read_bytes() == alone.read_bytes() != (site / name).read_bytes()
    for name in ("style.css", "img/a.png"):
        assert (out / name).read_bytes() == (site / name).read_bytes()
    assert not list(tmp_path.glob("out/.*"))  # nothing left of the folder it was built in
    # never over what the user has, nor inside the folder read; nor a file that cannot be read: nothing written
    for target, words in ((out, "exists and is not an empty folder"), (site / "de", "inside")):
        one_line_error(runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(site), "-o", str(target)]), words)
    assert not (site / "de").exists()
    one_line_error(runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(site), "-o", str(tmp_path / "x"),
                                       "--nproc", "2"]), "not with --nproc")
    (site / "bad.srt").write_text("1\nA dog.\n", encoding="utf-8")
    one_line_error(runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(site), "-o", str(tmp_path / "y")]),
                   "bad.srt: line 1: a subtitle block without a timing line")
    assert not (tmp_path / "y").exists() and not list(tmp_path.glob(".y*"))


def test_documents_in_a_tree_of_languages_are_translated_into_the_targets_folder(trained_tiny, tmp_path):
    """A store listing's texts (fastlane's metadata/android/en-US/ beside de-DE/ and fr-FR/) or a
    site's pages by language: the English page missing in German is translated into de-DE/, the
    German there already is kept as it is, the French copied; a page outside the tree is
    translated in its place."""
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    app_folder = tmp_path / "app"
    files = {"metadata/android/en-US/title.txt": "A dog\n", "metadata/android/en-US/short_description.txt": "A black dog leaps.\n",
             "metadata/android/de-DE/title.txt": "Ein Hund (geprüft)\n", "metadata/android/fr-FR/title.txt": "Un chien\n",
             "metadata/android/zh-hant/title.txt": "一隻狗\n",  # (a script written in lower case: FastAPI's docs/zh-hant/)
             "notes.txt": "A black dog leaps over a log.\n"}
    out = tmp_path / "out"
    _, written = _folder_translated(checkpoint, app_folder, files, out)
    assert written == set(files) | {"metadata/android/de-DE/short_description.txt", RECORD_NAME}
    runner = CliRunner()
    changed = {name for name, content in files.items() if (out / name).read_text(encoding="utf-8") != content}
    assert changed == {"notes.txt"}
    alone = tmp_path / "alone.txt"
    assert runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(app_folder / "metadata/android/en-US/short_description.txt"),
                               "-o", str(alone)]).exit_code == 0
    assert (out / "metadata/android/de-DE/short_description.txt").read_bytes() == alone.read_bytes()
    # updated in place: the missing German page alone is written
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(app_folder), "--update", str(app_folder)])
    assert result.exit_code == 0 and "metadata/android/de-DE/short_description.txt written" in result.output, result.output
    assert {str(p.relative_to(app_folder)) for p in app_folder.rglob("*") if p.is_file()} == written
    assert all((app_folder / name).read_text(encoding="utf-8") == content for name, content in files.items())


def test_a_folder_of_the_source_language_alone_gets_the_targets_beside_it(trained_tiny, tmp_path):
    """A site not translated yet (Hugo's content/en/): the German goes into content/de/, the English
    stays, and its strings' German into i18n/de.toml (Occitan's, oc.toml, copied); its layouts are
    templates, copied; a folder of another language alone is no tree (its pages translated in
    place)."""
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    site = tmp_path / "site"
    files = {"content/en/about.md": "A dog runs.\n", "content/en/posts/first.md": "A black dog leaps.\n",
             "notes/fr/a.txt": "A dog.\n", "i18n/en.toml": 'home = "A dog"\n', "hugo.toml": 'title = "A dog"\n',
             "i18n/oc.toml": 'home = "Un can"\n',  # Occitan: a language the tables here do not know
             "layouts/index.html": '{{ define "main" }}<p>A dog runs.</p>{{ end }}\n',  # a template: code
             "layouts/_partials/empty.html": "", "static/page.html": "<p>A dog runs.</p>\n"}
    out = tmp_path / "out"
    assert _folder_translated(checkpoint, site, files, out)[1] == set(files) | {
        "content/de/about.md", "content/de/posts/first.md", "i18n/de.toml", RECORD_NAME}  # (the theme's strings; hugo.toml: settings)
    assert {name for name, content in files.items() if (out / name).read_text(encoding="utf-8") != content} == {
        "notes/fr/a.txt", "static/page.html"}


def test_a_docusaurus_sites_pages_are_translated_where_the_site_reads_them(trained_tiny, tmp_path):
    """A Docusaurus site (website/docusaurus.config.js): its pages stay in English, their German goes
    under website/i18n/de/ as Docusaurus reads it (docs, versioned docs, the blog, pages), the
    French there is copied, the German there kept; its JSON messages go to i18n/de/; a page outside
    its content folders is translated in its place. Updated in place, only a new page is written."""
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    site = tmp_path / "repo"
    plugin = "docusaurus-plugin-content-docs"
    files = {"website/docusaurus.config.js": "module.exports = {};\n", "website/docs/intro.md": "# A dog\n\nA dog runs.\n",
             "website/docs/guide/setup.mdx": "import Tabs from '@theme/Tabs';\n\nA black dog leaps.\n",
             "website/versioned_docs/version-1.0/intro.md": "A dog.\n",
             "website/blog/2024-01-01-news.md": "A dog runs.\n", "website/src/pages/about.md": "A dog.\n",
             "website/src/pages/index.js": "export default () => null;\n",
             "website/i18n/en/code.json": '{"home": {"message": "A dog", "description": "the title"}}\n',
             f"website/i18n/fr/{plugin}/current/intro.md": "Un chien.\n",
             f"website/i18n/de/{plugin}/current/guide/setup.mdx": "Ein Hund (geprüft).\n",
             "website/README.md": "A dog runs.\n"}
    out = tmp_path / "out"
    written = _folder_translated(checkpoint, site, files, out)[1]
    runner = CliRunner()
    german = {f"website/i18n/de/{plugin}/current/intro.md", f"website/i18n/de/{plugin}/version-1.0/intro.md",
              "website/i18n/de/docusaurus-plugin-content-blog/2024-01-01-news.md",
              "website/i18n/de/docusaurus-plugin-content-pages/about.md", "website/i18n/de/code.json"}
    assert written == set(files) | german | {RECORD_NAME}
    assert {name for name, content in files.items() if (out / name).read_text(encoding="utf-8") != content} == {
        "website/README.md"}
    alone = tmp_path / "intro.de.md"
    assert runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(site / "website/docs/intro.md"),
                               "-o", str(alone)]).exit_code == 0
    assert (out / f"website/i18n/de/{plugin}/current/intro.md").read_bytes() == alone.read_bytes()
    # updated in place: the German pages made; then a new page alone
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(site), "--update", str(site)])
    assert result.exit_code == 0, result.output
    (site / "website/docs/new.md").write_text("A cat sleeps.\n", encoding="utf-8")
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(site), "--update", str(site)])
    assert result.exit_code == 0, result.output
    assert f"website/i18n/de/{plugin}/current/new.md written" in result.output.replace("\n", " ")
    assert (site / f"website/i18n/de/{plugin}/current/guide/setup.mdx").read_text(encoding="utf-8") == "Ein Hund (geprüft).\n"


def test_vitepress_starlight_and_mkdocs_pages_get_their_translations_where_the_site_reads_them(trained_tiny, tmp_path):
    """A VitePress site and Starlight's pages keep the default language's pages at the top and each
    other language's in its own folder: the German goes into de/ (or the site's own name for it,
    de-de/), the Chinese there is copied, the site's other files copied as they are. MkDocs' i18n
    plugin reads index.de.md beside index.md. A note says where the site's configuration does
    not name German yet."""
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    sites = {"vitepress": ({"docs/.vitepress/config.ts": "export default {}\n", "docs/index.md": "# A dog\n",
                            "docs/guide/intro.md": "A dog runs.\n", "docs/zh/index.md": "一只狗\n",
                            "docs/public/notes.md": "A dog.\n"},
                           {"docs/de/index.md": "docs/index.md", "docs/de/guide/intro.md": "docs/guide/intro.md"}),
             "starlight": ({"astro.config.mjs": "export default {locales: {root: {lang: 'en'}, 'de-de': {}}}\n", "src/content/docs/index.mdx": "A dog.\n",
                            "src/content/docs/guides/example.md": "A dog runs.\n",
                            "src/content/docs/de-de/index.mdx": "Ein Hund (geprüft).\n"},
                           {"src/content/docs/de-de/guides/example.md": "src/content/docs/guides/example.md"}),
             "mkdocs": ({"mkdocs.yml": "site_name: A\nplugins:\n  - i18n:\n      languages:\n        - locale: en\n",
                         "docs/index.md": "A dog.\n", "docs/guide/setup.md": "A dog runs.\n",
                         "docs/guide/setup.fr.md": "Un chien court.\n"},
                        {"docs/index.de.md": "docs/index.md", "docs/guide/setup.de.md": "docs/guide/setup.md"})}
    for name, (files, german) in sites.items():
        out = tmp_path / f"{name}.out"
        said, written = _folder_translated(checkpoint, tmp_path / name, files, out)
        assert written == set(files) | set(german) | {RECORD_NAME}, name
        assert {path for path, content in files.items() if (out / path).read_text(encoding="utf-8") != content} == (
            {"docs/public/notes.md"} if name == "vitepress" else set()), name  # (public/: a file, translated in place)
        assert all((out / path).read_text(encoding="utf-8") != files[english] for path, english in german.items())
        assert ("does not name de among the site's languages" in said) == (name != "starlight"), name


def test_a_page_named_for_its_language_beside_its_siblings_gets_its_translation_so_named(trained_tiny, tmp_path):
    """Pages named for their languages (Hugo's about.md beside about.de.md, a store text's
    description.txt beside description_fr.txt): the German a page lacks is made beside it under
    its siblings' naming, the German there is kept, the French copied."""
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    site = tmp_path / "site"
    files = {"content/about.md": "A dog.\n", "content/about.de.md": "Ein Hund (geprüft).\n",
             "content/contact.md": "A black dog leaps.\n", "content/contact.fr.md": "Un chien.\n",
             "store/description.txt": "A black dog leaps.\n", "store/description_fr.txt": "Un chien.\n"}
    out = tmp_path / "out"
    assert _folder_translated(checkpoint, site, files, out)[1] == set(files) | {"content/contact.de.md",
                                                                              "store/description_de.txt", RECORD_NAME}
    assert all((out / name).read_text(encoding="utf-8") == content for name, content in files.items())
    assert (out / "content/contact.de.md").read_text(encoding="utf-8") != files["content/contact.md"]


def test_a_docusaurus_sites_labels_still_in_english_are_translated_in_place(translator, cfg, tmp_path):
    """The JSON files `docusaurus write-translations --locale de` writes under i18n/de/ hold the
    site's English (the navbar's, the sidebars' labels, its <Translate> texts) until translated:
    each message that is still the label its key names, or the key itself, is translated in place;
    a translated one, and one whose English cannot be told (the navbar's title), stays; the page
    gets its translation and the files no record entry; a second update writes nothing."""
    import json

    from nmt.decode.folders import translate_folder
    from nmt.decode.stream import translate_file

    site = tmp_path / "site"
    navbar = {"title": {"message": "A dog", "description": "The title in the navbar"},
              "item.label.A black dog": {"message": "A black dog", "description": "Navbar item with label A black dog"},
              "item.label.Blog": {"message": "Neuigkeiten", "description": "Navbar item with label Blog"}}
    files = {"website/docusaurus.config.js": "module.exports = {i18n: {locales: ['en', 'de']}};\n",
             "website/docs/intro.md": "A dog runs.\n",
             "website/i18n/de/docusaurus-theme-classic/navbar.json": json.dumps(navbar, indent=2) + "\n",
             "website/i18n/de/docusaurus-plugin-content-docs/current.json": json.dumps(
                 {"sidebar.docs.category.Two cats": {"message": "Two cats"}}, indent=2) + "\n",
             "website/i18n/de/code.json": json.dumps({"A man rides a bike": {"message": "A man rides a bike"}}) + "\n"}
    for name, content in files.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(content, encoding="utf-8")
    alone = tmp_path / "en.json"  # what each English label becomes, as nmt translate writes a message
    alone.write_text(json.dumps({"a": "A black dog", "b": "Two cats", "c": "A man rides a bike"}), encoding="utf-8")
    translate_file(translator, str(alone), str(tmp_path / "de.json"), cfg)
    expected = json.loads((tmp_path / "de.json").read_text(encoding="utf-8"))
    report = translate_folder(translator, site, None, cfg, lambda path: lambda message: None)
    assert sorted(map(str, report.written)) == ["website/i18n/de/code.json",
                                                "website/i18n/de/docusaurus-plugin-content-docs/current.json",
                                                "website/i18n/de/docusaurus-plugin-content-docs/current/intro.md",
                                                "website/i18n/de/docusaurus-theme-classic/navbar.json"]
    german = json.loads((site / "website/i18n/de/docusaurus-theme-classic/navbar.json").read_text(encoding="utf-8"))
    assert german == {**navbar, "item.label.A black dog": {"message": expected["a"],
                                                          "description": "Navbar item with label A black dog"}}
    assert json.loads((site / "website/i18n/de/docusaurus-plugin-content-docs/current.json").read_text(
        encoding="utf-8")) == {"sidebar.docs.category.Two cats": {"message": expected["b"]}}
    assert json.loads((site / "website/i18n/de/code.json").read_text(encoding="utf-8")) == {
        "A man rides a bike": {"message": expected["c"]}}
    assert expected["a"] != "A black dog" and set(TranslationRecord.read(site).entries) == {
        "website/i18n/de/docusaurus-plugin-content-docs/current/intro.md"}
    again = translate_folder(translator, site, None, cfg, lambda path: lambda message: None)
    assert again.written == [] and not again.recorded
    # a site whose labels files are not written yet: a note says how to have them
    (site / "website/i18n").rename(tmp_path / "i18n")
    notes = translate_folder(translator, site, tmp_path / "out", cfg, lambda path: lambda message: None).notes
    assert any("npm run write-translations -- --locale de` in website" in note for note in notes), notes


def test_a_second_run_into_the_same_folder_is_refused_while_the_first_builds_it(trained_tiny, tmp_path, monkeypatch):
    """A second run would remove the folder the first is building (`.site.de.tmp`): while one
    translates a folder, the same command again is a one-line error, and the first finishes whole."""
    import nmt.decode.folders as folders

    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    site = tmp_path / "site"
    site.mkdir()
    for name in ("a.txt", "b.txt"):
        (site / name).write_text("A black dog leaps over a log.\n", encoding="utf-8")
    runner, refusals, translate_file = CliRunner(), [], folders.translate_file

    def meanwhile(*args, **kwargs):
        if not refusals:  # the first file: the same command started again
            refusals.append(runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(site), "-o", str(tmp_path / "site.de")]))
        return translate_file(*args, **kwargs)

    monkeypatch.setattr(folders, "translate_file", meanwhile)
    result = runner.invoke(app, ["translate", "-c", checkpoint, "-i", str(site), "-o", str(tmp_path / "site.de")])
    assert result.exit_code == 0, result.output
    [second] = refusals
    one_line_error(second, f"{tmp_path / 'site.de'}: another nmt is translating into it")
    assert sorted(p.name for p in (tmp_path / "site.de").iterdir()) == ["a.txt", "b.txt", RECORD_NAME]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site", "site.de"]  # no lock, no folder being built
