// `cuboid info` and `cuboid calibrate DECK`.
#include <fmt/format.h>

#include <iostream>

#include "app/commands.hpp"
#include "app/kokkos_session.hpp"
#include "app/run_command.hpp"
#include "app/setup.hpp"
#include "platform/processor.hpp"

namespace cuboid::app {

void info_command() {
  KokkosSession kokkos;
  std::cout << platform::describe_build();
  std::cout << "Processors by default:";
  for (const auto& n : platform::default_processor_names()) std::cout << " " << n;
  std::cout << " (add \"staged\" for a host-backed processor with its own memory, "
               "\"emulated\" for the device pipeline on an emulated device)\n";
  std::cout << "Speed cache: " << platform::default_speed_cache_path() << "\n";
}

namespace {
template <class Scalar>
void calibrate_deck(const deck::Deck& d, bool fresh) {
  auto specs = processors_of(d);
  deck::Deck measured = d;
  measured.platform.measure_speeds = true;
  // Under the flops+link model, the devices' rates are measured (or refreshed) and cached too.
  const auto speeds = calibration_for<Scalar>(measured, specs, fresh, std::cerr).speeds;
  double total = 0;
  for (const auto& s : speeds) total += s.gflops;
  std::cout << fmt::format("{:<10} {:>8} {:>10} {:>8} {:>9}\n", "processor", "threads", "GFLOP/s",
                           "share", "source");
  for (std::size_t q = 0; q < specs.size(); ++q)
    std::cout << fmt::format("{:<10} {:>8} {:>10.2f} {:>7.1f}% {:>9}\n", specs[q].name,
                             specs[q].threads, speeds[q].gflops, 100 * speeds[q].gflops / total,
                             speeds[q].source);
}
}  // namespace

void calibrate_command(const CalibrateOptions& options) {
  const deck::Deck d = deck::load_deck(options.deck, options.overrides);
  KokkosSession kokkos;
  with_scalar(d, [&](auto zero) { calibrate_deck<decltype(zero)>(d, options.fresh); });
}

}  // namespace cuboid::app
