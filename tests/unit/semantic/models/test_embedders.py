"""Where the models run: MODEL_DEVICE as torch and ONNX Runtime name it (a fake torch says whether it sees a GPU)."""

import sys
import types

import pytest

from semantic.errors import ModelUnavailable
from semantic.models.embedders import _onnx_provider, torch_device


@pytest.fixture
def gpu(monkeypatch: pytest.MonkeyPatch):
    """Set `.seen` to say whether the fake torch sees a GPU; `.onnx` for the providers ONNX Runtime offers."""
    state = types.SimpleNamespace(seen=False, onnx=["CPUExecutionProvider"])
    torch = types.SimpleNamespace(cuda=types.SimpleNamespace(is_available=lambda: state.seen))
    onnxruntime = types.SimpleNamespace(get_available_providers=lambda: state.onnx)
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "onnxruntime", onnxruntime)
    return state


def test_auto_is_cuda_where_torch_sees_a_gpu_and_cpu_elsewhere(gpu) -> None:
    assert torch_device("auto") == "cpu" and torch_device("cpu") == "cpu"
    gpu.seen = True
    assert torch_device("auto") == torch_device("cuda") == "cuda"
    assert torch_device("cpu") == "cpu"


def test_cuda_without_a_gpu_is_a_model_that_cannot_load(gpu) -> None:
    with pytest.raises(ModelUnavailable, match="MODEL_DEVICE is cuda, but torch sees no GPU"):
        torch_device("cuda")


def test_onnx_runs_on_the_gpu_only_with_onnxruntime_gpu(gpu) -> None:
    gpu.onnx = ["AzureExecutionProvider", "CPUExecutionProvider"]
    assert _onnx_provider("cpu") == _onnx_provider("cuda") == "CPUExecutionProvider"
    gpu.onnx = ["CUDAExecutionProvider", "CPUExecutionProvider"]
    assert (_onnx_provider("cuda"), _onnx_provider("cpu")) == ("CUDAExecutionProvider", "CPUExecutionProvider")
