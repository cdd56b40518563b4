"""A cluster belongs to whoever brought it up: a run of another user never lands on the default
cluster unless it names it (PXQ_CLUSTER), and `--launcher cluster` says whose it is."""

from __future__ import annotations

from typing import Any

import pytest

from pxq.cluster import emulator as cluster
from pxq.core.errors import InputError
from pxq.core.layout import parse_layout
from pxq.launch import netns


def _up(owner: str) -> cluster.Cluster:
    return cluster.Cluster("pxq", 2, {"name": "100mbit"}, 9000, [1, 2], 2, 0.1, False, owner=owner)


@pytest.fixture
def default_up(monkeypatch: Any):
    def bring(owner: str) -> cluster.Cluster:
        c = _up(owner)
        monkeypatch.setattr(cluster, "load", lambda name=cluster.DEFAULT_NAME: c if name == "pxq" else None)
        return c

    monkeypatch.delenv("PXQ_CLUSTER", raising=False)
    return bring


def test_my_cluster_is_used_and_another_users_is_not(default_up: Any, monkeypatch: Any) -> None:
    mine = default_up(cluster.owner_here())
    assert netns.current() is mine
    default_up("mallory (uid 1001)")
    assert netns.current() is None and netns.someone_elses() is not None
    with pytest.raises(InputError, match="is mallory \\(uid 1001\\)'s, not yours.*PXQ_CLUSTER=pxq"):
        netns.cluster_for(parse_layout("2x1"))


def test_naming_a_cluster_is_an_explicit_opt_in(default_up: Any, monkeypatch: Any) -> None:
    theirs = default_up("mallory (uid 1001)")
    monkeypatch.setenv("PXQ_CLUSTER", "pxq")
    assert netns.current() is theirs and netns.someone_elses() is None
    monkeypatch.setenv("PXQ_CLUSTER", "off")
    assert netns.current() is None


def test_the_owner_names_the_user_behind_sudo(monkeypatch: Any) -> None:
    monkeypatch.setenv("SUDO_USER", "alice")
    assert cluster.owner_here().startswith("alice (uid ")
    monkeypatch.delenv("SUDO_USER")
    assert not cluster.owner_here().startswith("alice")
