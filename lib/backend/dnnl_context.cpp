#include "backend/dnnl_context.hpp"

namespace seqbench::backend {

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& cpu_stream() {
  static dnnl::stream stream(cpu_engine());
  return stream;
}

}  // namespace seqbench::backend
