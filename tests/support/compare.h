#pragma once
// The one family of numeric comparisons every test uses (issue 35). Why one family: the helpers
// each test wrote for itself (`worst = std::max(worst, |a - b|)`) forgot a NaN as soon as a later
// element was finite, so an output that was entirely NaN, or empty, passed. Here a comparison that
// proves nothing is never small: it returns +infinity, and `where` names the first offending
// index.
//
//   compareValues(a, b[, include])     the Difference itself: largest |a - b|, the reference's
//                                      scale and the element that decided either
//   maxAbsDiff(a, b[, include][, &where])   largest |a - b|; +inf when the comparison fails
//   scaledMaxAbsDiff(a, b[, &where])   largest |a - b| / max(1, largest |b|)
//   differsBy(a, b, least[, &where])   the two are comparable and differ by more than `least`
//   maxAbsDiffSameNan(a, b[, &where])  as maxAbsDiff, but NaN where both sides hold NaN is
//                                      skipped (the query-key embedding marks padding with NaN)
//   worstError(n, errorOf[, &where])   largest of a per-element error computed by the caller
//   allFinite(values[, &where])        no NaN or infinity, and not empty
//
// A comparison fails when the sizes (or, for tensors, the shapes) differ, when no element is
// compared, or when either side holds a NaN or an infinity at a compared element. a and b are a
// Tensor each or anything that converts to std::span<const float> (a std::vector<float>).
#include "tensor/tensor.h"

#include <QString>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <span>

namespace headlight::test {

constexpr double kNotComparable = std::numeric_limits<double>::infinity();

struct Difference {
    double maxAbs = kNotComparable; // largest |a - b| compared; +inf when the comparison failed
    double scale = 1.0;             // max(1, largest |b| compared)
    QString where;                  // the failure and its first index, else the largest element
    bool comparable() const { return maxAbs != kNotComparable; }
};

// The line that called a comparison, for the log below. Why not std::source_location: clang 14
// (the asan and fuzz presets) lacks the builtin that libstdc++ 12's needs. The builtins in a
// default argument are evaluated where the caller uses it, as std::source_location::current is.
struct CallSite {
    const char* file;
    unsigned line;
    static constexpr CallSite current(const char* file = __builtin_FILE(),
                                      unsigned line = __builtin_LINE()) {
        return {file, line};
    }
};

namespace detail {
inline QString element(std::size_t i, double a, double b) {
    return QString("index %1: %2 vs %3").arg(i).arg(a, 0, 'g', 9).arg(b, 0, 'g', 9);
}
inline Difference failed(QString why) {
    Difference d;
    d.where = std::move(why);
    return d;
}

// HEADLIGHT_COMPARE_LOG=FILE appends one line per comparison to FILE: the calling line, the test
// function and data row, and the largest difference. Why: a tolerance is the measured error of
// both backends plus a margin (golden.h), and this is how the error is measured again.
inline const Difference& logged(const Difference& d, const CallSite& at) {
    static const char* const path = std::getenv("HEADLIGHT_COMPARE_LOG");
    if (!path) return d;
    if (FILE* file = std::fopen(path, "a")) {
        const char* function = QTest::currentTestFunction();
        const char* row = QTest::currentDataTag();
        std::fprintf(file, "%s:%u\t%s\t%s\t%.6g\n", at.file, at.line, function ? function : "-",
                     row ? row : "-", d.maxAbs);
        std::fclose(file);
    }
    return d;
}
} // namespace detail

// The comparison of the elements where include(i) holds.
template <typename Include>
requires std::predicate<Include, std::size_t>
    Difference compareValues(std::span<const float> a, std::span<const float> b, Include include,
                             CallSite at = CallSite::current()) {
    if (a.size() != b.size())
        return detail::logged(detail::failed(QString("sizes %1 vs %2").arg(a.size()).arg(b.size())),
                              at);
    Difference d;
    d.maxAbs = 0.0;
    std::size_t compared = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (!include(i)) continue;
        ++compared;
        const double x = a[i], y = b[i];
        if (!std::isfinite(x) || !std::isfinite(y))
            return detail::logged(detail::failed("not finite at " + detail::element(i, x, y)), at);
        const double diff = std::abs(x - y);
        if (diff > d.maxAbs || compared == 1) {
            d.maxAbs = diff;
            d.where = detail::element(i, x, y);
        }
        d.scale = std::max(d.scale, std::abs(y));
    }
    if (compared == 0) return detail::logged(detail::failed("nothing compared (empty)"), at);
    return detail::logged(d, at);
}

inline Difference compareValues(std::span<const float> a, std::span<const float> b,
                                CallSite at = CallSite::current()) {
    return compareValues(
        a, b, [](std::size_t) { return true; }, at);
}

