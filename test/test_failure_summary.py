"""The run's last lines name every failed test (conftest.py, ``pytest_terminal_summary``): CI
shows only the end of a run's output, and on CI pytest's own summary prints each failure's
whole message, where a comparison of two long lists hid which tests had failed."""

from __future__ import annotations

from inner_session import inner_pytest

FAILING = """
def test_two_long_lists_differ():
    assert [(k, float(k)) for k in range(2000)] == [(k, float(k)) for k in range(2001)]

def test_passes():
    pass

def test_says_why():
    assert 1 == 2, "one is not two"
"""


def test_the_last_lines_name_each_failed_test_even_after_a_long_comparison_on_ci(tmp_path):
    (tmp_path / "test_failing.py").write_text(FAILING)
    result = inner_pytest(tmp_path, "-ra", "test_failing.py", variables={"CI": "true"})
    lines = result.stdout.rstrip().splitlines()
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    assert "2 failed" in lines[-4] and "1 passed" in lines[-1], "\n".join(lines[-10:])
    assert lines[-3].startswith("test_failing.py::test_two_long_lists_differ: assert [")
    assert len(lines[-3]) <= 160
    assert lines[-2] == "test_failing.py::test_says_why: AssertionError: one is not two"
    assert len(result.stdout) > 50_000  # on CI, pytest's summary printed the whole comparison before them
