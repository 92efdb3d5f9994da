"""The reference images install the flows' backends: they come from the kit's dependencies."""

from __future__ import annotations

from kit.container.requirements import kit_pyproject, kit_runtime_requirements, render_requirements
from kit.standard import current_torch_release

BACKENDS = ("executorch==1.5.1", "onnxruntime>=1.31,<1.32", "onnx", "onnxscript")


def test_image_requirements_carry_the_flow_backends() -> None:
    requirements = kit_runtime_requirements()
    assert [line for line in requirements if line in BACKENDS] == list(BACKENDS)
    rendered = render_requirements(requirements, "the kit's pyproject.toml", kit_pyproject())
    assert all(f"\n{line}\n" in rendered for line in BACKENDS)
    assert f"torch=={current_torch_release()}" in requirements
