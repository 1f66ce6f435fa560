#include "platform/processor.hpp"

#include <KokkosKernels_config.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <sstream>
#include <thread>

#include "kokkos_ext/compat.hpp"
#include "platform/device_backend.hpp"
#include "util/build_info.hpp"
#include "util/error.hpp"
#include "util/host_memory.hpp"
#include "util/names.hpp"
#include "util/text.hpp"

namespace cuboid::platform {

std::string to_string(ProcessorKind k) {
  constexpr Named<ProcessorKind> kinds[] = {{ProcessorKind::host, "host"},
                                            {ProcessorKind::staged, "staged"},
                                            {ProcessorKind::device, "device"},
                                            {ProcessorKind::emulated, "emulated"}};
  return std::string(name_of(k, kinds));
}

std::vector<std::string> default_processor_names() {
  std::vector<std::string> names{"host"};
  // A process drives one device (Kokkos' choice at initialisation): on a node with several,
  // run one MPI rank per device.
  if (const int d = active_device(); d >= 0)
    names.push_back(device_processor_prefix() + ":" + std::to_string(d));
  return names;
}

namespace {

int host_threads() {
  int t = int(Kokkos::DefaultHostExecutionSpace().concurrency());
  return std::max(1, t);
}

// The space a staged or emulated processor's own GEMMs run on: a serial one where the build has
// it, so that its lane takes one share of the cores like any host-side processor.
std::string copying_space_name() {
#if defined(KOKKOS_ENABLE_SERIAL)
  return Kokkos::Serial::name();
#else
  return Kokkos::DefaultHostExecutionSpace::name();
#endif
}

bool parse_indexed(const std::string& name, const std::string& prefix, int& index) {
  if (name == prefix) {
    index = 0;
    return true;
  }
  if (name.rfind(prefix + ":", 0) != 0) return false;
  const std::string digits = name.substr(prefix.size() + 1);
  if (digits.empty() || digits.size() > 4 || !std::all_of(digits.begin(), digits.end(), ::isdigit))
    return false;
  index = std::stoi(digits);
  return true;
}

}  // namespace

int device_copy_threads() { return std::max(1, std::min(4, host_threads() / 4)); }

std::vector<ProcessorSpec> resolve_processors(const std::vector<std::string>& names,
                                              const std::string& where) {
  std::vector<ProcessorSpec> out;
  int host_side = 0;
  for (const auto& name : names) {
    ProcessorSpec p;
    p.name = name;
    int index = 0;
    // The host-side kinds compute on host cores in host memory: they share the cores. An
    // emulated device's GEMMs run on host cores too.
    const auto host_side_kind = [&](ProcessorKind kind, std::string space, const char* memory) {
      p.kind = kind;
      p.index = index;
      p.space = std::move(space);
      p.memory_space = memory;
      p.memory_bytes = host_memory_available();
      ++host_side;
    };
    if (name == "host") {
      host_side_kind(ProcessorKind::host, Kokkos::DefaultHostExecutionSpace::name(), "HostSpace");
    } else if (parse_indexed(name, "staged", index)) {
      host_side_kind(ProcessorKind::staged, copying_space_name(), "HostSpace (own buffers)");
    } else if (parse_indexed(name, "emulated", index)) {
      host_side_kind(ProcessorKind::emulated, copying_space_name(),
                     "HostSpace (emulated device memory)");
    } else if (parse_indexed(name, "cuda", index) || parse_indexed(name, "hip", index)) {
      const std::string kind = name.substr(0, name.find(':'));
      if (device_processor_prefix() != kind)
        throw Error(
            where + ": processor \"" + name + "\" is not available: this build has no " +
            (kind == "cuda" ? "CUDA backend (build it with scripts/build-cuda)"
                            : "HIP backend (build it with scripts/build-hip)") +
            "; available here: host, staged, emulated" +
            (device_processor_prefix().empty() ? "" : ", " + device_processor_prefix() + ":N"));
      const int count = device_count();
      if (index >= count)
        throw Error(where + ": processor \"" + name + "\" is not available: this node has " +
                    std::to_string(count) + " " + device_backend_name() + " device(s)");
      require_active_device(index, where);
      const DeviceInfo info = device_info(index);
      p.kind = ProcessorKind::device;
      p.index = index;
      p.space = device_backend_name();
      p.memory_space = device_backend_name() + "Space";
      p.memory_bytes = info.free_bytes;
    } else {
      throw Error(where + ": unknown processor \"" + clip(name) +
                  "\": processors are \"host\", \"staged\" (or \"staged:N\"), \"emulated:N\", "
                  "\"cuda:N\" and \"hip:N\"");
    }
    // "staged" is "staged:0" and "staged:0001" is "staged:1": one processor, named twice.
    for (const auto& q : out)
      if (q.kind == p.kind && q.index == p.index)
        throw Error(where + ": processor \"" + clip(name) + "\" is the same processor as \"" +
                    clip(q.name) + "\", listed before: name each processor once");
    out.push_back(p);
  }
  if (out.empty()) throw Error(where + ": no processors");
  // Host-side processors share the cores: each gets its own slice so that they do not fight.
  // A device borrows cores too, to pack its inputs (device_copy_threads): a host GEMM on every
  // core would make the two wait on each other (measured on a 16-core H200 machine: host +
  // device at half the device's rate alone, the host given 0.5 % of the flops).
  int borrowed = 0;
  for (const auto& p : out)
    if (p.kind == ProcessorKind::device) borrowed += device_copy_threads();
  const int total = std::max(1, host_threads() - borrowed);
  const int share = std::max(1, total / std::max(1, host_side));
  int given = 0, seen = 0;
  for (auto& p : out) {
    if (p.kind == ProcessorKind::device) continue;
    ++seen;
    p.threads = seen == host_side ? std::max(1, total - given) : share;
    given += p.threads;
    p.team_gemm = host_side > 1 && p.threads > 1;
  }
  return out;
}

std::string describe_build() {
  std::ostringstream os;
  os << "Kokkos " << kokkos_ext::kokkos_version_string() << "\n";
  os << "  execution spaces: ";
#if defined(KOKKOS_ENABLE_SERIAL)
  os << "Serial ";
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  os << "OpenMP ";
#endif
#if defined(KOKKOS_ENABLE_THREADS)
  os << "Threads ";
#endif
#if defined(KOKKOS_ENABLE_CUDA)
  os << "Cuda ";
#endif
#if defined(KOKKOS_ENABLE_HIP)
  os << "HIP ";
#endif
  os << "\n  default space: " << Kokkos::DefaultExecutionSpace::name()
     << ", default host space: " << Kokkos::DefaultHostExecutionSpace::name() << " (concurrency "
     << Kokkos::DefaultHostExecutionSpace().concurrency() << ")\n";
  os << "Kokkos Kernels TPLs: ";
  bool any = false;
#if defined(KOKKOSKERNELS_ENABLE_TPL_BLAS)
  os << "BLAS ";
  any = true;
#endif
#if defined(KOKKOSKERNELS_ENABLE_TPL_CUBLAS)
  os << "cuBLAS ";
  any = true;
#endif
#if defined(KOKKOSKERNELS_ENABLE_TPL_ROCBLAS)
  os << "rocBLAS ";
  any = true;
#endif
  if (!any) os << "none";
#if CUBOID_DEVICE_BACKEND && !defined(KOKKOSKERNELS_ENABLE_TPL_CUBLAS) && \
    !defined(KOKKOSKERNELS_ENABLE_TPL_ROCBLAS)
  os << " (device GEMMs run Kokkos Kernels' own kernel)";
#endif
  os << "\n  gemm takes an execution space: "
     << (CUBOID_HAVE_GEMM_WITH_SPACE ? "yes" : "no (before 3.6)") << "\n";
  os << "MPI: " << (CUBOID_ENABLE_MPI ? "enabled" : "disabled in this build") << "\n";
  const int nd = device_count();
  if (!device_backend_name().empty()) {
    os << "Devices (" << device_backend_name() << "): " << nd << "\n";
    for (int d = 0; d < nd; ++d) {
      const DeviceInfo info = device_info(d);
      os << "  " << device_processor_prefix() << ":" << d << "  " << info.name << ", " << info.arch
         << ", memory " << human_bytes(double(info.total_bytes)) << " ("
         << human_bytes(double(info.free_bytes)) << " free)\n";
    }
  }
  os << "Host: " << hostname() << ", " << std::thread::hardware_concurrency()
     << " hardware threads, " << human_bytes(double(host_memory_available())) << " available\n";
  os << "cuboid " << CUBOID_VERSION << " (" << build_info().git_describe << "), " << CUBOID_COMPILER
     << ", " << CUBOID_BUILD_TYPE << "\n";
  return os.str();
}

}  // namespace cuboid::platform
