// The GPU tests' main: refuses to run, loudly, where there is no CUDA device, so a GPU test is
// never counted as passed without a GPU.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>

int main(int argc, char** argv) {
  int n = 0;
  const cudaError_t status = cudaGetDeviceCount(&n);
  if (status != cudaSuccess || n == 0) {
    std::fprintf(stderr, "conveyor_cuda_tests: no CUDA device (%s): GPU tests cannot run here\n",
                 status == cudaSuccess ? "0 devices" : cudaGetErrorString(status));
    return 1;
  }
  return Catch::Session().run(argc, argv);
}
