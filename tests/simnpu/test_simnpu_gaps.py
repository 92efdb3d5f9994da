"""What simnpu refuses, on purpose, the way an NPU would: the kit must see these as unsupported."""

from __future__ import annotations

import warnings

import pytest
import simnpu  # noqa: F401  (registers the device)
import torch

from kit.outcomes import classify_exception
from kit.results import Status

DEVICE = "simnpu"
NOT_IMPLEMENTED = "not implemented for 'simnpu'"


def _refusal(call) -> NotImplementedError:
    with pytest.raises(NotImplementedError, match=NOT_IMPLEMENTED) as caught:
        call()
    return caught.value


def test_complex_tensors_cannot_be_created_or_uploaded() -> None:
    assert "complex dtype torch.complex64" in str(
        _refusal(lambda: torch.zeros(2, dtype=torch.complex64, device=DEVICE))
    )
    _refusal(lambda: torch.randn(2, dtype=torch.complex64).to(DEVICE))


def test_real_ops_producing_complex_results_are_refused() -> None:
    real = torch.randn(3, 2, device=DEVICE)
    message = str(_refusal(lambda: torch.view_as_complex(real)))
    assert message.startswith("aten::view_as_complex: complex dtype")


def test_matrix_unit_refuses_float64() -> None:
    a = torch.ones(2, 2, dtype=torch.float64, device=DEVICE)
    message = str(_refusal(lambda: a @ a))
    assert message.startswith(f"aten::mm: dtype torch.float64 {NOT_IMPLEMENTED}")
    _refusal(lambda: torch.bmm(a.unsqueeze(0), a.unsqueeze(0)))
    _refusal(lambda: torch.dot(a[0], a[0]))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int8])
def test_matrix_unit_multiplies_integers_exactly_wrapping_as_cpu(dtype: torch.dtype) -> None:
    """Its integer datapath: exact products, wrapping where the dtype overflows as CPU's do."""
    info = torch.iinfo(dtype)
    a = torch.tensor([[info.max, 3], [-7, info.min]], dtype=dtype)
    b = torch.tensor([[2, -1], [5, 9]], dtype=dtype)
    assert torch.equal((a.to(DEVICE) @ b.to(DEVICE)).cpu(), a @ b)
    v = a[0]
    assert torch.equal(torch.mv(a.to(DEVICE), v.to(DEVICE)).cpu(), torch.mv(a, v))


def test_float64_works_outside_the_matrix_unit() -> None:
    x = torch.linspace(0, 1, 5, dtype=torch.float64)
    assert torch.equal((x.to(DEVICE) * 3).exp().cpu(), (x * 3).exp())


def test_fft_is_refused() -> None:
    signal = torch.randn(8, device=DEVICE)
    message = str(_refusal(lambda: torch.fft.rfft(signal)))
    assert message.startswith("aten::_fft_r2c: FFT")


def test_sparse_tensors_are_refused() -> None:
    _refusal(lambda: torch.eye(3).to_sparse().to(DEVICE))


def test_refusals_read_as_unsupported_to_the_kit() -> None:
    refusal = _refusal(lambda: torch.zeros(1, dtype=torch.complex64, device=DEVICE))
    assert classify_exception(refusal) is Status.UNSUPPORTED


def test_autocast_in_float16_is_declined_with_a_warning() -> None:
    x = torch.ones(2, 2, device=DEVICE)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autocast(DEVICE, dtype=torch.float16):
            result = x @ x
    assert result.dtype == torch.float32
    assert any("Disabling autocast" in str(w.message) for w in caught)


def test_autocast_in_bfloat16_follows_cpus_policy_through_autograd() -> None:
    x = torch.ones(2, 2, device=DEVICE, requires_grad=True)
    with torch.autocast(DEVICE, dtype=torch.bfloat16):
        product = x @ x
        loss = torch.nn.functional.mse_loss(product, torch.zeros(2, 2, device=DEVICE))
        softmax = torch.softmax(x, 0)
    assert (product.dtype, loss.dtype, softmax.dtype) == (
        torch.bfloat16, torch.float32, torch.float32)
    loss.backward()
    assert x.grad is not None and x.grad.dtype == torch.float32
