// Must not compile: the dataset lacks label(i), and the error must name the Dataset concept.
#include <conveyor/conveyor.hpp>

struct NoLabels {
  std::uint64_t size() const { return 1; }
  void read(std::uint64_t, conveyor::ByteBuffer&) const {}
  std::string name(std::uint64_t) const { return "x"; }
};

int main() {
  NoLabels d;
  conveyor::BatchPipeline pipe(d, conveyor::SequentialSampler(1), conveyor::ImageAugment::train());
}
