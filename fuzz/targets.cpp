#include "fuzz/targets.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "apps/char_ptb/char_ptb_experiment.hpp"
#include "apps/copy/copy_experiment.hpp"
#include "apps/experiments.hpp"
#include "apps/imagenet64/imagenet64_experiment.hpp"
#include "apps/minigrid/minigrid_experiment.hpp"
#include "apps/pmnist/pmnist_experiment.hpp"
#include "apps/stability/stability_config.hpp"
#include "apps/wikitext103/wikitext103_experiment.hpp"
#include "config/yaml_config.hpp"
#include "core/check.hpp"
#include "data/mnist.hpp"
#include "data/npz.hpp"
#include "data/text_corpus.hpp"
#include "report/compare.hpp"
#include "report/csv.hpp"
#include "report/markdown.hpp"
#include "sweep/slurm_script.hpp"
#include "sweep/sweep.hpp"
#include "train/checkpoint.hpp"

namespace seqbench::fuzz {
namespace {

namespace fs = std::filesystem;

// A directory of this process's own under TMPDIR (or /tmp), made on first use and
// removed at exit. Readers that take a path get the input written there.
const std::string& scratch_dir() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/seqbench_fuzz_XXXXXX";
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("fuzz: mkdtemp failed in " + pattern);
    static std::string keep;
    keep = pattern;
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(keep, ec);
    });
    return pattern;
  }();
  return dir;
}

std::string write_file(const std::string& name, std::string_view bytes) {
  const std::string path = scratch_dir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  out.close();
  if (!out) throw std::runtime_error("fuzz: cannot write " + path);
  return path;
}

void require(bool ok, const std::string& what) {
  if (!ok) throw Violation(what);
}

// Runs fn; a core::Error is a clean rejection, provided its message is one non-empty line.
template <class F>
void expect_clean(F&& fn) {
  try {
    fn();
  } catch (const core::Error& e) {
    const std::string_view msg = e.what();
    require(!msg.empty() && msg.find('\n') == std::string_view::npos,
            fmt::format("error message is not one non-empty line: '{}'", msg));
  }
}

template <class Cfg>
void read_config(std::string_view input) {
  const std::string_view marker = "\n#%set\n";
  const size_t cut = input.find(marker);
  const std::string yaml(input.substr(0, cut));
  Cfg cfg;
  expect_clean([&] {
    config::apply_yaml_text(cfg, yaml, "fuzz.yaml");
    if (cut != std::string_view::npos) {
      std::string_view rest = input.substr(cut + marker.size());
      while (!rest.empty()) {
        const size_t eol = rest.find('\n');
        const std::string line(rest.substr(0, eol));
        if (!line.empty()) config::apply_override(cfg, line);
        rest = eol == std::string_view::npos ? std::string_view{} : rest.substr(eol + 1);
      }
    }
    // What --dump-config and --resume rely on: the written config reads back to itself.
    const std::string written = config::to_yaml(cfg);
    Cfg again;
    config::apply_yaml_text(again, written, "to_yaml");
    const std::string rewritten = config::to_yaml(again);
    require(rewritten == written, "config round trip differs:\n--- written\n" + written +
                                      "--- read back\n" + rewritten);
  });
}

void convert(const data::NpyArray& a) {
  require(int64_t(a.bytes.size()) == a.numel() * a.word_bytes(), "npy: data size != numel * word");
  if (a.kind() == 'f')
    (void)a.as_double();
  else
    (void)a.as_int64("fuzz");
}

std::array<std::string_view, 3> split3(std::string_view s) {
  std::array<std::string_view, 3> parts{s, {}, {}};
  const std::string_view sep = "\n%%\n";
  for (size_t i = 0; i < 2; ++i) {
    const size_t at = parts[i].find(sep);
    if (at == std::string_view::npos) break;
    parts[i + 1] = parts[i].substr(at + sep.size());
    parts[i] = parts[i].substr(0, at);
  }
  return parts;
}

}  // namespace

void config(std::string_view input) {
  if (input.empty()) return;
  const std::string_view yaml = input.substr(1);
  switch (static_cast<unsigned char>(input[0]) % 7) {
    case 0: read_config<apps::CopyConfig>(yaml); break;
    case 1: read_config<apps::PmnistConfig>(yaml); break;
    case 2: read_config<apps::CharPtbConfig>(yaml); break;
    case 3: read_config<apps::Wikitext103Config>(yaml); break;
    case 4: read_config<apps::Imagenet64Config>(yaml); break;
    case 5: read_config<apps::MinigridConfig>(yaml); break;
    default: read_config<apps::StabilityConfig>(yaml); break;
  }
}

void idx(std::string_view input) {
  const std::string path = write_file("input-idx3-ubyte", input);
  expect_clean([&] {
    const data::IdxImages images = data::read_idx_images(path);
    require(int64_t(images.pixels.size()) == images.count * images.rows * images.cols,
            "idx: pixels != count * rows * cols");
  });
  expect_clean([&] { (void)data::read_idx_labels(path); });
}

