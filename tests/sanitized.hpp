// Whether this test binary runs under AddressSanitizer (`make asan`): gcc defines
// __SANITIZE_ADDRESS__, clang answers __has_feature(address_sanitizer).
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define SEQBENCH_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SEQBENCH_UNDER_ASAN 1
#endif
#endif

namespace seqbench::testutil {
#if defined(SEQBENCH_UNDER_ASAN)
inline constexpr bool kUnderAsan = true;
#else
inline constexpr bool kUnderAsan = false;
#endif
}  // namespace seqbench::testutil
