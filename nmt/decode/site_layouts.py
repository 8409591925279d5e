"""Where a documentation site reads its pages' translations, for a folder translated whole
(nmt.decode.folders).

A VitePress site (a folder with .vitepress/config.*) and Starlight's pages (an Astro project's
src/content/docs/) keep the default language's pages at the top and each other language's in a
folder named for it: guide/intro.md → de/guide/intro.md (or under the name the site gives German
already, de-DE/).

A Docusaurus site (a folder with docusaurus.config.js, .ts, .mjs or .cjs) keeps its pages in the
default language in place and reads each language's from its own folder under i18n/:

- docs/intro.md → i18n/de/docusaurus-plugin-content-docs/current/intro.md
- versioned_docs/version-2.0/intro.md → i18n/de/docusaurus-plugin-content-docs/version-2.0/intro.md
- blog/2024-01-01-news.md → i18n/de/docusaurus-plugin-content-blog/2024-01-01-news.md
- src/pages/about.mdx → i18n/de/docusaurus-plugin-content-pages/about.mdx

(The site's JSON messages, i18n/en/code.json, are a program's messages: nmt.decode.locale_paths
puts their translation in i18n/de/.) A page already under i18n/ is that language's translation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePath

from nmt.decode.locale_paths import PathLanguage, folder_language, is_language

_CONFIGS = {f"docusaurus.config.{suffix}" for suffix in ("js", "ts", "mjs", "cjs")}
_VITEPRESS_CONFIGS = {f"config.{suffix}" for suffix in ("js", "ts", "mjs", "mts", "cjs", "cts")}
_ASTRO_CONFIGS = {f"astro.config.{suffix}" for suffix in ("js", "ts", "mjs", "mts", "cjs", "cts")}
_PAGES = (".md", ".mdx")
# a content folder's parts (from the site's root) and the folder its translations go in under i18n/LANGUAGE/
_CONTENT = ((("docs",), ("docusaurus-plugin-content-docs", "current")),
            (("blog",), ("docusaurus-plugin-content-blog",)),
            (("src", "pages"), ("docusaurus-plugin-content-pages",)))


@dataclass(frozen=True)
class Docusaurus:
    """A Docusaurus site whose root is `root` (relative to the folder translated)."""
    root: PurePath

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
                return PurePath(self.root, "i18n", target, *translated, *parts[len(content):])
        if parts[:1] == ("versioned_docs",) and len(parts) > 2:
            return PurePath(self.root, "i18n", target, "docusaurus-plugin-content-docs", *parts[1:])
        return None

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
    `languages` hold the other languages' (VitePress, Starlight)."""
    root: PurePath
    languages: frozenset[str]

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
        folder = next((name for name in sorted(self.languages) if is_language(PathLanguage(name), target)), target)
        return PurePath(self.root, folder, *parts)

    def translated_language(self, path: PurePath) -> str | None:
        """The language of a page in a language's folder, or None."""
        parts = self._within(path)
        if parts is None or len(parts) < 2 or parts[0] not in self.languages or path.suffix.lower() not in _PAGES:
            return None
        return parts[0]


def documentation_site(files: list[Path]) -> Docusaurus | RootLocaleSite | None:
    """The documentation site among a folder's files (paths relative to it), by its configuration
    file nearest the top: Docusaurus', VitePress' or an Astro project's with Starlight's pages;
    None where there is none."""
    files = [path for path in files if "node_modules" not in path.parts]
    found: list[tuple[int, Docusaurus | RootLocaleSite]] = []
    for path in files:
        if path.name in _CONFIGS:
            found.append((len(path.parts), Docusaurus(path.parent)))
        elif path.name in _VITEPRESS_CONFIGS and path.parent.name == ".vitepress":
            found.append((len(path.parts), _root_locale_site(path.parent.parent, files)))
        elif path.name in _ASTRO_CONFIGS and any(other.parts[:len(path.parts) + 2] == (*path.parent.parts, "src", "content",
                                                                                       "docs") for other in files):
            found.append((len(path.parts), _root_locale_site(path.parent / "src" / "content" / "docs", files)))
    return min(found, key=lambda item: item[0])[1] if found else None


def _root_locale_site(root: Path, files: list[Path]) -> RootLocaleSite:
    """The site whose pages are under `root`, with the language folders it holds."""
    names = {path.parts[len(root.parts)] for path in files
             if path.parts[:len(root.parts)] == root.parts and len(path.parts) > len(root.parts) + 1}
    return RootLocaleSite(root, frozenset(name for name in names if folder_language(name, root.name) is not None))
