#pragma once
#include <iosfwd>

#include <nlohmann/json.hpp>

#include "deck/deck.hpp"
#include "report/run_record.hpp"

namespace cuboid::report {

// The deck's part of a record: problem, partition names, repetitions.
void describe_deck(RunRecord& rec, const deck::Deck& d);

void print_summary(std::ostream& os, const RunRecord& r);
nlohmann::json to_json(const RunRecord& r);
// Writes `j` to `path` all or nothing (util/atomic_output.hpp); the caller should have checked
// the path with check_output_path() before the run. Throws cuboid::Error naming --json.
void write_json_file(const std::string& path, const nlohmann::json& j);

}  // namespace cuboid::report
