// Upper- and lower-casing UTF-8 text without a locale: StringNormalizer's case_change_action.
// onnxruntime maps case through its "en_US.UTF-8" locale (towupper/towlower); dnnx maps the same
// letters itself, so that no process-wide locale is needed: ASCII, Latin-1, Latin Extended-A,
// Greek and Cyrillic (the simple one-to-one mappings, as towupper/towlower give them). Other
// characters, and bytes that are not valid UTF-8, are kept as they are.
#pragma once
#include <string>

namespace dnnx {

enum class CaseChange { None, Lower, Upper };

std::string change_case(const std::string& utf8, CaseChange change);

}  // namespace dnnx
