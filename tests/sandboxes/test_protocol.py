"""The request/result models and the evidence channel's parsing (no sandbox needed)."""

import pytest
from pydantic import ValidationError

from rlvr_gym.sandboxes import ExecRequest, Limits, extract_evidence
from rlvr_gym.sandboxes.base import screen_request


def test_exactly_one_program():
    with pytest.raises(ValidationError):
        ExecRequest()
    with pytest.raises(ValidationError):
        ExecRequest(code="1", argv=["true"])
    with pytest.raises(ValidationError):
        ExecRequest(argv=[])
    assert ExecRequest(code="pass").command() == ["python3", "main.py"]


@pytest.mark.parametrize("path", ["/etc/passwd", "../x", "a/../../b", "", "a//b", "./a", "x\0y"])
def test_unsafe_paths_rejected(path):
    with pytest.raises(ValidationError):
        ExecRequest(code="pass", files={path: "x"})
    with pytest.raises(ValidationError):
        ExecRequest(code="pass", collect=[path])


def test_reserved_names_and_network():
    with pytest.raises(ValidationError):
        ExecRequest(code="pass", env={"RLVR_NONCE_FILE": "x"})
    with pytest.raises(ValidationError):
        ExecRequest(code="pass", env={"BAD-NAME": "x"})
    assert "network" in screen_request(ExecRequest(code="pass", limits=Limits(network=True)))
    assert screen_request(ExecRequest(code="pass", files={".rlvr_nonce": "x"}))
    assert screen_request(ExecRequest(code="pass")) is None


def test_extract_evidence_keeps_only_nonce_records():
    nonce = "ab" * 16
    out = (
        "hello\n"
        + nonce
        + ' {"test": 0, "passed": true}\n'
        + "ff" * 16
        + ' {"passed": true}\nprinted\n'
        + nonce
        + " not-json\n"
    )
    rest, records = extract_evidence(out, nonce)
    assert records[0] == {"test": 0, "passed": True}
    assert records[1] == {"_malformed": "not-json"}
    assert len(records) == 2
    assert nonce not in rest and "ff" * 16 in rest and "printed" in rest
