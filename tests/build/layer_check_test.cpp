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

// The rules lib/CMakeLists.txt declares ("core=;backend=core;...").
std::string real_rules() {
  std::string r = SEQBENCH_LAYER_RULES;
  std::replace(r.begin(), r.end(), '|', ';');
  return r;
}

clitest::Result check(const std::string& root, const std::string& rules) {
  return clitest::run(std::string(SEQBENCH_CMAKE) + " -DROOT=" + root + " \"-DRULES=" + rules +
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
  const auto r = check(SEQBENCH_SOURCE_DIR, real_rules());
  EXPECT_EQ(r.code, 0) << r.err;
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
