#pragma once
// Steps shared by `run` and `calibrate`: from a deck to processors, workers and speeds.
#include <iosfwd>
#include <memory>
#include <vector>

#include "deck/deck.hpp"
#include "exec/worker.hpp"
#include "platform/calibration.hpp"

namespace cuboid::app {

std::vector<platform::ProcessorSpec> processors_of(const deck::Deck& d);

template <class Scalar>
std::vector<std::unique_ptr<exec::Worker<Scalar>>> workers_for(
    const std::vector<platform::ProcessorSpec>& specs);

// Speeds from the deck, or measured (through the cache unless `fresh`).
template <class Scalar>
std::vector<platform::Speed> speeds_for(const deck::Deck& d,
                                        const std::vector<platform::ProcessorSpec>& specs,
                                        std::vector<std::unique_ptr<exec::Worker<Scalar>>>& workers,
                                        bool fresh, std::ostream& progress);

}  // namespace cuboid::app