template <typename Include>
requires std::predicate<Include, std::size_t>
    Difference compareValues(const Tensor& a, const Tensor& b, Include include,
                             CallSite at = CallSite::current()) {
    if (a.shape() != b.shape())
        return detail::logged(
            detail::failed(
                QString("shape %1 vs %2").arg(a.shapeString().c_str(), b.shapeString().c_str())),
            at);
    return compareValues(a.values(), b.values(), include, at);
}

inline Difference compareValues(const Tensor& a, const Tensor& b,
                                CallSite at = CallSite::current()) {
    return compareValues(
        a, b, [](std::size_t) { return true; }, at);
}

namespace detail {
inline double report(const Difference& d, QString* where) {
    if (where) *where = d.where;
    return d.maxAbs;
}
} // namespace detail

// Largest |a - b|, +inf when the comparison fails; `where` gets the reason or the largest element.
template <typename Include>
requires std::predicate<Include, std::size_t>
double maxAbsDiff(const Tensor& a, const Tensor& b, Include include, QString* where = nullptr,
                  CallSite at = CallSite::current()) {
    return detail::report(compareValues(a, b, include, at), where);
}
inline double maxAbsDiff(const Tensor& a, const Tensor& b, QString* where = nullptr,
                         CallSite at = CallSite::current()) {
    return detail::report(compareValues(a, b, at), where);
}
template <typename Include>
requires std::predicate<Include, std::size_t>
double maxAbsDiff(std::span<const float> a, std::span<const float> b, Include include,
                  QString* where = nullptr, CallSite at = CallSite::current()) {
    return detail::report(compareValues(a, b, include, at), where);
}
inline double maxAbsDiff(std::span<const float> a, std::span<const float> b,
                         QString* where = nullptr, CallSite at = CallSite::current()) {
    return detail::report(compareValues(a, b, at), where);
}

// Largest |a - b| over max(1, largest |b|): for outputs whose magnitude grows with the input.
inline double scaledMaxAbsDiff(const Tensor& a, const Tensor& b, QString* where = nullptr,
                               CallSite at = CallSite::current()) {
    const Difference d = compareValues(a, b, at);
    return detail::report(d, where) / d.scale;
}

// The two are comparable and differ somewhere by more than `least`. Why not `maxAbsDiff > least`:
// that holds for a NaN output too, and a check that a change has an effect must not pass on one.
inline bool differsBy(const Tensor& a, const Tensor& b, double least, QString* where = nullptr) {
    const Difference d = compareValues(a, b);
    return detail::report(d, where) > least && d.comparable();
}

// As maxAbsDiff, but an element that is NaN on both sides is skipped: for outputs that mark an
// undefined element with NaN by design (the query-key embedding's padded tokens). A NaN on one
// side only, an infinity, a size mismatch or nothing compared still fail.
inline double maxAbsDiffSameNan(std::span<const float> a, std::span<const float> b,
                                QString* where = nullptr, CallSite at = CallSite::current()) {
    if (a.size() == b.size())
        for (std::size_t i = 0; i < a.size(); ++i)
            if (std::isnan(a[i]) != std::isnan(b[i])) {
                if (where) *where = "NaN on one side at " + detail::element(i, a[i], b[i]);
                return kNotComparable;
            }
    return maxAbsDiff(
        a, b, [&](std::size_t i) { return !std::isnan(b[i]); }, where, at);
}

// Every element is finite, and there is one at least: for the parts of an output that no
// reference covers (a padded query's row), which must still be defined.
inline bool allFinite(std::span<const float> values, QString* where = nullptr) {
    const Difference d = compareValues(values, values);
    if (where) *where = d.where;
    return d.comparable();
}

// The largest errorOf(i) over i < n, for errors the caller measures its own way (relative to a
// double-precision reference, say); +inf, with the index, for the first error that is NaN or
// infinite, and for n = 0.
template <typename Error>
requires std::regular_invocable<Error, std::size_t>
double worstError(std::size_t n, Error errorOf, QString* where = nullptr) {
    if (n == 0) {
        if (where) *where = "nothing compared (empty)";
        return kNotComparable;
    }
    double worst = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        const double e = double(errorOf(i));
        if (!std::isfinite(e)) {
            if (where) *where = QString("error not finite at index %1: %2").arg(i).arg(e);
            return kNotComparable;
        }
        if (e > worst || i == 0) {
            worst = e;
            if (where) *where = QString("index %1: error %2").arg(i).arg(e, 0, 'g', 6);
        }
    }
    return worst;
}

} // namespace headlight::test
