// A MiniGrid run's learning curve: learning_curve.{dat,gp,png} in the run directory from
// its ppo.csv (mean return of the last episodes against frames), drawn by the shared
// gnuplot writer (lib/report/gnuplot.hpp) after training.
#pragma once

#include <string>

namespace seqbench::apps {

// Writes dir/learning_curve.dat and .gp from dir/ppo.csv and draws learning_curve.png.
// `label` and `env` title the figure. Returns one line saying what was written, or why
// there is no PNG (no ppo.csv, no PPO update yet, no gnuplot); a script gnuplot rejects
// throws core::Error.
std::string write_learning_curve(const std::string& dir, const std::string& label,
                                 const std::string& env);

}  // namespace seqbench::apps
