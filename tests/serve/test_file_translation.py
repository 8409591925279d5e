"""Files for LibreTranslate's /translate_file (nmt.serve.files): what is read from an upload and
how long a translated file is kept."""

from __future__ import annotations

import pytest

from nmt.serve.files import TranslatedFiles, read_upload
from nmt.serve.libretranslate import LibreError


def test_an_upload_is_its_lines_or_its_cues_and_its_name_without_folders():
    upload = read_upload("../../notes.TXT", "\ufeffA dog.\r\n\r\nA cat.\n".encode())
    assert upload.name == "notes.TXT" and upload.texts == ["A dog.", "", "A cat."]
    assert upload.write(["Ein Hund.", "", "Eine Katze."], "de") == "Ein Hund.\n\nEine Katze.\n".encode()
    upload = read_upload("C:\\films\\talk.srt", b"1\n00:00:01,000 --> 00:00:02,000\nA black dog\nleaps.\n")
    assert upload.name == "talk.srt" and upload.texts == ["A black dog leaps."]
    assert upload.write(["Ein schwarzer Hund springt."], "de") == (
        "1\n00:00:01,000 --> 00:00:02,000\nEin schwarzer\nHund springt.\n".encode())
    with pytest.raises(LibreError, match="file format not supported"):
        read_upload("talk.xls", b"")


def test_an_uploaded_xml_file_is_read_as_androids_strings():
    pytest.importorskip("lxml")
    upload = read_upload("strings.xml", b'<resources><string name="a">A dog</string></resources>')
    assert upload.texts == ["A dog"] and upload.markup
    assert upload.write(["Ein Hund"], "de") == b'<resources><string name="a">Ein Hund</string></resources>'
    with pytest.raises(LibreError, match=r"page.xml: not Android string resources \(its root element is <html>"):
        read_upload("page.xml", b"<html/>")


def test_the_last_files_are_kept_under_a_name_that_ends_in_their_own():
    kept = TranslatedFiles(kept=2)
    first, second, third = (kept.add(f"{n}.txt", n.encode()) for n in ("a", "b", "c"))
    assert first.endswith(".a.txt") and first != kept.add("a.txt", b"again")
    assert kept.get(first) is None and kept.get(second) is None  # the oldest gone
    assert kept.get(third) == ("c.txt", b"c", "text/plain")
