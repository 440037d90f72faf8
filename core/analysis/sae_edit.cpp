#include "analysis/sae_edit.h"

#include <QString>
#include <cmath>
#include <stdexcept>

namespace headlight::analysis {

const char* saeSpliceName(SaeSplice splice) {
    switch (splice) {
    case SaeSplice::None:
        return "none";
    case SaeSplice::WithError:
        return "with-error";
    case SaeSplice::NoError:
        return "no-error";
    }
    return "none";
}

SaeSplice saeSpliceFromName(const std::string& name) {
    for (SaeSplice splice : {SaeSplice::None, SaeSplice::WithError, SaeSplice::NoError})
        if (name == saeSpliceName(splice)) return splice;
    throw std::invalid_argument("--splice '" + name.substr(0, 80) +
                                "' is not one of with-error, no-error, none");
}

FeatureValue parseFeatureValue(const std::string& flag, const std::string& text) {
    const QString entry = QString::fromStdString(text).trimmed();
    const qsizetype equals = entry.indexOf('=');
    bool idOk = false, valueOk = false;
    FeatureValue parsed;
    if (equals > 0) {
        const qlonglong id = entry.left(equals).toLongLong(&idOk);
        idOk = idOk && id >= 0 && id <= 100'000'000;
        parsed.feature = idOk ? int(id) : 0;
        const double value = entry.mid(equals + 1).toDouble(&valueOk);
        valueOk = valueOk && std::isfinite(value) && std::abs(value) <= 1e30;
        parsed.value = float(value);
    }
    if (!idOk || !valueOk)
        throw std::invalid_argument(flag + " '" + text.substr(0, 80) +
                                    "' is not FEATURE=VALUE (a feature id from 0 and a finite "
                                    "number), e.g. " +
                                    flag + " 12=0");
    return parsed;
}

void checkFeatureEdits(const SparseAutoencoder& sae, const SaeFeatureEdits& edits) {
    const auto check = [&](const char* flag, const std::vector<FeatureValue>& entries) {
        for (const FeatureValue& entry : entries)
            if (entry.feature >= sae.dSae)
                throw std::invalid_argument(
                    std::string(flag) + " " + std::to_string(entry.feature) +
                    ": the SAE has features 0 to " + std::to_string(sae.dSae - 1));
    };
    check("--clamp", edits.clamps);
    check("--steer", edits.steers);
    if (!edits.clamps.empty() && edits.splice == SaeSplice::None)
        throw std::invalid_argument("--clamp edits the SAE's features, which reach the pass only "
                                    "through its reconstruction: give --splice with-error or "
                                    "--splice no-error");
}

Tensor editAtHook(const SparseAutoencoder& sae, const SaeFeatureEdits& edits, const Tensor& x) {
    Tensor out = x;
    if (edits.splice != SaeSplice::None) {
        const SaeEncoding clean = encodeAndDecode(sae, x);
        Tensor features = clean.features;
        const int64_t rows = features.dim(0);
        for (const FeatureValue& clamp : edits.clamps)
            for (int64_t t = 0; t < rows; ++t)
                features.data()[t * sae.dSae + clamp.feature] = clamp.value;
        out = decodeFeatures(sae, clean, features);
        if (edits.splice == SaeSplice::WithError)
            for (std::size_t i = 0; i < out.size(); ++i)
                out.data()[i] += x.data()[i] - clean.output.data()[i];
    }
    const int64_t rows = out.dim(0);
    for (const FeatureValue& steer : edits.steers) {
        const float* direction = sae.wDec.data() + int64_t(steer.feature) * sae.dIn;
        for (int64_t t = 0; t < rows; ++t)
            for (int64_t c = 0; c < sae.dIn; ++c)
                out.data()[t * sae.dIn + c] += steer.value * direction[c];
    }
    return out;
}

int residualStreamOfHook(const SaeHook& hook) {
    return hook.point == SaeHook::Point::ResidPre ? hook.layer : hook.layer + 1;
}

variants::ResidualEdit saeResidualEdit(std::shared_ptr<const SparseAutoencoder> sae,
                                       const SaeFeatureEdits& edits, const SaeHook& hook,
                                       const std::string& hookName) {
    checkFeatureEdits(*sae, edits);
    variants::ResidualEdit edit;
    edit.layer = residualStreamOfHook(hook);
    edit.width = sae->dIn;
    edit.name = "the SAE edit at " + hookName;
    edit.rows = [sae, edits](const Tensor& x) { return editAtHook(*sae, edits, x); };
    return edit;
}
} // namespace headlight::analysis
