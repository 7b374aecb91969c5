"""The commands other packages add are found by a quick scan of sys.path
(`recall_admin/cli/plugins.py`) that must answer exactly what importlib.metadata answers,
or step aside (None) where it is not sure."""

from __future__ import annotations

import zipfile
from importlib.metadata import distributions, entry_points

from recall_admin.cli.plugins import load, plugins, scan


def metadata(group: str) -> list[tuple[str, str]]:
    return [(ep.name, ep.value) for ep in entry_points(group=group)]


def test_every_group_installed_here_is_found_as_importlib_metadata_finds_it():
    groups = {ep.group for d in distributions() for ep in d.entry_points}
    assert "recall_admin.commands" in groups and len(groups) > 5
    for group in sorted(groups):
        assert scan(group) == metadata(group), group


def dist(folder, name: str, text: str | None) -> None:
    info = folder / name
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name.partition('-')[0]}\nVersion: 1\n")
    if text is not None:
        (info / "entry_points.txt").write_text(text)


def test_the_first_distribution_of_a_name_wins_and_the_order_is_kept(tmp_path, monkeypatch):
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    dist(first, "zeta_tool-1.0.dist-info", "[demo.group]\nzeta = zeta.cli:register\n")
    dist(first, "Alpha.Plug-2.0.dist-info", "# a comment\n[other]\nx = y\n\n[demo.group]\nalpha = alpha:reg [extra]\n")
    dist(first, "nothing-1.0.dist-info", None)
    dist(second, "alpha_plug-9.0.dist-info", "[demo.group]\nshadowed = alpha.old:reg\n")  # same name: hidden
    dist(second, "beta-1.0.egg-info", "[demo.group]\n beta = beta.cmds : add \n")
    monkeypatch.syspath_prepend(str(second))
    monkeypatch.syspath_prepend(str(first))
    found = scan("demo.group")
    assert found == metadata("demo.group")
    assert {name for name, _ in found} == {"zeta", "alpha", "beta"}


def test_what_it_is_not_sure_of_is_left_to_importlib_metadata(tmp_path, monkeypatch):
    bad = tmp_path / "bad"
    bad.mkdir()
    dist(bad, "odd-1.0.dist-info", "[demo.group]\nno equals sign here\n")
    monkeypatch.syspath_prepend(str(bad))
    assert scan("demo.group") is None
    monkeypatch.undo()
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("zipped-1.0.dist-info/entry_points.txt", "[demo.group]\nzipped = json:dumps\n")
        z.writestr("zipped-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zipped\nVersion: 1\n")
    monkeypatch.syspath_prepend(str(archive))
    assert scan("demo.group") is None
    import json

    assert plugins("demo.group") == [json.dumps]  # importlib.metadata found it in the zip


def test_an_entry_point_loads_as_importlib_metadata_loads_it():
    import os.path

    assert load("os.path:join") is os.path.join
    assert load("os.path") is os.path
    assert load("os : path.join [extra]") is os.path.join


def test_the_console_registers_through_the_scan():
    from recall_tui.cli import register

    assert scan("recall_admin.commands") == [("tui", "recall_tui.cli:register")]
    assert plugins("recall_admin.commands") == [register]
