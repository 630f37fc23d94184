"""Neural-network ops on tensors: softmax, log_softmax, layer_norm, attention, one_hot
(`nn_ops`), their host kernels (`nn_host`), attention on the matrix engine (`attention_coop`) and
the backward kernels of attention and layer_norm.
"""
