// conveyor-distributed: data-parallel loading, one process per GPU. Each process reads its rank
// from the launcher's environment (torchrun, SLURM or Open MPI variables), runs its own pipeline
// on its local GPU and, every epoch, all-reduces with NCCL what it consumed: a count per dataset
// index, the number of samples, and the sum of the labels its batches carried on the GPU. Rank 0
// checks that the union is the dataset exactly once plus torch's padding (the first indices of
// the epoch's order, repeated), and that the labels on the GPUs are the dataset's; any rank exits
// 1 otherwise.
//
//   examples/distributed/launch.sh 2 conveyor-distributed --data DIR [--epochs E] [--batch B]
//   torchrun --standalone --nproc-per-node=2 --no-python conveyor-distributed --data DIR
//
// The ranks meet through a file holding NCCL's unique id: --id-file PATH, else
// $CONVEYOR_NCCL_ID_FILE (launch.sh sets it), else one named after torchrun's run id. Across
// nodes it must be on a filesystem they share.

#include <conveyor/conveyor.hpp>
#include <conveyor/cuda/all.cuh>

#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

/// Evaluates the NCCL call `expr`; on failure throws, naming the call and NCCL's reason.
#define NCCL_TRY(expr)                                                                                           \
  do {                                                                                                           \
    const ncclResult_t nccl_status_ = (expr);                                                                    \
    if (nccl_status_ != ncclSuccess)                                                                             \
      throw std::runtime_error(std::string(#expr) + " failed: " + ncclGetErrorString(nccl_status_));             \
  } while (0)

namespace {

/// Adds the batch's labels (on the GPU) to *sum: the consumer's work, on the consumer's stream.
__global__ void add_labels(const std::int64_t* labels, int n, unsigned long long* sum) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) atomicAdd(sum, static_cast<unsigned long long>(labels[i]));
}

struct Args {
  std::string data, id_file;
  int epochs = 3, batch = 64, workers = 4;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string_view k = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument("missing value after " + std::string(k));
    const char* v = argv[++i];
    if (k == "--data") a.data = v;
    else if (k == "--id-file") a.id_file = v;
    else if (k == "--epochs") a.epochs = std::stoi(v);
    else if (k == "--batch") a.batch = std::stoi(v);
    else if (k == "--workers") a.workers = std::stoi(v);
    else throw std::invalid_argument("unknown option " + std::string(k));
  }
  if (a.data.empty()) throw std::invalid_argument("--data DIR is required");
  if (a.id_file.empty()) {
    if (const char* f = std::getenv("CONVEYOR_NCCL_ID_FILE")) a.id_file = f;
    else if (const char* run = std::getenv("TORCHELASTIC_RUN_ID"))
      a.id_file = (std::filesystem::temp_directory_path() / ("conveyor-nccl-" + std::string(run))).string();
    else throw std::invalid_argument("no --id-file, CONVEYOR_NCCL_ID_FILE or torchrun run id");
  }
  return a;
}

