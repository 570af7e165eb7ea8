#pragma once
// Names and version of the result-file schema (documented in docs/hdf5-schema.md). Bump
// kSchemaVersion whenever a reader of the previous version would misread a file.
namespace genbench::schema {

inline constexpr const char* kFormat = "genbench-results";
inline constexpr int kSchemaVersion = 2;
// The oldest version the read-only tools (export, the Python loader) still read; --resume
// continues only kSchemaVersion files.
inline constexpr int kOldestReadableVersion = 1;

// Root attributes.
inline constexpr const char* kAttrFormat = "format";
inline constexpr const char* kAttrSchemaVersion = "schema_version";
inline constexpr const char* kAttrFingerprint = "config_fingerprint";
inline constexpr const char* kAttrWorldSize = "world_size";
inline constexpr const char* kAttrBackend = "backend";
inline constexpr const char* kAttrState = "state";  // running | complete | interrupted | failed
// JSON description of every dataset and column (io/columns.h), written at creation.
inline constexpr const char* kAttrSchemaDescription = "schema_description";

// Benchmark group attributes (v2): the op's description (Op::description_json(), as given) and
// the full points row's columns (JSON list of {name, type, unit, meaning, kind}).
inline constexpr const char* kAttrOpDescription = "op_description";
inline constexpr const char* kAttrColumns = "columns";

// Groups and datasets.
inline constexpr const char* kSystem = "/system";
inline constexpr const char* kCeilings = "/ceilings";
inline constexpr const char* kBenchmarks = "/benchmarks";
inline constexpr const char* kPoints = "points";
inline constexpr const char* kSamples = "samples";
inline constexpr const char* kRankStats = "rank_stats";

// Point statuses.
inline constexpr const char* kOk = "ok";
inline constexpr const char* kFailed = "failed";
inline constexpr const char* kSkipped = "skipped";
inline constexpr const char* kUnsupported = "unsupported";

}  // namespace genbench::schema
