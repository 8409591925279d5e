"""What a Joomla extension's manifest (com_example.xml: `<extension>`) needs beside a new
language's files: where it installs each language file by name (`<language tag="en-GB">
en-GB/en-GB.com_example.ini</language>`), Joomla installs the extension without a file it does not
name. A note says which entry to add; the manifest, the extension's own file, is not changed."""

from __future__ import annotations

import re
from pathlib import Path

_ENTRY = re.compile(r'<language\s+tag\s*=\s*"([^"]+)"\s*>\s*([^<]+?)\s*</language>')
_HEAD = 1 << 16  # a manifest names its root and languages early


def unlisted_languages(folder: Path, files: list[Path], translations: list[tuple[Path, Path]]) -> list[str]:
    """A note for each manifest among `files` (paths in `folder`) that installs a source language
    file of `translations` (source, translation: paths in `folder`, each in the folder of its
    language, de-DE/) by name but not its translation."""
    notes = []
    for manifest in (path for path in files if path.suffix.lower() == ".xml"):
        with open(folder / manifest, "rb") as f:
            head = f.read(_HEAD).decode("utf-8", errors="replace")
        if "<extension" not in head and "<install" not in head:
            continue
        entries = [entry for _, entry in _ENTRY.findall(head)]
        for source, translation in translations:
            named = f"{source.parent.name}/{source.name}"
            new = f"{translation.parent.name}/{translation.name}"
            listed = next((entry for entry in entries if entry.endswith(named)), None)
            if listed is not None and not any(entry.endswith(new) for entry in entries):
                wanted = listed[:len(listed) - len(named)] + new
                tag = translation.parent.name
                notes.append(f'{manifest} installs {listed} but not {wanted}: add <language tag="{tag}">{wanted}'
                             "</language> beside it, or Joomla installs the extension without it")
    return notes
