"""Servers bind loopback by default; anything else needs --allow-remote and always gets a token."""

import argparse

from rlvr_gym.localserve import add_bind_arguments, resolve_token


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_bind_arguments(parser, port=1234)
    return parser.parse_args(list(argv))


def test_bind_policy():
    assert resolve_token(_args(), "x") == (True, None)
    assert resolve_token(_args("--host", "0.0.0.0"), "x") == (False, None)
    allowed, token = resolve_token(_args("--host", "0.0.0.0", "--allow-remote"), "x")
    assert allowed and token and len(token) >= 24
    assert resolve_token(_args("--host", "0.0.0.0", "--allow-remote", "--token", "t"), "x") == (True, "t")
