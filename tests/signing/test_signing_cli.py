"""``ckit keys``, ``ckit sign`` and ``ckit verify`` end to end: exit codes and one-line errors."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from signing_helpers import VENDOR

from kit import paths
from kit.cli import main
from kit.errors import ExitCode
from kit.rundir import ENVELOPE_NAME
from kit.signing.sign import write_unsigned_envelope

KEYID_LINE = re.compile(r"^keyid:\s+([0-9a-f]{64})$", re.MULTILINE)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ckit: error: ")
    return lines[0]


def _generate(capsys: pytest.CaptureFixture[str], keyring: Path, *extra: str) -> str:
    code, out, err = _run(
        capsys, "keys", "generate", "--vendor", VENDOR, "--keyring", str(keyring), *extra
    )
    assert code == ExitCode.OK, err
    match = KEYID_LINE.search(out)
    assert match, out
    return match.group(1)


def test_generate_list_sign_verify(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, private_config: Path, run_dir: Path
) -> None:
    keyring = tmp_path / "keyring"
    keyid = _generate(capsys, keyring)
    private_key = private_config / "ckit" / "keys" / "acme.pem"
    assert stat.S_IMODE(private_key.stat().st_mode) == 0o600
    assert stat.S_IMODE(private_key.parent.stat().st_mode) == 0o700
    assert (keyring / VENDOR / f"{keyid}.pub.pem").is_file()

    code, out, _ = _run(capsys, "keys", "list", "--keyring", str(keyring))
    assert code == ExitCode.OK
    assert out.split("\t")[:2] == [VENDOR, keyid]

    code, out, _ = _run(capsys, "sign", str(run_dir))
    assert code == ExitCode.OK
    assert out.startswith(f"signed: {run_dir / ENVELOPE_NAME} (vendor acme, key {keyid[:16]})")

    envelope = str(run_dir / ENVELOPE_NAME)
    code, out, _ = _run(capsys, "verify", envelope, "--keyring", str(keyring))
    assert code == ExitCode.OK
    verdict, note = out.splitlines()
    assert verdict == f"OK: acme report signed by {keyid[:16]}, kit 0.1.0, grade non-conformant"
    assert note.startswith("note: not a released kit (kit 0.1.0, digest ")


def test_verify_rejects_a_tampered_file_with_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, run_dir: Path
) -> None:
    _generate(capsys, tmp_path / "keyring")
    assert _run(capsys, "sign", str(run_dir))[0] == ExitCode.OK
    with (run_dir / "results.csv").open("a") as handle:
        handle.write("unit/opinfo/mul/float32/0,PASS\n")
    code, out, err = _run(capsys, "verify", str(run_dir), "--keyring", str(tmp_path / "keyring"))
    assert code == ExitCode.VERIFICATION_FAILED
    assert out == ""
    assert "step 7: results.csv was modified after signing" in _one_error_line(err)


def test_verify_with_the_wrong_keyring_rejects_an_unknown_key(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, run_dir: Path
) -> None:
    _generate(capsys, tmp_path / "keyring")
    _run(capsys, "sign", str(run_dir))
    code, _, err = _run(capsys, "verify", str(run_dir), "--keyring", str(tmp_path / "empty"))
    assert code == ExitCode.VERIFICATION_FAILED
    assert "is not in the keyring" in _one_error_line(err)


def test_generate_refuses_to_overwrite_without_force(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, private_config: Path
) -> None:
    first = _generate(capsys, tmp_path / "keyring")
    private_key = private_config / "ckit" / "keys" / "acme.pem"
    before = private_key.read_bytes()
    code, _, err = _run(
        capsys, "keys", "generate", "--vendor", VENDOR, "--keyring", str(tmp_path / "keyring")
    )
    assert code == ExitCode.INPUT_ERROR
    assert "already exists; pass --force to replace it" in _one_error_line(err)
    assert private_key.read_bytes() == before
    second = _generate(capsys, tmp_path / "keyring", "--force")
    assert second != first


def test_generate_if_missing_keeps_the_key_and_files_it_in_a_new_keyring(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, private_config: Path
) -> None:
    keyid = _generate(capsys, tmp_path / "first-keyring")
    private_key = private_config / "ckit" / "keys" / "acme.pem"
    before = private_key.read_bytes()
    # A fresh checkout: the same private key, a keyring that does not know it yet.
    assert _generate(capsys, tmp_path / "fresh-keyring", "--if-missing") == keyid
    assert private_key.read_bytes() == before
    assert (tmp_path / "fresh-keyring" / VENDOR / f"{keyid}.pub.pem").is_file()
    assert _generate(capsys, tmp_path / "fresh-keyring", "--if-missing") == keyid


def test_generate_if_missing_refuses_to_file_one_key_under_a_second_vendor(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CKIT_SIGNING_KEY", str(tmp_path / "ci.pem"))
    keyring = str(tmp_path / "keyring")
    _generate(capsys, tmp_path / "keyring")
    code, _, err = _run(
        capsys, "keys", "generate", "--vendor", "beta", "--keyring", keyring, "--if-missing"
    )
    assert code == ExitCode.INPUT_ERROR
    assert "is filed under vendor acme; a key binds to one vendor" in _one_error_line(err)
    assert not (tmp_path / "keyring" / "beta").exists()


def test_generate_refuses_a_private_key_path_inside_the_repository(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = paths.kit_home() / "acme-private.pem"
    code, _, err = _run(
        capsys,
        "keys",
        "generate",
        "--vendor",
        VENDOR,
        "--out",
        str(target),
        "--keyring",
        str(tmp_path / "keyring"),
    )
    assert code == ExitCode.INPUT_ERROR
    assert "refusing to write a private key inside the kit checkout" in _one_error_line(err)
    assert not target.exists()
    assert not (tmp_path / "keyring").exists()  # refused before anything was written


def test_generate_refuses_ckit_signing_key_inside_the_repository(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = paths.kit_home() / "signing" / "acme.pem"
    monkeypatch.setenv("CKIT_SIGNING_KEY", str(target))
    code, _, err = _run(
        capsys, "keys", "generate", "--vendor", VENDOR, "--keyring", str(tmp_path / "k")
    )
    assert code == ExitCode.INPUT_ERROR
    assert "inside the kit checkout" in _one_error_line(err)
    assert not target.exists()


def test_generate_refuses_a_vendor_id_that_escapes_the_key_directory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = _run(
        capsys, "keys", "generate", "--vendor", "../../evil", "--keyring", str(tmp_path / "k")
    )
    assert code == ExitCode.INPUT_ERROR
    assert "invalid vendor id '../../evil'" in _one_error_line(err)


def test_encrypted_key_through_the_cli(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    private_config: Path,
    run_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CKIT_KEY_PASSPHRASE", "hunter2-but-longer")
    keyid = _generate(capsys, tmp_path / "keyring", "--encrypt")
    assert b"ENCRYPTED" in (private_config / "ckit" / "keys" / "acme.pem").read_bytes()

    monkeypatch.delenv("CKIT_KEY_PASSPHRASE")
    code, _, err = _run(capsys, "sign", str(run_dir))
    assert code == ExitCode.INPUT_ERROR
    assert "private key is encrypted; set CKIT_KEY_PASSPHRASE" in _one_error_line(err)

    passphrase_file = tmp_path / "passphrase"
    passphrase_file.write_text("hunter2-but-longer\n")
    code, _, _ = _run(capsys, "sign", str(run_dir), "--passphrase-file", str(passphrase_file))
    assert code == ExitCode.OK
    code, out, _ = _run(capsys, "verify", str(run_dir), "--keyring", str(tmp_path / "keyring"))
    assert code == ExitCode.OK
    assert keyid[:16] in out


def test_encrypt_without_a_passphrase_source_fails_instead_of_hanging(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Under pytest stdin is not a terminal, so no prompt is possible.
    code, _, err = _run(
        capsys,
        "keys",
        "generate",
        "--vendor",
        VENDOR,
        "--keyring",
        str(tmp_path / "k"),
        "--encrypt",
    )
    assert code == ExitCode.INPUT_ERROR
    assert "--encrypt needs a passphrase" in _one_error_line(err)


def test_sign_without_a_key_says_how_to_make_one(
    capsys: pytest.CaptureFixture[str], run_dir: Path
) -> None:
    code, _, err = _run(capsys, "sign", str(run_dir))
    assert code == ExitCode.INPUT_ERROR
    assert _one_error_line(err).endswith("create one with `ckit keys generate --vendor acme`")


def test_sign_refuses_a_vendor_the_report_does_not_claim(
    capsys: pytest.CaptureFixture[str], run_dir: Path
) -> None:
    code, _, err = _run(capsys, "sign", str(run_dir), "--vendor", "beta")
    assert code == ExitCode.INPUT_ERROR
    assert "claims vendor 'acme', not 'beta'" in _one_error_line(err)


def test_sign_refuses_a_report_edited_after_a_no_sign_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, run_dir: Path
) -> None:
    _generate(capsys, tmp_path / "keyring")
    write_unsigned_envelope(run_dir)
    report = run_dir / "report.json"
    edited = re.sub(r'"workers": ?1', '"workers":2', report.read_text())
    assert edited != report.read_text()
    report.write_text(edited)
    code, _, err = _run(capsys, "sign", str(run_dir))
    assert code == ExitCode.INPUT_ERROR
    assert "report.json changed since the run wrote report.dsse.json" in _one_error_line(err)


def test_verify_unsigned_envelope_says_how_to_sign(
    capsys: pytest.CaptureFixture[str], run_dir: Path
) -> None:
    write_unsigned_envelope(run_dir)
    code, _, err = _run(capsys, "verify", str(run_dir / ENVELOPE_NAME))
    assert code == ExitCode.VERIFICATION_FAILED
    assert _one_error_line(err) == (
        "ckit: error: step 3: unsigned report (written with --no-sign); "
        "sign it with `ckit sign DIR`"
    )


def test_verify_missing_envelope(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = _run(capsys, "verify", str(tmp_path / "absent.dsse.json"))
    assert code == ExitCode.VERIFICATION_FAILED
    assert "step 1: envelope " in _one_error_line(err)


@pytest.mark.parametrize(
    "argv", [["keys"], ["keys", "generate"], ["keys", "list"], ["sign"], ["verify"]]
)
def test_every_command_has_help_with_an_example(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--help"])
    assert exited.value.code == 0
    help_text = capsys.readouterr().out
    assert re.search(r"^examples?:\n  ckit " + " ".join(argv[:1]), help_text, re.MULTILINE)


def test_keys_without_an_action_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "keys")
    assert code == ExitCode.USAGE_ERROR
    assert "generate" in err


def _ckit(*argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kit", *argv],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )


def test_ckit_subprocess_exit_codes_and_stderr(tmp_path: Path, run_dir: Path) -> None:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    env.pop("CKIT_SIGNING_KEY", None)
    env.pop("CKIT_KEY_PASSPHRASE", None)
    keyring = str(tmp_path / "keyring")
    generated = _ckit("keys", "generate", "--vendor", VENDOR, "--keyring", keyring, env=env)
    assert generated.returncode == 0, generated.stderr
    assert _ckit("sign", str(run_dir), env=env).returncode == 0

    accepted = _ckit("verify", str(run_dir / ENVELOPE_NAME), "--keyring", keyring, env=env)
    assert accepted.returncode == 0
    assert accepted.stdout.startswith("OK: acme report signed by ")

    report = run_dir / "report.json"
    report.write_text(report.read_text().replace("conformant", "CONFORMANT"))
    rejected = _ckit("verify", str(run_dir / ENVELOPE_NAME), "--keyring", keyring, env=env)
    assert rejected.returncode == ExitCode.VERIFICATION_FAILED
    assert rejected.stdout == ""
    assert rejected.stderr.startswith("ckit: error: step 7: report.json was modified")
    assert rejected.stderr.count("\n") == 1
