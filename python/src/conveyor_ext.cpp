// conveyor._conveyor: the Python binding. It type-erases the shipped datasets, samplers and
// transforms into one AnyPipeline and holds no logic beyond that and Python's own needs: the
// GIL released around every wait and every piece of C++ work, Ctrl-C seen while waiting, a
// clear error instead of a hang when kept tensors hold every slot or after fork(), exceptions
// that keep their fields, and a DLPack producer that honours the consumer's stream. Batches
// become torch tensors or numpy arrays in the package's Python code (python/conveyor/).

#include <conveyor/conveyor.hpp>
#include <conveyor/pipeline/dlpack.hpp>
#if CONVEYOR_HAS_CUDA_RUNTIME()
#include <conveyor/cuda/error.hpp>
#endif

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <unistd.h>

#if !CONVEYOR_HAS_DLPACK()
#error "the Python binding needs DLPack's header (Debian: libdlpack-dev)"
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace {

// --- exceptions -----------------------------------------------------------------------------------

PyObject* error_type = nullptr;         // conveyor.Error(RuntimeError)
PyObject* config_error_type = nullptr;  // (Error, ValueError)
PyObject* io_error_type = nullptr;      // (Error, OSError)
PyObject* decode_error_type = nullptr;  // (Error, ValueError)
PyObject* sample_error_type = nullptr;  // (Error): index, path, reason
PyObject* cuda_error_type = nullptr;    // (Error)
PyObject* overloaded_type = nullptr;    // (Error)
PyObject* deadline_type = nullptr;      // (Error, TimeoutError)

PyObject* new_exception(nb::module_& m, const char* name, PyObject* bases, const char* doc) {
  const std::string qualified = std::string("conveyor.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (!type) throw nb::python_error();
  m.attr(name) = nb::handle(type);
  return type;
}

/// Raises `type(what)` with the given attributes set on the instance.
void raise(PyObject* type, const char* what, std::initializer_list<std::pair<const char*, nb::object>> attrs = {}) {
  nb::object exc = nb::steal(PyObject_CallFunction(type, "s", what));
  if (!exc.is_valid()) return;  // the call set an error already
  for (const auto& [key, value] : attrs) nb::setattr(exc, key, value);
  PyErr_SetObject(type, exc.ptr());
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const conveyor::SampleError& e) {
    raise(sample_error_type, e.what(),
          {{"index", nb::int_(e.index())}, {"path", nb::str(e.path().c_str())}, {"reason", nb::str(e.reason().c_str())}});
  } catch (const conveyor::ConfigError& e) {
    raise(config_error_type, e.what());
  } catch (const conveyor::IoError& e) {
    raise(io_error_type, e.what(), {{"path", nb::str(e.path().c_str())}, {"reason", nb::str(e.reason().c_str())}});
  } catch (const conveyor::DecodeError& e) {
    raise(decode_error_type, e.what(), {{"reason", nb::str(e.reason().c_str())}});
#if CONVEYOR_HAS_CUDA_RUNTIME()
  } catch (const conveyor::CudaError& e) {
    raise(cuda_error_type, e.what(), {{"call", nb::str(e.call().c_str())}});
#endif
  } catch (const conveyor::Overloaded& e) {
    raise(overloaded_type, e.what());
  } catch (const conveyor::DeadlineExceeded& e) {
    raise(deadline_type, e.what());
  } catch (const conveyor::Error& e) {
    raise(error_type, e.what());
  }
}

// --- datasets -------------------------------------------------------------------------------------

/// A dataset as Python sees it: one of the shipped ones, type-erased for the loader.
class Dataset {
 public:
  virtual ~Dataset() = default;
  /// The dataset a loader reads (a loader made from an InMemory freezes it).
  virtual conveyor::AnyDataset use() { return any_; }
  [[nodiscard]] std::uint64_t size() const { return any_.size(); }
  [[nodiscard]] std::int64_t label(std::uint64_t i) const { return any_.label(checked(i)); }
  [[nodiscard]] std::string name(std::uint64_t i) const { return any_.name(checked(i)); }
  [[nodiscard]] nb::bytes read(std::uint64_t i) const {
    conveyor::ByteBuffer b;
    {
      nb::gil_scoped_release release;
      any_.read(checked(i), b);
    }
    return nb::bytes(reinterpret_cast<const char*>(b.data()), b.size());
  }

 protected:
  explicit Dataset(conveyor::AnyDataset any) : any_(std::move(any)) {}
  std::uint64_t checked(std::uint64_t i) const {
    if (i >= any_.size())
      throw nb::index_error(("index " + std::to_string(i) + " out of range for " + std::to_string(any_.size()) +
                             " samples").c_str());
    return i;
  }
  conveyor::AnyDataset any_;
};

class ImageFolder final : public Dataset {
 public:
  explicit ImageFolder(std::shared_ptr<const conveyor::ImageFolder> f) : Dataset(conveyor::AnyDataset(f)), f_(std::move(f)) {}
  [[nodiscard]] const std::vector<std::string>& classes() const { return f_->classes(); }
  [[nodiscard]] const std::string& root() const { return f_->root(); }

 private:
  std::shared_ptr<const conveyor::ImageFolder> f_;
};

class FileList final : public Dataset {
 public:
  explicit FileList(std::shared_ptr<const conveyor::FileList> f) : Dataset(conveyor::AnyDataset(f)), f_(std::move(f)) {}
  [[nodiscard]] const std::string& root() const { return f_->root(); }

 private:
  std::shared_ptr<const conveyor::FileList> f_;
};

/// A dataset of shards (tar or TFRecord): its shard sizes feed the shard-window sampler.
class ShardDataset : public Dataset {
 public:
  [[nodiscard]] const std::vector<std::uint64_t>& shard_sizes() const { return sizes_; }
  [[nodiscard]] double open_seconds() const { return seconds_; }

 protected:
  template <class D>
  explicit ShardDataset(std::shared_ptr<const D> d)
      : Dataset(conveyor::AnyDataset(d)), sizes_(d->shard_sizes()), seconds_(d->open_seconds()) {}

 private:
  std::vector<std::uint64_t> sizes_;
  double seconds_ = 0;
};

class TarShards final : public ShardDataset {
 public:
  explicit TarShards(std::shared_ptr<const conveyor::TarShards> d) : ShardDataset(std::move(d)) {}
};

class TFRecordDataset final : public ShardDataset {
 public:
  explicit TFRecordDataset(std::shared_ptr<const conveyor::TFRecordDataset> d) : ShardDataset(std::move(d)) {}
};

/// Decodes one image (any codec) at full size: (width, height, RGB bytes).
std::tuple<int, int, nb::bytes> decode_image(nb::bytes data, bool lenient, std::uint64_t max_image_pixels) {
  conveyor::ImageDecoder d({.lenient = lenient, .max_image_pixels = max_image_pixels});
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data.c_str()), data.size());
  std::vector<std::uint8_t> out;
  conveyor::ImageInfo info;
  {
    nb::gil_scoped_release release;
    info = d.read_header(in);
    out.resize(std::size_t(info.width) * std::size_t(info.height) * 3);
    d.decode(out.data(), std::size_t(info.width) * 3);
  }
  return {info.width, info.height, nb::bytes(reinterpret_cast<const char*>(out.data()), out.size())};
}

