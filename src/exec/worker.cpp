#include "exec/worker.hpp"

#include <chrono>
#include <thread>

#include "exec/backends.hpp"
#include "exec/host_worker.hpp"
#include "exec/staged_worker.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace cuboid::exec {

void set_thread_count(int threads) {
#if defined(_OPENMP)
  if (threads > 0) omp_set_num_threads(threads);
#else
  (void)threads;
#endif
}

int thread_count() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

int gemm_team(const platform::ProcessorSpec& spec) {
  if (spec.team_gemm) return spec.threads;
  return spec.threads == 1 ? 1 : 0;
}

void slow_down(const platform::ProcessorSpec& spec, double seconds, double since_start) {
  if (spec.slowdown > 1 && since_start >= spec.slowdown_after_s && seconds > 0)
    std::this_thread::sleep_for(std::chrono::duration<double>((spec.slowdown - 1) * seconds));
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <class Scalar>
std::unique_ptr<Worker<Scalar>> make_worker(const platform::ProcessorSpec& spec) {
  switch (spec.kind) {
    case platform::ProcessorKind::host:
      return std::make_unique<HostWorker<Scalar>>(spec);
    case platform::ProcessorKind::staged:
      return std::make_unique<StagedWorker<Scalar, StagedHostBackend>>(spec);
    case platform::ProcessorKind::device:
#if CUBOID_DEVICE_BACKEND
      return std::make_unique<StagedWorker<Scalar, DeviceBackend>>(spec);
#else
      break;
#endif
    case platform::ProcessorKind::emulated:
      return std::make_unique<StagedWorker<Scalar, EmulatedBackend>>(spec);
  }
  throw std::logic_error("no worker for processor " + spec.name + " in this build");
}

BufferCost buffer_cost(const platform::ProcessorSpec& spec, std::size_t element_bytes) {
  switch (spec.kind) {
    case platform::ProcessorKind::host:
      return BufferCost{};  // works in place: no budget applies
    case platform::ProcessorKind::staged:
      return StagedWorker<double, StagedHostBackend>::buffer_cost(element_bytes);
    case platform::ProcessorKind::device:
#if CUBOID_DEVICE_BACKEND
      return StagedWorker<double, DeviceBackend>::buffer_cost(element_bytes);
#else
      break;
#endif
    case platform::ProcessorKind::emulated:
      return StagedWorker<double, EmulatedBackend>::buffer_cost(element_bytes);
  }
  return BufferCost{};
}

#define CUBOID_MAKE_WORKER(Scalar) \
  template std::unique_ptr<Worker<Scalar>> make_worker<Scalar>(const platform::ProcessorSpec&);
CUBOID_FOR_EACH_SCALAR(CUBOID_MAKE_WORKER)
#undef CUBOID_MAKE_WORKER

}  // namespace cuboid::exec
