// Must not compile: a sampler keeps no epoch (the pipeline passes its own to `indices(epoch)`), so
// torch's `sampler.set_epoch(e)`, which the pipeline would ignore, is an error naming the call.
#include <conveyor/conveyor.hpp>

int main() {
  conveyor::RandomSampler sampler(10, {.seed = 1});
  sampler.set_epoch(1);
}
