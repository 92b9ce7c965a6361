"""Pack path resolution: files, directories drawn with a seed, clear errors, no escapes."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest

import maze_envs.agimaze.packs as packs
from maze_envs.agimaze.bundle import load_bundle
from maze_envs.agimaze.packs import (
    PACK_ROOT,
    PackPathError,
    list_bundles,
    pack_root,
    resolve_pack_path,
)

STAGE = "TRAINING/S0-keys/STAGE-01"


def test_file_path_loads_that_bundle() -> None:
    name, bundle = resolve_pack_path(f"{STAGE}/0005.json")
    assert name == f"{STAGE}/0005.json"
    assert bundle == load_bundle(PACK_ROOT / name)
    assert bundle.meta.path == name


def test_directory_draws_one_bundle_from_the_rng() -> None:
    names = list_bundles(f"{STAGE}/")
    assert resolve_pack_path(STAGE)[0] == names[0]  # no rng: the first
    assert resolve_pack_path(STAGE + "/")[0] == names[0]
    draws = [resolve_pack_path(STAGE, np.random.default_rng(seed))[0] for seed in range(40)]
    assert draws == [resolve_pack_path(STAGE, np.random.default_rng(s))[0] for s in range(40)]
    assert set(draws) <= set(names) and len(set(draws)) >= 5
    # a higher directory stands for every bundle below it
    group_draws = {resolve_pack_path("TRAINING", np.random.default_rng(s))[0] for s in range(30)}
    assert len({n.split("/")[1] for n in group_draws}) >= 2


def test_list_bundles_filters_by_prefix() -> None:
    assert len(list_bundles("TRAINING/S1")) == 60
    assert list_bundles("NOPE") == []
    assert all(n.endswith(".json") for n in list_bundles())
    with pytest.raises(PackPathError):
        list_bundles(3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("", "empty pack path"),
        ("../secrets.json", "'..'"),
        ("TRAINING/../../pyproject.toml", "'..'"),
        ("TRAINING/./S0-keys", "'.'"),
        ("TRAINING//S0-keys", "empty"),
        ("/etc/passwd", "absolute"),
        ("C:/Windows", "absolute"),
        ("TRAINING\\S0-keys\\STAGE-01", "backslash"),
        ("TRAINING/.hidden", "invalid part"),
        ("TRAINING/S0-keys/STAGE-01/0005.json/more", "below a file"),
        ("x" * 513, "longer than 512 characters"),
        ("TRAINING/S0-keys/STAGE-01/\x00.json", "invalid part"),
    ],
)
def test_malformed_and_escaping_paths_are_refused(path: str, message: str) -> None:
    with pytest.raises(PackPathError, match=re.escape(message)):
        resolve_pack_path(path)


def test_unknown_paths_list_the_nearby_choices() -> None:
    with pytest.raises(PackPathError) as info:
        resolve_pack_path("TRAINING/S0-key/STAGE-01")
    text = str(info.value)
    assert "did you mean 'S0-keys/'" in text
    assert "'TRAINING/' holds" in text and "S3-full/" in text
    with pytest.raises(PackPathError, match=r"0009\.json"):
        resolve_pack_path(f"{STAGE}/0010.json")
    with pytest.raises(PackPathError, match="TUTORIAL/"):
        resolve_pack_path("TUTORIALS")
    with pytest.raises(PackPathError, match=r"not a \.json bundle"):
        resolve_pack_path("MANIFEST.txt")
    with pytest.raises(PackPathError, match="string"):
        resolve_pack_path(None)  # type: ignore[arg-type]


@pytest.fixture
def bundle_tree(tmp_path: Path) -> Path:
    """A small pack tree with a good, a linked, an empty and a broken folder."""
    root = (tmp_path / "packs").resolve()
    (root / "GOOD").mkdir(parents=True)
    source = PACK_ROOT / f"{STAGE}/0000.json"
    (root / "GOOD" / "0000.json").write_bytes(source.read_bytes())
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "0000.json").write_bytes(source.read_bytes())
    os.symlink(outside, root / "LINKED")
    os.symlink(outside / "0000.json", root / "GOOD" / "0001.json")
    (root / "EMPTY").mkdir()
    (root / "BROKEN").mkdir()
    (root / "BROKEN" / "0000.json").write_text('{"format_version": 1}')
    return root


@pytest.fixture
def fake_root(bundle_tree: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(packs, "PACK_ROOT", bundle_tree)
    return bundle_tree


def test_symbolic_links_are_refused(fake_root: Path) -> None:
    assert resolve_pack_path("GOOD/0000.json")[0] == "GOOD/0000.json"
    with pytest.raises(PackPathError, match="symbolic link"):
        resolve_pack_path("LINKED/0000.json")
    with pytest.raises(PackPathError, match="symbolic link"):
        resolve_pack_path("GOOD/0001.json")
    # a directory draw never picks a linked file either
    draws = {resolve_pack_path("GOOD", np.random.default_rng(s))[0] for s in range(20)}
    assert draws == {"GOOD/0000.json"}
    assert "LINKED/0000.json" not in list_bundles()


def test_empty_and_damaged_packs_give_clear_errors(fake_root: Path) -> None:
    with pytest.raises(PackPathError, match="holds no bundles"):
        resolve_pack_path("EMPTY")
    with pytest.raises(PackPathError, match="damaged"):
        resolve_pack_path("BROKEN/0000.json")


def test_another_root_gets_the_same_checks(bundle_tree: Path, tmp_path: Path) -> None:
    root = tmp_path / "packs"  # unresolved spelling of the same tree
    name, bundle = resolve_pack_path("GOOD/0000.json", root=root)
    assert name == "GOOD/0000.json" and bundle == load_bundle(bundle_tree / name)
    assert list_bundles(root=root) == ["BROKEN/0000.json", "GOOD/0000.json"]
    assert list_bundles("GOOD", root=root) == ["GOOD/0000.json"]
    draws = {resolve_pack_path("GOOD", np.random.default_rng(s), root=root)[0] for s in range(20)}
    assert draws == {"GOOD/0000.json"}
    (tmp_path / "secret.json").write_bytes((bundle_tree / "GOOD" / "0000.json").read_bytes())
    refused = {
        "../secret.json": "'..'",
        "GOOD/../../secret.json": "'..'",
        str(tmp_path / "secret.json"): "absolute",
        "GOOD\\0000.json": "backslash",
        ".hidden": "invalid part",
        "LINKED/0000.json": "symbolic link",
        "GOOD/0001.json": "symbolic link",
        "EMPTY": "holds no bundles",
        "BROKEN/0000.json": "damaged",
        "NOPE": "the pack root holds: BROKEN/, EMPTY/, GOOD/",
        "": "empty pack path",
    }
    for path, message in refused.items():
        with pytest.raises(PackPathError, match=re.escape(message)):
            resolve_pack_path(path, root=root)
    # the shipped packs are untouched by another root
    assert resolve_pack_path(f"{STAGE}/0005.json")[0] == f"{STAGE}/0005.json"
    with pytest.raises(PackPathError, match="no pack entry"):
        resolve_pack_path(f"{STAGE}/0005.json", root=root)


def test_a_root_that_is_not_a_directory_is_refused(tmp_path: Path) -> None:
    for root in (tmp_path / "missing", PACK_ROOT / "MANIFEST.txt"):
        with pytest.raises(PackPathError, match="is not a directory"):
            resolve_pack_path("GOOD/0000.json", root=root)
        with pytest.raises(PackPathError, match="is not a directory"):
            list_bundles(root=root)
        with pytest.raises(PackPathError, match="is not a directory"):
            pack_root(root)
    assert pack_root() == PACK_ROOT and pack_root(tmp_path) == tmp_path.resolve()


def test_missing_shipped_packs_give_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(packs, "PACK_ROOT", tmp_path / "not-built")
    assert list_bundles() == []
    for path in (f"{STAGE}/0005.json", ""):
        with pytest.raises(PackPathError, match="build-packs"):
            resolve_pack_path(path)
