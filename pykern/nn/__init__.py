"""`pk.nn`: neural-network layers with PyTorch's names, shapes, initialisations and
`state_dict()` keys, built on pykern tensors and autograd; `pk.nn.functional` holds the
functional forms and `pk.nn.init` the initialisations.

    model = pk.nn.Sequential(pk.nn.Linear(64, 128), pk.nn.ReLU(), pk.nn.Linear(128, 10))
    loss = pk.nn.functional.cross_entropy(model(x), labels)
    loss.backward()
"""

from __future__ import annotations

from pykern.nn import functional, init, utils
from pykern.nn.activation import (GELU, Dropout, Dropout1d, Dropout2d, Identity, LogSoftmax,
                                  ReLU, Sigmoid, SiLU, Softmax, Tanh)
from pykern.nn.attention import MultiheadAttention
from pykern.nn.batchnorm import BatchNorm1d, BatchNorm2d
from pykern.nn.container import ModuleDict, ModuleList, Sequential
from pykern.nn.conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from pykern.nn.flatten import Flatten, Unflatten
from pykern.nn.linear import Linear
from pykern.nn.loss import CrossEntropyLoss, MSELoss, NLLLoss
from pykern.nn.module import IncompatibleKeys, Module
from pykern.nn.normalization import LayerNorm
from pykern.nn.parameter import Parameter
from pykern.nn.pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from pykern.nn.sparse import Embedding



def __getattr__(name: str) -> object:
    """`pk.nn.parallel` (DistributedDataParallel), imported on first use: it belongs to the
    distributed layer above pk.nn, which `import pykern` leaves unloaded."""
    if name == "parallel":
        import importlib
        return importlib.import_module("pykern.nn.parallel")
    raise AttributeError(f"module 'pykern.nn' has no attribute {name!r}")


__all__ = ["functional", "init", "utils", "Module", "Parameter", "IncompatibleKeys", "Linear",
           "Embedding", "LayerNorm", "BatchNorm1d", "BatchNorm2d", "Conv1d", "Conv2d",
           "ConvTranspose1d", "ConvTranspose2d", "MaxPool2d", "AvgPool2d",
           "AdaptiveAvgPool2d", "Dropout", "Dropout1d", "Dropout2d", "Flatten", "Unflatten",
           "Identity", "ReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax",
           "CrossEntropyLoss", "NLLLoss", "MSELoss", "Sequential", "ModuleList", "ModuleDict",
           "MultiheadAttention"]