class InMemory final : public Dataset {
 public:
  InMemory() : InMemory(std::make_shared<conveyor::InMemory>()) {}
  void add(nb::bytes bytes, std::int64_t label) {
    if (frozen_)
      throw conveyor::ConfigError("InMemory.add: the dataset is read by a Loader; add every sample before making one");
    m_->add({reinterpret_cast<const std::byte*>(bytes.c_str()), bytes.size()}, label);
  }
  conveyor::AnyDataset use() override {
    frozen_ = true;  // workers read it without a lock from now on
    return any_;
  }

 private:
  explicit InMemory(std::shared_ptr<conveyor::InMemory> m)
      : Dataset(conveyor::AnyDataset(std::shared_ptr<const conveyor::InMemory>(m))), m_(std::move(m)) {}
  std::shared_ptr<conveyor::InMemory> m_;
  bool frozen_ = false;
};

// --- transforms -----------------------------------------------------------------------------------

/// A transform made by image_augment() or raw_tensor().
struct Transform {
  conveyor::AnyTransform any;
  std::vector<std::int64_t> shape;  // one sample's
  std::string dtype;
};

Transform make_transform(conveyor::AnyTransform any) {
  const conveyor::SampleSpec spec = any.sample_spec();
  Transform t{std::move(any), {spec.shape.begin(), spec.shape.begin() + spec.rank}, std::string(to_string(spec.dtype))};
  return t;
}

