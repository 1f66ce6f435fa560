#pragma once
// The solver: the recursion from the whole cuboid down to one exact zone per processor, each node
// cut by one of its candidates, chosen by lookahead, by the candidates' regions, or the only one.
#include <array>
#include <cstddef>
#include <utility>
#include <vector>

#include "partition/stepped/candidates.hpp"

namespace cuboid::partition::stepped_detail {

class Solver {
 public:
  // lookahead: compare candidates by completing their subtrees; otherwise greedy, comparing
  // candidates by their regions (compare) or taking the one cut the rule asks for (!compare).
  Solver(const Source& source, std::size_t processors, bool lookahead, bool compare)
      : source_(source), zones_(processors), lookahead_(lookahead), compare_(compare) {}

  // A node of the recursion where the lookahead chose among several candidates, and a node
  // where a retry takes the candidate of that rank instead of the best (0).
  struct Node {
    int lo, hi, node;
    std::size_t candidates;
  };
  struct Forced {
    int lo, hi, node;
    std::size_t rank;
  };
  // A lookahead node's choice in the first pass, by its region: what a retry replays.
  struct Memo {
    int lo, hi, node;
    Region region;
    std::size_t best;
  };
  std::vector<Forced> forced_;
  std::vector<Node> decided_;
  std::vector<Memo>* record_ = nullptr;      // the first pass writes its choices here
  const std::vector<Memo>* memo_ = nullptr;  // retries read them

  std::vector<TileZone> run(Task root);

 private:
  // Without comparison: the one split the rule asks for cut straight into the two children,
  // pushed on `stack`, with no candidate lists (the common case with many processors); false
  // when the rule asks for more than one split or for a corner.
  bool lean_step(Task& t, std::vector<Task>& stack);
  // The candidate a node takes: the best by its key, or with lookahead the first pass's choice
  // (a retry reaching the node with the same region) or the best completed candidate.
  std::size_t choose(const Task& t, const std::vector<Option>& opts);
  // The first pass's choice at `t` when this is a retry that reaches it with the same region
  // and does not force it; nullptr otherwise.
  const Memo* replayed(const Task& t) const;
  // The candidates that look best locally, each completed greedily and compared; records the
  // node for the retries.
  std::size_t lookahead(const Task& t, const std::vector<Option>& opts);
  void finish(Task& t);
  // Greedy completion: adds (boxes above four, Hs) of the zones it would produce to `score`.
  void complete(const Task& t, std::array<double, 2>& score) const;
  static std::size_t pick_option(const std::vector<Option>& opts);
  std::vector<Option> options(const Task& t, Effort effort) const;
  // A buffer of a finished region, for reuse.
  Region spare();

  const Source& source_;
  std::vector<TileZone> zones_;
  std::vector<std::pair<int, TileZone>> finished_;
  bool lookahead_, compare_;
  std::vector<Source::Split> splits_;
  std::vector<Source::Corner> corners_;
  std::vector<Region> spare_;
};

}  // namespace cuboid::partition::stepped_detail
