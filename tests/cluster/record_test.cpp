// The parts of a run record a scaling study groups by: the deck hash, the execution summary
// built from the ranks' entries, the job and study variables, the record version.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "deck/deck.hpp"
#include "report/provenance.hpp"
#include "report/run_report.hpp"
#include "report/sha256.hpp"

using cuboid::report::sha256_hex;
using nlohmann::json;

TEST(Sha256, KnownDigests) {
  // FIPS 180-4 examples and the padding edge cases (55, 56 and 64 bytes).
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha256_hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(sha256_hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(EffectiveDeck, LayoutAndOrderDoNotMatterValuesAndOverridesDo) {
  using cuboid::deck::parse_deck;
  using cuboid::report::effective_deck_text;
  const auto a = parse_deck("[problem]\nm = 64\nn = 32 # comment\n[run]\nrepetitions = 2\n", "a");
  const auto b = parse_deck("[run]\nrepetitions=2\n\n[problem]\nn=32\nm=64\n", "b");
  EXPECT_EQ(effective_deck_text(a), effective_deck_text(b));
  EXPECT_EQ(effective_deck_text(a), "problem.m = 64\nproblem.n = 32\nrun.repetitions = 2\n");

  // A --set replaces the file's value, and the text (hence the hash) follows the effective value.
  const auto c = parse_deck("[problem]\nm = 64\nn = 32\n[run]\nrepetitions = 2\n", "c",
                            {"problem.m=128", "partition.algorithm=grid"});
  EXPECT_EQ(effective_deck_text(c),
            "partition.algorithm = 'grid'\nproblem.m = 128\nproblem.n = 32\nrun.repetitions = 2\n");
  const auto d = parse_deck(
      "[problem]\nm = 128\nn = 32\n[partition]\nalgorithm = \"grid\"\n"
      "[run]\nrepetitions = 2\n",
      "d");
  EXPECT_EQ(effective_deck_text(c), effective_deck_text(d));
  const auto e = parse_deck("[problem]\nm = 64\nn = 32\n[run]\nrepetitions = 3\n", "e");
  EXPECT_NE(effective_deck_text(a), effective_deck_text(e));
}

TEST(RunRecord, CarriesVersionDeckHashBuildAndModel) {
  cuboid::report::RunRecord rec;
  const auto d = cuboid::deck::parse_deck("[problem]\nm = 64\n", "x.toml", {"run.warmup=0"});
  cuboid::report::describe_deck(rec, d);
  cuboid::report::ProcessorRecord p;
  p.predicted_s = 0.25;
  rec.processors = {p, p};
  rec.processors[1].predicted_s = 0.5;
  rec.environment.host = rec.host = "node7";
  rec.environment.kokkos_host_concurrency = 3;
  const json j = cuboid::report::to_json(rec);
  EXPECT_EQ(j["record_version"], cuboid::report::kRecordVersion);
  EXPECT_EQ(j["deck"]["path"], "x.toml");
  EXPECT_EQ(j["deck"]["effective"], "problem.m = 64\nrun.warmup = 0\n");
  EXPECT_EQ(j["deck"]["sha256"], sha256_hex("problem.m = 64\nrun.warmup = 0\n"));
  EXPECT_EQ(j["model"]["compute_s"], 0.5);
  EXPECT_EQ(j["execution"]["ranks"], 1);
  EXPECT_EQ(j["execution"]["hosts"], json::array({"node7"}));
  EXPECT_EQ(j["execution"]["threads_per_rank"], 3);
  const auto& git = j["build"]["git"];
  EXPECT_TRUE(git["commit"] == "unknown" || git["commit"].get<std::string>().size() == 40)
      << git.dump();
  EXPECT_FALSE(j["build"]["compiler"].get<std::string>().empty());
}

TEST(Execution, NodesAndRanksPerNodeFromTheRanksHosts) {
  json j;
  j["execution"] = {{"ranks", 1}};
  j["ranks"] = json::array();
  const char* hosts[] = {"a", "a", "a", "b", "b", "b", "c"};
  for (const char* h : hosts)
    j["ranks"].push_back({{"host", h},
                          {"environment",
                           {{"host", h},
                            {"threads", std::string(h) == "c" ? 2 : 4},
                            {"cpus_allowed", 4},
                            {"launcher", "srun"},
                            {"omp_num_threads", "4"},
                            {"omp_proc_bind", "close"},
                            {"omp_places", nullptr}}}});
  cuboid::report::add_execution(j);
  const auto& x = j["execution"];
  EXPECT_EQ(x["ranks"], 7);
  EXPECT_EQ(x["nodes"], 3);
  EXPECT_EQ(x["hosts"], json::array({"a", "b", "c"}));
  EXPECT_EQ(x["ranks_per_node"], 3);
  EXPECT_EQ(x["ranks_per_node_min"], 1);
  EXPECT_EQ(x["threads_per_rank"], 4);
  EXPECT_EQ(x["threads_per_rank_min"], 2);
  EXPECT_EQ(x["launcher"], "srun");
  EXPECT_EQ(x["omp_proc_bind"], "close");
  EXPECT_EQ(x["cpus_allowed_per_rank"], 4);

  // Records from before per-rank environments: hosts still count.
  json old;
  old["ranks"] = json::array({{{"host", "x"}}, {{"host", "y"}}});
  cuboid::report::add_execution(old);
  EXPECT_EQ(old["execution"]["nodes"], 2);
  EXPECT_EQ(old["execution"]["ranks_per_node"], 1);
}

TEST(Job, SlurmVariablesAndStudyPoint) {
  ::setenv("SLURM_JOB_ID", "4242", 1);
  ::setenv("SLURM_JOB_NUM_NODES", "2", 1);
  ::setenv("CUBOID_STUDY_SWEEP", "strong", 1);
  ::setenv("CUBOID_STUDY_POINT", "strong-n2-r4", 1);
  const json job = cuboid::report::job_json();
  const json study = cuboid::report::study_json();
  ::unsetenv("SLURM_JOB_ID");
  ::unsetenv("SLURM_JOB_NUM_NODES");
  ::unsetenv("CUBOID_STUDY_SWEEP");
  ::unsetenv("CUBOID_STUDY_POINT");
  EXPECT_EQ(job["scheduler"], "slurm");
  EXPECT_EQ(job["id"], "4242");
  EXPECT_EQ(job["nodes"], "2");
  EXPECT_EQ(study["sweep"], "strong");
  EXPECT_EQ(study["point"], "strong-n2-r4");
  if (!std::getenv("PBS_JOBID") && !std::getenv("LSB_JOBID") && !std::getenv("FLUX_JOB_ID")) {
    EXPECT_EQ(cuboid::report::job_json()["scheduler"], "none");
  }
}
