"""The evidence file (``kit.evidence_file``): what a worker writes comes back to the judge as
it was, and a file a hostile worker forged is one clear error, never code run or memory read
past the file. Each forgery is named after what it tries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from kit.evidence_file import DTYPES, MAGIC
from kit.execution import EvidenceError, load_evidence, save_evidence

EVIDENCE = (
    torch.arange(6, dtype=torch.float32).reshape(2, 3).t(),  # not contiguous
    (torch.tensor(3.5, dtype=torch.bfloat16), torch.empty(0, 4), torch.tensor([True, False])),
    {"values": torch.randn(3, dtype=torch.complex64).conj(), 7: [None, 1.5, float("nan")]},
    [torch.int64, torch.Size([2, 3]), 2 + 3j, "text", -(2**70)],
    torch.ones(3, dtype=torch.float64)[1:],  # an offset view
)


def through_file(tmp_path: Path, evidence: Any) -> Any:
    path = tmp_path / "evidence.bin"
    save_evidence(path, evidence)
    return load_evidence(path)


def assert_same(actual: Any, expected: Any) -> None:
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor) and actual.dtype == expected.dtype
        torch.testing.assert_close(actual, expected.resolve_conj(), atol=0, rtol=0,
                                   equal_nan=True)
    elif isinstance(expected, (list, tuple)):
        assert type(actual) is type(expected) and len(actual) == len(expected)
        for a, e in zip(actual, expected, strict=True):
            assert_same(a, e)
    elif isinstance(expected, dict):
        assert type(actual) is dict and list(actual) == list(expected)
        for key in expected:
            assert_same(actual[key], expected[key])
    elif isinstance(expected, float) and expected != expected:
        assert actual != actual
    else:
        assert type(actual) is type(expected) and actual == expected


def test_every_kind_of_leaf_and_layout_comes_back(tmp_path: Path) -> None:
    assert_same(through_file(tmp_path, EVIDENCE), EVIDENCE)


@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_every_dtype_comes_back_bit_for_bit(tmp_path: Path, dtype: str) -> None:
    raw = torch.arange(48, dtype=torch.uint8)
    tensor = raw.view(DTYPES[dtype]) if DTYPES[dtype] != torch.bool else raw % 2 == 0
    back = through_file(tmp_path, (torch.zeros(1, dtype=torch.bool), tensor))[1]
    assert back.dtype == tensor.dtype and back.shape == tensor.shape
    assert back.view(torch.uint8).tolist() == tensor.view(torch.uint8).tolist()


def test_a_tensor_after_an_odd_sized_one_is_aligned(tmp_path: Path) -> None:
    back = through_file(tmp_path, (torch.tensor([True] * 3), torch.arange(5.0,
                                                                      dtype=torch.float64)))
    assert back[1].data_ptr() % back[1].element_size() == 0
    assert back[1].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def forged(tmp_path: Path, header: Any, data: bytes = b"", magic: bytes = MAGIC) -> Path:
    text = json.dumps(header).encode() if not isinstance(header, bytes) else header
    path = tmp_path / "evidence.bin"
    path.write_bytes(magic + len(text).to_bytes(8, "little") + text + data)
    return path


ONE_FLOAT = {"tree": {"tensor": 0}, "tensors": [["float32", [1], 4]]}

ATTACKS: dict[str, tuple[Any, bytes]] = {
    "pickle_instead_of_data": (b"cos\nsystem\n(S'touch /tmp/pwned'\ntR.", b""),
    "tensor_reads_past_the_file": ({"tree": {"tensor": 0}, "tensors": [["float32", [1000], 4000]]},
                                   bytes(64)),
    "size_disagrees_with_shape": ({"tree": {"tensor": 0}, "tensors": [["float32", [2], 4]]},
                                  bytes(60)),
    "negative_shape": ({"tree": {"tensor": 0}, "tensors": [["float32", [-1], 4]]}, bytes(60)),
    "unknown_dtype_name": ({"tree": {"tensor": 0}, "tensors": [["object", [1], 8]]}, bytes(60)),
    "tensor_index_out_of_range": ({"tree": {"tensor": 5}, "tensors": []}, b""),
    "unknown_node_kind": ({"tree": {"eval": "__import__('os')"}, "tensors": []}, b""),
    "node_of_two_keys": ({"tree": {"value": 1, "list": []}, "tensors": []}, b""),
    "unhashable_dict_key": ({"tree": {"dict": [[{"list": []}, {"value": 1}]]}, "tensors": []},
                            b""),
    "trailing_bytes_smuggled": ({"tree": {"value": 1}, "tensors": []}, b"extra"),
    "deep_nesting": (b'{"tree":' + b'{"list":[' * 100000 + b"]}" * 100000 + b',"tensors":[]}',
                     b""),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_forged_file_is_one_unreadable_error(tmp_path: Path, attack: str) -> None:
    header, data = ATTACKS[attack]
    with pytest.raises(EvidenceError, match="the worker's evidence is unreadable"):
        load_evidence(forged(tmp_path, header, data))
    assert not Path("/tmp/pwned").exists()


def test_a_header_longer_than_the_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "evidence.bin"
    path.write_bytes(MAGIC + (1 << 40).to_bytes(8, "little") + b"{}")
    with pytest.raises(EvidenceError, match="past the end of the file"):
        load_evidence(path)


def test_a_torch_save_file_is_not_evidence(tmp_path: Path) -> None:
    path = tmp_path / "evidence.bin"
    torch.save((torch.ones(2), torch.zeros(1)), path)
    with pytest.raises(EvidenceError, match="not a ckit evidence file"):
        load_evidence(path)


def test_the_well_formed_file_these_forgeries_start_from_is_read(tmp_path: Path) -> None:
    path = forged(tmp_path, ONE_FLOAT, bytes(_pad(ONE_FLOAT)) + b"\x00\x00\x80\x3f")
    assert load_evidence(path).tolist() == [1.0]


def _pad(header: Any) -> int:
    """Zeros from the header's end to the first tensor's 64-byte-aligned start."""
    end = len(MAGIC) + 8 + len(json.dumps(header).encode())
    return -end % 64
