"""The simnpu device behaves like a device: factories, transfers, views, in-place ops, modules."""

from __future__ import annotations

import pytest
import simnpu
import torch

DEVICE = "simnpu"


def test_device_module_reports_one_visible_device() -> None:
    assert torch.simnpu.is_available()
    assert torch.simnpu.device_count() == 1
    assert torch.simnpu.get_device_name(0) == "SimNPU-1 (pure Python)"
    assert simnpu.is_available() and simnpu.device_count() == 1


def test_asking_for_a_second_device_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="invalid device index 1"):
        torch.simnpu.get_device_name(1)


@pytest.mark.parametrize(
    "factory",
    [
        lambda: torch.empty(2, 3, device=DEVICE),
        lambda: torch.zeros(2, 3, device=DEVICE),
        lambda: torch.ones(2, 3, device=DEVICE),
        lambda: torch.randn(2, 3, device=DEVICE),
        lambda: torch.full((2, 3), 7.0, device=DEVICE),
        lambda: torch.arange(6, device=DEVICE).view(2, 3),
        lambda: torch.tensor([[1, 2, 3], [4, 5, 6]], device=DEVICE),
    ],
    ids=["empty", "zeros", "ones", "randn", "full", "arange", "tensor"],
)
def test_factories_place_tensors_on_the_device(factory) -> None:
    tensor = factory()
    assert tensor.device.type == DEVICE
    assert tensor.device == torch.device(DEVICE, 0)
    assert tensor.shape == (2, 3)
    assert tensor.is_simnpu


def test_factory_values_match_the_host() -> None:
    assert torch.equal(torch.ones(2, 3, device=DEVICE).cpu(), torch.ones(2, 3))
    assert torch.equal(torch.arange(5, device=DEVICE).cpu(), torch.arange(5))
    assert torch.equal(torch.full((2,), 7.0, device=DEVICE).cpu(), torch.full((2,), 7.0))


def test_random_factories_share_the_host_seed() -> None:
    torch.manual_seed(1234)
    on_device = torch.randn(8, device=DEVICE).cpu()
    torch.manual_seed(1234)
    assert torch.equal(on_device, torch.randn(8))


def test_fork_rng_saves_and_restores_the_device_generator() -> None:
    torch.manual_seed(7)
    with torch.random.fork_rng(devices=[0], device_type=DEVICE):
        inside = torch.randn(4, device=DEVICE).cpu()
    after = torch.randn(4, device=DEVICE).cpu()
    assert torch.equal(inside, after)


def test_round_trip_returns_a_plain_host_tensor() -> None:
    host = torch.randn(3, 4)
    device_tensor = host.to(DEVICE)
    back = device_tensor.cpu()
    assert type(back) is torch.Tensor
    assert back.device.type == "cpu"
    assert torch.equal(back, host)
    assert torch.equal(device_tensor.to("cpu", torch.float64), host.double())


def test_moving_a_device_tensor_to_the_device_is_a_no_op() -> None:
    tensor = torch.ones(3, device=DEVICE)
    assert tensor.to(DEVICE) is tensor


def test_views_share_device_memory() -> None:
    base = torch.arange(12, dtype=torch.float32, device=DEVICE).view(3, 4)
    transposed = base.t()
    assert transposed.shape == (4, 3)
    assert transposed.stride() == (1, 4)
    assert not transposed.is_contiguous()
    transposed[1].fill_(-1.0)  # select on a transposed view writes column 1 of the base
    base[2, 1:3] = 100.0  # slicing + copy_
    expected = torch.arange(12, dtype=torch.float32).view(3, 4)
    expected[:, 1] = -1.0
    expected[2, 1:3] = 100.0
    assert torch.equal(base.cpu(), expected)


