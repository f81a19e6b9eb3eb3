// The process-wide oneDNN CPU engine and stream. Primitives are created against
// this engine and executed on this stream; one of each is enough because all
// parallelism comes from OpenMP inside a primitive (see core/threads.hpp).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

namespace seqbench::backend {

// Created on first use (thread-safe static initialisation) and never destroyed
// before exit, so cached primitives may hold references to it.
dnnl::engine& cpu_engine();
// In-order CPU stream on cpu_engine(); callers wait() after executing.
dnnl::stream& cpu_stream();

}  // namespace seqbench::backend
