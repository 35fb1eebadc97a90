import pytest

from rlvr_gym import make


@pytest.fixture(scope="session")
def env():
    """The registered env on its default 1,000-product catalog (index cached on disk after the first build)."""
    e = make("rlvr/WebShop-v0")
    yield e
    e.close()
