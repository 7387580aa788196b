"""torchvision's Gaussian kernel with its softmax summed in the order torch's AVX-512 kernels sum it
(conveyor's, ops/pixel/gaussian_blur.hpp), for the machines whose torch sums it otherwise.

`softmax` adds the kernel's exponentials one by one below 16 values on AVX-512; torch built for
AVX2 only sums them in 8 lanes from 8 values on, and a kernel can come out a bit apart (13 taps at
sigma 0.8 moves 4 values of a 224 x 224 photo by a level). `kernel_as_conveyor()` makes torchvision
build its kernels of 8 to 15 taps with the sum one by one wherever torch does not, so that the
parity tests compare the rest (the exponentials, the outer product, the convolution, the rounding)
bit for bit on any machine. Longer kernels stay torch's: there the exponentials of this machine's
torch.exp are not softmax's (its tail), and on the AVX2 machines the photos' blurs came out equal.
"""
import contextlib
import math

import numpy as np
import torch
from torchvision.transforms.v2.functional import _misc


def _kernel1d_one_by_one(kernel_size, sigma, dtype, device):
    """`_misc._get_gaussian_kernel1d` with its softmax's sum one value after another (fewer than 16)."""
    lim = (kernel_size - 1) / (2.0 * math.sqrt(2.0))
    x = torch.linspace(-lim, lim, steps=kernel_size, dtype=dtype, device=device).div(sigma).pow(2).neg()
    e = torch.exp(x - x.max())
    total = np.float32(0.0)
    for k, v in enumerate(e.numpy().astype(np.float32)):
        total = v if k == 0 else np.float32(total + v)
    return e * torch.tensor(np.float32(np.float32(1.0) / total), dtype=dtype)


_TORCHS = _misc._get_gaussian_kernel1d


def _kernel1d(kernel_size, sigma, dtype, device):
    if 8 <= kernel_size < 16:
        return _kernel1d_one_by_one(kernel_size, sigma, dtype, device)
    return _TORCHS(kernel_size, sigma, dtype, device)


def torch_sums_otherwise():
    """Whether torch's own kernel of 8 to 15 taps differs from the sum one by one here."""
    return any(not torch.equal(_TORCHS(k, s, torch.float32, torch.device("cpu")),
                               _kernel1d_one_by_one(k, s, torch.float32, torch.device("cpu")))
               for k in (9, 11, 13, 15) for s in (0.8, 2.0))


@contextlib.contextmanager
def kernel_as_conveyor():
    """Within it, torchvision's Gaussian kernels of 8 to 15 taps sum their softmax one by one."""
    if not torch_sums_otherwise():
        yield
        return
    _misc._get_gaussian_kernel1d = _kernel1d
    try:
        yield
    finally:
        _misc._get_gaussian_kernel1d = _TORCHS
