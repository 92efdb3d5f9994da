"""simnpu's fused recurrent cells: the kernels PyTorch calls on any device but CPU.

ATen's LSTM and GRU cells (``nn.LSTM``, ``nn.GRU``, ``nn.LSTMCell``, ``nn.GRUCell``) take a fused
path on every non-CPU tensor (``_thnn_fused_lstm_cell``, ``_thnn_fused_gru_cell``) and their
backward (``..._backward_impl``, ``_thnn_fused_gru_cell_backward``), for which the CPU has no
kernel: without these a PrivateUse1 backend ends every recurrent module UNSUPPORTED. The
workspace each forward hands its backward is simnpu's own: the LSTM's activated gates (input,
forget, cell, output), the GRU's reset, update and new gates, the previous hidden state and the
new gate's hidden part.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

Call = dict[str, Any]


def _biased(gates: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    return gates if bias is None else gates + bias


def lstm_cell(call: Call) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gates = (_biased(call["input_gates"], call["input_bias"])
             + _biased(call["hidden_gates"], call["hidden_bias"]))
    raw_in, raw_forget, raw_cell, raw_out = gates.chunk(4, 1)
    ingate, forget, cell, outgate = (raw_in.sigmoid(), raw_forget.sigmoid(), raw_cell.tanh(),
                                     raw_out.sigmoid())
    cy = forget * call["cx"] + ingate * cell
    hy = outgate * cy.tanh()
    return hy, cy, torch.cat((ingate, forget, cell, outgate), 1)


def lstm_cell_backward(call: Call) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    ingate, forget, cell, outgate = call["workspace"].chunk(4, 1)
    cx, cy = call["cx"], call["cy"]
    grad_hy = call["grad_hy"] if call["grad_hy"] is not None else torch.zeros_like(cy)
    grad_cy = call["grad_cy"] if call["grad_cy"] is not None else torch.zeros_like(cy)
    tanh_cy = cy.tanh()
    grad_c = grad_hy * outgate * (1 - tanh_cy * tanh_cy) + grad_cy
    grad_gates = torch.cat((
        grad_c * cell * ingate * (1 - ingate),
        grad_c * cx * forget * (1 - forget),
        grad_c * ingate * (1 - cell * cell),
        grad_hy * tanh_cy * outgate * (1 - outgate),
    ), 1)
    grad_bias = grad_gates.sum(0) if call["has_bias"] else None
    return grad_gates, grad_c * forget, grad_bias


def gru_cell(call: Call) -> tuple[torch.Tensor, torch.Tensor]:
    hx = call["hx"]
    in_reset, in_update, in_new = _biased(call["input_gates"], call["input_bias"]).chunk(3, 1)
    hid_reset, hid_update, hid_new = _biased(call["hidden_gates"],
                                             call["hidden_bias"]).chunk(3, 1)
    reset = (in_reset + hid_reset).sigmoid()
    update = (in_update + hid_update).sigmoid()
    new = (in_new + reset * hid_new).tanh()
    hy = new + update * (hx - new)
    return hy, torch.cat((reset, update, new, hx, hid_new), 1)


def gru_cell_backward(call: Call) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                                          torch.Tensor | None, torch.Tensor | None]:
    reset, update, new, hx, hid_new = call["workspace"].chunk(5, 1)
    grad_hy: torch.Tensor = call["grad_hy"]
    grad_new = grad_hy * (1 - update) * (1 - new * new)
    grad_update = grad_hy * (hx - new) * update * (1 - update)
    grad_reset = grad_new * hid_new * reset * (1 - reset)
    grad_input = torch.cat((grad_reset, grad_update, grad_new), 1)
    grad_hidden = torch.cat((grad_reset, grad_update, grad_new * reset), 1)
    has_bias = call["has_bias"]
    return (grad_input, grad_hidden, grad_hy * update,
            grad_input.sum(0) if has_bias else None, grad_hidden.sum(0) if has_bias else None)


#: The fused recurrent ops, by qualified name, each computed from its bound arguments.
KERNELS: dict[str, Callable[[Call], Any]] = {
    "aten::_thnn_fused_lstm_cell": lstm_cell,
    "aten::_thnn_fused_lstm_cell_backward_impl": lstm_cell_backward,
    "aten::_thnn_fused_gru_cell": gru_cell,
    "aten::_thnn_fused_gru_cell_backward": gru_cell_backward,
}
