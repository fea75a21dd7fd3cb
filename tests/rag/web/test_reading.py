"""rag.web.reading: a document's text cut into pages, with the cited range marked."""

from types import SimpleNamespace

from rag.web.reading import PageView, page_starts, pages

TEXT = "Page one text.\fPage two text.\fPage three."


def test_recorded_page_starts_are_used_as_they_are():
    document = SimpleNamespace(page_starts=[0, 15, 30])
    assert page_starts(document, chunk_pages=[(2, 99)]) == [(1, 0), (2, 15), (3, 30)]


def test_without_recorded_starts_each_page_starts_at_its_first_passage():
    legacy = SimpleNamespace(page_starts=[])
    chunks = [(2, 18), (1, 3), (2, 15), (4, 40)]  # page 3 has no passage of its own
    assert page_starts(legacy, chunks) == [(1, 0), (2, 15), (4, 40)]
    assert page_starts(legacy, []) == [(1, 0)]


def test_the_mark_is_cut_at_page_boundaries():
    views = pages(TEXT, [(1, 0), (2, 15), (3, 30)], mark=(10, 19))
    assert views[0] == PageView(1, "Page one t", "ext.\f", "", mark_starts=True)
    assert views[1] == PageView(2, "", "Page", " two text.\f")
    assert views[2] == PageView(3, "Page three.", "", "")
    assert "".join(v.before + v.marked + v.after for v in views) == TEXT


def test_no_mark_leaves_every_page_whole():
    assert [v.before for v in pages(TEXT, [(1, 0), (2, 15), (3, 30)], None)] == [
        "Page one text.\f",
        "Page two text.\f",
        "Page three.",
    ]