Transform image_augment(const std::string& crop, int size, std::pair<double, double> scale,
                        std::pair<double, double> ratio, std::optional<int> resize, double flip,
                        std::optional<std::vector<float>> mean, std::optional<std::vector<float>> std_dev,
                        const std::string& dtype, const std::string& layout, bool exif_orientation, bool roi,
                        std::optional<bool> decode_scaling, bool lenient, std::uint64_t max_image_pixels) {
  conveyor::ImageAugment a;
  if (crop == "random_resized")
    a.crop = conveyor::RandomResizedCrop{size, {scale.first, scale.second}, {ratio.first, ratio.second}};
  else if (crop == "center")
    a.crop = conveyor::CenterCrop{size};
  else
    throw conveyor::ConfigError("ImageAugment: crop must be 'random_resized' or 'center', got '" + crop + "'");
  if (resize) a.resize = conveyor::Resize{*resize};
  a.flip.p = flip;
  if (mean.has_value() != std_dev.has_value())
    throw conveyor::ConfigError("ImageAugment: normalize needs both mean and std");
  if (mean) {
    if (mean->size() != 3 || std_dev->size() != 3)
      throw conveyor::ConfigError("ImageAugment: normalize's mean and std must have 3 values each");
    a.normalize = conveyor::Normalize{{(*mean)[0], (*mean)[1], (*mean)[2]}, {(*std_dev)[0], (*std_dev)[1], (*std_dev)[2]}};
  }
  a.dtype = conveyor::parse_dtype(dtype);
  a.layout = conveyor::parse_layout(layout);
  a.exif_orientation = exif_orientation;
  a.roi = roi;
  a.decode_scaling = decode_scaling;
  a.decode.lenient = lenient;
  a.decode.max_image_pixels = max_image_pixels;
  a.validate();
  return make_transform(conveyor::AnyTransform(a));
}

Transform raw_tensor(const std::vector<std::int64_t>& shape, const std::string& dtype) {
  if (shape.empty() || shape.size() > 3)
    throw conveyor::ConfigError("RawTensor: the sample shape must have 1 to 3 dimensions");
  conveyor::SampleSpec spec{conveyor::parse_dtype(dtype), static_cast<int>(shape.size()), {}};
  for (std::size_t i = 0; i < shape.size(); ++i) spec.shape[i] = shape[i];
  const conveyor::RawTensor raw{spec};
  raw.validate();
  return make_transform(conveyor::AnyTransform(raw));
}

// --- batches and their tensors --------------------------------------------------------------------

/// One tensor of a batch, exported through DLPack (`__dlpack__`, `__dlpack_device__`).
class Tensor {
 public:
  Tensor(conveyor::Batch batch, conveyor::BatchTensor which) : batch_(std::move(batch)), which_(which) {}

  [[nodiscard]] const conveyor::TensorView& view() const {
    return which_ == conveyor::BatchTensor::images ? batch_.images() : batch_.labels();
  }
  [[nodiscard]] std::tuple<int, int> dlpack_device() const {
    const conveyor::Device d = view().device;
    return d.kind == conveyor::Device::Kind::cuda ? std::tuple{int(kDLCUDA), d.id} : std::tuple{int(kDLCPU), 0};
  }
  [[nodiscard]] std::vector<std::int64_t> shape() const {
    const conveyor::TensorView& v = view();
    return {v.shape.begin(), v.shape.begin() + v.rank};
  }
  [[nodiscard]] std::string dtype() const { return std::string(to_string(view().dtype)); }

  /// The DLPack capsule, after making `stream` wait for the batch (the Python array API's
  /// convention for CUDA: None or 1 the legacy default stream, 2 the per-thread default stream,
  /// another value a cudaStream_t, -1 no ordering). No host wait.
  nb::object dlpack(nb::object stream, nb::object max_version, nb::object dl_device, nb::object copy) const {
    (void)max_version;  // a consumer asking for a versioned capsule accepts the legacy one too
    if (!copy.is_none() && nb::cast<bool>(copy))
      throw nb::buffer_error("conveyor batches are views of the loader's memory: copy=True is not supported");
    if (!dl_device.is_none() && nb::cast<std::tuple<int, int>>(dl_device) != dlpack_device())
      throw nb::buffer_error("conveyor cannot move a batch to another device through DLPack");
    CUstream_st* order = nullptr;  // -1 (no ordering): the pipeline's stream, for labels' copies
    if (view().device.kind == conveyor::Device::Kind::cuda) {
      const std::int64_t s = stream.is_none() ? 1 : nb::cast<std::int64_t>(stream);
      if (s == 0) throw nb::value_error("__dlpack__: stream 0 is ambiguous for CUDA (use 1 or 2)");
      // cudaStreamLegacy and cudaStreamPerThread are the handles 1 and 2 themselves.
      if (s != -1) order = reinterpret_cast<CUstream_st*>(static_cast<std::uintptr_t>(s));
    }
    DLManagedTensor* managed = conveyor::to_dlpack(batch_, which_, order);
    PyObject* capsule = PyCapsule_New(managed, "dltensor", [](PyObject* self) {
      // Still named "dltensor": no consumer took it, so its deleter is ours to run.
      if (PyCapsule_IsValid(self, "dltensor")) {
        auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(self, "dltensor"));
        if (m->deleter) m->deleter(m);
      }
    });
    if (!capsule) {
      managed->deleter(managed);
      throw nb::python_error();
    }
    return nb::steal(capsule);
  }

 private:
  conveyor::Batch batch_;
  conveyor::BatchTensor which_;
};

