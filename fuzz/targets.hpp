// The fuzz targets' bodies (docs/testing.md, "Fuzzing"): one function per input format,
// called by the libFuzzer entry point (fuzz/entry.cpp, `make fuzz`) and by the ordinary
// test suite, which feeds every committed seed and regression input through them
// (tests/fuzz/corpus_test.cpp), so a crash found once stays fixed in every build.
//
// The rule each target checks: a reader may reject any input, but only with seqbench's
// own error (core::Error or core::UsageError). Anything else escapes: a Violation (a
// broken promise the target checks itself, e.g. a config that does not survive its own
// to_yaml round trip), std::out_of_range from a bare stoll, YAML::Exception, or
// std::bad_alloc from a size read off the file. libFuzzer reports an escaping exception
// as a crash, as it does ASan/UBSan reports, leaks, timeouts and oversized allocations.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace seqbench::fuzz {

struct Violation : std::logic_error {
  using std::logic_error::logic_error;
};

// Input: a selector byte (which experiment's config: copy, pmnist, char_ptb, wikitext103,
// imagenet64, minigrid, stability, modulo 7), a YAML text, then optionally a line "#%set"
// and one KEY=VALUE override per line.
void config(std::string_view input);
// The file: read as IDX images and as IDX labels.
void idx(std::string_view input);
// The bytes: parsed as .npy, and read as an .npz file.
void npz(std::string_view input);
// A selector byte (format and level, text_corpus in targets.cpp), then the text; a
// directory format gets three files cut at the first two "\n%%\n".
void text_corpus(std::string_view input);
// The file: a checkpoint, then every metadata value read as a number.
void checkpoint(std::string_view input);
// The text of a runs.csv: parsed, compared and written as Markdown and CSV.
void runs_csv(std::string_view input);
// A sweep file: read (base configs relative to the current directory), expanded, and
// every run's command line built.
void sweep(std::string_view input);
// The values of a Slurm job script, NUL-separated: partition, time, mem, account, job
// name, the extra options (separated by \x01), then the command's words. A script that
// is written must have one #SBATCH option per line, no byte that sbatch or the shell
// would read as more than a value, and an exec line that a shell reads back as exactly
// the command's words.
void slurm_script(std::string_view input);
// NUL-separated cells through the CSV writer (read back equal, no unguarded formula) and
// the Markdown table writer (one line per row, no '<' or '>', no unescaped '|').
void escapes(std::string_view input);

}  // namespace seqbench::fuzz
