// Starting a pipeline's threads all or none (pipeline/detail/thread_start.hpp): a thread that
// fails to start part-way stops and joins the ones before it and reports which failed, instead of
// leaving joinable threads to a vector's destructor (std::terminate).

#include <conveyor/pipeline/detail/thread_start.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

using namespace conveyor;

namespace {

/// Threads that run until told to stop, counting how many ran and how many returned.
struct Gate {
  std::mutex m;
  std::condition_variable cv;
  bool stop = false;
  std::atomic<int> ran{0}, returned{0};
  void body() {
    ++ran;
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return stop; });
    ++returned;
  }
  void request_stop() {
    {
      std::lock_guard lock(m);
      stop = true;
    }
    cv.notify_all();
  }
};

}  // namespace

TEST_CASE("threads start all or none: one that fails part-way stops and joins those before it",
          "[pipeline][threads]") {
  for (std::size_t failing = 0; failing < 4; ++failing) {
    INFO("thread " << failing << " fails");
    Gate gate;
    std::vector<std::thread> threads;
    threads.emplace_back([] {});  // one from before, which start_threads leaves alone
    std::size_t calls = 0;
    const auto start = [&](auto f) {
      if (calls++ == failing) throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
      return std::thread(std::move(f));
    };
    CHECK_THROWS_WITH(
        detail::start_threads(threads, 4, [&](std::size_t) { gate.body(); }, [&] { gate.request_stop(); }, start),
        Catch::Matchers::Contains("thread " + std::to_string(failing + 1) + " failed to start") &&
            Catch::Matchers::Contains("the " + std::to_string(failing) + " already started were stopped"));
    CHECK(threads.size() == 1);
    CHECK(gate.returned == gate.ran);
    CHECK(gate.ran == static_cast<int>(failing));
    threads[0].join();
  }
}

TEST_CASE("threads that all start run their own index", "[pipeline][threads]") {
  std::vector<std::thread> threads;
  std::vector<std::atomic<int>> seen(5);
  detail::start_threads(threads, 5, [&](std::size_t k) { ++seen[k]; }, [] {});
  for (std::thread& t : threads) t.join();
  for (const auto& s : seen) CHECK(s == 1);
}
