// The operand checks of Backend::sparseAttention, shared by both backends so that they refuse
// the same inputs with the same message.
#include "backend/backend.h"

#include <stdexcept>
#include <string>

namespace headlight {
namespace {

[[noreturn]] void refuse(const std::string& why) {
    throw std::invalid_argument("sparseAttention: " + why);
}

void checkPattern(const SparsePattern& pattern, int64_t heads, int64_t tokens) {
    if (pattern.tokens != tokens || (pattern.heads != 1 && pattern.heads != heads))
        refuse("a pattern of " + std::to_string(pattern.heads) + " heads × " +
               std::to_string(pattern.tokens) + " tokens does not fit " + std::to_string(heads) +
               " heads × " + std::to_string(tokens) + " tokens");
    const std::size_t rows = std::size_t(pattern.heads * tokens);
    if (pattern.rowStart.size() != rows + 1 || pattern.rowStart.front() != 0 ||
        pattern.rowStart.back() != pattern.entries())
        refuse("rowStart must hold " + std::to_string(rows + 1) + " offsets from 0 to " +
               std::to_string(pattern.entries()));
    for (std::size_t r = 0; r < rows; ++r)
        if (pattern.rowStart[r] > pattern.rowStart[r + 1]) refuse("rowStart is not ascending");
    for (const int32_t key : pattern.keys)
        if (key < 0 || key >= tokens) refuse("key " + std::to_string(key) + " is out of range");
}
} // namespace

void checkSparseAttention(const DeviceTensor& q, const DeviceTensor& k, const DeviceTensor& v,
                          const SparsePattern& pattern, std::span<const float> alibiSlopes,
                          const DeviceTensor& context, const DeviceTensor* weights) {
    if (q.shape().size() != 3 || k.shape().size() != 3 || v.shape() != k.shape())
        refuse("q, k and v must be [heads, T, d]");
    const int64_t heads = q.dim(0), tokens = q.dim(1), dim = q.dim(2);
    if (k.dim(0) == 0 || heads % k.dim(0) || k.dim(1) != tokens || k.dim(2) != dim)
        refuse("q " + shapeString(q.shape()) + " and k " + shapeString(k.shape()) + " do not fit");
    if (context.shape() != q.shape()) refuse("context must be " + shapeString(q.shape()));
    checkPattern(pattern, heads, tokens);
    if (!alibiSlopes.empty() && int64_t(alibiSlopes.size()) != heads)
        refuse("give one ALiBi slope per head");
    if (weights && weights->size() != heads / pattern.heads * pattern.entries())
        refuse("weights must hold " + std::to_string(heads / pattern.heads * pattern.entries()) +
               " values");
}
} // namespace headlight
