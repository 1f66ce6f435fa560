#pragma once
// What a scaling study needs to group run records and trust them: the record format version,
// how the binary was built, the effective deck and its hash, where every rank ran and with how
// many threads, the batch job, and the time model. docs/scaling.md lists the fields.
#include <string>

#include <nlohmann/json.hpp>

#include "deck/deck.hpp"
#include "report/run_record.hpp"

namespace cuboid::report {

// Bumped whenever a field changes meaning or moves; readers check it (scripts/scaling-study).
// 1: the first records. 2: build, deck, execution, job, model and study objects.
inline constexpr int kRecordVersion = 2;

// "section.key = value" for every key the deck file and its --set overrides gave, sorted by key,
// one per line, values in TOML syntax: comments, layout and key order do not change it.
std::string effective_deck_text(const deck::Deck& d);

// This process's host, affinity mask, OpenMP settings and launcher; `kokkos_host_concurrency`
// comes from the caller, which has Kokkos (report/kokkos_facts.hpp).
ProcessEnvironment process_environment(int kokkos_host_concurrency);
nlohmann::json to_json(const ProcessEnvironment& e);

// The configure-time build facts with the runtime Kokkos ones.
nlohmann::json build_json(const KokkosFacts& k);

// The batch job from the scheduler's environment (SLURM), "none" outside one, and the study
// point scripts/scaling-study asked for (CUBOID_STUDY_* variables), if any.
nlohmann::json job_json();
nlohmann::json study_json();

// Sets j["execution"] from the per-rank "host" and "environment" entries of j["ranks"] (a
// distributed run) or else from j["execution"] as to_json(RunRecord) wrote it for one process:
// ranks, nodes (distinct hosts), ranks per node, host names, threads per rank.
void add_execution(nlohmann::json& j);

}  // namespace cuboid::report
