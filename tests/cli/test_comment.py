"""``ckit show --format comment``: every failure named, grouped by op × dtype, a narrowed run
worded as every other command words it, links from the CI, and a size GitHub accepts. Reports
built by the kit's own builder, the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import numeric_failure, records_with, report_of, selected_ids, write_report

from kit.cli import main
from kit.cli.cmd_run import partial_of_report
from kit.errors import ExitCode
from kit.formats.files import write_report_files
from kit.results import NA_REASON_KEY, Status, TestRecord
from kit.views.ci_links import CommentLinks, ci_links
from kit.views.comment import MAX_COMMENT_CHARS, capped

ADD = "unit/opinfo/add/float32/0"
SIN = "unit/opinfo/sin/float64/0"
#: Every op of one dtype: enough groups to fold.
WIDE = ("unit/opinfo/*/float32/0",)


def _comment(capsys: pytest.CaptureFixture[str], run: Path, *args: str) -> list[str]:
    capsys.readouterr()
    assert main(["show", str(run), "--format", "comment", *args]) == ExitCode.OK
    return capsys.readouterr().out.splitlines()


def test_without_a_baseline_every_failure_is_listed_one_line_per_op_and_dtype(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outcomes = {ADD: numeric_failure(ADD, 0.5, 0.25),
                SIN: TestRecord(SIN, Status.ERROR, 0.1, "kernel launch failed")}
    write_report(tmp_path / "run", report_of(records_with(outcomes, selected_ids())))
    lines = _comment(capsys, tmp_path / "run")
    assert "**Failing (2):**" in lines
    assert [line for line in lines if line.startswith("- ")] == [
        f"- `unit/opinfo/add` `float32`: 1 test(s) (FAIL_NUMERIC 1); worst max_rel_err 0.25; "
        f"e.g. `{ADD}`",
        f"- `unit/opinfo/sin` `float64`: 1 test(s) (ERROR 1); e.g. `{SIN}`",
    ]


def test_a_not_applicable_test_the_kit_decided_is_not_counted_as_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    na = TestRecord(SIN, Status.NOT_APPLICABLE, 0.0, "dtype not claimed",
                    {NA_REASON_KEY: "unclaimed-dtype"})
    ids = selected_ids()
    write_report(tmp_path / "run", report_of(records_with({SIN: na}, ids)))
    lines = _comment(capsys, tmp_path / "run")
    assert f"| unit | {len(ids)} | {len(ids) - 1} | 0 | 0 | 1 |" in lines
    assert "No failures." in lines


def test_a_narrowed_run_whose_tests_pass_is_partial_in_run_show_summary_and_comment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = report_of(records_with({}, selected_ids()))
    write_report_files(report, tmp_path / "run")
    run_says = partial_of_report(report)
    assert run_says is not None
    words = run_says.words()  # what `ckit run` prints after "grade: "
    assert words.startswith("non-conformant (partial: the tests it ran meet conformant")
    capsys.readouterr()
    main(["show", str(tmp_path / "run")])
    assert f"grade: {words}" in capsys.readouterr().out.splitlines()
    main(["show", str(tmp_path / "run"), "--json"])
    grade = json.loads(capsys.readouterr().out)["grade"]
    assert (grade["name"], grade["qualifier"], grade["earned"]) == (
        "non-conformant", "partial", "conformant")
    summary = (tmp_path / "run" / "summary.md").read_text(encoding="utf-8").splitlines()
    assert summary[0] == "# ◐ `cpu`: partial (its tests meet conformant)"
    assert f"Graded {words}." in summary
    lines = _comment(capsys, tmp_path / "run")
    assert lines[0] == "### ckit partial run: `cpu` on torch " + lines[0].split("torch ")[1]
    assert "◐ Grade **`partial`** (its tests meet conformant) under standard `v2`" in lines[2]
    assert f"Why: {words}." in lines


def test_a_failure_outside_the_baselines_selection_is_still_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    only_add = ("unit/opinfo/add/float32/*",)
    write_report(tmp_path / "baseline",
                 report_of(records_with({}, selected_ids(only_add)), only_add))
    outcomes = {ADD: numeric_failure(ADD, 0.5, 0.25), SIN: numeric_failure(SIN, 0.5, 2.0)}
    write_report(tmp_path / "run", report_of(records_with(outcomes, selected_ids())))
    lines = _comment(capsys, tmp_path / "run", "--against", str(tmp_path / "baseline"))
    regressed = lines.index("**Regressed (1):**")
    rest = lines.index("**Failing, not regressed (1):** failed in the baseline too, or outside "
                       "its selection")
    assert regressed < rest
    assert lines[regressed + 4].startswith("- `unit/opinfo/add` `float32`: 1 test(s)")
    assert lines[rest + 4] == (f"- `unit/opinfo/sin` `float64`: 1 test(s) (FAIL_NUMERIC 1); "
                               f"worst max_rel_err 2; e.g. `{SIN}`")


@pytest.fixture(scope="module")
def wide_failing_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One failing test in each op of one dtype: a group per op."""
    ids = selected_ids(WIDE)
    outcomes = {test_id: numeric_failure(test_id, 0.5, 0.25) for test_id in ids}
    run = tmp_path_factory.mktemp("wide") / "run"
    write_report(run, report_of(records_with(outcomes, ids), WIDE))
    return run


