// The CUDA backend, compiled by nvcc into the extension: including it registers the backend, so
// loaders made with device="cuda" run on the GPU (the extension itself is compiled as C++).

#include <conveyor/cuda/backend.cuh>
