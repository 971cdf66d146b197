from __future__ import annotations

import pickle

import pytest

from krafka.sansio.sasl import PlainMechanism, ScramMechanism
from krafka.sansio.secret import Secret


def test_secret_is_masked_everywhere() -> None:
    secret = Secret("hunter2")
    assert "hunter2" not in repr(secret)
    assert "hunter2" not in str(secret)
    assert "hunter2" not in f"{secret}"
    assert secret.reveal() == "hunter2"
    assert secret == Secret(b"hunter2")
    assert secret != Secret("other")
    with pytest.raises(TypeError):
        pickle.dumps(secret)


def test_mechanism_reprs_hide_passwords() -> None:
    for mech in (PlainMechanism("u", "hunter2"), ScramMechanism("u", "hunter2")):
        assert "hunter2" not in repr(mech)