def test_as_strided_and_narrow_views_read_the_right_elements() -> None:
    host = torch.arange(20, dtype=torch.float32)
    device_tensor = host.to(DEVICE)
    strided = device_tensor.as_strided((3, 2), (5, 2), 1)
    assert torch.equal(strided.cpu(), host.as_strided((3, 2), (5, 2), 1))
    assert strided.storage_offset() == 1
    narrowed = device_tensor.view(4, 5).narrow(1, 2, 2).transpose(0, 1)
    assert torch.equal(narrowed.cpu(), host.view(4, 5).narrow(1, 2, 2).transpose(0, 1))
    assert torch.equal(narrowed.contiguous().cpu(), narrowed.cpu())


def test_in_place_ops_update_the_same_tensor() -> None:
    tensor = torch.zeros(2, 3, device=DEVICE)
    before = tensor._version
    tensor.add_(2).mul_(3)
    tensor[0].zero_()
    assert tensor._version > before
    assert torch.equal(tensor.cpu(), torch.tensor([[0.0, 0.0, 0.0], [6.0, 6.0, 6.0]]))


def test_noncontiguous_inputs_compute_like_the_host() -> None:
    host = torch.randn(6, 8)
    device_tensor = host.to(DEVICE)
    host_view, device_view = host[:, ::2].t(), device_tensor[:, ::2].t()
    assert not device_view.is_contiguous()
    assert torch.equal((device_view * 2 + 1).cpu(), host_view * 2 + 1)
    assert torch.equal(device_view.exp().sum(0).cpu(), host_view.exp().sum(0))


def test_out_argument_is_resized_on_the_device() -> None:
    out = torch.empty(0, device=DEVICE)
    result = torch.add(torch.ones(2, 3, device=DEVICE), 1, out=out)
    assert result is out
    assert out.shape == (2, 3)
    assert torch.equal(out.cpu(), torch.full((2, 3), 2.0))


def test_item_and_printing() -> None:
    scalar = torch.tensor(2.5).to(DEVICE)
    assert scalar.item() == 2.5
    assert torch.arange(4, device=DEVICE).sum().item() == 6
    text = repr(torch.tensor([[1.5, 2.0], [3.0, 4.0]]).to(DEVICE))
    assert text == "tensor([[1.5000, 2.0000],\n        [3.0000, 4.0000]], device='simnpu:0')"
    assert str(scalar) == "tensor(2.5000, device='simnpu:0')"
    assert torch.ones(2, device=DEVICE).tolist() == [1.0, 1.0]


def test_module_moves_to_the_device_and_trains() -> None:
    torch.manual_seed(0)
    host_model = torch.nn.Linear(4, 3)
    inputs = torch.randn(5, 4)
    host_model(inputs).square().sum().backward()
    host_grad = host_model.weight.grad.clone()

    device_model = torch.nn.Linear(4, 3)
    device_model.load_state_dict(host_model.state_dict())
    device_model.to(DEVICE)
    assert isinstance(device_model.weight, torch.nn.Parameter)
    assert device_model.weight.device.type == DEVICE
    device_model(inputs.to(DEVICE)).square().sum().backward()
    assert device_model.weight.grad.device.type == DEVICE
    torch.testing.assert_close(device_model.weight.grad.cpu(), host_grad)


def test_assigning_param_data_moves_the_payload_too() -> None:
    model = torch.nn.Linear(2, 2).to(DEVICE)
    model.weight.data = torch.zeros(2, 2, device=DEVICE)
    assert torch.equal(model.weight.cpu(), torch.zeros(2, 2))
    model.half()
    assert model.weight.dtype == torch.float16
    assert model.weight.cpu().dtype == torch.float16


def test_host_tensors_cannot_join_device_ops() -> None:
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.ones(3, device=DEVICE) + torch.ones(3)
    # 0-dim host tensors are scalars, allowed as on CUDA.
    assert torch.equal(
        (torch.ones(3, device=DEVICE) + torch.tensor(1.0)).cpu(), torch.full((3,), 2.0)
    )
