"""torchvision's affine and perspective sampling grids summed in the order conveyor sums them, for
the machines whose BLAS sums them otherwise.

torchvision's `affine` and `rotate` make their grid as a batched matrix product
(`_affine_grid`: the base grid's rows (x, y, 1) times theta^T). torch computes that product in its
own loop for small outputs, as (x a + y b) + c, each operation rounded (conveyor's order, on both
backends), and through the BLAS's sgemm for larger ones, whose order depends on the CPU it runs on:
on the AMD EPYC development machine it is the same, on Intel's AVX-512 Xeons MKL fuses the second
multiply-add, fma(y, b, x a) + c. A sample's pixels then move by a rounding of the grid: a NEAREST
pick can become the neighbouring pixel and a BILINEAR value can change by a level.
`perspective`'s grid (`_perspective_grid`) is two such products, the numerators' and the
denominator's, divided. `grid_as_conveyor()` makes torchvision use (x a + y b) + c in both wherever
torch does not, so that the
parity tests compare the rest of torchvision's arithmetic bit for bit on any machine;
`test_pixel_ops.py::test_affine_residual_against_this_machines_torch` measures what is left
against torch as it runs here.
"""
import contextlib

import torch
from torchvision.transforms.v2.functional import _geometry


def _affine_grid_unfused(theta, w, h, ow, oh):
    """`_geometry._affine_grid` with the product as separate float32 operations."""
    dtype, device = theta.dtype, theta.device
    x = torch.linspace((1.0 - ow) * 0.5, (ow - 1.0) * 0.5, steps=ow, device=device, dtype=dtype)[None, :]
    y = torch.linspace((1.0 - oh) * 0.5, (oh - 1.0) * 0.5, steps=oh, device=device, dtype=dtype)[:, None]
    r = theta.transpose(1, 2).div_(torch.tensor([0.5 * w, 0.5 * h], dtype=dtype, device=device))[0]
    axes = [(x * r[0, k] + y * r[1, k]) + r[2, k] for k in (0, 1)]
    return torch.stack(axes, dim=-1)[None]


def _perspective_grid_unfused(coeffs, ow, oh, dtype, device):
    """`_geometry._perspective_grid` with its products as separate float32 operations."""
    x = torch.linspace(0.5, ow - 0.5, steps=ow, device=device, dtype=dtype)[None, :]
    y = torch.linspace(0.5, oh - 0.5, steps=oh, device=device, dtype=dtype)[:, None]
    theta = torch.tensor([coeffs[0:3], coeffs[3:6]], dtype=dtype, device=device)
    r = theta.transpose(0, 1).div_(torch.tensor([0.5 * ow, 0.5 * oh], dtype=dtype, device=device))
    c = torch.tensor(coeffs[6:8], dtype=dtype, device=device)
    den = (x * c[0] + y * c[1]) + 1.0
    axes = [((x * r[0, k] + y * r[1, k]) + r[2, k]).div_(den).sub_(1.0) for k in (0, 1)]
    return torch.stack(axes, dim=-1)[None]


def torch_fuses_the_grid():
    """Whether torch's own grid differs from the unfused one here, on a grid large enough for sgemm."""
    theta = torch.tensor([[[0.8371, -0.4213, 3.7], [0.4197, 0.9062, -5.3]]], dtype=torch.float32)
    return not torch.equal(_geometry._affine_grid(theta.clone(), 301, 199, 301, 199),
                           _affine_grid_unfused(theta.clone(), 301, 199, 301, 199))


@contextlib.contextmanager
def grid_as_conveyor():
    """Within it, torchvision's affine, rotate and perspective sum their grids as (x a + y b) + c."""
    if not torch_fuses_the_grid():
        yield
        return
    saved = _geometry._affine_grid, _geometry._perspective_grid
    _geometry._affine_grid, _geometry._perspective_grid = _affine_grid_unfused, _perspective_grid_unfused
    try:
        yield
    finally:
        _geometry._affine_grid, _geometry._perspective_grid = saved
