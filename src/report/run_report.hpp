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
// Writes `j` to `path` through a temporary file, so a reader never sees half a record.
void write_json_file(const std::string& path, const nlohmann::json& j);

}  // namespace cuboid::report
