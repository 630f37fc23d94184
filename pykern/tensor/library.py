"""The op modules of the tensor library, imported together: each declares its ops in the
registry (`pykern.ops`) when it is imported, so after `import pykern.tensor.library` every op
of `pk`, `pk.array_api` and `pk.random` is declared. (`pk.linalg`, `pk.fft` and
`pk.nn.functional` declare theirs in their packages.) Add a new op module here.
"""

from __future__ import annotations

from pykern.autograd.library import provide
from pykern.tensor.complex import complex_elementwise, complex_views
from pykern.tensor.conv import conv, pool
from pykern.tensor.create import creation, random
from pykern.tensor.elementwise import functions
from pykern.tensor.gemm import matmul
from pykern.tensor.index import advanced_index, indexing, manipulation
from pykern.tensor.nnops import nn_ops
from pykern.tensor.core.tensor import Tensor
from pykern.tensor.reduce import reduction, scan, searching, sets, sort

MODULES = (complex_elementwise, complex_views, conv, pool, creation, random, functions, matmul,
           advanced_index, indexing, manipulation, nn_ops, reduction, scan, searching, sets,
           sort)

# what the autograd engine uses of tensors (it imports no op module: pykern.autograd.library)
provide(zeros=creation.zeros, assign=functions.assign, view_as_real=complex_views.view_as_real,
        view_as_complex=complex_views.view_as_complex, tensor=Tensor, tensor_type=Tensor)
