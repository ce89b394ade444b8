"""Chat exports (WhatsApp, Slack) read into dated conversation records, and indexed by the CLI."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from typer.testing import CliRunner

from graphfuse import InvalidInput, presets
from graphfuse.cli import app
from graphfuse.indexing import ChatMessage, RegexTokenizer, conversation_records, read_slack, read_whatsapp
from graphfuse.stores import aopen_store

UTC = timezone.utc


def _at(hour: int, minute: int = 0, day: int = 5) -> datetime:
    return datetime(2026, 3, day, hour, minute, tzinfo=UTC)


# --- conversation_records ----------------------------------------------------------------


def test_a_silence_of_gap_or_more_starts_a_new_conversation() -> None:
    messages = [
        ChatMessage(_at(9, 0), "Anna", "Lunch on Friday?"),
        ChatMessage(_at(9, 20), "Ben", "Yes, at the harbour."),
        ChatMessage(_at(10, 20), "Anna", "Booked the table."),  # exactly the gap later: new
        ChatMessage(_at(10, 25), "Ben", "Great"),
    ]
    records = conversation_records(messages, gap=timedelta(hours=1))
    assert [r.id for r in records] == ["chat/2026-03-05T09:00:00Z", "chat/2026-03-05T10:20:00Z"]
    first = records[0]
    assert first.text == "Anna: Lunch on Friday?\nBen: Yes, at the harbour."
    assert first.created_at == _at(9, 0)
    assert first.title is None
    assert dict(first.metadata) == {
        "channel": "",
        "conversation": "chat/2026-03-05T09:00:00Z",
        "authors": ["Anna", "Ben"],
        "ended_at": "2026-03-05T09:20:00+00:00",
        "messages": 2,
    }


def test_a_long_conversation_is_cut_at_message_boundaries_within_max_tokens() -> None:
    words = " ".join(f"w{i}" for i in range(10))  # 10 tokens, + "Anna" + the line break
    messages = [ChatMessage(_at(9, i), "Anna", words) for i in range(5)]
    records = conversation_records(messages, max_tokens=30)
    assert [r.id for r in records] == [
        "chat/2026-03-05T09:00:00Z",
        "chat/2026-03-05T09:00:00Z/2",
        "chat/2026-03-05T09:00:00Z/3",
    ]
    assert [r.metadata["messages"] for r in records] == [2, 2, 1]
    assert all(r.metadata["conversation"] == "chat/2026-03-05T09:00:00Z" for r in records)
    assert records[1].created_at == _at(9, 2)
    assert records[1].metadata["ended_at"] == _at(9, 3).isoformat()
    assert all(len(RegexTokenizer().spans(r.text)) <= 30 for r in records)
    # one message longer than max_tokens is a record of its own (the indexer splits it)
    long = conversation_records([ChatMessage(_at(9), "Anna", words * 5)], max_tokens=30)
    assert len(long) == 1
    assert long[0].text == f"Anna: {words * 5}"


def test_channels_and_threads_are_conversations_of_their_own_and_order_is_by_time() -> None:
    messages = [
        ChatMessage(_at(9, 5), "Ben", "second", channel="general"),
        ChatMessage(_at(9, 0), "Anna", "first", channel="general"),
        ChatMessage(_at(9, 1), "Cleo", "elsewhere", channel="random"),
        ChatMessage(_at(9, 2), "Ben", "in a thread", channel="general", thread="17.1"),
        ChatMessage(_at(9, 3), "Ben", "   ", channel="general"),  # blank: left out
    ]
    records = {r.id: r for r in conversation_records(messages)}
    assert set(records) == {
        "general/2026-03-05T09:00:00Z",
        "general/17.1/2026-03-05T09:02:00Z",
        "random/2026-03-05T09:01:00Z",
    }
    assert records["general/2026-03-05T09:00:00Z"].text == "Anna: first\nBen: second"
    assert records["general/17.1/2026-03-05T09:02:00Z"].metadata["thread"] == "17.1"


def test_ids_are_stable_when_an_export_grows() -> None:
    old = [ChatMessage(_at(9), "Anna", "hello"), ChatMessage(_at(15), "Ben", "later")]
    grown = [*old, ChatMessage(_at(15, 10), "Anna", "and more")]
    before = {r.id: r.text for r in conversation_records(old)}
    after = {r.id: r.text for r in conversation_records(grown)}
    assert set(before) == set(after)
    assert before["chat/2026-03-05T09:00:00Z"] == after["chat/2026-03-05T09:00:00Z"]
    assert after["chat/2026-03-05T15:00:00Z"] == "Ben: later\nAnna: and more"


def test_message_times_are_kept_in_utc() -> None:
    naive = ChatMessage(datetime(2026, 3, 5, 9, 0), "Anna", "hi")
    berlin = ChatMessage(datetime(2026, 3, 5, 10, 0, tzinfo=ZoneInfo("Europe/Berlin")), "Ben", "hi")
    assert naive.sent_at == _at(9)
    assert berlin.sent_at == _at(9)
    assert berlin.sent_at.tzinfo == UTC


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: ChatMessage("2026-03-05", "Anna", "hi"), "sent_at must be a datetime"),  # type: ignore[arg-type]
        (lambda: ChatMessage(_at(9), " ", "hi"), "author must be a non-empty string"),
        (lambda: ChatMessage(_at(9), "Anna", None), "text must be a string"),  # type: ignore[arg-type]
        (lambda: conversation_records([], gap=timedelta(0)), "gap must be a positive timedelta"),
        (lambda: conversation_records([], max_tokens=0), "max_tokens must be a positive integer"),
        (lambda: conversation_records([{"text": "hi"}]), "takes ChatMessage objects, got dict"),  # type: ignore[list-item]
    ],
    ids=["time-not-datetime", "blank-author", "text-not-str", "zero-gap", "zero-max-tokens", "not-a-message"],
)
def test_bad_messages_and_options_are_refused(build: object, match: str) -> None:
    assert callable(build)
    with pytest.raises(InvalidInput, match=match):
        build()


# --- WhatsApp -------------------------------------------------------------------------------

IPHONE = (
    "\ufeff[15/08/2023, 9:12:33\u202fAM] Dr. Feather: \u200eMessages and calls are end-to-end encrypted.\n"
    "[15/08/2023, 9:12:43\u202fAM] Dr. Feather: I spotted a rare Hyacinth Macaw yesterday.\n"
    "It was near the river.\n"
    "[15/08/2023, 9:12:48\u202fAM] Dr. Feather: \u200eimage omitted\n"
    "[15/08/2023, 9:13:15\u202fPM] Jungle Jane: That's stunning! Where exactly?\n"
    "[16/08/2023, 12:01:00\u202fAM] \u200eJungle Jane: Midnight note.\n"
)
ANDROID = (
    "3/14/24, 21:05 - Messages and calls are end-to-end encrypted. Tap to learn more.\n"
    '3/14/24, 21:05 - Anna created group "Choir"\n'
    '3/14/24, 21:05 - Anna changed the subject from "Choir: spring" to "Choir"\n'
    "3/14/24, 21:06 - Anna: Rehearsal moves to the church hall\n"
    "3/14/24, 21:07 - Ben: <Media omitted>\n"
    "3/14/24, 21:08 - Ben: This message was deleted\n"
    "3/14/24, 21:09 - Ben: Got it: 7 pm?\n"
)


def test_an_iphone_export_is_read_with_its_continuation_lines_and_without_notices(tmp_path: Path) -> None:
    path = tmp_path / "WhatsApp Chat with Jungle Jane.txt"
    path.write_text(IPHONE, encoding="utf-8")
    messages = read_whatsapp(path)
    assert [(m.sent_at, m.author, m.text) for m in messages] == [
        (
            datetime(2023, 8, 15, 9, 12, 43, tzinfo=UTC),
            "Dr. Feather",
            "I spotted a rare Hyacinth Macaw yesterday.\nIt was near the river.",
        ),
        (datetime(2023, 8, 15, 21, 13, 15, tzinfo=UTC), "Jungle Jane", "That's stunning! Where exactly?"),
        (datetime(2023, 8, 16, 0, 1, tzinfo=UTC), "Jungle Jane", "Midnight note."),
    ]
    assert {m.channel for m in messages} == {"WhatsApp Chat with Jungle Jane"}


def test_an_android_export_is_read_month_first_24_hours(tmp_path: Path) -> None:
    path = tmp_path / "choir.txt"
    path.write_text(ANDROID, encoding="utf-8")
    messages = read_whatsapp(path, channel="Choir")
    assert [(m.sent_at, m.author, m.text, m.channel) for m in messages] == [
        (datetime(2024, 3, 14, 21, 6, tzinfo=UTC), "Anna", "Rehearsal moves to the church hall", "Choir"),
        (datetime(2024, 3, 14, 21, 9, tzinfo=UTC), "Ben", "Got it: 7 pm?", "Choir"),
    ]


def test_the_phone_time_zone_is_converted_to_utc(tmp_path: Path) -> None:
    path = tmp_path / "choir.txt"
    path.write_text(ANDROID, encoding="utf-8")
    messages = read_whatsapp(path, tz=ZoneInfo("Europe/Berlin"))
    assert messages[0].sent_at == datetime(2024, 3, 14, 20, 6, tzinfo=UTC)


def test_the_date_order_is_read_from_all_files_given_or_asked_for(tmp_path: Path) -> None:
    short = tmp_path / "short.txt"
    short.write_text("3/4/24, 10:00 - Anna: hi\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match="read both day-first and month-first; give day_first"):
        read_whatsapp(short)
    assert read_whatsapp(short, day_first=True)[0].sent_at == datetime(2024, 4, 3, 10, 0, tzinfo=UTC)
    assert read_whatsapp(short, day_first=False)[0].sent_at == datetime(2024, 3, 4, 10, 0, tzinfo=UTC)
    longer = tmp_path / "longer.txt"
    longer.write_text("25/4/24, 10:00 - Ben: a date only day-first can read\n", encoding="utf-8")
    both = read_whatsapp([short, longer])  # the exports of one phone share its format
    assert [m.sent_at.date().isoformat() for m in both] == ["2024-04-03", "2024-04-25"]
    same = tmp_path / "same.txt"
    same.write_text("4/4/24, 10:00 - Ben: either way the same day\n", encoding="utf-8")
    assert read_whatsapp(same)[0].sent_at.day == 4


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("hello\nno dates here\n", "no line starts with a date and time"),
        ("3/14/24, 21:05 - Anna created group\n", "holds no message with an author"),
        ("25/4/24, 10:00 - A: x\n4/25/24, 10:00 - B: y\n", "read neither day-first nor month-first"),
        ("2/30/24, 10:00 - A: x\n2/14/24, 10:00 - B: y\n", "not a date and time"),
        ("2/14/24, 13:00 PM - A: x\n", "hour 13 with AM/PM"),
        ("12/31/9999, 23:30 - A: x\n", "not a time UTC can hold"),
    ],
    ids=["not-an-export", "notices-only", "contradicting-dates", "impossible-date", "bad-12-hour-time", "past-9999"],
)
def test_bad_whatsapp_exports_are_refused_naming_the_file(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidInput, match=match):
        read_whatsapp(path, tz=ZoneInfo("America/New_York"))


def test_an_unreadable_export_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="cannot read the WhatsApp export"):
        read_whatsapp(tmp_path / "missing.txt")
    with pytest.raises(InvalidInput, match="no export file given"):
        read_whatsapp([])


# --- Slack ----------------------------------------------------------------------------------


def _slack_export(root: Path) -> Path:
    (root / "general").mkdir(parents=True)
    (root / "users.json").write_text(
        json.dumps(
            [
                {"id": "U1", "name": "anna", "profile": {"real_name": "Anna Berg"}},
                {"id": "U2", "name": "ben", "real_name": "Ben Ode"},
            ]
        )
    )
    t = datetime(2026, 3, 5, 9, 0, tzinfo=UTC).timestamp()
    day = [
        {"type": "message", "subtype": "channel_join", "user": "U2", "text": "<@U2> has joined", "ts": f"{t - 60}"},
        {
            "type": "message",
            "user": "U1",
            "text": "Where is the <https://ex.org/plan|release plan>, <@U2>? See <#C9|ops> &amp; <!here>",
            "ts": f"{t}",
            "thread_ts": f"{t}",
        },
        {"type": "message", "user": "U2", "text": "In the wiki.", "ts": f"{t + 3 * 3600}", "thread_ts": f"{t}"},
        {"type": "message", "subtype": "bot_message", "username": "deploybot", "text": "v2 shipped", "ts": f"{t + 60}"},
    ]
    (root / "general" / "2026-03-05.json").write_text(json.dumps(day))
    (root / "random").mkdir()
    (root / "random" / "2026-03-05.json").write_text(json.dumps([{"user": "U2", "text": "coffee?", "ts": f"{t}"}]))
    return root


def test_a_slack_export_is_read_with_names_markup_and_threads(tmp_path: Path) -> None:
    messages = read_slack(_slack_export(tmp_path / "export"), channels=["general"])
    parent = "Where is the release plan, @Ben Ode? See #ops & @here"
    t = datetime(2026, 3, 5, 9, 0, tzinfo=UTC)
    assert [(m.sent_at, m.author, m.text, m.channel, m.thread) for m in messages] == [
        (t, "Anna Berg", parent, "general", ""),
        (t + timedelta(minutes=1), "deploybot", "v2 shipped", "general", ""),
        (t, "Anna Berg", parent, "general", f"{t.timestamp()}"),  # the thread opens with its question
        (t + timedelta(hours=3), "Ben Ode", "In the wiki.", "general", f"{t.timestamp()}"),
    ]
    records = conversation_records(messages)
    thread = next(r for r in records if r.metadata.get("thread"))
    assert thread.text == f"Anna Berg: {parent}\nBen Ode: In the wiki."  # three hours apart, one thread


@pytest.mark.parametrize(
    ("spoil", "match"),
    [
        (
            lambda root: (root / "general" / "2026-03-05.json").write_text("{not json"),
            "2026-03-05.json: not readable JSON",
        ),
        (lambda root: (root / "general" / "2026-03-05.json").write_text('{"a": 1}'), "expected a JSON list"),
        (
            lambda root: (root / "random" / "2026-03-05.json").write_text(
                '[{"user": "U1", "text": "x", "ts": "soon"}]'
            ),
            "without a valid 'ts'",
        ),
    ],
    ids=["bad-json", "not-a-list", "bad-ts"],
)
def test_bad_slack_exports_are_refused_naming_the_file(tmp_path: Path, spoil: object, match: str) -> None:
    root = _slack_export(tmp_path / "export")
    assert callable(spoil)
    spoil(root)
    with pytest.raises(InvalidInput, match=match):
        read_slack(root)


def test_slack_export_paths_and_channels_are_checked(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="not a folder"):
        read_slack(tmp_path / "missing")
    with pytest.raises(InvalidInput, match="no channel folder named nope"):
        read_slack(_slack_export(tmp_path / "export"), channels=["nope"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidInput, match="no message found"):
        read_slack(tmp_path / "empty")


# --- graphfuse index --chat -------------------------------------------------------------------

CHOIR = (
    "3/14/24, 21:06 - Anna: Rehearsal moves to the church hall on Saturday\n"
    "3/14/24, 21:09 - Ben: Will the organist Clara Vogt play?\n"
    "3/14/24, 21:10 - Anna: Yes, Clara Vogt confirmed\n"
    "4/20/24, 10:00 - Ben: The spring concert tickets are sold out\n"
    "4/20/24, 10:02 - Anna: Then we add a second evening at the church hall\n"
)


def test_index_chat_builds_dated_conversations_that_multihop_retrieves(tmp_path: Path) -> None:
    export = tmp_path / "WhatsApp Chat with Choir.txt"
    export.write_text(CHOIR, encoding="utf-8")
    store = tmp_path / "store"
    args = ["index", "--chat", "whatsapp", str(export), "--store", str(store), "--embedder", "hashing"]
    result = CliRunner().invoke(app, [*args, "--chat-timezone", "Europe/Berlin"])
    assert result.exit_code == 0, result.output
    assert "indexed 2 documents" in result.output

    async def ask() -> tuple[list[str], list[object]]:
        opened = await aopen_store(store, create=False)
        try:
            pipeline = await presets.abuild(
                "multihop", graph_store=opened.graph, vector_store=opened.vectors, embedder=opened.embedder
            )
            results = await pipeline.aretrieve("Are the spring concert tickets sold out?", top_k=2)
            dated = await pipeline.aretrieve("What did Anna and Ben say on 14 March 2024?", top_k=2)
            assert dated[0].signals.get("time", 0) > dated[1].signals.get("time", 0)
            return [r.id for r in [*results, *dated]], [r.document.created_at for r in results]
        finally:
            await opened.aclose()

    ids, dates = asyncio.run(ask())
    assert ids[0] == "WhatsApp Chat with Choir/2024-04-20T08:00:00Z"  # 10:00 in Berlin (summer time)
    assert ids[2] == "WhatsApp Chat with Choir/2024-03-14T20:06:00Z"  # the date asked: the time-aware stage
    assert dates[0] == datetime(2024, 4, 20, 8, 0, tzinfo=UTC)
    again = CliRunner().invoke(app, [*args, "--chat-timezone", "Europe/Berlin"])
    assert "0 documents" in again.output
    assert "2 unchanged" in again.output


def test_index_chat_cuts_conversations_at_the_chunk_size_given(tmp_path: Path) -> None:
    # --max-tokens sizes the conversation records as it sizes the chunks (a record is one chunk).
    export = tmp_path / "WhatsApp Chat with Choir.txt"
    export.write_text(CHOIR, encoding="utf-8")
    store = tmp_path / "store"
    args = ["index", "--chat", "whatsapp", str(export), "--store", str(store), "--embedder", "hashing"]
    result = CliRunner().invoke(app, [*args, "--max-tokens", "16", "--overlap", "0"])
    assert result.exit_code == 0, result.output
    default = len(conversation_records(read_whatsapp([export])))
    small = len(conversation_records(read_whatsapp([export]), max_tokens=16))
    assert default == 2
    assert small > default
    assert f"indexed {small} documents" in result.output


@pytest.mark.parametrize(
    ("flags", "match"),
    [
        (["--chat", "telegram"], "--chat must be one of whatsapp, slack"),
        (["--chat", "whatsapp", "--chat-timezone", "Mars/Olympus"], "unknown time zone 'Mars/Olympus'"),
        (["--chat", "slack", "--chat-timezone", "UTC"], "--chat-timezone is for WhatsApp exports"),
        (["--chat", "whatsapp", "--chat-gap", "0"], "--chat-gap must be a positive number"),
        (["--chat-gap", "30"], "need --chat"),
        (["--chat", "slack", "--chat-day-first"], "are for WhatsApp exports"),
    ],
    ids=["unknown-format", "unknown-zone", "zone-for-slack", "zero-gap", "gap-without-chat", "day-first-for-slack"],
)
def test_index_chat_options_are_checked_before_the_store_is_touched(
    tmp_path: Path, flags: list[str], match: str
) -> None:
    export = tmp_path / "chat.txt"
    export.write_text(CHOIR, encoding="utf-8")
    store = tmp_path / "store"
    result = CliRunner().invoke(app, ["index", str(export), "--store", str(store), "--embedder", "hashing", *flags])
    assert result.exit_code != 0
    assert match in result.output
    assert not store.exists()


# --- clock changes, long names, repeated and odd messages ----------

BERLIN = ZoneInfo("Europe/Berlin")


def test_the_hour_repeated_when_summer_time_ends_keeps_the_export_order(tmp_path: Path) -> None:
    # 25 October 2026: at 03:00 CEST the clocks go back to 02:00 CET; 02:00-02:59 happens twice.
    path = tmp_path / "fall.txt"
    path.write_text(
        "25/10/2026, 01:55 - Anna: Is the night train on time?\n"
        "25/10/2026, 02:50 - Anna: Does the 02:00 departure still leave?\n"
        "25/10/2026, 02:10 - Ben: Yes, it leaves at 02:00 winter time\n"  # the second 02:10, after the question
        "25/10/2026, 02:15 - Ben: so in 45 minutes\n"
        "25/10/2026, 02:15 - Anna: Thanks\n"
        "25/10/2026, 03:05 - Ben: Boarding now\n",
        encoding="utf-8",
    )
    messages = read_whatsapp(path, tz=BERLIN)
    assert [m.sent_at.strftime("%H:%M") for m in messages] == ["23:55", "00:50", "01:10", "01:15", "01:15", "02:05"]
    assert [m.sent_at for m in messages] == sorted(m.sent_at for m in messages)
    (record,) = conversation_records(messages)
    assert record.text.splitlines()[1:3] == [
        "Anna: Does the 02:00 departure still leave?",
        "Ben: Yes, it leaves at 02:00 winter time",
    ]
    # A repeated hour whose times never go back is read as its first pass, as zoneinfo reads it.
    path.write_text("25/10/2026, 02:10 - Anna: early\n25/10/2026, 02:40 - Ben: later\n", encoding="utf-8")
    assert [m.sent_at.strftime("%H:%M") for m in read_whatsapp(path, tz=BERLIN)] == ["00:10", "00:40"]


def test_a_time_skipped_when_summer_time_begins_sorts_where_the_export_has_it(tmp_path: Path) -> None:
    # 29 March 2026: at 02:00 CET the clocks go forward to 03:00 CEST; 02:30 never happens.
    path = tmp_path / "spring.txt"
    path.write_text(
        "29/03/2026, 01:59 - Anna: Still up?\n"
        "29/03/2026, 02:30 - Ben: My old alarm clock says 02:30\n"
        "29/03/2026, 02:45 - Ben: and now 02:45\n"
        "29/03/2026, 03:01 - Anna: The phone says 03:01\n",
        encoding="utf-8",
    )
    messages = read_whatsapp(path, tz=BERLIN)
    change = datetime(2026, 3, 29, 1, 0, tzinfo=UTC)  # the moment the clocks moved forward
    assert [m.sent_at for m in messages] == [
        change - timedelta(minutes=1),
        change,
        change,
        change + timedelta(minutes=1),
    ]
    (record,) = conversation_records(messages)
    assert [line.split(":")[0] for line in record.text.splitlines()] == ["Anna", "Ben", "Ben", "Anna"]
    assert "02:30" in record.text.splitlines()[1]


@pytest.mark.parametrize("length", [101, 400])
def test_a_long_author_name_keeps_its_message(tmp_path: Path, length: int) -> None:
    name = ("Dr. Annabelle Featherstonehaugh-Cholmondeley, Head of Ornithology " * 10)[:length].strip()
    path = tmp_path / "long.txt"
    path.write_text(f"3/14/24, 21:06 - {name}: Rehearsal at eight\n3/14/24, 21:07 - Ben: Fine\n", encoding="utf-8")
    messages = read_whatsapp(path, day_first=False)
    assert [(m.author, m.text) for m in messages] == [(name, "Rehearsal at eight"), ("Ben", "Fine")]


def test_a_slack_message_in_two_day_files_is_kept_once(tmp_path: Path) -> None:
    root = _slack_export(tmp_path / "export")
    general = root / "general"
    day = json.loads((general / "2026-03-05.json").read_text())
    # An export cut at another time zone's midnight repeats the day's messages in the next day's file.
    (general / "2026-03-06.json").write_text(json.dumps([day[2], day[1], day[3]]))
    messages = read_slack(root, channels=["general"])
    assert [(m.text, m.thread) for m in messages] == [
        ("Where is the release plan, @Ben Ode? See #ops & @here", ""),
        ("v2 shipped", ""),
        ("Where is the release plan, @Ben Ode? See #ops & @here", day[1]["ts"]),
        ("In the wiki.", day[1]["ts"]),
    ]
    # The same ts in another channel is another message ("coffee?" in random was sent at that ts too).
    assert "coffee?" in [m.text for m in read_slack(root) if m.channel == "random" and m.thread == ""]


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("subtype", ["bot_message"], "'subtype' is a list, expected a string"),
        ("subtype", {"name": "bot_message"}, "'subtype' is an object, expected a string"),
        ("type", 7, "'type' is a number, expected a string"),
        ("text", ["hi"], "'text' is a list, expected a string"),
        ("thread_ts", 17.5, "'thread_ts' is a number, expected a string"),
        ("user", {"id": "U1"}, "'user' is an object, expected a string"),
        ("username", True, "'username' is a boolean, expected a string"),
        ("user_profile", "Anna", "'user_profile' is a string, expected an object"),
        ("ts", [1], "'ts' is a list, expected a string of seconds"),
        ("ts", False, "'ts' is a boolean, expected a string of seconds"),
    ],
)
def test_a_slack_field_of_an_unexpected_json_type_is_refused_naming_file_and_message(
    tmp_path: Path, field: str, value: object, said: str
) -> None:
    root = _slack_export(tmp_path / "export")
    file = root / "random" / "2026-03-05.json"
    spoiled = {"user": "U2", "text": "tea?", "ts": "1772701300.000200", field: value}
    file.write_text(json.dumps([{"user": "U2", "text": "coffee?", "ts": "1772701200.000100"}, spoiled]))
    where = "message 2 (ts '1772701300.000200')" if field != "ts" else "message 2"
    with pytest.raises(InvalidInput, match=re.escape(f"2026-03-05.json: {where}: {said}")):
        read_slack(root)


def test_slack_json_nested_too_deeply_is_refused_naming_the_file(tmp_path: Path) -> None:
    root = _slack_export(tmp_path / "export")
    (root / "random" / "2026-03-05.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InvalidInput, match=r"2026-03-05\.json: not readable JSON: nested too deeply"):
        read_slack(root)


@pytest.mark.parametrize("gap", ["inf", "1e300", "nan", "-inf", "1e-300"])
def test_index_chat_gap_must_be_finite_and_fit_a_timedelta(tmp_path: Path, gap: str) -> None:
    export = tmp_path / "chat.txt"
    export.write_text(CHOIR, encoding="utf-8")
    store = tmp_path / "store"
    args = ["index", "--chat", "whatsapp", str(export), "--store", str(store), "--embedder", "hashing"]
    result = CliRunner().invoke(app, [*args, "--chat-gap", gap])
    assert result.exit_code != 0
    assert isinstance(result.exception, SystemExit), result.exception
    assert "--chat-gap must be a positive number of minutes up to 1439999999999" in result.output
    assert "Traceback" not in result.output
    assert not store.exists()


def test_index_chat_refuses_an_odd_slack_message_in_one_line(tmp_path: Path) -> None:
    root = _slack_export(tmp_path / "export")
    (root / "random" / "2026-03-05.json").write_text(
        json.dumps([{"user": "U2", "text": "x", "ts": "1.5", "subtype": []}])
    )
    store = tmp_path / "store"
    result = CliRunner().invoke(
        app, ["index", "--chat", "slack", str(root), "--store", str(store), "--embedder", "hashing"]
    )
    assert result.exit_code != 0
    assert isinstance(result.exception, SystemExit), result.exception
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert "2026-03-05.json: message 1 (ts '1.5'): 'subtype' is a list, expected a string" in " ".join(
        result.output.split()
    )
    assert not store.exists()
