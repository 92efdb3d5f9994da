"""The kit plugin's verdict on a report survives pytest-xdist, which ships reports as data."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]


def test_a_kit_verdict_crosses_xdist_and_comes_back_typed(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('''
from kit.pytest_plugin import report_verdict

def pytest_runtest_logreport(report):
    verdict = report_verdict(report)
    if verdict is not None:
        print(f"VERDICT {report.when} {verdict.status.value} {verdict.details}")
''')
    pytester.makepyfile('''
import pytest
from kit.outcomes import SemanticMismatch

@pytest.mark.parametrize("case", ["one"], ids=["unit/opinfo/add/float32/0"])
def test_kit_case(case):
    raise SemanticMismatch("a copy, not a view", failure="not-a-view")
''')
    result = pytester.runpytest_subprocess("-p", "xdist", "-n", "1", "-s")
    assert "INTERNALERROR" not in result.stdout.str()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*VERDICT call FAIL_SEMANTIC {'failure': 'not-a-view'}*"])