class Batch {
 public:
  explicit Batch(conveyor::Batch b) : b_(std::move(b)) {}
  [[nodiscard]] Tensor images() const { return {b_, conveyor::BatchTensor::images}; }
  [[nodiscard]] Tensor labels() const { return {b_, conveyor::BatchTensor::labels}; }
  [[nodiscard]] std::vector<std::int64_t> indices() const { return {b_.indices().begin(), b_.indices().end()}; }
  [[nodiscard]] std::size_t size() const { return b_.size(); }
  [[nodiscard]] std::uint64_t epoch() const { return b_.epoch(); }
  [[nodiscard]] std::uint64_t number() const { return b_.number(); }

 private:
  conveyor::Batch b_;
};

using SkippedRecord = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::string, std::string>;

// --- the loader -----------------------------------------------------------------------------------

/// `decode` ("cpu", "gpu", "auto"), the share to start from (unset: the pipeline's default) and the
/// device decoder's chroma upsampling ("interpolated", "replicated") into `o`.
void set_decode(conveyor::PipelineOptions& o, const char* who, const std::string& decode, std::optional<double> gpu_share,
                const std::string& upsampling) {
  if (decode == "cpu")
    o.decode = conveyor::JpegDecode::cpu;
  else if (decode == "gpu")
    o.decode = conveyor::JpegDecode::gpu;
  else if (decode == "auto")
    o.decode = conveyor::JpegDecode::adaptive;
  else
    throw conveyor::ConfigError(std::string(who) + ": decode must be 'cpu', 'gpu' or 'auto', got '" + decode + "'");
  o.gpu_share = gpu_share;
  o.gpu_upsampling = conveyor::parse_chroma_upsampling(upsampling);
}

/// What a loader and its live epoch share: the pipeline lives until both are gone.
struct Core {
  std::unique_ptr<conveyor::AnyPipeline> pipe;
  std::size_t prefetch = 0;
  pid_t pid = 0;  // the process that made it: its threads exist only there

  void check_process() const {
    if (getpid() != pid)
      throw conveyor::Error("conveyor.Loader: this loader was made in process " + std::to_string(pid) +
                            " and its worker threads do not exist after fork(); make the loader in this process");
  }
};

/// One epoch being iterated.
class Epoch {
 public:
  explicit Epoch(std::shared_ptr<Core> core) : core_(std::move(core)) {
    nb::gil_scoped_release release;
    it_.emplace(core_->pipe->begin());
  }
  Epoch(const Epoch&) = delete;
  Epoch& operator=(const Epoch&) = delete;
  ~Epoch() {
    if (core_ && getpid() != core_->pid) {  // after fork(): never touch the parent's threads
      new std::shared_ptr<Core>(std::move(core_));
      (void)it_.release_without_finishing();
    }
  }

  /// The next batch; raises StopIteration at the epoch's end.
  Batch next() {
    if (!it_) throw nb::stop_iteration();
    core_->check_process();
    {
      nb::gil_scoped_release release;
      if (started_) ++*it_;
    }
    started_ = true;
    if (*it_ == std::default_sentinel) {
      close();
      throw nb::stop_iteration();
    }
    using namespace std::chrono_literals;
    for (;;) {
      bool ready = false;
      {
        nb::gil_scoped_release release;
        ready = it_->wait_ready(50ms);
      }
      if (ready) break;
      if (PyErr_CheckSignals() != 0) throw nb::python_error();  // Ctrl-C: KeyboardInterrupt
      if (core_->pipe->slots_held() >= core_->prefetch)
        throw conveyor::Error(
            "conveyor.Loader: all " + std::to_string(core_->prefetch) +
            " batches in flight are held by tensors still alive, so no batch can be made: delete tensors of "
            "earlier batches (or copy them with .clone()) before asking for the next, or make the Loader with a "
            "larger prefetch");
    }
    nb::gil_scoped_release release;
    return Batch(**it_);
  }

  /// Ends the epoch (work in flight is finished and dropped); the next `next()` stops.
  void close() {
    if (!it_) return;
    if (getpid() != core_->pid) {
      (void)it_.release_without_finishing();
      return;
    }
    nb::gil_scoped_release release;
    it_.reset();
  }

 private:
  /// The pipeline's iterator, which a fork()ed child must not destroy (it would wait for workers
  /// that do not exist there).
  class Held {
   public:
    void emplace(conveyor::AnyPipeline::Iterator it) { p_ = std::make_unique<conveyor::AnyPipeline::Iterator>(std::move(it)); }
    explicit operator bool() const noexcept { return p_ != nullptr; }
    conveyor::AnyPipeline::Iterator& operator*() { return *p_; }
    conveyor::AnyPipeline::Iterator* operator->() { return p_.get(); }
    void reset() { p_.reset(); }
    conveyor::AnyPipeline::Iterator* release_without_finishing() { return p_.release(); }

