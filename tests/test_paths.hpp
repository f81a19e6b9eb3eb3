// Where the tests find the source tree, the binaries they run, cmake and the layer rules.
// The values live in one source that CMake generates (build/tests/test_paths.cpp, from
// tests/CMakeLists.txt) instead of -D flags on every test's command line: a clone at
// another path, or a change of the layer rules, then recompiles that one file, and ccache
// still finds every other test object (it keys them on their command lines).
// Every test source sees this header (tests/CMakeLists.txt force-includes it).
#pragma once

namespace seqbench::testpaths {
extern const char* const kCopyBin;
extern const char* const kFrontBin;
extern const char* const kWikitext103Bin;
extern const char* const kMinigridBin;
extern const char* const kStabilityBin;
extern const char* const kBenchCellBin;
extern const char* const kSourceDir;
extern const char* const kCmake;
extern const char* const kLayerRules;
extern const char* const kPartRules;
extern const char* const kPartFiles;
}  // namespace seqbench::testpaths

#define SEQBENCH_COPY_BIN ::seqbench::testpaths::kCopyBin
#define SEQBENCH_FRONT_BIN ::seqbench::testpaths::kFrontBin
#define SEQBENCH_WIKITEXT103_BIN ::seqbench::testpaths::kWikitext103Bin
#define SEQBENCH_MINIGRID_BIN ::seqbench::testpaths::kMinigridBin
#define SEQBENCH_STABILITY_BIN ::seqbench::testpaths::kStabilityBin
#define SEQBENCH_BENCH_CELL_BIN ::seqbench::testpaths::kBenchCellBin
#define SEQBENCH_SOURCE_DIR ::seqbench::testpaths::kSourceDir
#define SEQBENCH_CMAKE ::seqbench::testpaths::kCmake
#define SEQBENCH_LAYER_RULES ::seqbench::testpaths::kLayerRules
#define SEQBENCH_PART_RULES ::seqbench::testpaths::kPartRules
#define SEQBENCH_PART_FILES ::seqbench::testpaths::kPartFiles
