#include "exec/model.hpp"

#include <algorithm>
#include <stdexcept>

namespace cuboid::exec {
namespace {

// Seconds of one processor that copies.
double pipeline_seconds(const ProcessorPlan& pp, const ProcessorRate& r, double elem) {
  const double in_rate = r.h2d_gbs * 1e9, out_rate = r.d2h_gbs * 1e9, gemm_rate = r.gflops * 1e9;
  double in_end = 0, out_end = 0;
  double gemm_end[2] = {0, 0};  // of the previous step and the one before
  const Step* prev = nullptr;
  for (const Step& s : pp.steps) {
    const bool same_a = prev && prev->c.i0 == s.c.i0 && prev->c.i1 == s.c.i1 && prev->l0 == s.l0 &&
                        prev->l1 == s.l1;
    const bool same_b = prev && prev->c.j0 == s.c.j0 && prev->c.j1 == s.c.j1 && prev->l0 == s.l0 &&
                        prev->l1 == s.l1;
    double in = 0;
    if (!same_a) in += double(s.c.rows()) * double(s.depth());
    if (!same_b) in += double(s.depth()) * double(s.c.cols());
    if (s.c_in) in += double(s.c.rows()) * double(s.c.cols());
    // The panel buffer this step fills was read by the GEMM two steps back.
    in_end = std::max(in_end, gemm_end[0]) + in * elem / in_rate;
    const double end = std::max(in_end, gemm_end[1]) + s.flops() / gemm_rate;
    gemm_end[0] = gemm_end[1];
    gemm_end[1] = end;
    if (s.c_out)
      out_end = std::max(out_end, end) + double(s.c.rows()) * double(s.c.cols()) * elem / out_rate;
    prev = &s;
  }
  return std::max(gemm_end[1], out_end);
}

}  // namespace

Prediction predict(const Plan& plan, const std::vector<ProcessorRate>& rates,
                   std::size_t element_bytes, double host_gbs) {
  if (rates.size() != plan.processors.size())
    throw std::invalid_argument("predict: one rate per processor of the plan is needed");
  const double elem = double(element_bytes);
  Prediction p;
  for (std::size_t q = 0; q < rates.size(); ++q) {
    const ProcessorPlan& pp = plan.processors[q];
    const ProcessorRate& r = rates[q];
    if (!(r.gflops > 0)) throw std::invalid_argument("predict: a GEMM rate must be positive");
    double s = 0;
    if (r.copies())
      s = pipeline_seconds(pp, r, elem);
    else
      for (const Step& st : pp.steps) s += st.flops() / (r.gflops * 1e9);
    p.seconds.push_back(s);
    p.total_s = std::max(p.total_s, s);
  }
  double partial = 0;
  for (const auto& b : plan.partials) partial += double(b.c.rows()) * double(b.c.cols()) * elem;
  p.reduction_s = host_gbs > 0 ? 3.0 * partial / (host_gbs * 1e9) : 0.0;
  p.total_s += p.reduction_s;
  return p;
}

}  // namespace cuboid::exec