   private:
    std::unique_ptr<conveyor::AnyPipeline::Iterator> p_;
  };

  std::shared_ptr<Core> core_;
  Held it_;
  bool started_ = false;
};

class Loader {
 public:
  /// `device` for "the GPU of this process's local rank" (distributed="env"; else GPU 0).
  static constexpr int local_rank_device = -2;

  Loader(Dataset& dataset, const Transform& transform, std::size_t batch_size, bool shuffle, std::uint64_t seed,
         int workers, std::size_t prefetch, bool drop_last, const std::string& on_error, int device,
         std::uintptr_t stream, const std::string& distributed, std::optional<std::uint64_t> rank,
         std::optional<std::uint64_t> world_size, std::uint64_t shard_window, const std::string& decode,
         std::optional<double> gpu_share, const std::string& gpu_upsampling)
      : core_(std::make_shared<Core>()) {
    conveyor::PipelineOptions o;
    o.batch_size = batch_size;
    o.workers = workers;
    o.prefetch = prefetch;
    o.drop_last = drop_last;
    o.seed = seed;
    o.device = device;
    o.stream = reinterpret_cast<CUstream_st*>(stream);
    if (on_error == "raise")
      o.on_error = conveyor::OnError::raise;
    else if (on_error == "skip")
      o.on_error = conveyor::OnError::skip;
    else
      throw conveyor::ConfigError("Loader: on_error must be 'raise' or 'skip', got '" + on_error + "'");
    set_decode(o, "Loader", decode, gpu_share, gpu_upsampling);
    conveyor::AnyDataset data = dataset.use();
    const std::uint64_t n = data.size();
    std::optional<conveyor::AnySampler> sampler;
    std::uint64_t world = 1, me = 0;
    if (distributed == "env") {
      const conveyor::LaunchEnvironment env = conveyor::launch_environment();
      world = env.world_size;
      me = env.rank;
    } else if (distributed == "explicit" && rank && world_size) {
      world = *world_size;
      me = *rank;
    }
    if (shard_window > 0) {
      const auto* shards = dynamic_cast<const ShardDataset*>(&dataset);
      if (!shards) throw conveyor::ConfigError("Loader: shard_window needs a TarShards or TFRecordDataset");
      if (!shuffle) throw conveyor::ConfigError("Loader: shard_window shuffles: it needs shuffle=True");
      if (distributed == "env") local_rank_ = conveyor::launch_environment().local_rank;
      sampler.emplace(conveyor::ShardShuffleSampler(
          shards->shard_sizes(),
          {.seed = seed, .window = shard_window, .num_replicas = world, .rank = me, .drop_last = drop_last}));
    } else if (distributed == "env") {
      const auto d = conveyor::DistributedSampler::from_env(n, {.shuffle = shuffle, .seed = seed, .drop_last = drop_last});
      local_rank_ = static_cast<std::uint64_t>(d.local_rank());
      sampler.emplace(d);
    } else if (distributed == "explicit") {
      if (!rank || !world_size) throw conveyor::ConfigError("Loader: distributed needs rank and world_size");
      sampler.emplace(conveyor::DistributedSampler(
          n, {.num_replicas = *world_size, .rank = *rank, .shuffle = shuffle, .seed = seed, .drop_last = drop_last}));
    } else if (distributed.empty()) {
      if (shuffle)
        sampler.emplace(conveyor::RandomSampler(n, {.seed = seed}));
      else
        sampler.emplace(conveyor::SequentialSampler(n));
    } else {
      throw conveyor::ConfigError("Loader: distributed must be False, 'env' or (rank, world_size), got '" + distributed + "'");
    }
    if (device == local_rank_device) o.device = local_rank_ ? static_cast<int>(*local_rank_) : 0;
    core_->prefetch = prefetch;
    core_->pid = getpid();
    nb::gil_scoped_release release;
    core_->pipe = std::make_unique<conveyor::AnyPipeline>(std::move(data), std::move(*sampler), transform.any, o);
  }
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;
  ~Loader() {
    if (getpid() != core_->pid) new std::shared_ptr<Core>(std::move(core_));  // after fork(): leak, never join
    else {
      if (const auto live = live_.lock()) live->close();
      nb::gil_scoped_release release;
      core_.reset();
    }
  }

