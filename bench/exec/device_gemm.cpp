// Device measurements for docs/gpu.md (built only when Kokkos has the CUDA backend).
//
//   cuboid-device-bench [--sizes 4096,8192,16384,32768] [--reps 3] [--tile 1024]
//                       [--budgets-mib 4096,16384,0] [--no-host] [--markdown FILE]
//
// For each size n (square, double precision, C = A*B):
//  1. device-resident: our gemm path (platform::gemm on an engine stream) against a plain
//     cuBLAS dgemm on the same device views, in the same process;
//  2. host-resident pipeline: the engine with the device alone, matrices in host memory, for
//     each memory budget (0 = the engine's default, 80% of free device memory), as a fraction
//     of the cuBLAS rate of 1., with the GEMM queue's wait for inputs (stall_s), the bytes moved
//     and the share of the copy time the overlap hid (1 - stall_s / copy_s, both from CUDA
//     events);
//  3. host + device against the device alone (same budget: the first one given).
// Both pipelines are planned as `cuboid run` plans (the local multiply, at least four k-panels
// per device piece, the flops+link model with the rates pipeline::model_rates measures) and give
// the model's time beside the measured one.
// cuBLAS and the CUDA runtime are called directly here because they are the reference, not the
// engine: the engine itself only reaches CUDA through src/platform/device_backend.cpp.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "exec/engine.hpp"
#include "exec/matrices.hpp"
#include "exec/model.hpp"
#include "exec/plan.hpp"
#include "exec/worker.hpp"
#include "kokkos_ext/compat.hpp"
#include "partition/strategy.hpp"
#include "pipeline/local_multiply.hpp"
#include "pipeline/rates.hpp"
#include "platform/device_backend.hpp"
#include "platform/device_calls.hpp"
#include "platform/processor.hpp"
#include "util/host_memory.hpp"

namespace cuboid::bench {

using DeviceMatrix = Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::CudaSpace>;

struct Options {
  std::vector<std::int64_t> sizes{4096, 8192, 16384, 32768};
  std::vector<double> budgets_mib{4096, 16384, 0};
  std::int64_t tile = 1024;
  int reps = 3;
  bool host = true;
  std::string markdown;
};

std::vector<double> parse_list(const std::string& s) {
  std::vector<double> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(std::stod(item));
  return out;
}

double gflops(std::int64_t n, double seconds) {
  return 2.0 * double(n) * double(n) * double(n) / seconds / 1e9;
}

// Best of `reps` timed calls after one untimed call.
template <class F>
double best_seconds(int reps, F&& f) {
  f();
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const double t = exec::now_seconds();
    f();
    best = std::min(best, exec::now_seconds() - t);
  }
  return best;
}

// Deterministic device contents (values in [-1, 1)), written by a device kernel.
void fill_device(const DeviceMatrix& M, std::uint64_t seed, exec::MatrixId id) {
  using policy = Kokkos::MDRangePolicy<Kokkos::Cuda, Kokkos::Rank<2, Kokkos::Iterate::Left>>;
  Kokkos::parallel_for(
      "cuboid::bench::fill_device", policy({0, 0}, {M.extent(0), M.extent(1)}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
        M(i, j) = exec::element_value(seed, id, i, j);
      });
  Kokkos::fence();
}

struct Bandwidth {
  double h2d = 0, d2h = 0;  // GB/s, pinned host memory
};

Bandwidth measure_bandwidth(const Kokkos::Cuda& space) {
  const std::size_t n = std::size_t(1) << 27;  // 1 GiB of doubles
  Kokkos::View<double*, Kokkos::CudaHostPinnedSpace> h("cuboid::bench::pinned", n);
  Kokkos::View<double*, Kokkos::CudaSpace> d("cuboid::bench::device", n);
  const double bytes = double(n) * sizeof(double);
  Bandwidth bw;
  bw.h2d = bytes /
           best_seconds(5,
                        [&] {
                          platform::deep_copy(space, d, h);
                          space.fence();
                        }) /
           1e9;
  bw.d2h = bytes /
           best_seconds(5,
                        [&] {
                          platform::deep_copy(space, h, d);
                          space.fence();
                        }) /
           1e9;
  return bw;
}

