// Must not compile: the transform has no Workspace, and the error must name the Transform concept.
#include <conveyor/conveyor.hpp>

struct NoWorkspace {
  conveyor::SampleSpec sample_spec() const { return {}; }
};

int main() {
  conveyor::InMemory d;
  conveyor::BatchPipeline pipe(d, conveyor::SequentialSampler(1), NoWorkspace{});
}
