"""Where a documentation site reads its pages' translations, for a folder translated whole
(nmt.decode.folders).

A VitePress site (a folder with .vitepress/config.*) and Starlight's pages (an Astro project's
src/content/docs/) keep the default language's pages at the top and each other language's in a
folder named for it: guide/intro.md → de/guide/intro.md (or under the name the site gives German
already, de-DE/).

An MkDocs site translated by the i18n plugin (mkdocs-static-i18n) in its "suffix" structure (its
default; an mkdocs.yml whose plugins hold `i18n`) keeps each page's translations beside it:
index.md → index.de.md. (In its "folder" structure, docs/en/ beside docs/de/, the pages are a tree
of languages: nmt.decode.locale_paths.)

A Docusaurus site (a folder with docusaurus.config.js, .ts, .mjs or .cjs) keeps its pages in the
default language in place and reads each language's from its own folder under i18n/:

- docs/intro.md → i18n/de/docusaurus-plugin-content-docs/current/intro.md
- versioned_docs/version-2.0/intro.md → i18n/de/docusaurus-plugin-content-docs/version-2.0/intro.md
- blog/2024-01-01-news.md → i18n/de/docusaurus-plugin-content-blog/2024-01-01-news.md
- src/pages/about.mdx → i18n/de/docusaurus-plugin-content-pages/about.mdx

(The site's JSON messages, i18n/en/code.json, are a program's messages: nmt.decode.locale_paths
puts their translation in i18n/de/.) A page already under i18n/ is that language's translation. The
JSON files that `docusaurus write-translations --locale de` writes under i18n/de/ (the navbar's,
the footer's and the sidebars' labels, code.json) hold the site's English until translated: those
messages are filled in place (`labels`, `untranslated_label`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePath

from nmt.data.languages import language_tag
from nmt.decode.locale_paths import PathLanguage, folder_language, is_language

_CONFIGS = {f"docusaurus.config.{suffix}" for suffix in ("js", "ts", "mjs", "cjs")}
_VITEPRESS_CONFIGS = {f"config.{suffix}" for suffix in ("js", "ts", "mjs", "mts", "cjs", "cts")}
_MKDOCS_CONFIGS = {"mkdocs.yml", "mkdocs.yaml"}
_MKDOCS_I18N = re.compile(rb"^\s*-\s*i18n\s*:?\s*$", re.M)  # the i18n plugin in mkdocs.yml's plugins
_MKDOCS_FOLDERS = re.compile(rb"^\s*docs_structure\s*:\s*['\"]?folder", re.M)
_MKDOCS_DOCS_DIR = re.compile(rb"^docs_dir\s*:\s*['\"]?([^'\"\r\n#]+?)['\"]?\s*(?:#.*)?$", re.M)
_ASTRO_CONFIGS = {f"astro.config.{suffix}" for suffix in ("js", "ts", "mjs", "mts", "cjs", "cts")}
_PAGES = (".md", ".mdx")
# a content folder's parts (from the site's root) and the folder its translations go in under i18n/LANGUAGE/
_CONTENT = ((("docs",), ("docusaurus-plugin-content-docs", "current")),
            (("blog",), ("docusaurus-plugin-content-blog",)),
            (("src", "pages"), ("docusaurus-plugin-content-pages",)))


def _tag(language: str) -> str:
    return language_tag(language) if language else language  # ("": a page's language asked for, no target)


@dataclass(frozen=True)
class Docusaurus:
    """A Docusaurus site whose root is `root` (relative to the folder translated), configured by
    `config`."""
    root: PurePath
    config: PurePath

    def _within(self, path: PurePath) -> tuple[str, ...] | None:
        """The path's parts from the site's root, or None where it lies outside the site."""
        return path.parts[len(self.root.parts):] if path.parts[:len(self.root.parts)] == self.root.parts else None

    def translation(self, path: PurePath, target: str) -> PurePath | None:
        """Where the site reads the translation into `target` of a page in its default language,
        or None where `path` is none of its pages."""
        parts = self._within(path)
        if parts is None or path.suffix.lower() not in _PAGES:
            return None
        for content, translated in _CONTENT:
            if parts[:len(content)] == content and len(parts) > len(content):
                return PurePath(self.root, "i18n", self.named(target), *translated, *parts[len(content):])
        if parts[:1] == ("versioned_docs",) and len(parts) > 2:
            return PurePath(self.root, "i18n", self.named(target), "docusaurus-plugin-content-docs", *parts[1:])
        return None

    def named(self, language: str) -> str:
        """The language's name in the site's paths and configuration: its tag (de, pt-BR)."""
        return _tag(language)

    def labels(self, path: PurePath, target: str) -> bool:
        """Whether `path` is one of the JSON files `docusaurus write-translations --locale TARGET`
        writes: i18n/de/code.json, i18n/de/docusaurus-theme-classic/navbar.json and footer.json,
        i18n/de/docusaurus-plugin-content-docs/current.json (the sidebars' labels), ..."""
        parts = self._within(path)
        if parts is None or path.suffix.lower() != ".json" or parts[:2] != ("i18n", self.named(target)):
            return False
        return parts[2:] == ("code.json",) or len(parts) == 4 and parts[2].startswith("docusaurus-")

    def translated_language(self, path: PurePath) -> str | None:
        """The language of a page translated under i18n/ (i18n/fr/docusaurus-plugin-content-docs/...),
        or None."""
        parts = self._within(path)
        if parts is None or len(parts) < 4 or parts[0] != "i18n" or not parts[2].startswith("docusaurus-plugin-content"):
            return None
        return parts[1] if path.suffix.lower() in _PAGES else None


@dataclass(frozen=True)
class RootLocaleSite:
    """A site whose pages under `root` are the default language's, and whose folders there named
    `languages` hold the other languages' (VitePress, Starlight), configured by `config`."""
    root: PurePath
    languages: frozenset[str]
    config: PurePath

    def _within(self, path: PurePath) -> tuple[str, ...] | None:
        """The path's parts from the root, or None where it lies outside it."""
        if path.parts[:len(self.root.parts)] != self.root.parts or len(path.parts) == len(self.root.parts):
            return None
        return path.parts[len(self.root.parts):]

    def translation(self, path: PurePath, target: str) -> PurePath | None:
        """Where the site reads the translation into `target` of a page of the default language, or
        None where `path` is none (another language's, .vitepress/'s, public/'s)."""
        parts = self._within(path)
        if (parts is None or path.suffix.lower() not in _PAGES or parts[0] in self.languages
                or parts[0].startswith((".", "_")) or parts[0] == "public"):
            return None
        return PurePath(self.root, self.named(target), *parts)

    def named(self, language: str) -> str:
        """The language's name in the site: the folder it has for it (de-de/), or the language's tag."""
        return next((name for name in sorted(self.languages) if is_language(PathLanguage(name), language)),
                    _tag(language))

    def translated_language(self, path: PurePath) -> str | None:
        """The language of a page in a language's folder, or None."""
        parts = self._within(path)
        if parts is None or len(parts) < 2 or parts[0] not in self.languages or path.suffix.lower() not in _PAGES:
            return None
        return parts[0]


@dataclass(frozen=True)
class SuffixSite:
    """A site whose pages under `root` have their translations beside them, named for their
    languages: index.md, index.de.md (MkDocs' i18n plugin), configured by `config`."""
    root: PurePath
    config: PurePath

    def _page(self, path: PurePath) -> bool:
        return path.parts[:len(self.root.parts)] == self.root.parts and path.suffix.lower() in _PAGES

    def translated_language(self, path: PurePath) -> str | None:
        base, _, code = path.stem.rpartition(".")
        return code if self._page(path) and base and folder_language(code, "") is not None else None

    def named(self, language: str) -> str:
        """The language's name in the site's paths and configuration: its tag (de, pt-BR)."""
        return _tag(language)

    def translation(self, path: PurePath, target: str) -> PurePath | None:
        """index.md's translation into `target`, index.de.md; None for a page named for a language."""
        if not self._page(path) or self.translated_language(path) is not None:
            return None
        return path.with_name(f"{path.stem}.{self.named(target)}{path.suffix}")


Site = Docusaurus | RootLocaleSite | SuffixSite


def untranslated_label(key: tuple, text: str) -> bool:
    """Whether a message of a Docusaurus labels file (Docusaurus.labels) is the site's English as
    write-translations wrote it: the label its key names (`"item.label.Docs": {"message": "Docs"}`,
    `"sidebar.docs.category.Guides": {"message": "Guides"}`), or its key itself (a `<Translate>`
    text without an id: `"Easy to Use": {"message": "Easy to Use"}`)."""
    return len(key) == 2 and key[1] == "message" and isinstance(key[0], str) and (
        text == key[0] or key[0].endswith("." + text))


def unlisted(site: Site, folder: Path, language: str) -> list[str]:
    """A note where the site's configuration does not name `language` among its languages (the
    site then builds none of its pages): Docusaurus' i18n.locales, VitePress' and Starlight's
    locales, the i18n plugin's languages in mkdocs.yml."""
    text = (folder / site.config).read_text(encoding="utf-8", errors="replace")
    tag = re.escape(site.named(language))
    if re.search(rf"(?i)(?:locale\s*:\s*|[\'\"`]|^\s*|[{{,]\s*){tag}(?:[\'\"`]|\s*:|\s*$)", text, re.M):
        return []
    return [f"{site.config} does not name {site.named(language)} among the site's languages: add it, or the site "
            "builds none of its pages"]


def documentation_site(files: list[Path], folder: Path | None = None) -> Site | None:
    """The documentation site among a folder's files (paths relative to `folder`), by its
    configuration file nearest the top: Docusaurus', VitePress', an Astro project's with
    Starlight's pages, or MkDocs' with its i18n plugin (read from `folder`); None where there is
    none."""
    files = [path for path in files if "node_modules" not in path.parts]
    found: list[tuple[int, Site]] = []
    for path in files:
        if path.name in _MKDOCS_CONFIGS and folder is not None:
            config = (folder / path).read_bytes()
            if _MKDOCS_I18N.search(config) and not _MKDOCS_FOLDERS.search(config):
                docs = _MKDOCS_DOCS_DIR.search(config)
                found.append((len(path.parts), SuffixSite(path.parent / (docs.group(1).decode() if docs else "docs"), path)))
        elif path.name in _CONFIGS:
            found.append((len(path.parts), Docusaurus(path.parent, path)))
        elif path.name in _VITEPRESS_CONFIGS and path.parent.name == ".vitepress":
            found.append((len(path.parts), _root_locale_site(path.parent.parent, files, path)))
        elif path.name in _ASTRO_CONFIGS and any(other.parts[:len(path.parts) + 2] == (*path.parent.parts, "src", "content",
                                                                                       "docs") for other in files):
            found.append((len(path.parts), _root_locale_site(path.parent / "src" / "content" / "docs", files, path)))
    return min(found, key=lambda item: item[0])[1] if found else None


def _root_locale_site(root: Path, files: list[Path], config: Path) -> RootLocaleSite:
    """The site whose pages are under `root`, with the language folders it holds."""
    names = {path.parts[len(root.parts)] for path in files
             if path.parts[:len(root.parts)] == root.parts and len(path.parts) > len(root.parts) + 1}
    return RootLocaleSite(root, frozenset(name for name in names if folder_language(name, root.name) is not None), config)
