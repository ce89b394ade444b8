"""A folder of markdown notes: front matter, links between notes, empty notes."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from graphfuse import InvalidInput, run_sync
from graphfuse.cli import app
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import Indexer, SourceRecord, TitleLinker, links_as_text, read_sources
from graphfuse.stores import LocalVectorStore, SQLiteGraphStore


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _read(root: Path) -> dict[str, SourceRecord]:
    return {r.id: r for r in read_sources([root])}


def test_yaml_front_matter_gives_title_date_and_metadata(tmp_path: Path) -> None:
    notes = _write(
        tmp_path / "vault",
        {
            "falcon.md": "---\ntitle: Project Falcon\ndate: 2024-03-05\ntags: [routing, fleet]\n"
            "reviewed: 2024-04-01T09:30:00+02:00\n---\n# Falcon\n\nThe routing rewrite.\n",
        },
    )
    rec = _read(notes)["falcon.md"]
    assert rec.title == "Project Falcon"  # the front matter's, not the heading's
    assert rec.created_at == datetime(2024, 3, 5, tzinfo=timezone.utc)
    assert rec.text == "# Falcon\n\nThe routing rewrite.\n"  # the block is not indexed
    assert dict(rec.metadata) == {
        "tags": ["routing", "fleet"],
        "reviewed": "2024-04-01T09:30:00+02:00",
        "source": str(notes / "falcon.md"),
    }


def test_toml_front_matter_and_the_date_keys_in_order(tmp_path: Path) -> None:
    notes = _write(
        tmp_path / "vault",
        {
            "a.md": '+++\ntitle = "Alpha"\ncreated = 2023-11-02T10:00:00\nsource = "wiki"\n+++\nAlpha text.\n',
            # created_at wins over date; the other date key stays in the metadata
            "b.md": "---\ndate: 2020-01-01\ncreated_at: 2021-06-07T08:00:00Z\n---\nBeta text.\n",
            "c.markdown": "---\ncreated: 2022-02-02 05:06\n---\nGamma.\n",
            "windows.md": "---\r\ntitle: Written on Windows\r\n---\r\nDelta.\r\n",
        },
    )
    got = _read(notes)
    assert got["a.md"].title == "Alpha"
    assert got["a.md"].created_at == datetime(2023, 11, 2, 10, tzinfo=timezone.utc)
    assert dict(got["a.md"].metadata) == {"source": "wiki"}  # the front matter's own source is kept
    assert got["b.md"].created_at == datetime(2021, 6, 7, 8, tzinfo=timezone.utc)
    assert dict(got["b.md"].metadata)["date"] == "2020-01-01"
    assert got["b.md"].title == "b"  # no title, no heading: the file name
    assert got["c.markdown"].created_at == datetime(2022, 2, 2, 5, 6, tzinfo=timezone.utc)
    assert got["windows.md"].title == "Written on Windows"
    assert got["windows.md"].text == "Delta.\r\n"


def test_text_that_only_looks_like_front_matter_is_kept_whole(tmp_path: Path) -> None:
    notes = _write(
        tmp_path / "vault",
        {
            "rule.md": "---\n# Heading after a thematic break\n\nNo closing line.\n",
            "late.md": "Intro.\n---\ntitle: not front matter\n---\n",
            "plain.txt": "---\ntitle: txt files have no front matter\n---\nbody\n",
        },
    )
    got = _read(notes)
    assert got["rule.md"].title == "Heading after a thematic break"
    assert got["rule.md"].text.startswith("---\n")
    assert got["late.md"].text.startswith("Intro.")
    assert got["late.md"].title == "Intro."  # (a setext heading, as CommonMark reads it)
    assert got["plain.txt"].text.startswith("---\ntitle")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("---\ntitle: [unclosed\n---\nbody\n", r"bad\.md:\d+: front matter is not valid YAML"),
        ('+++\ntitle = "x\n+++\nbody\n', r"bad\.md: front matter is not valid TOML"),
        ("---\n- a\n- list\n---\nbody\n", "front matter must be a mapping of keys to values, got a list"),
        ("---\ndate: last tuesday\n---\nbody\n", "front matter 'date' is 'last tuesday', not an ISO 8601 date"),
        ("---\ncreated: 12\n---\nbody\n", "front matter 'created' must be a date"),
        ("---\ntitle: [a, b]\n---\nbody\n", "front matter 'title' must be text"),
        ("---\nparent_id: x\n---\nbody\n", r"bad\.md: record 'bad\.md': metadata key 'parent_id' is reserved"),
        ("---\nscore: .nan\n---\nbody\n", "JSON has no NaN"),
    ],
)
def test_bad_front_matter_names_the_file(tmp_path: Path, text: str, message: str) -> None:
    notes = _write(tmp_path / "vault", {"bad.md": text, "good.md": "fine"})
    with pytest.raises(InvalidInput, match=message):
        list(read_sources([notes]))


def test_wikilinks_resolve_by_file_name_as_obsidian_does(tmp_path: Path) -> None:
    notes = _write(
        tmp_path / "vault",
        {
            "projects/Falcon.md": (
                "Led by [[mira okafor]] (case aside), see [[Atlas Maps#API|the maps]], ![[Atlas Maps]] again,\n"
                "[[people/Jonas Berg]] by path, [[Budget.md]] with its suffix, [[Falcon]] itself, "
                "[[Nowhere]] and [[diagram.png]].\n| owner | [[Roadmap\\|the roadmap]] |\n"
                "```\n[[Jonas Berg]] in a fence\n```\nand `[[Ideas]]` in a span."
            ),
            "projects/Atlas Maps.md": "Tiles.",
            "people/Mira Okafor.md": "Mira.",
            "people/Jonas Berg.md": "Jonas.",
            "Budget.md": "Money.",
            "Ideas.md": "Ideas.",
            "Roadmap.md": "Plans.",
        },
    )
    assert _read(notes)["projects/Falcon.md"].links == (
        "people/Mira Okafor.md",
        "projects/Atlas Maps.md",
        "people/Jonas Berg.md",
        "Budget.md",
        "Roadmap.md",
    )


def test_a_wikilink_prefers_the_note_in_its_own_folder_then_the_shortest_path(tmp_path: Path) -> None:
    notes = _write(
        tmp_path / "vault",
        {
            "a/Index.md": "[[Readme]]",
            "a/Readme.md": "a's readme",
            "b/c/Readme.md": "deep readme",
            "b/Index.md": "[[readme]]",
            "Readme.md": "top readme",
        },
    )
    got = _read(notes)
    assert got["a/Index.md"].links == ("a/Readme.md",)
    assert got["b/Index.md"].links == ("Readme.md",)


def test_markdown_links_resolve_relative_to_the_note(tmp_path: Path) -> None:
    notes = _write(
        tmp_path / "docs",
        {
            "guide/start.md": (
                "Read [the setup](setup.md#install), [the API](../api/Reference%20Guide.md), "
                '[spaces](<../api/Reference Guide.md> "title") again, [home](https://example.com/a.md), '
                "[mail](mailto:x@example.com), [this page](#top), ![a picture](img.png) and [ref][r].\n\n"
                "[r]: ../faq.md\n"
            ),
            "guide/setup.md": "Install it.",
            "api/Reference Guide.md": "Functions.",
            "faq.md": "Questions.",
            "guide/img.png.md": "not the picture",  # (only the exact path resolves)
        },
    )
    assert _read(notes)["guide/start.md"].links == ("guide/setup.md", "api/Reference Guide.md", "faq.md")


def test_empty_notes_in_a_folder_are_skipped_and_named(tmp_path: Path) -> None:
    notes = _write(
        tmp_path / "vault",
        {
            "Budget.md": "---\ntitle: Budget\n---\n\n",
            "blank.md": "  \n",
            "lines.jsonl": "\n",
            "Plan.md": "See [[Budget]] and [[blank]].",
        },
    )
    skipped: list[tuple[str, str]] = []
    records = list(read_sources([notes], on_skip=lambda path, why: skipped.append((Path(path).name, why))))
    assert [r.id for r in records] == ["Plan.md"]
    # links to notes that are not indexed would be dangling: left out
    assert records[0].links == ()
    assert sorted(skipped) == [
        ("Budget.md", "the file has front matter but no text"),
        ("blank.md", "the file is empty"),
        ("lines.jsonl", "the file is empty"),
    ]
    # A file named on its own is an error, not skipped.
    with pytest.raises(InvalidInput, match=r"Budget\.md: the file has front matter but no text"):
        list(read_sources([notes / "Budget.md"]))


def test_indexing_a_vault_writes_links_and_dates_and_follows_edits(tmp_path: Path) -> None:
    notes = _write(
        tmp_path / "vault",
        {
            "falcon.md": "---\ntitle: Project Falcon\ndate: 2024-03-05\n---\nDepends on [the tiles](atlas.md).",
            "atlas.md": "# Atlas Maps\n\nOwned by [[jonas]].",
            "jonas.md": "Jonas keeps the pager.",
        },
    )

    async def run() -> None:
        graph = SQLiteGraphStore(str(tmp_path / "g.sqlite"))
        indexer = Indexer(graph, LocalVectorStore(), HashingEmbedder(dimension=64))
        try:
            report = await indexer.aindex(list(read_sources([notes])))
            assert report.documents == 3
            assert report.warnings == []
            links = {(r.source, r.target) for r in await graph.relations(["falcon.md"]) if r.type == "LINKS_TO"}
            assert links == {("falcon.md", "atlas.md")}
            links = {(r.source, r.target) for r in await graph.relations(["atlas.md"]) if r.type == "LINKS_TO"}
            assert ("atlas.md", "jonas.md") in links
            doc = (await graph.get_documents(["falcon.md"]))["falcon.md"]
            assert doc.created_at == datetime(2024, 3, 5, tzinfo=timezone.utc)
            # Editing one link re-indexes that note only, and moves its relation.
            (notes / "falcon.md").write_text("---\ntitle: Project Falcon\n---\nNow uses [[jonas]].", encoding="utf-8")
            report = await indexer.aindex(list(read_sources([notes])))
            assert (report.documents, report.skipped) == (1, 2)
            rels = await graph.relations(["falcon.md"])
            assert {(r.source, r.target) for r in rels if r.type == "LINKS_TO"} == {("falcon.md", "jonas.md")}
            doc = (await graph.get_documents(["falcon.md"]))["falcon.md"]
            assert doc.created_at is None
        finally:
            await graph.close()

    run_sync(run())


def test_cli_index_reports_skipped_notes(tmp_path: Path) -> None:
    notes = _write(tmp_path / "vault", {"a.md": "Alpha links to [[b]].", "b.md": "Beta.", "empty.md": ""})
    result = CliRunner().invoke(app, ["index", str(notes), "--store", str(tmp_path / "store"), "--embedder", "hashing"])
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert f"skipped {notes / 'empty.md'}: the file is empty" in out
    assert "indexed 2 documents" in out
    assert "0 warnings" in out


def test_front_matter_aliases_are_other_names_for_the_title_linker(tmp_path: Path) -> None:
    notes = _write(
        tmp_path / "vault",
        {
            "falcon.md": "---\ntitle: Project Falcon\naliases: [Falcon, Routing Rewrite]\n---\nThe routing rewrite.",
            "standup.md": "Falcon slipped a week; the Routing Rewrite needs a reviewer.",
            "solo.md": "---\naliases: Lone Note\n---\nNothing links here.",
            "other.md": "Mentions Lone Note once.",
        },
    )

    async def run() -> None:
        graph = SQLiteGraphStore(str(tmp_path / "g.sqlite"))
        try:
            indexer = Indexer(graph, LocalVectorStore(), HashingEmbedder(dimension=64), extractors=[TitleLinker()])
            await indexer.aindex(list(read_sources([notes])))
            mentions = {
                (r.source, r.target) for r in await graph.relations(["falcon.md", "solo.md"]) if r.type == "MENTIONS"
            }
            assert mentions == {("standup.md", "falcon.md"), ("other.md", "solo.md")}
        finally:
            await graph.close()

    run_sync(run())


def test_links_are_indexed_as_their_text_and_code_is_left_alone() -> None:
    text = (
        "# [[Falcon]] overview\n"
        'Led by [[Mira Okafor|Mira]], see [the maps](../Atlas%20Maps.md#api "API") and [the FAQ][faq], '
        "![a diagram](d.png)![[chart.png]] ![[Standup]] [[Budget.md]] [[#Risks]] | [[Roadmap\\|plan]] |\n"
        "[faq]: https://example.com/faq\n"
        "`[[kept]] [as](is)`\n"
        "```\n[[fenced]] [also](kept)\n```\n"
        "Done: [e](https://example.com)."
    )
    assert links_as_text(text) == (
        "# Falcon overview\n"
        "Led by Mira, see the maps and the FAQ, a diagram Standup Budget Risks | plan |\n"
        "`[[kept]] [as](is)`\n"
        "```\n[[fenced]] [also](kept)\n```\n"
        "Done: e."
    )
    assert links_as_text("No links here.") == "No links here."


def test_read_sources_shows_links_as_text_unless_raw_markdown(tmp_path: Path) -> None:
    notes = _write(
        tmp_path / "vault",
        {
            "a.md": "# [[b|Beta]] notes\n\nSee [the beta page](b.md).",
            "b.md": "Beta.",
            "picture.md": "![[chart.png]]\n",  # an embedded picture: nothing to read
        },
    )
    skipped: list[str] = []
    got = {r.id: r for r in read_sources([notes], on_skip=lambda path, why: skipped.append(why))}
    assert got["a.md"].text == "# Beta notes\n\nSee the beta page."
    assert got["a.md"].title == "Beta notes"
    assert got["a.md"].links == ("b.md",)
    assert skipped == ["the file has no text besides its links"]
    raw = {r.id: r for r in read_sources([notes], raw_markdown=True)}
    assert raw["a.md"].text == "# [[b|Beta]] notes\n\nSee [the beta page](b.md)."
    assert raw["a.md"].links == ("b.md",)
    assert raw["picture.md"].text == "![[chart.png]]\n"


@pytest.mark.parametrize(
    ("flag", "shown"), [([], "See the beta page."), (["--raw-markdown"], "See [the beta page](b.md).")]
)
def test_cli_index_raw_markdown(tmp_path: Path, flag: list[str], shown: str) -> None:
    notes = _write(tmp_path / "vault", {"a.md": "See [the beta page](b.md).", "b.md": "Beta."})
    store = str(tmp_path / "store")
    runner = CliRunner()
    result = runner.invoke(app, ["index", str(notes), "--store", store, "--embedder", "hashing", *flag])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["query", "beta page", "--store", store, "--json", "--preset", "minimal"])
    assert result.exit_code == 0, result.output
    rows = {row["id"]: row for row in json.loads(result.stdout)}
    assert rows["a.md"]["snippet"] == shown


def test_hidden_files_and_folders_of_a_directory_are_left_out(tmp_path: Path) -> None:
    notes = _write(
        tmp_path / "vault",
        {
            "a.md": "Kept, links to [[gone]].",
            ".trash/gone.md": "A deleted note.",
            ".obsidian/notes.md": "Settings.",
            "sub/.draft.md": "Hidden draft.",
            "sub/b.md": "Kept too.",
        },
    )
    got = _read(notes)
    assert sorted(got) == ["a.md", "sub/b.md"]
    assert got["a.md"].links == ()  # a link to a hidden note goes nowhere
    # Named itself, a hidden file is read; so is a directory inside a hidden one.
    assert [r.id for r in read_sources([notes / ".trash" / "gone.md"])] == ["gone.md"]
    assert [r.id for r in read_sources([notes / ".trash"])] == ["gone.md"]


def test_a_markdown_link_through_a_symbolic_link_finds_the_note(tmp_path: Path) -> None:
    notes = _write(
        tmp_path / "vault", {"a.md": "See [b](shortcut/b.md) and [c](../outside/c.md).", "real/b.md": "Bee."}
    )
    (notes / "shortcut").symlink_to(notes / "real", target_is_directory=True)
    _write(tmp_path / "outside", {"c.md": "Not read."})
    got = _read(notes)
    assert sorted(got) == ["a.md", "real/b.md"]  # (a linked folder is not read twice)
    assert got["a.md"].links == ("real/b.md",)


# Pieces of markdown syntax, front matter and text, joined at random into two notes.
_PIECES = [
    *("---\n", "+++\n", "...\n", "[[", "]]", "|", "#", "# ", "\n", "](", "(", ")", "[", "]", "`", "```\n"),
    *("~~~\n", "title: x\n", "date: 2024-01-02\n", "date: bad\n", "a.md", "b.md", "../", "<", ">", "![", "%20"),
    *(":", "- a\n", "text ", "Name", "\\|", "\r\n", "\ufeff", "é", "東京", " ", "[r]: b.md\n", '= "x"\n'),
]


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(_PIECES), max_size=30), st.lists(st.sampled_from(_PIECES), max_size=30))
def test_any_note_reads_as_records_or_a_clear_error(first: list[str], second: list[str]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = _write(Path(tmp), {"a.md": "".join(first), "b.md": "".join(second)})
        try:
            records = list(read_sources([root], on_skip=lambda path, why: None))
        except InvalidInput:
            return  # (bad front matter, named)
        for record in records:
            assert record.text.strip()
            assert set(record.links) <= {"a.md", "b.md"} - {record.id}
            assert links_as_text(record.text) == record.text  # shown as text once: nothing left to show
