import os
import sys

import pytest

# Make tests/reference.py and tests/helpers.py importable as `reference` and `helpers`.
sys.path.insert(0, os.path.dirname(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the checkout under test


def pytest_configure(config):
    """Under pytest-xdist a worker has execnet's thread besides its own, so on Python 3.12 and later every fork a test
    makes (a pool of ``evaluate --jobs``, a pty, a test's own ``os.fork``) warns "This process is multi-threaded, use
    of fork() may lead to deadlocks in the child": the harness's thread, not the library's (whose progress bars start
    none: ``test_a_progress_bar_starts_no_thread_before_evaluate_forks_its_workers``).  Without xdist the warning
    stays on."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        config.addinivalue_line("filterwarnings",
                                "ignore:This process .* is multi-threaded, use of fork:DeprecationWarning")


@pytest.fixture(autouse=True, scope="session")
def _nothing_written_outside_pytest_tmp(tmp_path_factory):
    """Subprocesses import this checkout (``PYTHONPATH``).  Folders the code writes by default point into pytest's own temp dir (each xdist worker its own), so a test run
    leaves nothing in the user's folders: tables trained with the default cache (``POKERSQUARES_CACHE``, kept if set
    before the run, to reuse a warm cache on purpose; tests that need their own still set it) and the empty
    ``SB3-<date>`` folder that SB3 writes on every ``learn`` without a logger (``SB3_LOGDIR``)."""
    with pytest.MonkeyPatch.context() as patch:
        # Subprocesses and notebook kernels started in a temporary folder import this checkout, not whatever the
        # venv has installed (an editable install of another checkout, where one venv serves two).
        patch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
        if not os.environ.get("POKERSQUARES_CACHE"):
            patch.setenv("POKERSQUARES_CACHE", str(tmp_path_factory.mktemp("table_cache")))
        patch.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3_logs")))
        yield


@pytest.fixture(autouse=True)
def _registries_restored():
    """Each test starts from the shipped agent and back-end registries: a name a test registers (``register_agent``,
    ``register_backend``) without monkeypatching the registry is removed after it, so it cannot change what a later
    test in the same worker sees (one did: 'test-address' showed up in another test's list of back ends)."""
    import agents.evaluation as evaluation
    import agents.registry as registry

    saved = [(table, dict(table)) for table in (evaluation._BACKENDS, registry._REGISTRY)]
    yield
    for table, before in saved:
        table.clear()
        table.update(before)


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
