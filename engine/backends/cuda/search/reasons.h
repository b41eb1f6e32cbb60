// The texts a search writes into the plan's `rejected` reasons: one time text for every reason
// that shows a time (the exact time travels beside it as a number, TimedRejected), one size
// text, and the phrases by which a timed candidate lost.
#pragma once
#include <cstddef>
#include <string>

namespace dnnx::cuda {

std::string format_ms(double ms);    // "0.0123 ms"
std::string mib_text(size_t bytes);  // "0.25 MiB", "256 MiB"

// "0.0150 ms, slower than GEMM (0.0123 ms)"; "0.0150 ms, slower than GEMM" when the winner's
// time is not shown (winner_ms < 0).
std::string slower_than(double ms, const std::string& winner, double winner_ms = -1);
// "0.0120 ms, within 10% of GEMM (0.0123 ms)": faster than the winner, but passed over by a
// near-tie rule (pick.h; both rules draw the line at 10%).
std::string within_near_tie(double ms, const std::string& winner, double winner_ms);

}  // namespace dnnx::cuda
