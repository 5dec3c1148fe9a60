"""Final review F, 5: ``@url:`` keeps the words of adjacent table cells, description-list
items and form labels apart, as a browser lays them out: ``<td>10</td><td>20</td>`` reads
``10 20``, not ``1020``; text inside one element is not split."""

from __future__ import annotations

import pytest

from hermes_core.references.html_text import html_to_text


def _body(markup: str) -> str:
    return html_to_text(f"<!doctype html><html><body>{markup}</body></html>")


def test_table_cells_are_apart() -> None:
    text = _body("<table><tr><td>10</td><td>20</td><td>30</td></tr></table>")
    assert text.split() == ["10", "20", "30"]


def test_header_cells_and_rows_are_apart() -> None:
    text = _body(
        "<table><tr><th>Year</th><th>Total</th></tr><tr><td>2024</td><td>1,250</td></tr></table>"
    )
    assert [line for line in text.splitlines() if line] == ["Year Total", "2024 1,250"]


@pytest.mark.parametrize(
    ("markup", "words"),
    [
        ("<dl><dt>Port</dt><dd>8080</dd></dl>", ["Port", "8080"]),
        ('<label for="a">Name</label><input id="a">Bob', ["Name", "Bob"]),
        ("<label>Email</label><label>Phone</label>", ["Email", "Phone"]),
        ("<tr><td>unclosed<td>cells", ["unclosed", "cells"]),
    ],
)
def test_lists_and_labels_are_apart(markup: str, words: list[str]) -> None:
    assert _body(markup).split() == words


def test_a_cell_does_not_split_its_own_words() -> None:
    text = _body("<table><tr><td>net<b>work</b> cost</td></tr></table>")
    assert text == "network cost"
