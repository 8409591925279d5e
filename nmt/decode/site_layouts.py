"""Where a documentation site reads its pages' translations, for a folder translated whole
(nmt.decode.folders). A Docusaurus site (a folder with docusaurus.config.js, .ts, .mjs or .cjs)
keeps its pages in the default language in place and reads each language's from its own folder
under i18n/:

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

_CONFIGS = {f"docusaurus.config.{suffix}" for suffix in ("js", "ts", "mjs", "cjs")}
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


def docusaurus_site(files: list[Path]) -> Docusaurus | None:
    """The Docusaurus site among a folder's files (paths relative to it), by its configuration file
    nearest the top; None where there is none."""
    configs = [path for path in files if path.name in _CONFIGS and "node_modules" not in path.parts]
    if not configs:
        return None
    return Docusaurus(min(configs, key=lambda path: len(path.parts)).parent)
