// An outside project's first program: iterate a folder of JPEGs in batches.
#include <conveyor/conveyor.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  conveyor::ImageFolder data(argv[1]);
  conveyor::RandomSampler order(data.size(), {.seed = 1});
  conveyor::BatchPipeline pipe(data, order, conveyor::ImageAugment::train(64), {.batch_size = 4, .workers = 2});
  std::size_t images = 0;
  for (const conveyor::Batch& b : pipe) images += b.size();
  std::printf("consumer saw %zu images, version %s\n", images, conveyor::version_string);
  return images == data.size() ? 0 : 1;
}
