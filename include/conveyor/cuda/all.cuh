#pragma once
/// @file
/// Everything, for translation units compiled by nvcc: the CPU-safe library plus the CUDA backend
/// (so pipelines in this program can take `.device = N`).

#include <conveyor/conveyor.hpp>
#include <conveyor/cuda/backend.cuh>
#include <conveyor/cuda/buffer.hpp>
#include <conveyor/cuda/device.hpp>
#include <conveyor/cuda/error.hpp>
#include <conveyor/cuda/stream.hpp>
