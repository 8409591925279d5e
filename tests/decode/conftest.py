"""What the decoding tests share: the tiny model's engine and its decode settings in fp32."""

from __future__ import annotations

from pathlib import Path

import pytest

from nmt.decode.engines.engine import load_engine


@pytest.fixture(scope="module")
def translator(trained_tiny):
    """The tiny model's last checkpoint as an engine (each test module gets its own)."""
    return load_engine([trained_tiny.out / "checkpoints" / "last.pt"])


@pytest.fixture(scope="module")
def cfg(trained_tiny):
    return trained_tiny.decode.model_copy(update={"precision": "fp32"})


@pytest.fixture
def searched(translator, monkeypatch) -> list[str]:
    """The source texts the engine's search is given, in order, as its vocabulary spells them (a
    test clears the list between the translations it compares)."""
    texts: list[str] = []
    search = translator.translate_batch

    def recorded(sources, *args, **kwargs):
        texts.extend(translator.src_tokenizer.decode(ids) for ids in sources)
        return search(sources, *args, **kwargs)

    monkeypatch.setattr(translator, "translate_batch", recorded)
    return texts


def translated_both_ways(checkpoint: str, translator, cfg, source: Path, output: Path, read) -> tuple[bytes, bytes]:
    """`nmt translate` of a document file, and what the document (`read(its bytes)`) writes from its
    texts translated one by one by the same model into German, each without a full stop its source
    lacks (a heading, a cell): the two files a test compares."""
    from typer.testing import CliRunner

    from nmt.cli import app
    from nmt.decode.text.end_marks import without_stop_its_source_lacks
    from nmt.decode.translate import translate_lines

    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(source), "-o", str(output)])
    assert result.exit_code == 0, result.output
    texts = read(source.read_bytes()).texts
    hyps = translate_lines(translator, texts, cfg, markup=[True] * len(texts))
    return output.read_bytes(), read(source.read_bytes()).write(
        [without_stop_its_source_lacks(t, h[0].text or t) for h, t in zip(hyps, texts)], "de")


PICTURE = b"\x89PNG\r\n\x1a\n\x00\xff"  # a file an Office document holds that is not text


def zipped(members: dict[str, str | bytes]) -> bytes:
    """A zip archive of `members` (name: content), in their order, deflated; a `mimetype` stored,
    as OpenDocument and EPUB readers need it."""
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        for name, content in members.items():
            package.writestr(zipfile.ZipInfo(name) if name == "mimetype" else name, content)
    return out.getvalue()
