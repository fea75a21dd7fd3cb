"""Line diffs of template states: unified and side by side, field by field."""

from templates_admin import diffing
from templates_admin.diffing import SideBySideRow, UnifiedLine

OLD = "a\nb\nc\nd"
NEW = "a\nB\nc\nd\ne"


def test_unified_lines_mark_each_line_and_drop_the_file_header():
    assert diffing.unified_lines(OLD, NEW) == (
        UnifiedLine("hunk", "@@ -1,4 +1,5 @@"),
        UnifiedLine("context", "a"),
        UnifiedLine("removed", "b"),
        UnifiedLine("added", "B"),
        UnifiedLine("context", "c"),
        UnifiedLine("context", "d"),
        UnifiedLine("added", "e"),
    )
    assert diffing.unified_lines("same", "same") == ()


def test_side_by_side_pairs_lines_with_their_numbers():
    assert diffing.side_by_side_rows(OLD, NEW) == (
        SideBySideRow("equal", 1, "a", 1, "a"),
        SideBySideRow("changed", 2, "b", 2, "B"),
        SideBySideRow("equal", 3, "c", 3, "c"),
        SideBySideRow("equal", 4, "d", 4, "d"),
        SideBySideRow("added", None, "", 5, "e"),
    )
    assert diffing.side_by_side_rows("x\ny", "x") == (
        SideBySideRow("equal", 1, "x", 1, "x"),
        SideBySideRow("removed", 2, "y", None, ""),
    )


def test_side_by_side_leaves_a_gap_between_distant_hunks():
    old = "\n".join(str(n) for n in range(1, 11))
    new = old.replace("1\n", "one\n", 1).replace("\n10", "\nten")
    kinds = [row.kind for row in diffing.side_by_side_rows(old, new, context=1)]
    assert kinds == ["changed", "equal", "gap", "equal", "changed"]


def test_snapshot_diff_covers_every_editable_field_and_treats_missing_as_empty():
    old = {"name": "Terse", "user_prompt": "{context}\n{question}", "follow_up_count": 2}
    new = {**old, "user_prompt": "{context}\nQ: {question}", "follow_up_count": 3, "description": "new"}
    diffs = {diff.name: diff for diff in diffing.snapshot_diff(old, new)}
    assert list(diffs) == [
        "name",
        "description",
        "response_style",
        "system_prompt",
        "user_prompt",
        "instructions_block",
        "citation_style",
        "strictness",
        "follow_up_count",
    ]
    assert {name for name, diff in diffs.items() if diff.changed} == {
        "user_prompt",
        "follow_up_count",
        "description",
    }
    assert diffs["user_prompt"].label == "User prompt"
    assert [line.text for line in diffs["follow_up_count"].unified if line.kind != "hunk"] == ["2", "3"]
    assert [(line.kind, line.text) for line in diffs["description"].unified][1:] == [("added", "new")]
