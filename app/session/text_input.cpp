#include "text_input.h"

#include <QRegularExpression>
#include <stdexcept>

namespace headlight::app {
namespace {

PreparedText fromIds(const QString& text) {
    PreparedText prepared;
    static const QRegularExpression separators(QStringLiteral("[\\s,]+"));
    for (const QString& part : text.split(separators, Qt::SkipEmptyParts)) {
        bool ok = false;
        const int id = part.toInt(&ok);
        if (!ok)
            throw std::invalid_argument("this checkpoint has no tokenizer: type token ids, not '" +
                                        part.toStdString() + "'");
        prepared.input.ids.push_back(id);
        prepared.labels << part;
    }
    return prepared;
}

// A token of white space only, made visible: ␣ for a space, ↵ for a line break, ⇥ for a tab
// (byte-level vocabularies spell them Ġ, Ċ and ĉ, which mean nothing to a reader).
QString visibleSpace(const QString& slice) {
    QString label;
    for (const QChar c : slice)
        label += c == QLatin1Char('\n')   ? QStringLiteral("↵")
                 : c == QLatin1Char('\t') ? QStringLiteral("⇥")
                                          : QStringLiteral("␣");
    return label;
}

// The text a token covers, by code-point offsets; the vocabulary's spelling where it covers none.
QString labelOf(const tokenize::Encoding& encoding, std::size_t i, const QList<uint>& codePoints) {
    const auto [begin, end] = encoding.offsets[i];
    const QString slice = textSliceLabel(codePoints, begin, end);
    return slice.isEmpty() ? QString::fromStdString(encoding.tokens[i]) : slice;
}
} // namespace

QString textSliceLabel(const QList<uint>& codePoints, int begin, int end) {
    if (end <= begin || begin < 0 || end > codePoints.size()) return {};
    const QString slice = QString::fromUcs4(
        reinterpret_cast<const char32_t*>(codePoints.data()) + begin, end - begin);
    return slice.trimmed().isEmpty() ? visibleSpace(slice) : slice.trimmed();
}

PreparedText prepareText(const tokenize::Tokenizer* tokenizer, const QString& text) {
    if (!tokenizer) return fromIds(text);
    PreparedText prepared;
    if (text.trimmed().isEmpty()) return prepared;
    const tokenize::Encoding encoding = tokenizer->encode(text.toStdString());
    const QList<uint> codePoints = text.toUcs4();
    for (std::size_t i = 0; i < encoding.ids.size(); ++i) {
        prepared.input.ids.push_back(encoding.ids[i]);
        prepared.labels << labelOf(encoding, i, codePoints);
    }
    prepared.spans = encoding.offsets;
    prepared.input.tokenTypes.assign(encoding.typeIds.begin(), encoding.typeIds.end());
    prepared.kinds = analysis::classifyTokens(
        std::u32string(reinterpret_cast<const char32_t*>(codePoints.data()),
                       std::size_t(codePoints.size())),
        encoding.offsets);
    return prepared;
}
} // namespace headlight::app
