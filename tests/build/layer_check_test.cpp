// The layering is enforced by the build (cmake/check_layers.cmake, run before any layer
// compiles): these tests run the same check on the real tree and on small trees that
// break a rule, to show that it passes the first and fails the others naming the line.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "cli/cli_util.hpp"

using namespace seqbench;
namespace fs = std::filesystem;

namespace {

// The rules lib/CMakeLists.txt declares ("core=;backend=core;..."), CMake lists passed
// with '|' for ';'.
std::string unbar(std::string r) {
  std::replace(r.begin(), r.end(), '|', ';');
  return r;
}
std::string real_rules() { return unbar(SEQBENCH_LAYER_RULES); }
// lib/nn's parts ("nn=;nn/cells=nn;...") and the files directly in lib/nn that form nn/top.
std::string real_parts() { return unbar(SEQBENCH_PART_RULES); }
const std::string kRealPartFiles = SEQBENCH_PART_FILES;

clitest::Result check(const std::string& root, const std::string& rules,
                      const std::string& parts = "", const std::string& part_files = "") {
  return clitest::run(std::string(SEQBENCH_CMAKE) + " -DROOT=" + root + " \"-DRULES=" + rules +
                          "\" \"-DPARTS=" + parts + "\" \"-DPART_FILES=" + part_files +
                          "\" -P " + SEQBENCH_SOURCE_DIR + "/cmake/check_layers.cmake",
                      root);
}

// A tree with lib/<folder>/<file> holding `text`.
std::string tree(const std::string& name, const std::string& file, const std::string& text) {
  const std::string root = clitest::fresh_dir(name);
  fs::create_directories(fs::path(root + "/lib/" + file).parent_path());
  clitest::write(root + "/lib/" + file, text);
  return root;
}

}  // namespace

TEST(LayerCheck, TheRealTreeFollowsItsDeclaredLayers) {
  ASSERT_NE(real_rules().find("backend=core"), std::string::npos) << real_rules();
  ASSERT_NE(real_parts().find("nn/recurrent=nn,nn/cells"), std::string::npos) << real_parts();
  ASSERT_NE(kRealPartFiles.find("registry"), std::string::npos) << kRealPartFiles;
  const auto r = check(SEQBENCH_SOURCE_DIR, real_rules(), real_parts(), kRealPartFiles);
  EXPECT_EQ(r.code, 0) << r.err;
}

// Inside lib/nn, under the real rules: a step kernel that reaches up to the layers that
// run it, or to the registry that assembles them, is a back-arrow; the building blocks
// directly in lib/nn are below every part.
TEST(LayerCheck, ACellIncludingARecurrentLayerOrTheRegistryFails) {
  const std::string root =
      tree("layer_nn_parts", "nn/cells/lstm.cpp",
           "#include \"nn/linear.hpp\"\n#include \"nn/recurrent/recurrent.hpp\"\n"
           "#include \"nn/registry.hpp\"\n#include \"nn/cells/lstm_gates.hpp\"\n");
  const auto r = check(root, real_rules(), real_parts(), kRealPartFiles);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("lib/nn/cells/lstm.cpp:2: nn/cells includes nn/recurrent/recurrent.hpp "
                       "(part nn/recurrent), but nn/cells may use only: nn"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("lib/nn/cells/lstm.cpp:3: nn/cells includes nn/registry.hpp (part "
                       "nn/top)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("lstm.cpp:1"), std::string::npos) << "nn/linear.hpp is below: " << r.err;
  EXPECT_EQ(r.err.find("lstm.cpp:4"), std::string::npos) << "its own part: " << r.err;
  // The same includes from the registry are what it is for.
  const std::string ok = tree("layer_nn_top", "nn/registry.cpp",
                              "#include \"nn/recurrent/recurrent.hpp\"\n"
                              "#include \"nn/cells/lstm.hpp\"\n#include \"nn/linear.hpp\"\n");
  const auto r_ok = check(ok, real_rules(), real_parts(), kRealPartFiles);
  EXPECT_EQ(r_ok.code, 0) << r_ok.err;
}

TEST(LayerCheck, ABuildingBlockIncludingAPartOrAnUndeclaredSubfolderFails) {
  const std::string root = tree("layer_nn_block", "nn/linear.cpp",
                                "#include \"nn/linear.hpp\"\n#include \"nn/mixers/mixer.hpp\"\n");
  fs::create_directories(root + "/lib/nn/extra");
  clitest::write(root + "/lib/nn/extra/x.cpp", "#include \"nn/linear.hpp\"\n");
  const auto r = check(root, real_rules(), real_parts(), kRealPartFiles);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("lib/nn/linear.cpp:2: nn includes nn/mixers/mixer.hpp (part nn/mixers), "
                       "but nn may use only: nothing"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("lib/nn/extra/x.cpp: lib/nn/extra/ is not one of the parts of lib/nn"),
            std::string::npos)
      << r.err;
}

TEST(LayerCheck, AModelFileIncludingOneDnnOrBlasFailsTheBuild) {
  for (const char* inc : {"#include <oneapi/dnnl/dnnl.hpp>", "#include <dnnl.hpp>",
                          "#include <cblas.h>", "#include \"cblas.h\""}) {
    const std::string root = tree("layer_vendor", "nn/cell.cpp", std::string("// x\n") + inc + "\n");
    const auto r = check(root, "core=;backend=core;nn=core,backend");
    EXPECT_NE(r.code, 0) << inc;
    EXPECT_NE(r.err.find("lib/nn/cell.cpp:2: includes"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("only lib/backend may use oneDNN and BLAS"), std::string::npos) << r.err;
  }
  // The same include inside lib/backend is what backend is for.
  const std::string ok = tree("layer_backend", "backend/gemm.cpp", "#include <cblas.h>\n");
  EXPECT_EQ(check(ok, "core=;backend=core").code, 0);
}

TEST(LayerCheck, AnIncludeFromAFolderNotDeclaredAsADependencyFails) {
  const std::string root = tree("layer_dep", "optim/sgd.cpp",
                                "#include \"core/tensor.hpp\"\n#include \"nn/linear.hpp\"\n");
  const auto r = check(root, "core=;optim=core;nn=core,optim");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("lib/optim/sgd.cpp:2: lib/optim includes nn/, but its library may use "
                       "only: core"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("sgd.cpp:1"), std::string::npos) << "core is declared: " << r.err;
}

TEST(LayerCheck, AnAppIncludingABackendHeaderThatExposesOneDnnFails) {
  const std::string root = tree("layer_leak", "backend/ctx.hpp", "#include <dnnl.hpp>\n");
  fs::create_directories(root + "/apps/x");
  clitest::write(root + "/apps/x/main.cpp", "#include \"backend/ctx.hpp\"\n");
  const auto r = check(root, "core=;backend=core");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("apps/x/main.cpp:1: includes backend/ctx.hpp, which exposes oneDNN or "
                       "BLAS headers"),
            std::string::npos)
      << r.err;
}
