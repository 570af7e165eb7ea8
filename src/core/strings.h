#pragma once
#include <cstdarg>
#include <cstdint>
#include <string>
#include <vector>

namespace genbench {

// printf-style formatting into a std::string.
std::string strprintf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Human-readable byte count with binary suffixes: 1536 -> "1.5 KiB".
std::string format_bytes(double bytes);
// Seconds with a unit that keeps 3-4 significant digits: 1.2e-5 -> "12.0 us".
std::string format_seconds(double seconds);

// Levenshtein distance, for "did you mean" suggestions.
std::size_t edit_distance(const std::string& a, const std::string& b);
// The closest candidate within a small distance, or "" when none is close.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

std::string join(const std::vector<std::string>& parts, const std::string& sep);

// The whole of `text` as a number (strtod syntax): false when it is null, empty or has anything
// after the number. For numeric settings from the environment.
bool parse_number(const char* text, double& out);

// 64-bit FNV-1a, used to fingerprint configurations for --resume.
std::uint64_t fnv1a64(const std::string& text);

}  // namespace genbench
