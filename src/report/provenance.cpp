#include "report/provenance.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "util/build_info.hpp"
#include "util/host_memory.hpp"

extern char** environ;

namespace cuboid::report {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// The launcher, from the variables each one sets: Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE
// (srun's direct launch does not), srun sets SLURM_STEP_ID, Hydra and other PMI launchers PMI_SIZE.
std::string launcher() {
  if (!env("OMPI_COMM_WORLD_SIZE").empty()) return "mpirun";
  if (!env("SLURM_STEP_ID").empty() && (!env("PMIX_RANK").empty() || !env("PMI_SIZE").empty()))
    return "srun";
  if (!env("PMI_SIZE").empty() || !env("PMIX_RANK").empty()) return "mpiexec";
  return "none";
}

nlohmann::json or_null(const std::string& s) {
  return s.empty() ? nlohmann::json() : nlohmann::json(s);
}

}  // namespace

std::string effective_deck_text(const deck::Deck& d) {
  std::string text;
  for (const auto& [key, value] : d.given) text += key + " = " + value + "\n";
  return text;
}

ProcessEnvironment process_environment(int kokkos_host_concurrency) {
  ProcessEnvironment e;
  e.host = hostname();
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) e.cpus_allowed = CPU_COUNT(&set);
  e.kokkos_host_concurrency = kokkos_host_concurrency;
  e.launcher = launcher();
  e.omp_num_threads = env("OMP_NUM_THREADS");
  e.omp_proc_bind = env("OMP_PROC_BIND");
  e.omp_places = env("OMP_PLACES");
  return e;
}

nlohmann::json to_json(const ProcessEnvironment& e) {
  return {{"host", e.host},
          {"cpus_allowed", e.cpus_allowed},
          {"threads", e.kokkos_host_concurrency},
          {"launcher", e.launcher},
          {"omp_num_threads", or_null(e.omp_num_threads)},
          {"omp_proc_bind", or_null(e.omp_proc_bind)},
          {"omp_places", or_null(e.omp_places)}};
}

nlohmann::json build_json(const KokkosFacts& k) {
  const BuildInfo& b = build_info();
  nlohmann::json dirty;  // null: unknown
  if (b.git_dirty >= 0) dirty = b.git_dirty == 1;
  return {{"cuboid_version", b.version},
          {"git",
           {{"commit", b.git_commit},
            {"describe", b.git_describe},
            {"dirty", dirty},
            {"read", "at configure time"}}},
          {"compiler", b.compiler},
          {"build_type", b.build_type},
          {"cxx_flags", b.cxx_flags},
          {"kokkos",
           {{"version", k.version},
            {"spaces", k.spaces},
            {"default_space", k.default_space},
            {"default_host_space", k.default_host_space},
            {"host_concurrency", k.host_concurrency},
            {"devices_at_configure", b.kokkos_devices},
            {"arch_at_configure", b.kokkos_arch}}},
          {"kokkos_kernels_tpls", k.kernels_tpls},
          {"mpi", or_null(b.mpi)}};
}

nlohmann::json job_json() {
  if (!env("SLURM_JOB_ID").empty()) {
    nlohmann::json j = {{"scheduler", "slurm"}};
    // As SLURM sets them (strings): a reader parses what it needs, nothing is lost here.
    for (const auto& [key, var] :
         std::map<std::string, const char*>{{"id", "SLURM_JOB_ID"},
                                            {"name", "SLURM_JOB_NAME"},
                                            {"cluster", "SLURM_CLUSTER_NAME"},
                                            {"partition", "SLURM_JOB_PARTITION"},
                                            {"account", "SLURM_JOB_ACCOUNT"},
                                            {"nodes", "SLURM_JOB_NUM_NODES"},
                                            {"nodelist", "SLURM_JOB_NODELIST"},
                                            {"ntasks", "SLURM_NTASKS"},
                                            {"ntasks_per_node", "SLURM_NTASKS_PER_NODE"},
                                            {"tasks_per_node", "SLURM_TASKS_PER_NODE"},
                                            {"cpus_per_task", "SLURM_CPUS_PER_TASK"},
                                            {"step_id", "SLURM_STEP_ID"}})
      j[key] = or_null(env(var));
    return j;
  }
  if (!env("PBS_JOBID").empty()) return {{"scheduler", "pbs"}, {"id", env("PBS_JOBID")}};
  if (!env("LSB_JOBID").empty()) return {{"scheduler", "lsf"}, {"id", env("LSB_JOBID")}};
  if (!env("FLUX_JOB_ID").empty()) return {{"scheduler", "flux"}, {"id", env("FLUX_JOB_ID")}};
  return {{"scheduler", "none"}};
}

nlohmann::json study_json() {
  nlohmann::json j = nlohmann::json::object();
  const std::string prefix = "CUBOID_STUDY_";
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq == std::string::npos || kv.compare(0, prefix.size(), prefix) != 0) continue;
    std::string key = kv.substr(prefix.size(), eq - prefix.size());
    std::transform(key.begin(), key.end(), key.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    j[key] = kv.substr(eq + 1);
  }
  return j;
}

void add_execution(nlohmann::json& j) {
  if (!j.contains("ranks") || !j["ranks"].is_array() || j["ranks"].empty()) return;
  nlohmann::json& x = j["execution"];
  const auto& ranks = j["ranks"];
  std::vector<std::string> hosts;  // distinct, in rank order
  std::map<std::string, int> per_host;
  int threads_min = 0, threads_max = 0;
  bool first = true;
  for (const auto& r : ranks) {
    const nlohmann::json none = nlohmann::json::object();
    const auto& e = r.contains("environment") ? r["environment"] : none;
    std::string host = r.value("host", e.value("host", std::string("unknown")));
    if (per_host[host]++ == 0) hosts.push_back(host);
    const int t = e.value("threads", 0);
    threads_min = first ? t : std::min(threads_min, t);
    threads_max = first ? t : std::max(threads_max, t);
    first = false;
  }
  int rpn_min = int(ranks.size()), rpn_max = 0;
  for (const auto& [h, n] : per_host)
    rpn_min = std::min(rpn_min, n), rpn_max = std::max(rpn_max, n);
  x["ranks"] = ranks.size();
  x["nodes"] = hosts.size();
  x["hosts"] = hosts;
  x["ranks_per_node"] = rpn_max;
  x["ranks_per_node_min"] = rpn_min;
  x["threads_per_rank"] = threads_max;
  x["threads_per_rank_min"] = threads_min;
  if (ranks[0].contains("environment")) {
    const auto& e = ranks[0]["environment"];
    for (const char* key : {"launcher", "omp_num_threads", "omp_proc_bind", "omp_places"})
      if (e.contains(key)) x[key] = e[key];
    if (e.contains("cpus_allowed")) x["cpus_allowed_per_rank"] = e["cpus_allowed"];
  }
}

}  // namespace cuboid::report
