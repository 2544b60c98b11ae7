"""What every test of the binding runs under: no $WIKIDEX_MODEL. A build that names no model
takes the default one (the core's rule: $WIKIDEX_MODEL, else an installed model package), and
the tests that expect no semantic lane from such a build must not depend on the shell they run
in. test_model_package.py installs a model package where it wants one (a temporary folder, in a
child process). Ray's usage statistics are off."""

import os

import pytest

# Ray (test_distributed.py, the Ray guide's block in test_docs.py) would report usage
# statistics to its makers' server; the tests reach no address but this machine's.
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"


@pytest.fixture(autouse=True)
def _no_model_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WIKIDEX_MODEL", raising=False)