  [[nodiscard]] std::uint64_t batches_per_epoch() const { return core_->pipe->batches_per_epoch(); }
  void set_epoch(std::uint64_t epoch, std::uint64_t first_batch) {
    core_->check_process();
    if (const auto live = live_.lock()) live->close();  // a new epoch ends the one still open
    core_->pipe->set_epoch(epoch, first_batch);
  }
  [[nodiscard]] std::uint64_t epoch() const { return core_->pipe->epoch(); }
  /// Starts the selected epoch, ending one still being iterated.
  std::shared_ptr<Epoch> iterate() {
    core_->check_process();
    if (const auto live = live_.lock()) live->close();
    auto e = std::make_shared<Epoch>(core_);
    live_ = e;
    return e;
  }
  [[nodiscard]] std::string stats_json() const { return core_->pipe->stats().json(); }
  void set_gpu_share(double share) { core_->pipe->set_gpu_share(share); }
  [[nodiscard]] std::string prometheus(const std::vector<std::pair<std::string, std::string>>& labels) const {
    return conveyor::prometheus_text(core_->pipe->stats(), labels);
  }
  [[nodiscard]] std::vector<SkippedRecord> skipped() const {
    std::vector<SkippedRecord> out;
    for (const conveyor::SkippedSample& s : core_->pipe->skipped())
      out.emplace_back(s.epoch, s.index, s.replacement, s.name, s.reason);
    return out;
  }
  [[nodiscard]] std::size_t slots_held() const { return core_->pipe->slots_held(); }
  [[nodiscard]] std::optional<std::uint64_t> local_rank() const { return local_rank_; }
  [[nodiscard]] std::uint64_t dataset_size() const { return core_->pipe->dataset().size(); }

 private:
  std::shared_ptr<Core> core_;
  std::weak_ptr<Epoch> live_;
  std::optional<std::uint64_t> local_rank_;
};

// --- the request path ------------------------------------------------------------------------------

/// conveyor::Preprocessor over the type-erased transform, for services: one call per request.
class Preprocessor {
 public:
  Preprocessor(const Transform& transform, std::size_t max_images, std::size_t lanes, std::size_t max_waiting,
               int workers, std::size_t prefetch, int device, std::uintptr_t stream, const std::string& decode,
               std::optional<double> gpu_share, const std::string& gpu_upsampling)
      : pid_(getpid()) {
    conveyor::PipelineOptions o;
    o.workers = workers;
    o.prefetch = prefetch;
    o.device = device;
    o.stream = reinterpret_cast<CUstream_st*>(stream);
    set_decode(o, "Preprocessor", decode, gpu_share, gpu_upsampling);
    nb::gil_scoped_release release;
    pre_ = std::make_unique<Impl>(transform.any, conveyor::PreprocessorOptions{max_images, lanes, max_waiting, o});
  }
  Preprocessor(const Preprocessor&) = delete;
  Preprocessor& operator=(const Preprocessor&) = delete;
  ~Preprocessor() {
    if (getpid() != pid_) (void)pre_.release();  // after fork(): its threads are not here; leak, never join
    nb::gil_scoped_release release;
    pre_.reset();
  }

  /// One request: its images' bytes, read without a copy while the call lasts. Waits without the
  /// GIL, seeing Ctrl-C every 50 ms (which cancels the request).
  Batch run(const std::vector<nb::bytes>& images, std::optional<double> timeout) {
    if (getpid() != pid_)
      throw conveyor::Error("conveyor.Preprocessor: made in process " + std::to_string(pid_) +
                            ", its worker threads do not exist after fork(); make it in this process");
    std::vector<std::span<const std::byte>> spans;
    spans.reserve(images.size());
    for (const nb::bytes& b : images) spans.emplace_back(reinterpret_cast<const std::byte*>(b.c_str()), b.size());
    const auto deadline = timeout ? std::chrono::steady_clock::now() +
                                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                            std::chrono::duration<double>(*timeout))
                                  : std::chrono::steady_clock::time_point::max();
    std::optional<Impl::Pending> pending;
    {
      nb::gil_scoped_release release;
      pending.emplace(pre_->submit(spans, deadline));
    }
    for (;;) {
      bool ready = false;
      {
        nb::gil_scoped_release release;
        const auto now = std::chrono::steady_clock::now();
        const auto step = std::min<std::chrono::steady_clock::duration>(std::chrono::milliseconds(50),
                                                                         deadline - std::min(deadline, now));
        ready = pending->wait_for(step) || std::chrono::steady_clock::now() >= deadline;
      }
      if (ready) break;
      if (PyErr_CheckSignals() != 0) {
        nb::gil_scoped_release release;
        pending.reset();  // cancelled: its lane goes back
        throw nb::python_error();
      }
    }
    nb::gil_scoped_release release;
    return Batch(pending->get(deadline));
  }

  [[nodiscard]] nb::dict stats() const {
    const conveyor::PreprocessorStats s = pre_->stats();
    nb::dict d;
    d["requests"] = s.requests;
    d["images"] = s.images;
    d["failed"] = s.failed;
    d["errors"] = s.errors;
    d["overloaded"] = s.overloaded;
    d["deadline_exceeded"] = s.deadline_exceeded;
    d["cancelled"] = s.cancelled;
    d["in_flight"] = s.in_flight;
    d["waiting"] = s.waiting;
    d["lanes"] = s.lanes;
    d["slots_held"] = s.slots_held;
    d["latency_count"] = s.latency.count;
    d["latency_seconds_sum"] = s.latency.sum;
    d["pipelines"] = nb::module_::import_("json").attr("loads")(s.pipelines.json());
    return d;
  }
  [[nodiscard]] std::string prometheus(const std::vector<std::pair<std::string, std::string>>& labels) const {
    return conveyor::prometheus_text(pre_->stats(), labels);
  }

 private:
  using Impl = conveyor::Preprocessor<conveyor::AnyTransform>;
  std::unique_ptr<Impl> pre_;
  pid_t pid_;
};

