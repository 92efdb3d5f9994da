"""``ckit vendors list|validate|init`` through the real CLI, on real directories."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
from vendors_helpers import GOOD_PROFILE, write_vendor

from kit import paths
from kit.cli import main
from kit.vendors import load_skip_manifest, load_vendor


@pytest.fixture
def vendors_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "vendors"
    root.mkdir()
    monkeypatch.setenv("CKIT_VENDORS_DIR", str(root))
    return root


@pytest.mark.parametrize("action", ["list", "validate", "init", "install"])
def test_every_action_has_help_with_an_example(
    action: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["vendors", action, "--help"])
    assert exit_info.value.code == 0
    assert f"ckit vendors {action}" in capsys.readouterr().out.split("example")[-1]


def test_bare_vendors_prints_help_and_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vendors"]) == 2
    assert "ckit vendors list" in capsys.readouterr().out


def test_shipped_cpu_vendor_validates(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vendors", "validate", "cpu"]) == 0
    assert capsys.readouterr().out == "OK cpu\n"


def test_list_prints_a_table(vendors_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_vendor(vendors_dir, "acme")
    write_vendor(vendors_dir, "zeta-gpu", GOOD_PROFILE.replace("id: acme", "id: zeta-gpu"))
    assert main(["vendors", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["ID", "NAME", "DEVICE", "DTYPES"]
    assert lines[1].split() == ["acme", "Acme", "NPU", "cpu", "float32,bfloat16"]
    assert lines[2].startswith("zeta-gpu  Acme NPU")
    # Columns line up: the DEVICE column starts at the same offset on every row.
    assert len({line.index("cpu") for line in lines[1:]} | {lines[0].index("DEVICE")}) == 1


def test_list_of_empty_directory_says_so(
    vendors_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["vendors", "list"]) == 0
    assert capsys.readouterr().out == f"no vendor profiles in {vendors_dir}\n"


def test_list_reports_broken_profile_and_shows_the_rest(
    vendors_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_vendor(vendors_dir, "acme")
    write_vendor(vendors_dir, "broken", GOOD_PROFILE.replace("id: acme", "id: broken") + "x: 1\n")
    assert main(["vendors", "list"]) == 3
    out, err = capsys.readouterr()
    assert [line.split()[0] for line in out.splitlines()] == ["ID", "acme"]
    assert len(err.strip().splitlines()) == 1 and "broken/vendor.yaml" in err


def test_validate_goes_on_past_a_broken_vendor(
    vendors_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_vendor(vendors_dir, "acme")
    write_vendor(vendors_dir, "broken", GOOD_PROFILE.replace("id: acme", "id: broken") + "x: 1\n")
    write_vendor(vendors_dir, "zeta", GOOD_PROFILE.replace("id: acme", "id: zeta"))
    assert main(["vendors", "validate"]) == 3
    out, err = capsys.readouterr()
    assert out == "OK acme\nOK zeta\n"
    assert len(err.strip().splitlines()) == 1 and "broken/vendor.yaml" in err


def test_validate_by_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = write_vendor(tmp_path / "elsewhere")
    assert main(["vendors", "validate", str(directory), str(directory / "vendor.yaml")]) == 0
    assert capsys.readouterr().out == "OK acme\nOK acme\n"


def test_validate_rejects_a_bad_today(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["vendors", "validate", "--today", "tomorrow"])
    assert exit_info.value.code == 2
    assert "expected a date YYYY-MM-DD" in capsys.readouterr().err


# --- init -------------------------------------------------------------------------------------


def test_init_scaffolds_a_vendor_that_validates_once_a_device_is_named(
    vendors_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["vendors", "init", "acme-npu", "--device-type", "npu", "--display-name", "Acme: NPU #2"]
    )
    assert code == 0
    directory = vendors_dir / "acme-npu"
    names = sorted(p.name for p in directory.iterdir())
    assert names == ["README.md", "install.sh", "skips.yaml", "vendor.yaml"]
    profile = load_vendor("acme-npu")
    assert (profile.device_type, profile.display_name) == ("npu", "Acme: NPU #2")
    assert load_skip_manifest(profile.skip_manifest_path).entries == ()
    assert "vendor.yaml" in (directory / "README.md").read_text()
    capsys.readouterr()
    # The raw scaffold names no device a run could use: validate says what to edit.
    assert main(["vendors", "validate", "acme-npu"]) == 3
    err = capsys.readouterr().err
    assert err == (
        f"ckit: error: {directory / 'vendor.yaml'}: device_type: 'npu' is not a device "
        "torch registers itself and import_modules is empty: edit vendor.yaml to name the "
        "device type your backend registers and the modules that register it\n"
    )
    # Once it names a device, it validates, but says which placeholders are still to replace.
    profile_path = directory / "vendor.yaml"
    profile_path.write_text(
        profile_path.read_text().replace("device_type: npu", "device_type: cpu")
    )
    assert main(["vendors", "validate", "acme-npu"]) == 0
    out, err = capsys.readouterr()
    assert out == "OK acme-npu\n"
    assert ": contact: still holds the scaffold placeholder" in err
    assert ": docs_url: still holds the scaffold placeholder" in err


def test_init_example_skip_entry_is_valid_once_uncommented(vendors_dir: Path) -> None:
    assert main(["vendors", "init", "acme"]) == 0
    skips = vendors_dir / "acme" / "skips.yaml"
    lines = skips.read_text().splitlines()
    start = lines.index("# skips:")
    example = [line.removeprefix("# ") for line in lines[start:] if line.startswith("#   ")]
    skips.write_text("skips:\n" + "\n".join(example) + "\n")
    entries = load_skip_manifest(skips).entries
    assert [e.reason for e in entries] == ["unsupported-dtype"]


def test_init_install_script_is_posix_sh_and_runs(vendors_dir: Path) -> None:
    assert main(["vendors", "init", "acme"]) == 0
    script = vendors_dir / "acme" / "install.sh"
    assert script.stat().st_mode & 0o111
    assert "torch==2.13.0" in script.read_text()
    subprocess.run(["sh", "-n", str(script)], check=True)
    # With PACKAGES still empty it installs nothing, says so, and succeeds.
    done = subprocess.run([str(script)], capture_output=True, text=True, check=True)
    assert "nothing to install" in done.stderr


def test_init_refuses_to_overwrite_an_existing_vendor(
    vendors_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = write_vendor(vendors_dir, "acme")
    before = (directory / "vendor.yaml").read_bytes()
    assert main(["vendors", "init", "acme"]) == 3
    assert "already exists; refusing to overwrite" in capsys.readouterr().err
    assert (directory / "vendor.yaml").read_bytes() == before
    assert not (directory / "README.md").exists()


def test_init_refuses_a_non_empty_directory(
    vendors_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (vendors_dir / "acme").mkdir()
    (vendors_dir / "acme" / "notes.txt").write_text("mine")
    assert main(["vendors", "init", "acme"]) == 3
    assert "not empty; refusing to overwrite" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["Acme_NPU"], "vendor.yaml: id: expected a lower-case id"),
        (
            ["acme", "--device-type", "Acme NPU"],
            "vendor.yaml: device_type: expected a torch device type",
        ),
        (["acme", "--display-name", "two\nlines"], "--display-name"),
    ],
    ids=["id-not-lower-case", "device-type-with-space", "display-name-two-lines"],
)
def test_init_bad_input_leaves_nothing_behind(
    vendors_dir: Path, capsys: pytest.CaptureFixture[str], args: list[str], fragment: str
) -> None:
    assert main(["vendors", "init", *args]) == 3
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and fragment in err
    assert list(vendors_dir.iterdir()) == []


def test_init_root_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vendors", "init", "acme", "--root", str(tmp_path / "mine")]) == 0
    assert load_vendor(tmp_path / "mine" / "acme").display_name == "Acme"


def test_a_vendor_directory_outside_the_kit_is_first_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``init --dir`` writes into the vendor's own repository, and ``--vendors-dir`` finds it
    there for every command: nothing is written into the kit's checkout."""
    # --vendors-dir sets the variable for the process (its workers inherit it): setting it
    # here first makes monkeypatch restore it after the test.
    monkeypatch.setenv("CKIT_VENDORS_DIR", str(paths.kit_home() / "vendors"))
    own = tmp_path / "acme-repo" / "conformance"
    capsys.readouterr()
    assert main(["vendors", "init", "acme", "--device-type", "cpu", "--dir", str(own)]) == 0
    assert (own / "acme" / "vendor.yaml").is_file()
    assert not (paths.vendors_dir() / "acme").exists()
    hint = capsys.readouterr().out.splitlines()[-1].partition(", then run ")[2]
    assert hint == f"ckit --vendors-dir {own} vendors validate acme"
    assert main(shlex.split(hint)[1:]) == 0  # the next step it names finds the profile
    capsys.readouterr()
    assert main(["--vendors-dir", str(own), "vendors", "list"]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("acme ")
    assert main(["--vendors-dir", str(own), "vendors", "validate", "acme"]) == 0
    assert capsys.readouterr().out == "OK acme\n"