def test_groups_past_the_limit_fold_into_details(
    wide_failing_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _comment(capsys, wide_failing_run, "--limit", "3")
    groups = len(selected_ids(WIDE))
    start = next(i for i, line in enumerate(lines) if line.startswith("<details>"))
    assert lines[start] == (f"<details><summary>{groups - 3} more group(s), {groups - 3} "
                            "test(s)</summary>")
    assert sum(line.startswith("- `unit/") for line in lines[:start]) == 3
    assert sum(line.startswith("- `unit/") for line in lines[start:]) == groups - 3
    assert lines[-1] == "</details>"


def test_a_comment_over_the_cap_is_cut_whole_lines_its_details_closed(
    wide_failing_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _comment(capsys, wide_failing_run, "--limit", "3")
    assert len("\n".join(lines)) < MAX_COMMENT_CHARS
    cut = capped(lines, 3000)
    assert len("\n".join(cut)) <= 3000
    kept = cut[:-4]
    assert kept == lines[:len(kept)] and any(line.startswith("<details>") for line in kept)
    assert cut[-4:] == ["", "</details>", "",  # the fold cut open is closed
                        f"*{len(lines) - len(kept)} line(s) cut to stay under GitHub's comment "
                        "limit: `ckit show` lists every failure.*"]


def test_links_to_the_github_run_and_the_standard_at_its_commit() -> None:
    environ = {"GITHUB_ACTIONS": "true", "GITHUB_SERVER_URL": "https://github.com",
               "GITHUB_REPOSITORY": "acme/ckit", "GITHUB_RUN_ID": "42",
               "GITHUB_RUN_ATTEMPT": "2", "GITHUB_SHA": "0123abcd"}
    assert ci_links(environ, "v2") == CommentLinks(
        "https://github.com/acme/ckit/actions/runs/42/attempts/2",
        "https://github.com/acme/ckit/blob/0123abcd/standards/v2/standard.yaml")


def test_links_to_the_gitlab_job() -> None:
    environ = {"GITLAB_CI": "true", "CI_JOB_URL": "https://gitlab.example/acme/ckit/-/jobs/7",
               "CI_PROJECT_URL": "https://gitlab.example/acme/ckit", "CI_COMMIT_SHA": "beef"}
    assert ci_links(environ, "v2") == CommentLinks(
        "https://gitlab.example/acme/ckit/-/jobs/7",
        "https://gitlab.example/acme/ckit/-/blob/beef/standards/v2/standard.yaml")


def test_markdown_smuggled_into_a_ci_variable_makes_no_link() -> None:
    environ = {"GITHUB_ACTIONS": "true", "GITHUB_SERVER_URL": "https://github.com",
               "GITHUB_REPOSITORY": "acme/ckit)[click](https://evil.example", "GITHUB_RUN_ID": "1",
               "GITLAB_CI": "true"}
    assert ci_links(environ, "v2") == CommentLinks()
    gitlab = {"GITLAB_CI": "true", "CI_JOB_URL": "https://x.example/j) <img src=x>"}
    assert ci_links(gitlab, "v2") == CommentLinks()