bool has_cuda_backend() { return conveyor::detail::cuda_backend_factory().load() != nullptr; }

}  // namespace

NB_MODULE(_conveyor, m) {
  m.doc() = "conveyor's C++ core; use the conveyor package";

  error_type = new_exception(m, "Error", PyExc_RuntimeError, "Base of conveyor's errors.");
  config_error_type = new_exception(m, "ConfigError", nb::make_tuple(nb::handle(error_type), nb::handle(PyExc_ValueError)).release().ptr(),
                                    "An invalid option or argument, named with its value.");
  io_error_type = new_exception(m, "IoError", nb::make_tuple(nb::handle(error_type), nb::handle(PyExc_OSError)).release().ptr(),
                                "A file or folder that cannot be read; .path names it.");
  decode_error_type = new_exception(m, "DecodeError", nb::make_tuple(nb::handle(error_type), nb::handle(PyExc_ValueError)).release().ptr(),
                                    "Bytes that cannot be decoded; .reason says why.");
  sample_error_type = new_exception(m, "SampleError", error_type,
                                    "A sample failed under on_error='raise': .index, .path and .reason name it.");
  cuda_error_type = new_exception(m, "CudaError", error_type, "A CUDA call failed; .call names it.");
  overloaded_type = new_exception(m, "Overloaded", error_type,
                                  "A request refused: max_waiting requests already wait for a lane.");
  deadline_type = new_exception(m, "DeadlineExceeded", nb::make_tuple(nb::handle(error_type), nb::handle(PyExc_TimeoutError)).release().ptr(),
                                "A request not done within its timeout (refused or cancelled).");
  nb::register_exception_translator(translate);

  nb::class_<Dataset>(m, "Dataset")
      .def("__len__", &Dataset::size)
      .def("label", &Dataset::label, "index"_a)
      .def("name", &Dataset::name, "index"_a)
      .def("read", &Dataset::read, "index"_a, "The encoded bytes of sample `index`.");
  nb::class_<ImageFolder, Dataset>(m, "ImageFolder")
      .def("__init__",
           [](ImageFolder* self, const std::string& root) {
             std::shared_ptr<const conveyor::ImageFolder> f;
             {
               nb::gil_scoped_release release;
               f = std::make_shared<const conveyor::ImageFolder>(root);
             }
             new (self) ImageFolder(std::move(f));
           },
           "root"_a)
      .def_prop_ro("classes", &ImageFolder::classes)
      .def_prop_ro("root", &ImageFolder::root);
  nb::class_<FileList, Dataset>(m, "FileList")
      .def("__init__",
           [](FileList* self, const std::string& path, std::optional<std::string> root) {
             std::shared_ptr<const conveyor::FileList> f;
             {
               nb::gil_scoped_release release;
               f = root ? std::make_shared<const conveyor::FileList>(path, *root)
                        : std::make_shared<const conveyor::FileList>(path);
             }
             new (self) FileList(std::move(f));
           },
           "path"_a, "root"_a = nb::none())
      .def_prop_ro("root", &FileList::root);
  nb::class_<ShardDataset, Dataset>(m, "ShardDataset")
      .def_prop_ro("shard_sizes", &ShardDataset::shard_sizes)
      .def_prop_ro("open_seconds", &ShardDataset::open_seconds);
  nb::class_<TarShards, ShardDataset>(m, "TarShards")
      .def("__init__",
           [](TarShards* self, const std::string& pattern, std::vector<std::string> image_extensions,
              const std::string& label_extension, bool use_index) {
             std::shared_ptr<const conveyor::TarShards> d;
             {
               nb::gil_scoped_release release;
               d = std::make_shared<const conveyor::TarShards>(
                   pattern, conveyor::TarShardsOptions{std::move(image_extensions), label_extension, use_index});
             }
             new (self) TarShards(std::move(d));
           },
           "pattern"_a, "image_extensions"_a = std::vector<std::string>{"jpg", "jpeg", "png"}, "label"_a = "cls",
           "use_index"_a = true);
  nb::class_<TFRecordDataset, ShardDataset>(m, "TFRecordDataset")
      .def("__init__",
           [](TFRecordDataset* self, const std::string& pattern, const std::string& image_key,
              const std::string& label_key, std::int64_t label_offset, bool use_index) {
             std::shared_ptr<const conveyor::TFRecordDataset> d;
             {
               nb::gil_scoped_release release;
               d = std::make_shared<const conveyor::TFRecordDataset>(
                   pattern, conveyor::TFRecordOptions{image_key, label_key, label_offset, use_index});
             }
             new (self) TFRecordDataset(std::move(d));
           },
           "pattern"_a, "image_key"_a = "image/encoded", "label_key"_a = "image/class/label", "label_offset"_a = 0,
           "use_index"_a = true);
  m.def("decode_image", &decode_image, "data"_a, "lenient"_a = false, "max_image_pixels"_a = std::uint64_t{1} << 27);
  nb::class_<InMemory, Dataset>(m, "InMemory")
      .def(nb::init<>())
      .def("add", &InMemory::add, "data"_a, "label"_a, "Appends one sample's encoded bytes and its label.");

  nb::class_<Transform>(m, "Transform")
      .def_ro("sample_shape", &Transform::shape)
      .def_ro("dtype", &Transform::dtype);
  m.def("image_augment", &image_augment, "crop"_a, "size"_a, "scale"_a, "ratio"_a, "resize"_a, "flip"_a, "mean"_a,
        "std"_a, "dtype"_a, "layout"_a, "exif_orientation"_a, "roi"_a, "decode_scaling"_a, "lenient"_a,
        "max_image_pixels"_a);
  m.def("raw_tensor", &raw_tensor, "shape"_a, "dtype"_a);

  nb::class_<Tensor>(m, "Tensor")
      .def("__dlpack__", &Tensor::dlpack, "stream"_a = nb::none(), "max_version"_a = nb::none(),
           "dl_device"_a = nb::none(), "copy"_a = nb::none())
      .def("__dlpack_device__", &Tensor::dlpack_device)
      .def_prop_ro("shape", &Tensor::shape)
      .def_prop_ro("dtype", &Tensor::dtype);
  nb::class_<Batch>(m, "Batch")
      .def_prop_ro("images", &Batch::images)
      .def_prop_ro("labels", &Batch::labels)
      .def_prop_ro("indices", &Batch::indices)
      .def_prop_ro("epoch", &Batch::epoch)
      .def_prop_ro("number", &Batch::number)
      .def("__len__", &Batch::size);
  nb::class_<Epoch>(m, "Epoch").def("next", &Epoch::next).def("close", &Epoch::close);
  nb::class_<Loader>(m, "Loader")
      .def(nb::init<Dataset&, const Transform&, std::size_t, bool, std::uint64_t, int, std::size_t, bool, const std::string&,
                    int, std::uintptr_t, const std::string&, std::optional<std::uint64_t>, std::optional<std::uint64_t>,
                    std::uint64_t, const std::string&, std::optional<double>, const std::string&>(),
           "dataset"_a, "transform"_a, "batch_size"_a, "shuffle"_a, "seed"_a, "workers"_a, "prefetch"_a, "drop_last"_a,
           "on_error"_a, "device"_a, "stream"_a, "distributed"_a, "rank"_a, "world_size"_a, "shard_window"_a,
           "decode"_a, "gpu_share"_a, "gpu_upsampling"_a)
      .def("set_gpu_share", &Loader::set_gpu_share, "share"_a)
      .def("prometheus", &Loader::prometheus, "labels"_a)
      .def("batches_per_epoch", &Loader::batches_per_epoch)
      .def("set_epoch", &Loader::set_epoch, "epoch"_a, "first_batch"_a = 0)
      .def_prop_ro("epoch", &Loader::epoch)
      .def("iterate", &Loader::iterate)
      .def("stats_json", &Loader::stats_json)
      .def("skipped", &Loader::skipped)
      .def("slots_held", &Loader::slots_held)
      .def_prop_ro("local_rank", &Loader::local_rank)
      .def_prop_ro("dataset_size", &Loader::dataset_size);
  nb::class_<Preprocessor>(m, "Preprocessor")
      .def(nb::init<const Transform&, std::size_t, std::size_t, std::size_t, int, std::size_t, int, std::uintptr_t,
                    const std::string&, std::optional<double>, const std::string&>(),
           "transform"_a, "max_images"_a, "lanes"_a, "max_waiting"_a, "workers"_a, "prefetch"_a, "device"_a, "stream"_a,
           "decode"_a, "gpu_share"_a, "gpu_upsampling"_a)
      .def("run", &Preprocessor::run, "images"_a, "timeout"_a = nb::none())
      .def("stats", &Preprocessor::stats)
      .def("prometheus", &Preprocessor::prometheus, "labels"_a);
  m.def("has_cuda_backend", &has_cuda_backend, "Whether this build can make loaders on a CUDA device.");
}
