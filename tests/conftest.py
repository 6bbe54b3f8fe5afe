import os
import sys

import pytest

# Make tests/reference.py and tests/helpers.py importable as `reference` and `helpers`.
sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(autouse=True, scope="session")
def _table_cache_in_pytest_tmp(tmp_path_factory):
    """Tables that tests train with the default cache go to a cache of this session (each xdist worker its own), not
    to the user's ``~/.cache/pokersquares``: a test run leaves no files there.  A ``POKERSQUARES_CACHE`` set before
    the run is kept (to reuse a warm cache on purpose); tests that need their own still set it."""
    if os.environ.get("POKERSQUARES_CACHE"):
        yield
        return
    os.environ["POKERSQUARES_CACHE"] = str(tmp_path_factory.mktemp("table_cache"))
    yield
    os.environ.pop("POKERSQUARES_CACHE", None)


@pytest.fixture(autouse=True, scope="session")
def _sb3_logs_in_pytest_tmp(tmp_path_factory):
    """SB3 models trained without a logger write an empty ``SB3-<date>`` folder to the system temp dir on every
    ``learn``; point them (``SB3_LOGDIR``) into pytest's own temp dir, which pytest prunes, instead of /tmp."""
    before = os.environ.get("SB3_LOGDIR")
    os.environ["SB3_LOGDIR"] = str(tmp_path_factory.mktemp("sb3_logs"))
    yield
    if before is None:
        os.environ.pop("SB3_LOGDIR", None)
    else:
        os.environ["SB3_LOGDIR"] = before


def pytest_sessionfinish(session, exitstatus):
    """With ``POKERSQUARES_NO_SKIP=1`` (set by ``scripts/test.sh``, which installs every extra, and so by CI) a skipped
    test fails the run: a skip there can only mean a missing dependency or a broken import hiding a test."""
    if os.environ.get("POKERSQUARES_NO_SKIP") != "1" or exitstatus != 0:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter is not None else []
    if skipped:
        names = ", ".join(report.nodeid for report in skipped[:5])
        sys.stderr.write(f"\nPOKERSQUARES_NO_SKIP=1: {len(skipped)} test(s) skipped ({names}"
                         f"{', ...' if len(skipped) > 5 else ''}); every extra is installed, so nothing may skip\n")
        session.exitstatus = 1
