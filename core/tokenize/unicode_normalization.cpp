#include "unicode_normalization.h"

#include <QChar>
#include <QList>
#include <QString>
#include <algorithm>

namespace headlight::tokenize {
namespace {

QString::NormalizationForm qtForm(NormalForm form) {
    switch (form) {
    case NormalForm::NFC:
        return QString::NormalizationForm_C;
    case NormalForm::NFD:
        return QString::NormalizationForm_D;
    case NormalForm::NFKC:
        return QString::NormalizationForm_KC;
    case NormalForm::NFKD:
        break;
    }
    return QString::NormalizationForm_KD;
}

bool composes(NormalForm form) {
    return form == NormalForm::NFC || form == NormalForm::NFKC;
}

std::u32string toU32(const QString& text) {
    const QList<uint> units = text.toUcs4();
    return std::u32string(units.begin(), units.end());
}

std::u32string decomposeChar(char32_t c, NormalForm form) {
    if (c < 0xA0) return std::u32string(1, c);
    const bool compatible = form == NormalForm::NFKC || form == NormalForm::NFKD;
    const auto full = compatible ? QString::NormalizationForm_KD : QString::NormalizationForm_D;
    return toU32(QString::fromUcs4(&c, 1).normalized(full));
}

int combiningClass(char32_t c) {
    return c < 0x300 ? 0 : QChar::combiningClass(c);
}

// Full decomposition with canonical reordering: non-starters are stably sorted by combining
// class up to the next starter, carrying their change with them.
std::vector<CharChange> decompose(const std::u32string& text, NormalForm form) {
    std::vector<CharChange> out;
    size_t pending = 0; // start of the run of non-starters not yet sorted
    const auto sortPending = [&] {
        std::stable_sort(out.begin() + pending, out.end(),
                         [](const CharChange& a, const CharChange& b) {
                             return combiningClass(a.c) < combiningClass(b.c);
                         });
        pending = out.size();
    };
    for (char32_t c : text) {
        bool first = true;
        for (char32_t piece : decomposeChar(c, form)) {
            if (combiningClass(piece) == 0) sortPending();
            out.push_back({piece, first ? 0 : 1});
            first = false;
        }
    }
    sortPending();
    return out;
}

// The primary composite of `starter` + `next`, if any. No composite has a second character below
// U+0300, which keeps plain text off the slow path.
std::optional<char32_t> compose(char32_t starter, char32_t next) {
    if (next < 0x300) return std::nullopt;
    const char32_t pair[] = {starter, next};
    const std::u32string composed =
        toU32(QString::fromUcs4(pair, 2).normalized(QString::NormalizationForm_C));
    if (composed.size() != 1) return std::nullopt;
    return composed[0];
}

// Canonical composition over a decomposed sequence, following the crate's state machine so the
// changes come out the same: a composite inherits the starter's change, minus one per absorbed
// character; blocked marks wait in `buffer` and are emitted after the starter.
std::vector<CharChange> recompose(const std::vector<CharChange>& decomposed) {
    std::vector<CharChange> out;
    std::vector<CharChange> buffer;
    std::optional<CharChange> composee;
    int lastClass = -1; // -1: nothing buffered since the composee
    const auto flush = [&] {
        if (composee) out.push_back(*composee);
        out.insert(out.end(), buffer.begin(), buffer.end());
        buffer.clear();
    };
    for (const CharChange& item : decomposed) {
        const int itemClass = combiningClass(item.c);
        if (!composee) {
            if (itemClass != 0) {
                out.push_back(item);
                continue;
            }
            composee = item;
            continue;
        }
        const bool blocked = lastClass >= 0 && lastClass >= itemClass;
        const std::optional<char32_t> composite =
            blocked ? std::nullopt : compose(composee->c, item.c);
        if (composite) {
            composee = CharChange{*composite, composee->change + item.change - 1};
            continue;
        }
        if (itemClass == 0) {
            flush();
            composee = item;
            lastClass = -1;
            continue;
        }
        buffer.push_back(item);
        lastClass = itemClass;
    }
    flush();
    return out;
}
} // namespace

std::optional<std::vector<CharChange>> normalizeWithChanges(const std::u32string& text,
                                                            NormalForm form) {
    const QString original = QString::fromUcs4(text.data(), static_cast<qsizetype>(text.size()));
    if (original.normalized(qtForm(form)) == original) return std::nullopt;
    std::vector<CharChange> decomposed = decompose(text, form);
    if (!composes(form)) return decomposed;
    return recompose(decomposed);
}
} // namespace headlight::tokenize
