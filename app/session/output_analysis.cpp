#include "output_analysis.h"

#include <QByteArray>

namespace headlight::app {
namespace {

// GPT-2's bytes_to_unicode, inverted: printable Latin-1 bytes stand for themselves, the others
// were shifted to U+0100 onwards in byte order.
bool printableByte(uint c) {
    return (c >= 33 && c <= 126) || (c >= 161 && c <= 172) || (c >= 174 && c <= 255);
}

QString decodeByteLevel(const QString& spelled) {
    std::vector<uint> shifted;
    for (uint b = 0; b < 256; ++b)
        if (!printableByte(b)) shifted.push_back(b);
    QByteArray bytes;
    for (uint c : spelled.toUcs4()) {
        if (c < 256 && printableByte(c))
            bytes.append(char(c));
        else if (c >= 256 && c - 256 < shifted.size())
            bytes.append(char(shifted[c - 256]));
        else
            return spelled; // not a byte-level spelling: show it as the vocabulary has it
    }
    // Why hex: a token holding part of a character (byte-level BPE splits them) decodes to U+FFFD.
    const QString text = QString::fromUtf8(bytes);
    return text.contains(QChar::ReplacementCharacter)
               ? QStringLiteral("⟨%1⟩").arg(QString::fromLatin1(bytes.toHex(' ')))
               : text;
}

QString visibleWhiteSpace(QString text) {
    text.replace(QLatin1Char(' '), QStringLiteral("␣"));
    text.replace(QLatin1Char('\n'), QStringLiteral("↵"));
    text.replace(QLatin1Char('\t'), QStringLiteral("⇥"));
    return text;
}

void nameTokens(const LoadedModel& model, const std::vector<int32_t>& ids, OutputAnalysis& out) {
    for (int32_t id : ids)
        if (!out.tokenText.count(id))
            out.tokenText[id] = vocabularyLabel(model.tokenizer.get(), id);
}

Trace exactPass(const LoadedModel& model, const ModelInput& input) {
    CaptureRequest capture;
    capture.hiddenStates = true;
    capture.logits = true;
    return model.model->forward(input, capture);
}
} // namespace

QString vocabularyLabel(const tokenize::Tokenizer* tokenizer, int32_t id) {
    if (!tokenizer) return QStringLiteral("#%1").arg(id);
    const QString spelled = QString::fromStdString(tokenizer->tokenString(id));
    if (spelled.isEmpty()) return QStringLiteral("#%1").arg(id);
    if (tokenizer->kind().find("byte") != std::string::npos)
        return visibleWhiteSpace(decodeByteLevel(spelled));
    return visibleWhiteSpace(QString(spelled).replace(QStringLiteral("▁"), QStringLiteral(" ")));
}

QString OutputAnalysis::textOf(int32_t id) const {
    const auto found = tokenText.find(id);
    return found == tokenText.end() ? QStringLiteral("#%1").arg(id) : found->second;
}

OutputAnalysis analyseOutput(const LoadedModel& model, const ModelInput& input,
                             const Trace& variantTrace, const variants::VariantSpec& variant) {
    OutputAnalysis out;
    const TransformerModel& transformer = *model.model;
    if (!transformer.hasLmHead()) {
        out.note = QString::fromStdString(transformer.lmHeadAbsence());
        return out;
    }
    try {
        out.lens = analysis::logitLens(transformer, variantTrace);
        nameTokens(model, out.lens->top, out);
    } catch (const ModelError& error) {
        out.note = QString::fromUtf8(error.what());
    }
    if (variant.isVanilla()) return out;
    out.effect = analysis::outputEffect(exactPass(model, input), variantTrace);
    nameTokens(model, out.effect->exactTop, out);
    nameTokens(model, out.effect->variantTop, out);
    nameTokens(model, input.ids, out);
    return out;
}
} // namespace headlight::app
