"""Input digests: what makes a unit test id name the same inputs forever.

Recorded device outputs (a vendor's earlier runs, the CUDA corpus) are keyed by test id, so an
id must never silently start naming other inputs: a torch release that reorders OpInfo's
samples, a changed seed or a changed variant builder would do exactly that. The locked list
records, per id, a sha256 over the inputs the CPU reference is computed from: every tensor's
dtype, shape, strides and values, every non-tensor argument, in order; ``ckit standard lock``
refuses an id whose digest changed.

Some seeded inputs depend on the CPU in their last bits (``uniform_`` rounds otherwise on ATen's
scalar path, a matrix product otherwise per BLAS branch): the digests the lock records and every
digest compared with them are computed on one canonical CPU path, in a child process
(``kit.tiers.unit.canonical_digests``). A run is unaffected: its reference is computed from the
very inputs the device gets, whatever CPU generated them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import torch

from kit.standard import Standard
from kit.tiers.unit.checking import UnitCase

#: Hex digits kept of the sha256: 64 bits tell apart the inputs of one id over its lifetime.
DIGEST_LENGTH = 16


def input_digest(value: Any) -> str:
    """The truncated sha256 of a tree of inputs (tensors, lists, tuples, dicts, plain values)."""
    digest = hashlib.sha256()
    _feed(digest, value)
    return digest.hexdigest()[:DIGEST_LENGTH]


def case_digest(case: UnitCase, extra: Any = ()) -> str:
    """The digest of a unit case's CPU inputs (as the check builds them), its module
    parameters, and ``extra`` (arguments the case binds outside its inputs)."""
    with torch.no_grad():
        inputs = case.make_inputs("cpu", False)
    return input_digest((inputs, case.extra_operands, extra))


def unit_test_digest(standard: Standard, test_id: str) -> str:
    from kit.tiers.unit.cases import OPSPEC_PREFIX, unit_case_called_once
    from kit.tiers.unit.module_ids import MODULE_PREFIX
    from kit.tiers.unit.optim_ids import OPTIM_PREFIX

    case = unit_case_called_once(standard, test_id)
    extra: Any = ()
    if test_id.startswith(OPSPEC_PREFIX):
        extra = _opspec_arguments(standard, test_id)
    if test_id.startswith(OPTIM_PREFIX):
        from kit.tiers.unit.optim_cases import optim_arguments

        extra = optim_arguments(test_id)
    if test_id.startswith(MODULE_PREFIX):
        from kit.tiers.unit.module_cases import module_arguments

        extra = module_arguments(test_id)
    return case_digest(case, extra)


def _opspec_arguments(standard: Standard, test_id: str) -> Any:
    """An op spec case's call target and the arguments its template binds (not inputs)."""
    from kit.tiers.unit.config import load_unit_config
    from kit.tiers.unit.opspecs import find_case

    case = find_case(load_unit_config(standard), test_id)
    template = case.template
    return (
        template.target,
        template.is_module,
        template.init_args,
        dict(template.init_kwargs),
        template.args,
        dict(template.kwargs),
        dict(case.bindings),
    )


def _feed(digest: Any, value: Any) -> None:
    if isinstance(value, torch.Tensor):
        tensor = value.detach()
        header = f"T{tensor.dtype}{tuple(tensor.shape)}{tensor.stride()};"
        digest.update(header.encode())
        if tensor.numel():
            # The bytes in place (no copy): a scale input is 64 MiB.
            digest.update(tensor.contiguous().reshape(-1).view(torch.uint8).numpy().data)
    elif isinstance(value, (list, tuple)):
        digest.update(f"{type(value).__name__}[{len(value)}](".encode())
        for item in value:
            _feed(digest, item)
        digest.update(b")")
    elif isinstance(value, Mapping):
        digest.update(f"dict[{len(value)}](".encode())
        for key in sorted(value, key=repr):
            digest.update(f"{key!r}:".encode())
            _feed(digest, value[key])
        digest.update(b")")
    else:
        digest.update(f"{_plain(value)};".encode())


def _plain(value: Any) -> str:
    """A process-independent text for a non-tensor argument (no ``at 0x...`` addresses)."""
    if callable(value) and not isinstance(value, type):
        return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', value)}"
    return repr(value)
