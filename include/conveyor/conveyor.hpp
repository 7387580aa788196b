#pragma once
/// @file
/// The umbrella header: everything a CPU-only user needs. The CUDA backend's headers live under
/// conveyor/cuda/ and are included separately by code compiled with CUDA.

#include <conveyor/config.hpp>
#include <conveyor/core/bytes.hpp>
#include <conveyor/core/concepts.hpp>
#include <conveyor/core/error.hpp>
#include <conveyor/core/hash.hpp>
#include <conveyor/core/rng.hpp>
#include <conveyor/core/sample.hpp>
#include <conveyor/core/samplers.hpp>
#include <conveyor/core/shard_sampler.hpp>
#include <conveyor/core/tensor.hpp>
#include <conveyor/io/exif.hpp>
#include <conveyor/io/file.hpp>
#include <conveyor/io/contact_sheet.hpp>
#include <conveyor/io/file_list.hpp>
#include <conveyor/io/image_decoder.hpp>
#include <conveyor/io/image_folder.hpp>
#include <conveyor/io/in_memory.hpp>
#include <conveyor/io/jpeg.hpp>
#include <conveyor/io/jpeg_encoder.hpp>
#include <conveyor/io/png.hpp>
#include <conveyor/io/pnm.hpp>
#include <conveyor/io/shard_files.hpp>
#include <conveyor/io/shard_writers.hpp>
#include <conveyor/io/tar_shards.hpp>
#include <conveyor/io/tfrecord.hpp>
#include <conveyor/ops/augment.hpp>
#include <conveyor/pipeline/any.hpp>
#include <conveyor/pipeline/batch.hpp>
#include <conveyor/pipeline/batch_pipeline.hpp>
#include <conveyor/pipeline/image_augment.hpp>
#include <conveyor/pipeline/options.hpp>
#include <conveyor/pipeline/raw_tensor.hpp>
#include <conveyor/pipeline/stats.hpp>
