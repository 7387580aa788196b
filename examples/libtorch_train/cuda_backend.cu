// The one translation unit compiled by nvcc: it registers conveyor's CUDA backend, so the
// pipeline in train.cpp (compiled by the host compiler, with libtorch) can take `.device = 0`.
#include <conveyor/cuda/backend.cuh>
