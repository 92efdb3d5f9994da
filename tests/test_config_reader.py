"""kit.config_reader: each mistake in a config file is one line ``<file>: <path>: <problem>``.

Every test writes a real YAML file and reads it through ``Node.read`` (the kit's bounded YAML
loader underneath), so the file name in the message is the one a user would see.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from kit.config_reader import Node, Section
from kit.errors import InputError

#: A small config of the shapes the kit's files use: scalars, a nested section, lists.
CONFIG = """\
name: acme
enabled: true
retries: 3
share: 0.5
released: 2027-01-31
container:
  devices: [/dev/npu0, /dev/npu1]
  limits: {memory: 4g}
"""


def read(tmp_path: Path, text: str) -> tuple[Path, Node]:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path, Node.read(path)


def config(node: Node) -> Section:
    return node.section(
        ("name", "enabled"), ("retries", "share", "released", "container"), what="a config"
    )


def refusal(path: Path, problem: str) -> str:
    return f"{path}: {problem}"


def test_a_well_formed_config_reads_into_typed_values(tmp_path: Path) -> None:
    _, node = read(tmp_path, CONFIG)
    fields = config(node)
    container = fields["container"].section(optional=("devices", "limits"))
    assert fields["name"].text() == "acme"
    assert fields["enabled"].flag() is True
    assert fields["retries"].integer(minimum=0, maximum=10) == 3
    assert fields["share"].number(minimum=0, maximum=1) == 0.5
    assert fields["released"].date() == dt.date(2027, 1, 31)
    assert container["devices"].strings(pattern=re.compile(r"/dev/\S+"), unique=True) == (
        "/dev/npu0", "/dev/npu1"
    )
    assert fields.optional("missing_is_fine", "default", Node.text) == "default"


def test_unknown_key_is_refused_naming_the_file_the_key_and_the_known_keys(
    tmp_path: Path,
) -> None:
    path, node = read(tmp_path, CONFIG + "colour: blue\n")
    with pytest.raises(InputError) as refused:
        config(node)
    assert str(refused.value) == refusal(
        path, "colour: unknown key; the keys here are name, enabled, retries, share, released, "
        "container"
    )


def test_unknown_key_in_a_nested_section_is_refused_with_its_dotted_path(tmp_path: Path) -> None:
    path, node = read(tmp_path, CONFIG.replace("memory: 4g", "memory: 4g, swap: 1g"))
    limits = config(node)["container"].section(optional=("devices", "limits"))["limits"]
    with pytest.raises(InputError) as refused:
        limits.section(optional=("memory",))
    assert str(refused.value) == refusal(
        path, "container.limits.swap: unknown key; the keys here are memory"
    )


def test_missing_required_key_is_refused_naming_the_key(tmp_path: Path) -> None:
    path, node = read(tmp_path, CONFIG.replace("enabled: true\n", ""))
    with pytest.raises(InputError) as refused:
        config(node)
    assert str(refused.value) == refusal(path, "enabled: missing; this key is required")


def test_wrong_type_is_refused_saying_what_was_expected_and_found(tmp_path: Path) -> None:
    path, node = read(tmp_path, CONFIG.replace("name: acme", "name: [acme]"))
    with pytest.raises(InputError) as refused:
        config(node)["name"].text(expected="a vendor name")
    assert str(refused.value) == refusal(path, "name: expected a vendor name, got a list")


def test_a_list_where_a_mapping_belongs_is_refused_at_the_top(tmp_path: Path) -> None:
    path, node = read(tmp_path, "- name: acme\n")
    with pytest.raises(InputError) as refused:
        config(node)
    assert str(refused.value) == refusal(path, "expected a config, got a list")


def test_quoted_boolean_is_refused_as_text(tmp_path: Path) -> None:
    path, node = read(tmp_path, CONFIG.replace("enabled: true", "enabled: 'false'"))
    with pytest.raises(InputError) as refused:
        config(node)["enabled"].flag()
    assert str(refused.value) == refusal(
        path, "enabled: expected true or false (unquoted), got 'false'"
    )


@pytest.mark.parametrize(
    ("retries", "shown"), [("11", "11"), ("-1", "-1"), ("true", "true"), ("2.5", "2.5")]
)
def test_out_of_range_or_non_whole_number_is_refused_with_the_range(
    tmp_path: Path, retries: str, shown: str
) -> None:
    path, node = read(tmp_path, CONFIG.replace("retries: 3", f"retries: {retries}"))
    with pytest.raises(InputError) as refused:
        config(node)["retries"].integer(minimum=0, maximum=10, what="a number of retries")
    assert str(refused.value) == refusal(
        path, f"retries: expected a number of retries from 0 to 10, got {shown}"
    )


@pytest.mark.parametrize("share", ["1.5", ".nan", ".inf", "'0.5'"])
def test_out_of_range_or_non_finite_share_is_refused(tmp_path: Path, share: str) -> None:
    path, node = read(tmp_path, CONFIG.replace("share: 0.5", f"share: {share}"))
    with pytest.raises(InputError) as refused:
        config(node)["share"].number(minimum=0, maximum=1)
    assert str(refused.value).startswith(refusal(path, "share: expected a number from 0 to 1, got"))


def test_nested_path_names_the_list_item(tmp_path: Path) -> None:
    path, node = read(tmp_path, CONFIG.replace("/dev/npu1", "npu1"))
    devices = config(node)["container"].section(optional=("devices", "limits"))["devices"]
    with pytest.raises(InputError) as refused:
        devices.strings(pattern=re.compile(r"/dev/\S+"), expected="a /dev/ path")
    assert str(refused.value) == refusal(
        path, "container.devices.1: expected a /dev/ path, got 'npu1'"
    )


def test_item_listed_twice_is_refused_at_its_second_place(tmp_path: Path) -> None:
    path, node = read(tmp_path, CONFIG.replace("/dev/npu1", "/dev/npu0"))
    devices = config(node)["container"].section(optional=("devices", "limits"))["devices"]
    with pytest.raises(InputError) as refused:
        devices.strings(unique=True)
    assert str(refused.value) == refusal(
        path, "container.devices.1: '/dev/npu0' is listed twice"
    )


def test_choice_outside_the_options_lists_them(tmp_path: Path) -> None:
    path, node = read(tmp_path, CONFIG.replace("name: acme", "name: globex"))
    with pytest.raises(InputError) as refused:
        config(node)["name"].choice(("acme", "initech"))
    assert str(refused.value) == refusal(path, "name: expected one of acme, initech, got 'globex'")


@pytest.mark.parametrize(
    ("released", "shown"),
    [
        ("'2027-01-31'", "'2027-01-31'"),
        ("2027-02-30", "'2027-02-30'"),
        ("2027-01-31T10:00:00", "the date and time 2027-01-31T10:00:00"),
    ],
    ids=["quoted", "impossible", "date-and-time"],
)
def test_date_that_is_not_an_unquoted_real_date_is_refused(
    tmp_path: Path, released: str, shown: str
) -> None:
    path, node = read(tmp_path, CONFIG.replace("released: 2027-01-31", f"released: {released}"))
    with pytest.raises(InputError) as refused:
        config(node)["released"].date()
    assert str(refused.value) == refusal(
        path, f"released: expected a real date YYYY-MM-DD (unquoted), got {shown}"
    )


def test_quoted_date_is_read_where_quoting_is_allowed(tmp_path: Path) -> None:
    _, node = read(tmp_path, CONFIG.replace("released: 2027-01-31", "released: '2027-01-31'"))
    assert config(node)["released"].date(quoted=True) == dt.date(2027, 1, 31)


def test_non_text_key_is_refused(tmp_path: Path) -> None:
    path, node = read(tmp_path, CONFIG + "1: one\n")
    with pytest.raises(InputError) as refused:
        config(node)
    assert str(refused.value) == refusal(path, "keys are text, got the key 1")


def test_a_location_handed_as_text_continues_with_dotted_keys() -> None:
    # Parsers that still pass "<file>: <path>" prefixes read their part through Node.within.
    node = Node.within(["float32", "float8"], "unit.yaml: coverage.variants.large.dtypes")
    with pytest.raises(InputError) as refused:
        node.choices(("float32", "float64"))
    assert str(refused.value) == (
        "unit.yaml: coverage.variants.large.dtypes.1: expected one of float32, float64, "
        "got 'float8'"
    )
