#pragma once
// A processor is a memory node with its execution resources: the host with its cores, a
// host-backed "staged" processor that copies in and out like a device, one GPU, or an
// "emulated" GPU (the GPU's own pipeline and backend over a device runtime made of host
// threads and memory).
#include <cstdint>
#include <string>
#include <vector>

namespace cuboid::platform {

enum class ProcessorKind { host, staged, device, emulated };

struct ProcessorSpec {
  std::string name;  // "host", "staged", "staged:1", "cuda:0", "emulated:0"
  ProcessorKind kind = ProcessorKind::host;
  int index = 0;      // staged:N, cuda:N or emulated:N
  int threads = 0;    // host threads for its BLAS (host, staged, emulated); 0 for devices
  std::string space;  // the Kokkos execution space it runs on
  std::string memory_space;
  std::uint64_t memory_bytes = 0;  // what its own memory holds (host: available RAM)
  // Staged processors only (platform.staged_link_gbs, platform.staged_copy_jitter_us): each
  // copy takes at least bytes / link_gbs (0: as fast as memcpy), and one copy in four starts
  // after a random delay of up to copy_jitter_us (a test mode that shakes out missing waits).
  // Emulated processors take link_gbs from platform.emulated_link_gbs.
  double link_gbs = 0;
  double copy_jitter_us = 0;
  // Emulated processors only: each queued operation runs as late as its waits allow (a test
  // mode in which a missing wait shows deterministically; also CUBOID_EMULATED_LAZY=1).
  bool lazy_queues = false;
  // Emulated processors only, timing mode (platform.emulated_gflops): > 0, each GEMM sleeps for
  // its flops (2mnk) at this rate, GFLOP/s, and computes nothing, and each copy sleeps for its
  // bytes at link_gbs and moves nothing -- runs whose time is the speed model's subject rather
  // than the host cores' contention.
  double emulated_gflops = 0;
  // Host, staged and emulated processors (platform.slowdown, platform.slowdown_after_s): from this
  // many seconds into each run, every GEMM is followed by a sleep that makes it `slowdown` times
  // slower -- a processor slowed during the run, as by another job (a test and benchmark knob).
  double slowdown = 1;
  double slowdown_after_s = 0;
  // Host-side processors that share the cores with another one run each GEMM as their own team
  // of single-threaded BLAS calls (exec::team_gemm): the BLAS would serialise them otherwise.
  bool team_gemm = false;
  // Processors that copy (platform.register_host): a run page-locks the caller's arrays it
  // reads and writes and copies straight from and to them; false: everything goes through the
  // staging ring.
  bool register_host = true;
};

std::string to_string(ProcessorKind k);

// What `platform.processors` defaults to: the host and every device of the build.
std::vector<std::string> default_processor_names();

// Host threads a device processor packs its inputs with (a quarter of the cores, 1 to 4): the
// host-side processors are given the rest.
int device_copy_threads();

// Resolves names to processors, splitting host cores between host-side processors. Throws
// cuboid::Error naming `where` when a processor does not exist in this build or on this node.
std::vector<ProcessorSpec> resolve_processors(const std::vector<std::string>& names,
                                              const std::string& where);

// Kokkos configuration in words, for `cuboid info`.
std::string describe_build();

}  // namespace cuboid::platform