struct ResidentResult {
  double ours = 0, cublas = 0;  // GFLOP/s
};

ResidentResult device_resident(std::int64_t n, int reps, const Kokkos::Cuda& space) {
  DeviceMatrix A(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::bench::A"), n, n);
  DeviceMatrix B(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::bench::B"), n, n);
  DeviceMatrix C(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::bench::C"), n, n);
  fill_device(A, 1, exec::MatrixId::A);
  fill_device(B, 1, exec::MatrixId::B);
  using Unmanaged = Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::CudaSpace,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const Unmanaged a(A.data(), n, n), b(B.data(), n, n), c(C.data(), n, n);
  ResidentResult r;
  r.ours = gflops(n, best_seconds(reps, [&] {
                    platform::gemm(space, 1.0, a, b, 0.0, c);
                    space.fence();
                  }));
  cublasHandle_t handle = nullptr;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error("cublasCreate failed");
  cublasSetStream(handle, space.cuda_stream());
  const double one = 1.0, zero = 0.0;
  const int ni = int(n);
  r.cublas =
      gflops(n, best_seconds(reps, [&] {
               if (cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, A.data(), ni,
                               B.data(), ni, &zero, C.data(), ni) != CUBLAS_STATUS_SUCCESS)
                 throw std::runtime_error("cublasDgemm failed");
               space.fence();
             }));
  cublasDestroy(handle);
  return r;
}

struct PipelineResult {
  double gflops = 0, seconds = 0, predicted_s = 0;
  int steps = 0;
  double stall_s = 0, copy_s = 0, busy_s = 0, h2d_bytes = 0, d2h_bytes = 0;
  std::vector<std::string> shares;  // per processor: name and share of the flops
};

// One set-up (processors, their rates, the device budget) planned as `cuboid run` plans it --
// through the local multiply, with the flops+link model and at least four k-panels per device
// piece -- and timed over `reps` runs after a warm-up.
PipelineResult pipeline(const std::vector<std::string>& names,
                        const std::vector<exec::ProcessorRate>& rates, double budget_mib,
                        std::int64_t n, std::int64_t tile, int reps,
                        const exec::HostMatrix<double>& A, const exec::HostMatrix<double>& B,
                        const exec::HostMatrix<double>& C) {
  const auto specs = platform::resolve_processors(names, "cuboid-device-bench");
  pipeline::LocalOptions o;
  o.algorithm = partition::Algorithm::nrrp3d;
  o.discretization = partition::Discretization::precise;
  o.plan = pipeline::plan_options_for(specs, sizeof(double), budget_mib);
  o.rates = rates;
  std::vector<double> speeds;
  for (const auto& r : rates) speeds.push_back(r.gflops);
  pipeline::LocalMultiply<double> lm(specs, speeds, o);
  const pipeline::LocalPlan plan = lm.plan(pipeline::Product{n, n, n, tile, true, false});
  lm.reserve(plan);
  PipelineResult best;
  best.seconds = 1e30;
  best.predicted_s = plan.prediction.total_s;
  for (int r = 0; r <= reps; ++r) {  // the first run is a warm-up
    const auto res = lm.multiply(plan, A, B, C, 1.0, 0.0);
    if (r == 0 || res.seconds >= best.seconds) continue;
    best.seconds = res.seconds;
    best.steps = 0;
    best.stall_s = best.copy_s = best.busy_s = best.h2d_bytes = best.d2h_bytes = 0;
    for (std::size_t q = 0; q < specs.size(); ++q) {
      if (specs[q].kind != platform::ProcessorKind::device) continue;
      const auto& w = res.workers[q];
      best.steps += w.steps;
      best.stall_s += w.stall_s, best.copy_s += w.copy_s, best.busy_s += w.busy_s;
      best.h2d_bytes += w.h2d_bytes, best.d2h_bytes += w.d2h_bytes;
    }
  }
  best.gflops = gflops(n, best.seconds);
  double total = 0;
  for (const auto& p : plan.steps.processors) total += p.flops;
  for (std::size_t q = 0; q < specs.size(); ++q)
    best.shares.push_back(
        fmt::format("{} {:.1f}%", specs[q].name, 100.0 * plan.steps.processors[q].flops / total));
  return best;
}

std::string budget_name(double mib) {
  return mib > 0 ? fmt::format("{:.0f} MiB", mib) : std::string("default (80% free)");
}

int run(const Options& opt) {
  if (platform::device_count() == 0) {
    std::cerr << "cuboid-device-bench: no CUDA device visible to this process\n";
    return 2;
  }
  const int dev = platform::active_device();
  const auto info = platform::device_info(dev);
  const std::string device = "cuda:" + std::to_string(dev);
  auto space = platform::make_device_instances(2)[1];
  std::ostringstream md;
  md << fmt::format("Device: {} ({}), compute capability {}.{}, {} ({} free). Host: {}.\n\n",
                    device, info.name, info.compute_major, info.compute_minor,
                    human_bytes(double(info.total_bytes)), human_bytes(double(info.free_bytes)),
                    hostname());
  const Bandwidth bw = measure_bandwidth(space);
  md << fmt::format(
      "Pinned copies, 1 GiB: host to device {:.1f} GB/s, device to host {:.1f} GB/s.\n\n", bw.h2d,
      bw.d2h);
  // The device as the flops+link model sees it, measured as `cuboid run` measures it.
  const exec::ProcessorRate device_rate =
      pipeline::model_rates<double>(platform::resolve_processors({device}, "cuboid-device-bench"),
                                    {1.0}, nullptr, true, std::cerr)
          .front();
  md << fmt::format(
      "Model rates (pipeline::model_rates): GEMM {:.0f} GFLOP/s on device memory, link {:.1f} GB/s "
      "in (through the staging ring, packing included), {:.1f} GB/s out.\n\n",
      device_rate.gflops, device_rate.h2d_gbs, device_rate.d2h_gbs);
  std::cout << md.str() << std::flush;

  std::ostringstream t1, t2, t3;
  t1 << "| n | cuBLAS dgemm GFLOP/s | cuboid gemm path GFLOP/s | ratio |\n|---|---|---|---|\n";
  t2 << "| n | device budget | steps | GFLOP/s | fraction of cuBLAS | s | model s | stall s | h2d "
        "GB "
        "| d2h GB | input copy hidden |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|\n";
  t3 << "| n | device budget | device alone GFLOP/s | host + device GFLOP/s | gain | s | model s | "
        "flop shares |\n"
        "|---|---|---|---|---|---|---|---|\n";
  for (const std::int64_t n : opt.sizes) {
    std::cerr << "n = " << n << ": device-resident gemm\n";
    ResidentResult rr;
    try {
      rr = device_resident(n, opt.reps, space);
      t1 << fmt::format("| {} | {:.0f} | {:.0f} | {:.3f} |\n", n, rr.cublas, rr.ours,
                        rr.ours / rr.cublas);
    } catch (const std::exception& e) {
      t1 << fmt::format("| {} | failed: {} | | |\n", n, e.what());
      continue;
    }
    std::cerr << "n = " << n << ": host matrices\n";
    exec::HostMatrix<double> A(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::bench::hA"),
                               n, n);
    exec::HostMatrix<double> B(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::bench::hB"),
                               n, n);
    exec::HostMatrix<double> C(Kokkos::view_alloc(Kokkos::WithoutInitializing, "cuboid::bench::hC"),
                               n, n);
    exec::fill_random(A, 1, exec::MatrixId::A);
    exec::fill_random(B, 1, exec::MatrixId::B);
    exec::fill_value(C, 0.0);
    std::vector<double> device_alone(opt.budgets_mib.size(), 0);
    for (std::size_t bi = 0; bi < opt.budgets_mib.size(); ++bi) {
      const double budget = opt.budgets_mib[bi];
      std::cerr << "n = " << n << ": pipeline, device alone, budget " << budget_name(budget)
                << "\n";
      try {
        const auto p = pipeline({device}, {device_rate}, budget, n, opt.tile, opt.reps, A, B, C);
        device_alone[bi] = p.gflops;
        const double hidden = p.copy_s > 0 ? 1.0 - p.stall_s / p.copy_s : 0.0;
        t2 << fmt::format(
            "| {} | {} | {} | {:.0f} | {:.3f} | {:.4f} | {:.4f} | {:.3f} | {:.2f} | {:.2f} | "
            "{:.0f}% "
            "|\n",
            n, budget_name(budget), p.steps, p.gflops, p.gflops / rr.cublas, p.seconds,
            p.predicted_s, p.stall_s, p.h2d_bytes / 1e9, p.d2h_bytes / 1e9, 100 * hidden);
      } catch (const std::exception& e) {
        t2 << fmt::format("| {} | {} | failed: {} | | | | | | |\n", n, budget_name(budget),
                          e.what());
      }
    }
    if (opt.host && !opt.budgets_mib.empty()) {
      const double budget = opt.budgets_mib.front();
      std::cerr << "n = " << n << ": pipeline, host + device\n";
      try {
        const auto host_spec =
            platform::resolve_processors({"host", device}, "cuboid-device-bench").front();
        auto host_worker = exec::make_worker<double>(host_spec);
        const double host_rate =
            host_worker->measure_gemm_rate(std::min<std::int64_t>(n, 4096), 2.0);
        host_worker.reset();
        const auto p =
            pipeline({"host", device}, {exec::ProcessorRate{host_rate, 0, 0}, device_rate}, budget,
                     n, opt.tile, opt.reps, A, B, C);
        std::string shares;
        for (const auto& s : p.shares) shares += (shares.empty() ? "" : ", ") + s;
        t3 << fmt::format("| {} | {} | {:.0f} | {:.0f} | {:.3f} | {:.4f} | {:.4f} | {} |\n", n,
                          budget_name(budget), device_alone.front(), p.gflops,
                          device_alone.front() > 0 ? p.gflops / device_alone.front() : 0.0,
                          p.seconds, p.predicted_s, shares);
      } catch (const std::exception& e) {
        t3 << fmt::format("| {} | {} | failed: {} | | | |\n", n, budget_name(budget), e.what());
      }
    }
  }
  md << "Device-resident GEMM (best of " << opt.reps << "):\n\n" << t1.str() << "\n";
  md << "Host-resident pipeline, device alone (best of " << opt.reps << " after a warm-up):\n\n"
     << t2.str() << "\n";
  if (opt.host) md << "Host + device against the device alone:\n\n" << t3.str() << "\n";
  std::cout << md.str().substr(md.str().find("Device-resident")) << std::flush;
  if (!opt.markdown.empty()) {
    std::ofstream(opt.markdown) << md.str();
  }
  return 0;
}

}  // namespace cuboid::bench

int main(int argc, char** argv) {
  cuboid::bench::Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--sizes") {
      opt.sizes.clear();
      for (double v : cuboid::bench::parse_list(value())) opt.sizes.push_back(std::int64_t(v));
    } else if (a == "--budgets-mib") {
      opt.budgets_mib = cuboid::bench::parse_list(value());
    } else if (a == "--reps") {
      opt.reps = std::stoi(value());
    } else if (a == "--tile") {
      opt.tile = std::stoll(value());
    } else if (a == "--no-host") {
      opt.host = false;
    } else if (a == "--markdown") {
      opt.markdown = value();
    } else {
      std::cerr
          << "usage: cuboid-device-bench [--sizes LIST] [--budgets-mib LIST] [--reps N] [--tile T] "
             "[--no-host] [--markdown FILE]\n";
      return a == "-h" || a == "--help" ? 0 : 2;
    }
  }
  // Without a driver or a device Kokkos' own initialisation throws: say so and stop.
  try {
    cuboid::kokkos_ext::initialize();
  } catch (const std::exception& e) {
    std::cerr << "cuboid-device-bench: Kokkos could not start on a device: " << e.what() << "\n";
    return 2;
  }
  int rc = 0;
  try {
    rc = cuboid::bench::run(opt);
  } catch (const std::exception& e) {
    std::cerr << "cuboid-device-bench: " << e.what() << "\n";
    rc = 1;
  }
  Kokkos::finalize();
  return rc;
}
