"""`wikidex mcp` driven by the official MCP Python SDK's client (PyPI `mcp`), over stdio.

Run by `make test-mcp` (part of `make test`): WIKIDEX_BIN names the CLI to start (default
target/debug/wikidex). The server is started on the example wiki folder (built in memory,
no model), once for each test's session.
"""

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[2]
BIN = os.environ.get("WIKIDEX_BIN", str(ROOT / "target" / "debug" / "wikidex"))
HEADER = re.compile(r"^\[page (\S+) · chunk (\S+) · score [0-9.]+\] .+$", re.M)


def with_session(body, *args, wiki=ROOT / "examples" / "wiki", extra=()):
    """Starts `wikidex mcp WIKI --no-embed --max-drilldowns 3 EXTRA...` (WIKI: examples/wiki),
    initializes a client session and runs `body(session, init_result)`."""

    async def main():
        params = StdioServerParameters(
            command=BIN,
            args=["mcp", str(wiki), "--no-embed", "--max-drilldowns", "3", *extra],
        )
        with open(os.devnull, "w") as devnull:
            async with stdio_client(params, errlog=devnull) as (read, write):
                async with ClientSession(read, write) as session:
                    init = await session.initialize()
                    return await body(session, init, *args)

    return anyio.run(main)


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def test_initialize_names_the_server_and_the_always_pages():
    async def body(session, init):
        return init

    init = with_session(body)
    assert init.server_info.name == "wikidex"
    assert "Rule: handling PII" in (init.instructions or "")


def test_the_server_lists_exactly_the_core_tools_with_schemas():
    async def body(session, init):
        return await session.list_tools()

    tools = with_session(body).tools
    assert [t.name for t in tools] == ["search", "read_pages", "read_chunks", "neighbors", "verify"]
    search = tools[0]
    assert search.input_schema["required"] == ["query"]
    assert search.input_schema["additionalProperties"] is False


def test_search_returns_citation_headers_and_every_tool_answers():
    async def body(session, init):
        out = {}
        out["search"] = await session.call_tool(
            "search", {"query": "who do I page for an outage", "limit": 3}
        )
        out["read_pages"] = await session.call_tool("read_pages", {"keys": ["runbook_oncall"]})
        out["read_chunks"] = await session.call_tool(
            "read_chunks", {"ids": ["raw/slack_2024_03_12::chunk_0", "made_up::chunk_7"]}
        )
        out["neighbors"] = await session.call_tool(
            "neighbors", {"keys": ["incident_2024_03_memory_leak"], "depth": 1}
        )
        out["verify"] = await session.call_tool(
            "verify",
            {
                "answer": "The segment_enricher pod was OOM-killed three times, and nightly_build failed at 03:31 UTC.",
                "cited": ["raw/slack_2024_03_12::chunk_0"],
            },
        )
        return out

    out = with_session(body)
    for name, result in out.items():
        assert not result.is_error, (name, text_of(result))
    headers = HEADER.findall(text_of(out["search"]))
    assert ("runbook_oncall", "runbook_oncall::chunk_0") in headers
    assert len(out["search"].structured_content["hits"]) == 3
    assert out["read_pages"].structured_content["pages"][0]["id"] == "runbook_oncall"
    chunks = out["read_chunks"]
    assert chunks.structured_content["unknown"] == ["made_up::chunk_7"]
    assert "[chunk made_up::chunk_7] unknown" in text_of(chunks)
    assert "--[" in text_of(out["neighbors"])
    assert out["verify"].structured_content["verification"]["passed"] is True
    assert "raw/slack_2024_03_12::chunk_0: quote" in text_of(out["verify"])


def test_a_bad_argument_is_a_tool_error_and_the_server_stays_up():
    async def body(session, init):
        bad = await session.call_tool("search", {"query": 42})
        unknown = await session.call_tool("no_such_tool", {})
        drills = [
            await session.call_tool("read_chunks", {"ids": ["revenue::chunk_0"]}) for _ in range(4)
        ]
        after = await session.call_tool("search", {"query": "revenue"})
        again = await session.call_tool("read_chunks", {"ids": ["revenue::chunk_0"]})
        return bad, unknown, drills, after, again

    bad, unknown, drills, after, again = with_session(body)
    assert bad.is_error and "error[invalid_argument]" in text_of(bad)
    assert bad.structured_content["error"]["code"] == "invalid_argument"
    assert unknown.is_error and "unknown tool" in text_of(unknown)
    # --max-drilldowns 3: the fourth drill-down of a turn is refused; a search starts a turn.
    assert [d.is_error for d in drills] == [False, False, False, True]
    assert "error[too_large]" in text_of(drills[3])
    assert not after.is_error and HEADER.search(text_of(after))
    assert not again.is_error


def keys_found(result):
    return [h["page_id"] for h in result.structured_content["hits"]]


def test_a_served_folder_stays_current(tmp_path):
    """Edits to the served folder reach the next searches within seconds; the blob given with
    --index is written after each sync and a restart resumes from it."""
    wiki = tmp_path / "wiki"
    shutil.copytree(ROOT / "examples" / "wiki", wiki)
    blob = tmp_path / "wiki.wdx"

    async def body(session, init):
        query = {"query": "zebra migration", "limit": 3}
        before = keys_found(await session.call_tool("search", query))
        page = wiki / "global" / "zebra_migration.md"
        page.write_text("---\nsummary: Where the zebras go.\n---\nThe zebra migration crosses the river in July.\n")
        deadline = time.monotonic() + 20
        after = before
        # Until the page ranks first: a poll between the file's creation and its write indexes
        # it empty (found by its key, ranked lower); the next poll sees it written.
        while (not after or after[0] != "zebra_migration") and time.monotonic() < deadline:
            await anyio.sleep(0.2)
            after = keys_found(await session.call_tool("search", query))
        page.unlink()
        gone = after
        while "zebra_migration" in gone and time.monotonic() < deadline:
            await anyio.sleep(0.2)
            gone = keys_found(await session.call_tool("search", query))
        return before, after, gone

    before, after, gone = with_session(body, wiki=wiki, extra=["--index", str(blob), "--watch", "0.2"])
    assert "zebra_migration" not in before
    assert after[0] == "zebra_migration"
    assert "zebra_migration" not in gone
    # The blob holds the folder as it was last synced (the page deleted again).
    out = subprocess.run(
        [BIN, "sync", str(wiki), "-o", str(blob), "--no-embed", "--json"],
        check=True, capture_output=True, text=True,
    )
    report = json.loads(out.stdout)
    assert report["full"] is None
    assert report["written"] is False
    assert report["added"] == [] and report["changed"] == [] and report["removed"] == []
