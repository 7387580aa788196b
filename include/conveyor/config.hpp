#pragma once
/// @file
/// Feature macros, the version, `CONVEYOR_HD` and the library namespace. Every feature macro
/// is derived here and nowhere else.

#define CONVEYOR_VERSION_MAJOR 0
#define CONVEYOR_VERSION_MINOR 1
#define CONVEYOR_VERSION_PATCH 0
/// major * 10000 + minor * 100 + patch, for `#if CONVEYOR_VERSION >= ...`.
#define CONVEYOR_VERSION (CONVEYOR_VERSION_MAJOR * 10000 + CONVEYOR_VERSION_MINOR * 100 + CONVEYOR_VERSION_PATCH)

// Function-like, so a misspelt feature test fails in the preprocessor instead of reading 0.
#if defined(__CUDACC__)
#define CONVEYOR_CUDA_COMPILATION() 1
#else
#define CONVEYOR_CUDA_COMPILATION() 0
#endif

#if !defined(CONVEYOR_DISABLE_CUDA) && defined(__has_include)
#if __has_include(<cuda_runtime_api.h>)
#define CONVEYOR_HAS_CUDA_RUNTIME() 1
#endif
#endif
#ifndef CONVEYOR_HAS_CUDA_RUNTIME
#define CONVEYOR_HAS_CUDA_RUNTIME() 0
#endif

// NVTX ranges need the CUDA toolkit's header-only nvtx3; the build system turns them on.
#if defined(CONVEYOR_ENABLE_NVTX) && CONVEYOR_HAS_CUDA_RUNTIME() && defined(__has_include)
#if __has_include(<nvtx3/nvToolsExt.h>)
#define CONVEYOR_HAS_NVTX() 1
#endif
#endif
#ifndef CONVEYOR_HAS_NVTX
#define CONVEYOR_HAS_NVTX() 0
#endif

/// Marks a function callable from host and device code; empty for host-only compilers.
#if CONVEYOR_CUDA_COMPILATION()
#define CONVEYOR_HD __host__ __device__
#else
#define CONVEYOR_HD
#endif

/// Asks for the next loop, of a constant trip count, to be unrolled, in code both compilers build
/// (a bare `#pragma unroll` is an unknown pragma to GCC, nvcc's host pass included, and
/// `GCC unroll` one to nvcc's front end: warnings in a strict build; that pass gets neither).
#if defined(__CUDA_ARCH__) || defined(__clang__)
#define CONVEYOR_UNROLL _Pragma("unroll")
#elif defined(__GNUC__) && !CONVEYOR_CUDA_COMPILATION()
#define CONVEYOR_UNROLL _Pragma("GCC unroll 16")
#else
#define CONVEYOR_UNROLL
#endif

/// Builds a CPU hot loop three times on x86-64 (AVX-512, AVX2 + FMA, and the baseline) and lets
/// the loader pick one: `fmaf` is then one instruction instead of a library call (about 4x faster
/// resampling, 20x a GaussianBlur), with the same bits either way, since `fmaf` is exact in all.
/// AVX-512 halves the instructions of a blur whose subnormal weights each cost a microcode assist
/// (the colour recipe 1.44x on a Xeon); the other loops run as fast as with AVX2. Also in nvcc's
/// host pass (its host compiler builds the clones), not in its device pass.
/// Not under ThreadSanitizer, whose instrumented ifunc resolvers run before its runtime starts.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__ELF__) && \
    !defined(__CUDA_ARCH__) && !defined(CONVEYOR_NO_CPU_CLONES) && !defined(__SANITIZE_THREAD__)
#define CONVEYOR_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CONVEYOR_CPU_CLONES
#endif

namespace conveyor {
inline namespace v0 {

/// The library version as a string, e.g. "0.1.0".
inline constexpr const char* version_string = "0.1.0";

}  // namespace v0
}  // namespace conveyor