void npz(std::string_view input) {
  expect_clean([&] { convert(data::parse_npy(std::string(input), "fuzz.npy")); });
  const std::string path = write_file("input.npz", input);
  expect_clean([&] {
    for (const auto& member : data::read_npz(path)) convert(member.second);
  });
}

// Selector byte: mode = byte % 6 (0 one text file at char level, 1 at word level, 2-5 a
// directory in the ptb_char, ptb_word, wikitext, text layout); bit 6 picks word level for
// the directory formats; min_count = 1 + byte / 128.
void text_corpus(std::string_view input) {
  if (input.empty()) return;
  const auto sel = static_cast<unsigned char>(input[0]);
  const std::string_view text = input.substr(1);
  data::CorpusConfig cfg;
  cfg.min_count = 1 + sel / 128;
  const int mode = sel % 6;
  if (mode < 2) {
    cfg.format = "text";
    cfg.level = mode == 0 ? "char" : "word";
    cfg.path = write_file("corpus.txt", text);
  } else {
    static const char* const formats[] = {"ptb_char", "ptb_word", "wikitext", "text"};
    static const std::array<std::array<const char*, 3>, 4> names{{
        {"ptb.char.train.txt", "ptb.char.valid.txt", "ptb.char.test.txt"},
        {"ptb.train.txt", "ptb.valid.txt", "ptb.test.txt"},
        {"wiki.train.tokens", "wiki.valid.tokens", "wiki.test.tokens"},
        {"train.txt", "valid.txt", "test.txt"},
    }};
    const size_t f = size_t(mode - 2);
    cfg.format = formats[f];
    cfg.level = sel & 64 ? "word" : "char";
    const auto parts = split3(text);
    fs::create_directories(scratch_dir() + "/" + formats[f]);
    for (size_t i = 0; i < 3; ++i) write_file(std::string(formats[f]) + "/" + names[f][i], parts[i]);
    cfg.dir = scratch_dir() + "/" + formats[f];
  }
  expect_clean([&] {
    const data::Corpus c = data::load_corpus(cfg);
    const int64_t v = c.vocab.size();
    for (const auto* split : {&c.train, &c.valid, &c.test})
      for (const int32_t id : *split) require(id >= 0 && id < v, "corpus: token id outside the vocabulary");
  });
}

void checkpoint(std::string_view input) {
  const std::string path = write_file("input.sbck", input);
  expect_clean([&] {
    const train::Checkpoint ck = train::load_checkpoint(path);
    for (const auto& a : ck.arrays)
      require(int64_t(a.data.size()) == a.shape.numel(), "checkpoint: array size != shape");
    for (const auto& entry : ck.meta) {
      // Every typed reader either reads the value or refuses it with core::Error.
      expect_clean([&] { (void)ck.get_int(entry.first); });
      expect_clean([&] { (void)ck.get_u64(entry.first); });
      expect_clean([&] {
        // A double that reads is written back in a text that reads to the same bits.
        const double v = ck.get_double(entry.first);
        double back = 0;
        require(core::decode_double(core::encode_double(v), back) &&
                    std::bit_cast<uint64_t>(back) == std::bit_cast<uint64_t>(v),
                "checkpoint: a double does not survive encode/decode");
      });
      expect_clean([&] { (void)ck.get_bool(entry.first); });
      expect_clean([&] { (void)ck.get_doubles(entry.first); });
      expect_clean([&] { (void)ck.get_rng(entry.first); });
    }
  });
}

void runs_csv(std::string_view input) {
  expect_clean([&] {
    const report::CsvTable runs = report::parse_csv(input, "runs.csv");
    const report::CompareTable table = report::compare_runs(runs);
    (void)report::compare_markdown(table);
    (void)report::compare_csv(table);
  });
}

void sweep(std::string_view input) {
  const std::string path = write_file("sweep.yaml", input);
  expect_clean([&] {
    const sweep::Spec spec = sweep::load_spec(path, apps::sweepable_experiments());
    for (const sweep::Run& run : sweep::expand(spec)) (void)sweep::run_arguments(spec, run, 1, false);
  });
}

namespace {

std::vector<std::string> split(std::string_view s, char sep, size_t max_parts) {
  std::vector<std::string> out;
  size_t start = 0;
  while (out.size() + 1 < max_parts) {
    const size_t at = s.find(sep, start);
    if (at == std::string_view::npos) break;
    out.emplace_back(s.substr(start, at - start));
    start = at + 1;
  }
  out.emplace_back(s.substr(start));
  return out;
}

// The words of `exec 'a' 'b'\''c' ...` as a shell reads them; throws Violation for
// anything but single-quoted pieces and \' between them. `rest` gets what follows the
// last quoted word.
std::vector<std::string> shell_words(std::string_view line, std::string_view& rest) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < line.size() && line[i] == ' ' && i + 1 < line.size() && line[i + 1] == '\'') {
    ++i;
    std::string w;
    while (i < line.size() && line[i] == '\'') {
      const size_t end = line.find('\'', i + 1);
      require(end != std::string_view::npos, "an unterminated quote in the exec line");
      w += line.substr(i + 1, end - i - 1);
      i = end + 1;
      if (line.substr(i, 2) == "\\'") {
        w += '\'';
        i += 2;
      }
    }
    words.push_back(std::move(w));
  }
  rest = line.substr(i);
  return words;
}

}  // namespace

