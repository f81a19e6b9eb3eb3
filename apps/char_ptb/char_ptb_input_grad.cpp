#include "apps/char_ptb/char_ptb_input_grad.hpp"

#include <fmt/format.h>

#include "report/csv.hpp"
#include "report/markdown.hpp"
#include "train/trainer.hpp"

namespace seqbench::apps {

int write_input_gradients(const CharPtbConfig& c, CharPtbExperiment& e,
                          const train::Checkpoint& ck, int64_t L, int64_t windows) {
  train::load_parameters(e.params(), ck);
  const auto probe = e.input_grad_probe(L, windows);
  const std::string dir = c.output.dir + "/char_ptb/" + c.output.run_id;
  // The gradnorm.csv layout (t is the input's position in the window), so the same
  // report draws it.
  report::CsvWriter out(dir + "/inputgrad.csv", {"step", "t", "distance", "norm"},
                        report::CsvWriter::Mode::Truncate);
  using W = report::CsvWriter;
  std::vector<std::vector<std::string>> rows, shown;
  for (int64_t t = 0; t < L; ++t)
    rows.push_back({ck.meta_at("step"), W::cell(t), W::cell(L - 1 - t),
                    W::cell(probe.norm[size_t(L - 1 - t)])});
  out.rows(rows);
  for (const int64_t i : {0, 1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000})
    if (i < L - 1)
      shown.push_back({std::to_string(i), fmt::format("{:.3e}", probe.norm[size_t(i)])});
  shown.push_back({std::to_string(L - 1), fmt::format("{:.3e}", probe.norm.back())});
  fmt::print("{}", report::markdown_table({"distance i", "mean ||dl_{t+i}/dx_t||"}, shown));
  fmt::print("{} windows x {} columns -> {}/inputgrad.csv\n", probe.windows, probe.columns, dir);
  return 0;
}

}  // namespace seqbench::apps
