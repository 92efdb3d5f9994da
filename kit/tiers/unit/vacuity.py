"""Tests that cannot fail: every reference value lies inside its own bound around zero.

Such a test would pass a kernel that returns zeros (``softmax`` of a 32000-wide row in
float16 under an absolute tolerance of 1e-3: every probability is smaller than that). The check
judges an all-zero result of the right dtypes against the reference with the standard's rules;
if that passes while the reference is not all zero, the test is flagged.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import torch

from kit.standard import Standard
from kit.tiers.unit.cases import unit_case_called_once
from kit.tiers.unit.checking import case_bound, compared_part, cpu_references
from kit.tiers.unit.trees import map_tensors, numel_of, tensor_leaves


def unfailable_tests(standard: Standard, test_ids: Iterable[str]) -> Iterator[str]:
    for test_id in test_ids:
        if _zeros_would_pass(standard, test_id):
            yield test_id


def _zeros_would_pass(standard: Standard, test_id: str) -> bool:
    case = unit_case_called_once(standard, test_id)
    with torch.no_grad():
        references = cpu_references(case)
    like = compared_part(references.same_dtype, case.comparison)
    reference = compared_part(references.reference, case.comparison)
    rounded = [
        ref.to(out.dtype)
        for (_, ref), (_, out) in zip(tensor_leaves(reference), tensor_leaves(like), strict=True)
    ]
    if not any(bool(t.ne(0).any()) for t in rounded):
        return False  # zero is the right answer in the output dtype: a wrong one still fails
    zeros: Any = map_tensors(like, torch.zeros_like)
    bound = case_bound(standard, case, case.make_inputs("cpu", False), numel_of(like))
    return bound.judge(zeros, reference).passed
