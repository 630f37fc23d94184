"""The one table from ATen operators to pykern: an entry per ATen overload, naming the pykern
op it maps to and the adapter that takes ATen's arguments.

The `pk` column is the name of the pykern op (or "views", "memory", "decomposed" for what is
not one op). The entries of pykern's elementwise ops are not written here: each op declares its
ATen operators in the op registry (`pykern.ops`), and `pykern.torch.from_registry` makes their
entries. Structured ATen operators list only their `.out` overload: PyTorch derives the
functional and in-place overloads from it for every backend (docs/pytorch.md, "How it works").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

import pykern as pk
from pykern.torch import (attention_ops, conv_ops, copies, distances, extra_ops, fft_ops, foreach,
                          from_registry, indexing, linalg_ops, memory, more_ops, nn_ops,
                          polynomials, pooling, products, random_ops, reductions, shapes, special,
                          views)
from pykern.torch import elementwise as ew
from pykern.torch.decomposed import (decomposed, decomposed_inplace, decomposed_out,
                                     grid_sampler_2d_backward, loss_backward, pad_backward,
                                     upsample_backward)

aten = torch.ops.aten


@dataclass(frozen=True)
class Aten:
    """One ATen overload ("add.out") and what runs it on "pykern"."""

    overload: str
    pk: str
    impl: Callable[..., object]
    key: str = "PrivateUse1"  # the dispatch key it is registered on


def _empty_memory_format(size: list[int], dtype: torch.dtype | None = None,
                         layout: object = None, device: torch.device | None = None,
                         pin_memory: bool | None = None,
                         memory_format: torch.memory_format | None = None) -> torch.Tensor:
    return memory.empty(size, dtype, device, memory_format)


def _empty_strided(size: list[int], stride: list[int], dtype: torch.dtype | None = None,
                   layout: object = None, device: torch.device | None = None,
                   pin_memory: bool | None = None) -> torch.Tensor:
    return memory.empty_strided(size, stride, dtype, device)


MEMORY = (
    Aten("empty.memory_format", "memory", _empty_memory_format),
    Aten("empty_strided", "memory", _empty_strided),
    Aten("copy_", "memory", copies.copy_),
    Aten("_copy_from", "memory", lambda self, dst, non_blocking=False:
         copies.copy_(dst, self, non_blocking)),
    Aten("_local_scalar_dense", "memory", copies.local_scalar_dense),
    Aten("resize_", "memory", views.resize_),
    Aten("set_", "memory", views.set_empty),
)

VIEWS = tuple(Aten(name, "views", views.metadata_only(overload)) for name, overload in (
    ("as_strided", aten.as_strided.default),
    ("view", aten.view.default),
    ("_reshape_alias", aten._reshape_alias.default),
    ("unfold", aten.unfold.default),
    ("view_as_real", aten.view_as_real.default),
    ("view_as_complex", aten.view_as_complex.default),
    ("set_.source_Storage", aten.set_.source_Storage),
    ("set_.source_Storage_storage_offset", aten.set_.source_Storage_storage_offset),
    ("set_.source_Tensor", aten.set_.source_Tensor),
))

_F = "float"  # integers computed as the default float dtype

# The elementwise operators that are rows of pykern's unary and binary tables come from the
# op registry (`pykern.torch.from_registry`, appended to the table below); these are the
# elementwise ATen operators that are not one of those rows.
UNARY = tuple(Aten(f"{name}.out", label, ew.unary(fn, "promote")) for name, label, fn in (
    ("frac", "pk.trunc", ew.frac), ("sgn", "pk.sign", ew.sgn),
    ("conj_physical", "pk.conj", pk.conj),
))

_STEPS = {"xlogy.OutTensor", "logaddexp2.out"}  # compound ops

BINARY = tuple(Aten(name, label, ew.binary(fn, rule, name in _STEPS))
               for name, label, fn, rule in (
    ("remainder.Scalar_out", "pk.remainder", pk.remainder, "promote"),
    ("fmod.Tensor_out", "pk.remainder", ew.fmod, "promote"),
    ("fmod.Scalar_out", "pk.remainder", ew.fmod, "promote"),
    ("logaddexp2.out", "pk.logaddexp", ew.logaddexp2, "promote"),
    ("fmax.out", "pk.maximum", ew.fmax, "promote"),
    ("fmin.out", "pk.minimum", ew.fmin, "promote"),
    ("xlogy.OutTensor", "pk.log", ew.xlogy, _F),
    ("heaviside.out", "pk.where", ew.heaviside, "promote"),
))

POINTWISE = (
    Aten("add.out", "pk.add", ew.binary_alpha(pk.add)),
    Aten("sub.out", "pk.subtract", ew.binary_alpha(pk.subtract)),
    Aten("div.out_mode", "pk.divide", ew.div_mode),
    Aten("round.decimals_out", "pk.round", ew.round_decimals),
    Aten("nan_to_num.out", "pk.where", ew.nan_to_num),
    Aten("clamp.out", "pk.clip", ew.clamp),
    Aten("clamp.Tensor_out", "pk.clip", ew.clamp),
    Aten("clamp_min.out", "pk.maximum", ew.clamp_min),
    Aten("clamp_min.Tensor_out", "pk.maximum", ew.clamp_min),
    Aten("clamp_max.out", "pk.minimum", ew.clamp_max),
    Aten("clamp_max.Tensor_out", "pk.minimum", ew.clamp_max),
    Aten("where.self_out", "pk.where", ew.where_out),
    Aten("where.self", "pk.where", ew.where_self),
    Aten("linalg_cross.out", "pk.multiply", ew.cross),
    Aten("complex.out", "pk.view_as_complex", ew.complex_out),
    Aten("gcd.out", "pk.remainder", ew.binary(ew.gcd)),
    Aten("lcm.out", "pk.remainder", ew.binary(ew.lcm)),
    Aten("polar.out", "pk.view_as_complex", ew.polar_out),
    Aten("lerp.Scalar_out", "pk.add", ew.lerp),
    Aten("lerp.Tensor_out", "pk.add", ew.lerp),
    Aten("addcmul.out", "pk.multiply", ew.addcmul),
    Aten("addcdiv.out", "pk.divide", ew.addcdiv),
    Aten("isnan", "pk.isnan", ew.predicate(pk.isnan)),
    Aten("relu", "pk.relu", ew.unary_functional(pk.relu)),
    Aten("floor_divide", "pk.floor_divide", ew.binary_functional(ew.floor_divide)),
    Aten("floor_divide_.Tensor", "pk.floor_divide", ew.binary_inplace(ew.floor_divide)),
    Aten("floor_divide.Scalar", "pk.floor_divide", ew.binary_functional(ew.floor_divide)),
    Aten("floor_divide_.Scalar", "pk.floor_divide", ew.binary_inplace(ew.floor_divide)),
    Aten("relu_", "pk.relu", ew.unary_inplace(pk.relu)),
)

R = reductions

REDUCTIONS = (
    Aten("sum.IntList_out", "pk.sum", R.sum_out),
    Aten("nansum.out", "pk.sum", R.nansum_out),
    Aten("mean.out", "pk.mean", R.mean_out),
    Aten("prod.int_out", "pk.prod", R.prod_int_out),
    Aten("prod", "pk.prod", R.prod_all),
    Aten("amax.out", "pk.max", R.amax_out),
    Aten("amin.out", "pk.min", R.amin_out),
    Aten("max", "pk.max", R.max_all),
    Aten("min", "pk.min", R.min_all),
    Aten("max.dim_max", "pk.max", R.max_dim_out),
    Aten("min.dim_min", "pk.min", R.min_dim_out),
    Aten("aminmax.out", "pk.min", R.aminmax_out),
    Aten("argmax.out", "pk.argmax", R.argmax_out),
    Aten("argmin.out", "pk.argmin", R.argmin_out),
    Aten("all.out", "pk.all", R.all_out),
    Aten("all.dims_out", "pk.all", R.all_out),
    Aten("all.all_out", "pk.all", R.all_all_out),
    Aten("any.out", "pk.any", R.any_out),
    Aten("any.dims_out", "pk.any", R.any_out),
    Aten("any.all_out", "pk.any", R.any_all_out),
    Aten("var.correction_out", "pk.var", R.var_out),
    Aten("std.correction_out", "pk.std", R.std_out),
    Aten("var.correction", "pk.var", R.var_functional),
    Aten("std.correction", "pk.std", R.std_functional),
    Aten("var_mean.correction", "pk.var", R.var_mean),
    Aten("std_mean.correction", "pk.std", R.std_mean),
    Aten("linalg_vector_norm.out", "pk.sum", R.vector_norm_out),
    Aten("logsumexp.out", "pk.logaddexp", R.logsumexp_out),
    Aten("cumsum.out", "pk.cumsum", R.cumsum_out),
    Aten("cumprod.out", "pk.cumprod", R.cumprod_out),
    Aten("count_nonzero.dim_IntList", "pk.count_nonzero", R.count_nonzero),
    Aten("sort.values_stable", "pk.argsort", R.sort_out),
    Aten("topk.values", "pk.topk", R.topk_out),
    Aten("kthvalue.values", "pk.argsort", R.kthvalue_out),
)

PRODUCTS = (
    Aten("mm.out", "pk.matmul", products.mm_out),
    Aten("bmm.out", "pk.matmul", products.bmm_out),
    Aten("addmm.out", "pk.matmul", products.addmm_out),
    Aten("baddbmm.out", "pk.matmul", products.baddbmm_out),
    Aten("addbmm.out", "pk.matmul", products.addbmm_out),
    Aten("addbmm", "pk.matmul", products.addbmm),
    Aten("addbmm_", "pk.matmul", products.addbmm_),
    Aten("addmv.out", "pk.matmul", products.addmv_out),
    Aten("addr.out", "pk.multiply", products.addr_out),
    Aten("addr", "pk.multiply", products.addr),
    Aten("dot", "pk.sum", products.dot),
    Aten("vdot", "pk.sum", products.vdot),
)

SHAPES = (
    Aten("fill_.Scalar", "pk.full", shapes.fill_),
    Aten("fill_.Tensor", "pk.full", shapes.fill_),
    Aten("zero_", "pk.zeros", shapes.zero_),
    Aten("arange.start_out", "pk.arange", shapes.arange_out),
    Aten("linspace.out", "pk.arange", shapes.linspace_out),
    Aten("linspace.Tensor_Tensor_out", "pk.arange", shapes.linspace_out),
    Aten("linspace.Tensor_Scalar_out", "pk.arange", shapes.linspace_out),
    Aten("linspace.Scalar_Tensor_out", "pk.arange", shapes.linspace_out),
    Aten("logspace.out", "pk.pow", shapes.logspace_out),
    Aten("logspace.Tensor_Tensor_out", "pk.pow", shapes.logspace_out),
    Aten("logspace.Tensor_Scalar_out", "pk.pow", shapes.logspace_out),
    Aten("logspace.Scalar_Tensor_out", "pk.pow", shapes.logspace_out),
    Aten("eye.out", "pk.eye", shapes.eye_out),
    Aten("eye.m_out", "pk.eye", shapes.eye_out),
    Aten("_efficientzerotensor", "pk.zeros", shapes.efficient_zeros),
    Aten("tril_indices", "pk.tril + nonzero", shapes.triangle_indices(upper=False)),
    Aten("triu_indices", "pk.triu + nonzero", shapes.triangle_indices(upper=True)),
    Aten("tril.out", "pk.tril", shapes.tril_out),
    Aten("triu.out", "pk.triu", shapes.triu_out),
    Aten("cat.out", "pk.concat", shapes.cat_out),
    Aten("flip", "pk.Tensor.flip", shapes.flip),
    Aten("roll", "xp.roll", shapes.roll),
)

INDEXING = (
    Aten("index.Tensor_out", "pk.Tensor.__getitem__", indexing.index_out),
    Aten("_index_put_impl_", "pk.Tensor.__setitem__", indexing.index_put_impl_),
    Aten("gather.out", "pk.take_along_axis", indexing.gather_out),
    Aten("scatter.src_out", "pk.Tensor.__setitem__", indexing.scatter_src_out),
    Aten("scatter.value_out", "pk.Tensor.__setitem__", indexing.scatter_value_out),
    Aten("scatter.reduce_out", "segmented scan", extra_ops.scatter_legacy_reduce_out),
    Aten("scatter.value_reduce_out", "segmented scan", extra_ops.scatter_value_reduce_out),
    Aten("scatter_add.out", "pk.scatter_add", indexing.scatter_add_out),
    Aten("index_select.out", "pk.take", indexing.index_select_out),
    Aten("index_select", "pk.take", indexing.index_select),
    Aten("masked_fill_.Scalar", "pk.where", indexing.masked_fill_),
    Aten("masked_fill_.Tensor", "pk.where", indexing.masked_fill_),
    Aten("masked_select", "pk.Tensor.__getitem__", indexing.masked_select),
    Aten("nonzero", "xp.nonzero", indexing.nonzero),
    Aten("take", "pk.take", indexing.take),
)

RANDOM = (
    Aten("normal_", "random", random_ops.normal_),
    Aten("uniform_", "random", random_ops.uniform_),
    Aten("bernoulli_.float", "random", random_ops.bernoulli_float_),
    Aten("bernoulli_.Tensor", "random", random_ops.bernoulli_tensor_),
    Aten("bernoulli.out", "random", random_ops.bernoulli_out),
    Aten("random_", "random", random_ops.random_),
    Aten("random_.to", "random", random_ops.random_to_),
    Aten("random_.from", "random", random_ops.random_from_),
    Aten("exponential_", "random", random_ops.exponential_),
    Aten("geometric_", "random", random_ops.geometric_),
    Aten("log_normal_", "random", random_ops.log_normal_),
    Aten("cauchy_", "random", random_ops.cauchy_),
    Aten("randperm.generator_out", "random", random_ops.randperm_out),
    Aten("multinomial", "random", random_ops.multinomial),
    Aten("native_dropout", "random", random_ops.native_dropout),
    Aten("native_dropout_backward", "pk.where", random_ops.native_dropout_backward),
)

NN = (
    Aten("_softmax.out", "pk.softmax", nn_ops.softmax_out),
    Aten("_log_softmax.out", "pk.log_softmax", nn_ops.log_softmax_out),
    Aten("_softmax_backward_data.out", "pk.sum", nn_ops.softmax_backward_out),
    Aten("_log_softmax_backward_data.out", "pk.sum", nn_ops.log_softmax_backward_out),
    Aten("native_layer_norm", "pk.layer_norm", nn_ops.native_layer_norm),
    Aten("native_layer_norm_backward", "pk.mean", nn_ops.native_layer_norm_backward),
    Aten("native_batch_norm", "pk.var", nn_ops.native_batch_norm),
    Aten("_native_batch_norm_legit", "pk.var", nn_ops.native_batch_norm),
    Aten("_native_batch_norm_legit.no_stats", "pk.var", nn_ops.batch_norm_no_stats),
    Aten("_batch_norm_with_update", "pk.var", nn_ops.batch_norm_with_update),
    Aten("native_batch_norm_backward", "pk.mean", nn_ops.native_batch_norm_backward),
    Aten("batch_norm_backward", "pk.mean", nn_ops.batch_norm_backward),
    Aten("embedding_dense_backward", "pk.scatter_add", nn_ops.embedding_dense_backward),
    Aten("nll_loss_forward.output", "pk.take_along_axis", nn_ops.nll_loss_forward_out),
    Aten("nll_loss_backward.grad_input", "pk.Tensor.__setitem__",
         nn_ops.nll_loss_backward_out),
    Aten("nll_loss2d_forward.output", "pk.take_along_axis", nn_ops.nll_loss2d_forward_out),
    Aten("nll_loss2d_backward.grad_input", "pk.Tensor.__setitem__",
         nn_ops.nll_loss2d_backward_out),
    Aten("max_pool2d_with_indices.out", "pk.nn.functional.max_pool2d", nn_ops.max_pool2d_out),
    Aten("max_pool2d_with_indices_backward.grad_input", "pk.scatter_add",
         nn_ops.max_pool2d_backward_out),
    Aten("avg_pool2d.out", "pk.nn.functional.avg_pool2d", nn_ops.avg_pool2d_out),
    Aten("adaptive_max_pool2d.out", "composed: gather + max", pooling.adaptive_max_pool(2)),
    Aten("adaptive_max_pool3d.out", "composed: gather + max", pooling.adaptive_max_pool(3)),
    Aten("adaptive_max_pool2d_backward.grad_input", "pk.scatter_add",
         pooling.adaptive_max_pool_backward(2)),
    Aten("adaptive_max_pool3d_backward.grad_input", "pk.scatter_add",
         pooling.adaptive_max_pool_backward(3)),
    Aten("max_pool3d_with_indices_backward.grad_input", "pk.scatter_add",
         pooling.max_pool3d_backward),
    Aten("max_pool3d_with_indices_backward", "pk.scatter_add", pooling.max_pool3d_backward),
    Aten("_cdist_forward", "composed: vector_norm of differences", distances.cdist_forward),
    Aten("_cdist_backward", "composed", distances.cdist_backward),
    Aten("_pdist_forward", "composed: vector_norm of differences", distances.pdist_forward),
    Aten("_pdist_backward", "composed", distances.pdist_backward),
    Aten("_adaptive_avg_pool3d", "pk.matmul per axis", pooling.adaptive_avg_pool3d),
    Aten("_adaptive_avg_pool3d_backward", "pk.matmul per axis",
         pooling.adaptive_avg_pool3d_backward),
    Aten("avg_pool3d.out", "pk.matmul per axis", pooling.avg_pool3d_out),
    Aten("avg_pool3d_backward.grad_input", "pk.matmul per axis",
         pooling.avg_pool3d_backward_out),
    Aten("hardshrink_backward.grad_input", "pk.where", pooling.shrink_backward(hard=True)),
    Aten("softshrink_backward.grad_input", "pk.where", pooling.shrink_backward(hard=False)),
    Aten("avg_pool2d_backward.grad_input", "pk.nn.functional.avg_pool2d",
         nn_ops.avg_pool2d_backward_out),
    Aten("_adaptive_avg_pool2d", "pk.nn.functional.adaptive_avg_pool2d",
         nn_ops.adaptive_avg_pool2d),
    Aten("_adaptive_avg_pool2d_backward", "pk.nn.functional.adaptive_avg_pool2d",
         nn_ops.adaptive_avg_pool2d_backward),
    Aten("convolution_overrideable", "pk.conv2d", conv_ops.convolution),
    Aten("convolution_backward_overrideable", "pk.conv2d", conv_ops.convolution_backward),
    Aten("scaled_dot_product_attention", "pk.attention",
         attention_ops.scaled_dot_product_attention, key="AutogradPrivateUse1"),
)


L = linalg_ops

LINALG = (
    Aten("linalg_matrix_exp", "Padé with pk.linalg.solve", L.matrix_exp),
    Aten("lu_unpack.out", "pk.tril/triu + pivots", L.lu_unpack_out),
    Aten("linalg_lu_factor_ex.out", "pykern.linalg.lu.lu_factor", L.lu_factor_ex_out),
    Aten("linalg_lu_solve.out", "pykern.linalg.triangular.solve_triangular", L.lu_solve_out),
    Aten("_linalg_solve_ex.result", "pk.linalg.solve", L.solve_ex_out),
    Aten("linalg_inv_ex.inverse", "pk.linalg.inv", L.inv_ex_out),
    Aten("_linalg_det.result", "pk.linalg.det", L.det_out),
    Aten("_linalg_slogdet.sign", "pk.linalg.slogdet", L.slogdet_out),
    Aten("linalg_lu.out", "pykern.linalg.lu.lu_factor", L.lu_out),
    Aten("linalg_cholesky_ex.L", "pk.linalg.cholesky", L.cholesky_ex_out),
    Aten("cholesky", "pk.linalg.cholesky", L.cholesky),
    Aten("_cholesky_solve_helper", "pykern.linalg.triangular.solve_triangular",
         L.cholesky_solve_helper),
    Aten("cholesky_inverse", "pykern.linalg.triangular.solve_triangular", L.cholesky_inverse),
    Aten("linalg_solve_triangular.out", "pykern.linalg.triangular.solve_triangular",
         L.solve_triangular_out),
    Aten("linalg_solve_triangular", "pykern.linalg.triangular.solve_triangular",
         L.solve_triangular_functional),
    Aten("triangular_solve.X", "pykern.linalg.triangular.solve_triangular",
         L.triangular_solve_out),
    Aten("_linalg_eigh.eigenvalues", "pk.linalg.eigh", L.eigh_out),
    Aten("_linalg_svd.U", "pk.linalg.svd", L.svd_out),
    Aten("linalg_qr.out", "pk.linalg.qr", L.qr_out),
)

FFT = (
    Aten("_fft_r2c.out", "pk.fft.rfftn", fft_ops.fft_r2c_out),
    Aten("_fft_c2c.out", "pk.fft.fftn", fft_ops.fft_c2c_out),
    Aten("_fft_c2r.out", "pk.fft.irfftn", fft_ops.fft_c2r_out),
    Aten("_fft_r2c", "pk.fft.rfftn", fft_ops.fft_r2c),
    Aten("_fft_c2c", "pk.fft.fftn", fft_ops.fft_c2c),
    Aten("_fft_c2r", "pk.fft.irfftn", fft_ops.fft_c2r),
)


M = more_ops


COMPOSED = (
    Aten("nll_loss2d_forward", "pk.take_along_axis", M.nll_loss2d_forward),
    Aten("nll_loss2d_backward", "pk.Tensor.__setitem__", M.nll_loss2d_backward),
    Aten("nansum", "pk.sum", M.nansum),
    Aten("norm.out", "pk.sum", R.norm_out),
    Aten("norm.dtype_out", "pk.sum", R.norm_dtype_out),
    Aten("log_sigmoid_forward", "pk.log1p", M.log_sigmoid_forward),
    Aten("log_sigmoid_backward", "pk.sigmoid", M.log_sigmoid_backward),
    Aten("equal", "pk.equal", M.equal),
    Aten("trace", "pk.linalg.diagonal", M.trace),
    Aten("max_unpool2d", "pk.Tensor.__setitem__", M.max_unpool2d),
    Aten("put_", "pk.Tensor.__setitem__", M.put_),
    Aten("masked_scatter_", "pk.take", M.masked_scatter_),
    Aten("index_fill_.int_Scalar", "pk.Tensor.__setitem__", M.index_fill_),
    Aten("index_fill_.int_Tensor", "pk.Tensor.__setitem__", M.index_fill_),
    Aten("median", "pk.argsort", M.median_all),
    Aten("nanmedian", "pk.argsort", M.nanmedian_all),
    Aten("median.dim_values", "pk.argsort", M.median_dim_out),
    Aten("nanmedian.dim_values", "pk.argsort", M.nanmedian_dim_out),
    Aten("_unique2", "pk.argsort", M.unique2),
    Aten("unique_consecutive", "pk.cumsum", M.unique_consecutive),
    Aten("searchsorted.Tensor", "xp.searchsorted", M.searchsorted),
    Aten("searchsorted.Scalar", "xp.searchsorted", M.searchsorted),
    Aten("bucketize.Tensor", "xp.searchsorted", M.bucketize),
    Aten("bucketize.Scalar", "xp.searchsorted", M.bucketize),
    Aten("histc", "pk.scatter_add", M.histc),
    Aten("bincount", "pk.scatter_add", M.bincount),
    Aten("_cummax_helper", "pk.maximum", M.cummax_helper),
    Aten("_cummin_helper", "pk.minimum", M.cummin_helper),
    Aten("_logcumsumexp", "pk.logaddexp", M.logcumsumexp),
    Aten("scatter_reduce.two_out", "segmented scan", extra_ops.scatter_reduce_out),
    Aten("index_reduce.out", "segmented scan", extra_ops.index_reduce_out),
    Aten("mode", "pk.argsort", extra_ops.mode),
    Aten("isin.Tensor_Tensor_out", "xp.searchsorted", extra_ops.isin_out),
    Aten("isin.Tensor_Scalar_out", "pk.equal", extra_ops.isin_out),
    Aten("isin.Scalar_Tensor_out", "xp.searchsorted", extra_ops.isin_out),
    Aten("frexp.Tensor_out", "pk.log2", extra_ops.frexp_out),
    Aten("repeat_interleave.Tensor", "xp.searchsorted", extra_ops.repeat_interleave),
    Aten("angle", "pk.atan2", extra_ops.angle),
    Aten("channel_shuffle", "views", extra_ops.channel_shuffle),
    Aten("_prelu_kernel", "pk.where", extra_ops.prelu),
    Aten("_prelu_kernel_backward", "pk.where", extra_ops.prelu_backward),
    Aten("nonzero_static", "xp.nonzero", extra_ops.nonzero_static),
    Aten("linalg_lu_factor_ex", "pykern.linalg.lu.lu_factor", extra_ops.linalg_lu_factor_ex),
    Aten("linalg_lu", "pykern.linalg.lu.lu_factor", extra_ops.linalg_lu),
    Aten("_weight_norm_interface_backward", "pk.sum", extra_ops.weight_norm_backward),
    Aten("embedding_renorm_", "pk.take", extra_ops.embedding_renorm_),
)


S = special
_P = polynomials

SPECIAL = tuple(Aten(name, f"composed: {fn.__name__}", S.unary(fn)) for name, fn in (
    ("erfc.out", S.erfc), ("erfinv.out", S.erfinv), ("lgamma.out", S.lgamma),
    ("digamma.out", S.digamma), ("i0.out", S.i0), ("special_i0e.out", S.i0e),
    ("special_i1.out", S.i1), ("special_i1e.out", S.i1e), ("special_ndtri.out", S.ndtri),
    ("special_erfcx.out", S.erfcx),
    ("special_spherical_bessel_j0.out", S.spherical_bessel_j0),
    ("special_modified_bessel_i0.out", S.i0), ("special_modified_bessel_i1.out", S.i1),
)) + tuple(Aten(f"special_zeta.{kind}", "composed: zeta", S.binary(S.zeta))
           for kind in ("out", "self_scalar_out", "other_scalar_out")) + (
    Aten("polygamma.out", "composed: zeta", S.polygamma_out),
    Aten("mvlgamma.out", "composed: lgamma", S.mvlgamma_out),
) + tuple(Aten(f"special_{name}.{kind}", "composed: recurrence", fn)
          for name, fn in (
              ("chebyshev_polynomial_t", _P.chebyshev("t")),
              ("chebyshev_polynomial_u", _P.chebyshev("u")),
              ("chebyshev_polynomial_v", _P.chebyshev("v")),
              ("chebyshev_polynomial_w", _P.chebyshev("w")),
              ("shifted_chebyshev_polynomial_t", _P.chebyshev("t", shifted=True)),
              ("shifted_chebyshev_polynomial_u", _P.chebyshev("u", shifted=True)),
              ("shifted_chebyshev_polynomial_v", _P.chebyshev("v", shifted=True)),
              ("shifted_chebyshev_polynomial_w", _P.chebyshev("w", shifted=True)),
              ("hermite_polynomial_h", _P.hermite_h), ("hermite_polynomial_he", _P.hermite_he),
              ("laguerre_polynomial_l", _P.laguerre), ("legendre_polynomial_p", _P.legendre))
          for kind in ("out", "x_scalar_out", "n_scalar_out"))


def _foreach_entries() -> tuple[Aten, ...]:
    """The optimizers' foreach operators, each overload that PyTorch has (one shared
    operand, a list of them, a list of scalars, one tensor), in place and functional."""
    fe = foreach
    binary = {"add": (ew.binary_alpha(pk.add), False), "sub": (ew.binary_alpha(pk.subtract),
                                                              False),
              "mul": (ew.binary(pk.multiply), False), "div": (ew.binary(pk.divide, _F), True),
              "maximum": (ew.binary(pk.maximum), False), "minimum": (ew.binary(pk.minimum),
                                                                      False)}
    unary = {"sqrt": pk.sqrt, "neg": pk.negative, "reciprocal": pk.reciprocal,
             "abs": pk.abs, "exp": pk.exp, "log": pk.log, "sigmoid": pk.sigmoid}
    entries: list[Aten] = []
    for name, (impl, to_float) in binary.items():
        for kind in ("Scalar", "List", "ScalarList", "Tensor"):
            for suffix, wrap in (("_", fe.inplace(impl)),
                                 ("", fe.functional(impl, float_result=to_float))):
                overload = f"_foreach_{name}{suffix}.{kind}"
                if hasattr(getattr(aten, f"_foreach_{name}{suffix}"), kind):
                    entries.append(Aten(overload, f"pk.{name} per tensor", wrap))
    for name, fn in unary.items():
        impl = ew.unary(fn, _F if name in ("sqrt", "reciprocal", "exp", "log", "sigmoid")
                        else "promote")
        entries.append(Aten(f"_foreach_{name}_", f"pk.{name} per tensor", fe.inplace(impl)))
        entries.append(Aten(f"_foreach_{name}", f"pk.{name} per tensor",
                            fe.functional(impl, float_result=name != "neg" and name != "abs")))
    for name, impl in (("addcmul", ew.addcmul), ("addcdiv", ew.addcdiv)):
        for kind in ("Scalar", "ScalarList", "Tensor"):
            entries.append(Aten(f"_foreach_{name}_.{kind}", f"pk.{name} per tensor",
                                fe.pointwise_inplace(impl)))
            entries.append(Aten(f"_foreach_{name}.{kind}", f"pk.{name} per tensor",
                                fe.pointwise_functional(impl)))
    for kind in ("Scalar", "List", "ScalarList"):
        entries.append(Aten(f"_foreach_lerp_.{kind}", "lerp per tensor", fe.lerp_inplace))
    entries.append(Aten("_foreach_norm.Scalar", "pk.sum per tensor", fe.norm))
    entries.append(Aten("_foreach_zero_", "pk.zeros per tensor", fe.zero_))
    return tuple(entries)


FOREACH = _foreach_entries()


def _decomposed_out(out_name: str, functional: torch._ops.OpOverload) -> Aten:
    return Aten(out_name, "decomposed", decomposed_out(functional))


# structured operators whose functional overload PyTorch decomposes into other ATen
# operators: their `.out` (and so functional and in-place) overloads run that decomposition
DECOMPOSED = tuple(_decomposed_out(out, functional) for out, functional in (
    ("elu.out", aten.elu.default), ("elu_backward.grad_input", aten.elu_backward.default),
    ("glu.out", aten.glu.default), ("hardshrink.out", aten.hardshrink.default),
    ("hardsigmoid.out", aten.hardsigmoid.default),
    ("hardsigmoid_backward.grad_input", aten.hardsigmoid_backward.default),
    ("leaky_relu.out", aten.leaky_relu.default),
    ("leaky_relu_backward.grad_input", aten.leaky_relu_backward.default),
    ("logit_backward.grad_input", aten.logit_backward.default),
    ("mish.out", aten.mish.default), ("mse_loss.out", aten.mse_loss.default),
    ("sigmoid_backward.grad_input", aten.sigmoid_backward.default),
    ("tanh_backward.grad_input", aten.tanh_backward.default),
    ("threshold.out", aten.threshold.default),
    ("threshold_backward.grad_input", aten.threshold_backward.default),
    ("smooth_l1_loss.out", aten.smooth_l1_loss.default),
    ("softplus.out", aten.softplus.default),
    ("softplus_backward.grad_input", aten.softplus_backward.default),
    ("softshrink.out", aten.softshrink.default), ("sinc.out", aten.sinc.default),
    ("isneginf.out", aten.isneginf.default), ("isposinf.out", aten.isposinf.default),
    ("index_add.out", aten.index_add.default), ("index_copy.out", aten.index_copy.default),
    ("diag_embed.out", aten.diag_embed.default),
    ("diagonal_scatter.out", aten.diagonal_scatter.default),
    ("select_scatter.out", aten.select_scatter.default),
    ("slice_scatter.out", aten.slice_scatter.default),
    ("as_strided_scatter.out", aten.as_strided_scatter.default),
    ("pixel_shuffle.out", aten.pixel_shuffle.default),
    ("pixel_unshuffle.out", aten.pixel_unshuffle.default),
    ("reflection_pad1d.out", aten.reflection_pad1d.default),
    ("reflection_pad3d.out", aten.reflection_pad3d.default),
    ("reflection_pad1d_backward.grad_input", aten.reflection_pad1d_backward.default),
    ("reflection_pad3d_backward.grad_input", aten.reflection_pad3d_backward.default),
    ("replication_pad1d.out", aten.replication_pad1d.default),
    ("replication_pad2d.out", aten.replication_pad2d.default),
    ("replication_pad3d.out", aten.replication_pad3d.default),
    ("upsample_nearest1d.out", aten.upsample_nearest1d.default),
    ("upsample_nearest2d.out", aten.upsample_nearest2d.default),
    ("upsample_nearest3d.out", aten.upsample_nearest3d.default),
    ("_upsample_nearest_exact1d.out", aten._upsample_nearest_exact1d.default),
    ("_upsample_nearest_exact2d.out", aten._upsample_nearest_exact2d.default),
    ("_upsample_nearest_exact3d.out", aten._upsample_nearest_exact3d.default),
    ("upsample_linear1d.out", aten.upsample_linear1d.default),
    ("upsample_bilinear2d.out", aten.upsample_bilinear2d.default),
    ("upsample_trilinear3d.out", aten.upsample_trilinear3d.default),
    ("upsample_bicubic2d.out", aten.upsample_bicubic2d.default),
    ("renorm.out", aten.renorm.default),
    ("special_xlog1py.out", aten.special_xlog1py.default),
    ("special_entr.out", aten.special_entr.default),
    ("special_log_ndtr.out", aten.special_log_ndtr.default),
)) + (
    Aten("hardtanh", "decomposed", decomposed(aten.hardtanh.default)),
    Aten("hardtanh_", "decomposed", decomposed_inplace(aten.hardtanh.default)),
    Aten("hardtanh_backward", "decomposed", decomposed(aten.hardtanh_backward.default)),
    Aten("hardswish", "decomposed", decomposed(aten.hardswish.default)),
    Aten("hardswish_", "decomposed", decomposed_inplace(aten.hardswish.default)),
    Aten("hardswish_backward", "decomposed", decomposed(aten.hardswish_backward.default)),
    Aten("logit", "decomposed", decomposed(aten.logit.default)),
    Aten("logit_", "decomposed", decomposed_inplace(aten.logit.default)),
    Aten("native_group_norm_backward", "decomposed",
         decomposed(aten.native_group_norm_backward.default)),
    Aten("huber_loss", "decomposed", decomposed(aten.huber_loss.default)),
    Aten("huber_loss_backward.out", "decomposed", decomposed(aten.huber_loss_backward.out)),
    Aten("binary_cross_entropy", "decomposed", decomposed(aten.binary_cross_entropy.default)),
    Aten("binary_cross_entropy_backward", "decomposed",
         decomposed(aten.binary_cross_entropy_backward.default)),
    Aten("mse_loss_backward", "decomposed", decomposed(aten.mse_loss_backward.default)),
    Aten("smooth_l1_loss_backward.grad_input", "decomposed",
         decomposed(aten.smooth_l1_loss_backward.grad_input)),
    Aten("im2col", "decomposed", decomposed(aten.im2col.default)),
    Aten("col2im", "decomposed", decomposed(aten.col2im.default)),
    Aten("reflection_pad2d", "decomposed", decomposed(aten.reflection_pad2d.default)),
    Aten("reflection_pad2d_backward", "decomposed",
         decomposed(aten.reflection_pad2d_backward.default)),
    Aten("rsub.Tensor", "decomposed", decomposed(aten.rsub.Tensor)),
    Aten("_unsafe_index.Tensor", "decomposed", decomposed(aten._unsafe_index.Tensor)),
    Aten("_weight_norm_interface", "decomposed", decomposed(aten._weight_norm_interface.default)),
    Aten("grid_sampler_2d", "decomposed", decomposed(aten.grid_sampler_2d.default)),
    Aten("grid_sampler_2d_backward", "autograd of the decomposition", grid_sampler_2d_backward),
) + tuple(Aten(f"{name}_backward.grad_input", "autograd of the decomposition",
               upsample_backward(forward)) for name, forward in (
    ("upsample_nearest1d", aten.upsample_nearest1d.default),
    ("upsample_nearest2d", aten.upsample_nearest2d.default),
    ("upsample_nearest3d", aten.upsample_nearest3d.default),
    ("_upsample_nearest_exact1d", aten._upsample_nearest_exact1d.default),
    ("_upsample_nearest_exact2d", aten._upsample_nearest_exact2d.default),
    ("_upsample_nearest_exact3d", aten._upsample_nearest_exact3d.default),
    ("upsample_linear1d", aten.upsample_linear1d.default),
    ("upsample_bilinear2d", aten.upsample_bilinear2d.default),
    ("upsample_trilinear3d", aten.upsample_trilinear3d.default),
    ("upsample_bicubic2d", aten.upsample_bicubic2d.default),
)) + tuple(Aten(f"replication_pad{n}d_backward{suffix}", "autograd of the decomposition",
                pad_backward(getattr(aten, f"replication_pad{n}d").default, bool(suffix)))
           for n in (1, 2, 3) for suffix in ("", ".grad_input")) + (
    Aten("max_unpool3d", "decomposed", decomposed(aten.max_unpool3d.default)),
    Aten("max_pool3d_with_indices", "composed: gather + max", pooling.max_pool3d_with_indices),
    Aten("multi_margin_loss", "decomposed", decomposed(aten.multi_margin_loss.default)),
    Aten("multilabel_margin_loss_forward", "decomposed",
         decomposed(aten.multilabel_margin_loss_forward.default)),
    Aten("multi_margin_loss_backward", "autograd of the decomposition",
         loss_backward(aten.multi_margin_loss.default, 5)),
    Aten("multilabel_margin_loss_backward", "autograd of the decomposition",
         loss_backward(aten.multilabel_margin_loss_forward.default, 2, output=0)),
    Aten("glu_backward", "decomposed", decomposed(aten.glu_backward.default)),
    Aten("unfold_backward", "decomposed", decomposed(aten.unfold_backward.default)),
)

_BY_HAND = (*MEMORY, *VIEWS, *UNARY, *BINARY, *POINTWISE, *REDUCTIONS, *PRODUCTS, *SHAPES,
            *INDEXING, *RANDOM, *NN, *LINALG, *FFT, *COMPOSED, *SPECIAL, *FOREACH, *DECOMPOSED)

# the elementwise ops of pykern's registry, under the ATen names they declare
FROM_REGISTRY = tuple(Aten(*entry) for entry in from_registry.entries(
    {e.overload: e.impl for e in _BY_HAND}))

TABLE: tuple[Aten, ...] = (*_BY_HAND, *FROM_REGISTRY)