/// Rank 0 makes NCCL's id and publishes it atomically (write, then rename); the others wait for it.
ncclUniqueId exchange_id(const std::string& path, std::uint64_t rank) {
  ncclUniqueId id{};
  if (rank == 0) {
    NCCL_TRY(ncclGetUniqueId(&id));
    const std::string tmp = path + ".tmp";
    std::ofstream(tmp, std::ios::binary).write(id.internal, sizeof id.internal);
    std::filesystem::rename(tmp, path);
    return id;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (;;) {
    std::ifstream in(path, std::ios::binary);
    if (in.read(id.internal, sizeof id.internal)) return id;
    if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("no NCCL id appeared in " + path);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse(argc, argv);
    const conveyor::ImageFolder data(a.data);
    const std::uint64_t n = data.size();
    auto shard = conveyor::DistributedSampler::from_env(n, {.shuffle = true, .seed = 7});
    const std::uint64_t rank = shard.options().rank, world = shard.options().num_replicas;
    const int device = shard.local_rank();
    CONVEYOR_CUDA_TRY(cudaSetDevice(device));

    ncclComm_t comm = nullptr;
    NCCL_TRY(ncclCommInitRank(&comm, static_cast<int>(world), exchange_id(a.id_file, rank), static_cast<int>(rank)));
    if (rank == 0) std::filesystem::remove(a.id_file);
    conveyor::cuda::Stream stream;
    conveyor::ImageAugment aug = conveyor::ImageAugment::train(224);
    aug.dtype = conveyor::DType::bf16;
    conveyor::BatchPipeline pipe(data, shard, aug,
                                 {.batch_size = static_cast<std::size_t>(a.batch), .workers = a.workers, .seed = 7,
                                  .device = device, .stream = stream.get()});
    // [count per index (n)] [samples] [sum of the labels seen on the GPU]
    std::vector<unsigned long long> tally(n + 2);
    conveyor::cuda::DeviceBuffer d_tally(tally.size() * sizeof(unsigned long long));
    auto* d = reinterpret_cast<unsigned long long*>(d_tally.data());
    bool ok = true;
    for (int epoch = 0; epoch < a.epochs; ++epoch) {
      pipe.set_epoch(static_cast<std::uint64_t>(epoch));
      std::fill(tally.begin(), tally.end(), 0ULL);
      CONVEYOR_CUDA_TRY(cudaMemsetAsync(d + n + 1, 0, sizeof *d, stream.get()));
      std::uint64_t batches = 0;
      for (const conveyor::Batch& b : pipe) {
        for (const std::int64_t i : b.indices()) ++tally[static_cast<std::size_t>(i)];
        tally[n] += b.size();
        add_labels<<<(static_cast<unsigned>(b.size()) + 255) / 256, 256, 0, stream.get()>>>(
            static_cast<const std::int64_t*>(b.labels().data), static_cast<int>(b.size()), d + n + 1);
        CONVEYOR_CUDA_TRY(cudaGetLastError());
        ++batches;
      }
      // The host's counts join the device's label sum, then every rank's are added up.
      CONVEYOR_CUDA_TRY(cudaMemcpyAsync(d, tally.data(), (n + 1) * sizeof *d, cudaMemcpyHostToDevice, stream.get()));
      NCCL_TRY(ncclAllReduce(d, d, tally.size(), ncclUint64, ncclSum, comm, stream.get()));
      CONVEYOR_CUDA_TRY(cudaMemcpyAsync(tally.data(), d, tally.size() * sizeof *d, cudaMemcpyDeviceToHost, stream.get()));
      CONVEYOR_CUDA_TRY(cudaStreamSynchronize(stream.get()));
      std::printf("rank %llu: epoch %d, %llu batches on GPU %d\n", static_cast<unsigned long long>(rank), epoch,
                  static_cast<unsigned long long>(batches), device);
      if (rank != 0) continue;
      // Expected: every index once, plus the first `padding` of the epoch's order once more.
      const std::uint64_t total = shard.total_size(), padding = total - n;
      std::vector<unsigned long long> expect(n, 1);
      const auto order = conveyor::RandomSampler(n, {.seed = 7}).indices(static_cast<std::uint64_t>(epoch));
      for (std::uint64_t k = 0; k < padding; ++k) ++expect[order[k % n]];
      unsigned long long labels = 0;
      for (std::uint64_t i = 0; i < n; ++i) labels += expect[i] * static_cast<unsigned long long>(data.label(i));
      std::uint64_t wrong = 0;
      for (std::uint64_t i = 0; i < n; ++i) wrong += tally[i] != expect[i];
      const bool epoch_ok = wrong == 0 && tally[n] == total && tally[n + 1] == labels;
      std::printf("epoch %d: %llu ranks consumed %llu samples (%llu indices + %llu padding); indices off: %llu; "
                  "label sum on the GPUs %llu, expected %llu: %s\n",
                  epoch, static_cast<unsigned long long>(world), tally[n], static_cast<unsigned long long>(n),
                  static_cast<unsigned long long>(padding), static_cast<unsigned long long>(wrong), tally[n + 1],
                  labels, epoch_ok ? "ok" : "WRONG");
      ok = ok && epoch_ok;
    }
    // Every rank learns the verdict, so all of them exit with it.
    unsigned long long verdict = ok ? 0 : 1;
    CONVEYOR_CUDA_TRY(cudaMemcpyAsync(d, &verdict, sizeof verdict, cudaMemcpyHostToDevice, stream.get()));
    NCCL_TRY(ncclBroadcast(d, d, 1, ncclUint64, 0, comm, stream.get()));
    CONVEYOR_CUDA_TRY(cudaMemcpyAsync(&verdict, d, sizeof verdict, cudaMemcpyDeviceToHost, stream.get()));
    CONVEYOR_CUDA_TRY(cudaStreamSynchronize(stream.get()));
    NCCL_TRY(ncclCommDestroy(comm));
    if (rank == 0) std::printf("%s\n", verdict == 0 ? "distributed: every epoch exactly once plus padding" : "distributed: FAILED");
    return verdict == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conveyor-distributed: %s\n", e.what());
    return 2;
  }
}