void slurm_script(std::string_view input) {
  const auto parts = split(input, '\0', 7);
  const auto part = [&](size_t i) { return i < parts.size() ? parts[i] : std::string(); };
  sweep::SlurmJob job;
  job.options.partition = part(0);
  job.options.time = part(1);
  job.options.mem = part(2);
  job.options.account = part(3);
  job.name = part(4);
  if (!part(5).empty()) job.options.extra = split(part(5), '\x01', 64);
  job.indices = {0, 3};
  job.command = split(part(6), '\0', 64);
  expect_clean([&] {
    const std::string script = sweep::slurm_script(job);
    require(!script.empty() && script.back() == '\n', "the script does not end with a line end");
    const auto lines = split(std::string_view(script).substr(0, script.size() - 1), '\n', 1 << 20);
    size_t options = 0;
    for (const std::string* f : {&job.options.partition, &job.options.time, &job.options.mem,
                                 &job.options.account})
      options += !f->empty();
    require(lines.size() == 5 + options + job.options.extra.size(),
            fmt::format("the script has {} lines, expected {}", lines.size(),
                        5 + options + job.options.extra.size()));
    require(lines[0] == "#!/bin/bash", "the first line is not #!/bin/bash");
    for (size_t i = 1; i + 1 < lines.size(); ++i) {
      const std::string& l = lines[i];
      require(l.rfind("#SBATCH -", 0) == 0, "a line between is not an #SBATCH option: " + l);
      for (size_t k = 8; k < l.size(); ++k) {
        const unsigned char c = static_cast<unsigned char>(l[k]);
        require(c > 0x20 && c < 0x7f && !std::strchr("\"'\\#$`", c),
                "an #SBATCH line holds a byte sbatch or a shell would read: " + l);
      }
    }
    const std::string& exec = lines.back();
    require(exec.rfind("exec", 0) == 0, "the last line is not the exec line");
    std::string_view rest;
    const auto words = shell_words(std::string_view(exec).substr(4), rest);
    require(words == job.command, "the exec line does not read back as the command's words");
    require(rest == " --run-index \"$SLURM_ARRAY_TASK_ID\" --threads \"${SLURM_CPUS_PER_TASK:-1}\"",
            "the exec line ends with something else: " + std::string(rest));
  });
}

void escapes(std::string_view input) {
  const auto cells = split(input, '\0', 64);
  std::vector<std::string> header{"id"}, row{"r"};
  for (size_t i = 0; i < cells.size(); ++i) {
    header.push_back(fmt::format("c{}", i));
    row.push_back(cells[i]);
  }
  // CSV: what is written reads back as it was, and no cell a spreadsheet would run as a
  // formula is written bare (a plain number or a lone "-" is not one).
  const std::string text = report::csv_line(header) + report::csv_line(row);
  const report::CsvTable t = report::parse_csv(text, "escapes.csv");
  require(t.rows.size() == 1 && t.rows[0] == row, "a CSV row does not read back as written");
  for (const std::string& cell : cells) {
    const std::string keep = report::csv_escape(cell);
    std::string_view w = keep;
    if (!w.empty() && w[0] == '"') w.remove_prefix(1);
    if (!w.empty() && std::strchr("=+-@\t\r\n", w[0]) && w[0] != '\0') {
      char* end = nullptr;
      (void)std::strtod(cell.c_str(), &end);
      require(cell == "-" || (!cell.empty() && end == cell.c_str() + cell.size()),
              "a formula cell is written unguarded: " + keep);
    }
  }
  // Markdown: three lines (header, rule, the row), each with one more unescaped '|' than
  // it has cells, and no '<' or '>' that could open HTML.
  const std::string md = report::markdown_table(header, {row});
  const auto lines = split(md, '\n', 1 << 20);
  require(lines.size() == 4 && lines[3].empty(), "the Markdown table is not three lines");
  for (size_t i = 0; i < 3; ++i) {
    size_t pipes = 0;
    for (size_t k = 0; k < lines[i].size(); ++k)
      pipes += lines[i][k] == '|' && (k == 0 || lines[i][k - 1] != '\\');
    require(pipes == header.size() + 1, "a Markdown line has a stray '|': " + lines[i]);
  }
  require(md.find_first_of("<>") == std::string::npos, "the Markdown table holds '<' or '>'");
}

}  // namespace seqbench::fuzz
