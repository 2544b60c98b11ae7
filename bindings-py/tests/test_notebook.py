"""The notebook example, examples/python/quickstart.ipynb, executed headless (nbclient and
ipykernel from PyPI) with its outputs checked. The committed file holds no outputs."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "examples" / "python" / "quickstart.ipynb"


def by_tag(nb, tag):
    return next(c for c in nb.cells if tag in c.metadata.get("tags", []))


def text(cell):
    out = []
    for o in cell.outputs:
        if o.output_type == "stream":
            out.append(o.text)
        elif "data" in o:
            out.append(o.data.get("text/plain", ""))
    return "".join(out)


@pytest.fixture(scope="module")
def executed():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    # Raises CellExecutionError (with the cell and traceback) if any cell fails.
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    return nb


def test_the_committed_notebook_stores_no_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]


def test_the_build_cell_shows_the_index(executed):
    assert "<wikidex.Index: 42 pages" in text(by_tag(executed, "build"))


def test_the_search_cell_renders_an_html_table_of_hits(executed):
    cell = by_tag(executed, "search")
    html = next(o.data["text/html"] for o in cell.outputs if "data" in o and "text/html" in o.data)
    assert "<table>" in html and "<mark>" in html
    assert html.count("<tr>") == 1 + 1 + 5  # header, the always page (apart, shown first), 5 hits
    assert "runbook_oncall" in html
    assert "<th>lexical</th>" in html and "<th>semantic</th>" in html


def test_the_explain_cell_shows_lane_ranks_and_term_scores(executed):
    out = text(by_tag(executed, "explain"))
    assert "lexical   rank 1" in out
    assert "term 'page'" in out or "term 'outag'" in out


def test_the_graph_cells_show_the_chain_and_typed_edges(executed):
    out = text(by_tag(executed, "graph"))
    assert "--[causes]--> Nightly pipeline" in out
    assert "('causes', 'nightly_pipeline', " in text(by_tag(executed, "edges"))


def test_the_verdicts_are_quote_and_unknown(executed):
    out = text(by_tag(executed, "verdicts"))
    assert "'raw/slack_2024_03_12::chunk_0': 'quote'" in out
    assert "'made_up::chunk_0': 'unknown'" in out
