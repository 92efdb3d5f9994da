"""The program cache: a re-run loads the kept program instead of lowering again, and a kept
program that does not check out is ignored and rewritten."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from flows_helpers import LinearRelu, subject

from kit.flows import get_flow
from kit.flows.cache import ProgramCache, default_cache_root
from kit.flows.executorch_xnnpack import ExecutorchXnnpackInt8Flow
from kit.flows.interface import FlowOptions, Lowered, Stage, Subject
from kit.flows.pipeline import run_flow

TEST_ID = "flows/test/linear_relu/executorch_xnnpack_int8"


class CountingInt8Flow(ExecutorchXnnpackInt8Flow):
    """The real int8 flow, counting how often it quantizes and lowers."""

    def __init__(self) -> None:
        self.lowerings = 0

    def lower(self, exported: Any, subject: Subject, options: FlowOptions) -> Any:
        self.lowerings += 1
        return super().lower(exported, subject, options)


def only_entry(root: Path, suffix: str) -> Path:
    (path,) = root.glob(f"*.{suffix}")
    return path


def test_second_run_loads_the_cached_program_without_lowering(tmp_path: Path) -> None:
    flow, cache = CountingInt8Flow(), ProgramCache(tmp_path, "digest-a")
    first = run_flow(flow, subject(TEST_ID, LinearRelu), {}, cache)
    second = run_flow(flow, subject(TEST_ID, LinearRelu), {}, cache)
    assert (first.stage, first.cached, second.stage, second.cached) == (
        Stage.RAN, False, Stage.RAN, True)
    assert flow.lowerings == 1
    assert second.program == first.program
    assert set(second.timings) == {"load", "run"}
    assert first.outputs is not None and second.outputs is not None
    torch.testing.assert_close(second.outputs, first.outputs, atol=0, rtol=0)


def test_tampered_cached_program_is_ignored_and_rewritten(tmp_path: Path) -> None:
    flow, cache = CountingInt8Flow(), ProgramCache(tmp_path, "digest-a")
    run_flow(flow, subject(TEST_ID, LinearRelu), {}, cache)
    program_file = only_entry(tmp_path, "program")
    data = bytearray(program_file.read_bytes())
    data[len(data) // 2] ^= 0x01
    program_file.write_bytes(bytes(data))
    again = run_flow(flow, subject(TEST_ID, LinearRelu), {}, cache)
    assert (again.stage, again.cached, flow.lowerings) == (Stage.RAN, False, 2)
    assert again.program is not None
    assert program_file.read_bytes() == again.program.data
    third = run_flow(flow, subject(TEST_ID, LinearRelu), {}, cache)
    assert (third.cached, flow.lowerings) == (True, 2)


def put_one(root: Path) -> tuple[ProgramCache, Lowered]:
    cache = ProgramCache(root, "digest-a")
    program = Lowered(b"\x01program bytes\x02", "pte", 3, {"aten.cumsum.default": 1})
    cache.put(TEST_ID, "executorch_xnnpack_int8", {}, program)
    return cache, program


def test_cached_program_is_read_back_with_its_metadata(tmp_path: Path) -> None:
    cache, program = put_one(tmp_path)
    assert cache.get(TEST_ID, "executorch_xnnpack_int8", {}) == program


def test_cached_metadata_of_another_test_is_not_trusted(tmp_path: Path) -> None:
    cache, _ = put_one(tmp_path)
    meta = only_entry(tmp_path, "json")
    meta.write_text(meta.read_text().replace(TEST_ID, "flows/test/other/executorch_xnnpack_int8"))
    assert cache.get(TEST_ID, "executorch_xnnpack_int8", {}) is None


def test_cached_metadata_that_is_not_json_is_ignored(tmp_path: Path) -> None:
    cache, _ = put_one(tmp_path)
    only_entry(tmp_path, "json").write_bytes(b"\xff{not json")
    assert cache.get(TEST_ID, "executorch_xnnpack_int8", {}) is None


def test_entry_of_another_kit_digest_or_options_is_a_miss(tmp_path: Path) -> None:
    cache, program = put_one(tmp_path)
    assert ProgramCache(tmp_path, "digest-b").get(TEST_ID, "executorch_xnnpack_int8", {}) is None
    assert cache.get(TEST_ID, "executorch_xnnpack_int8", {"scheme": "per-tensor"}) is None
    assert cache.get(TEST_ID, "executorch_xnnpack", {}) is None
    assert cache.key(TEST_ID, "f", {"a": 1, "b": 2}) == cache.key(TEST_ID, "f", {"b": 2, "a": 1})


def test_default_cache_root_follows_xdg_cache_home(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_root() == tmp_path / "ckit" / "programs"


def test_cache_that_cannot_be_written_does_not_fail_the_run(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache root should be")
    run = run_flow(get_flow("onnxruntime_cpu"),
                   subject("flows/test/linear_relu/onnxruntime_cpu", LinearRelu), {},
                   ProgramCache(blocker, "digest-a"))
    assert (run.stage, run.error, run.cached) == (Stage.RAN, "", False)
