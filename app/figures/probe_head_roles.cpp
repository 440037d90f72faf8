#include "probe_head_roles.h"

#include "model_session.h"

namespace headlight::app {

std::shared_ptr<const ProbeHeadRoles>
scoreGeneratedProbes(const LoadedModel& model, const analysis::GeneratedProbeSet& set,
                     const variants::VariantSpec& variant,
                     const analysis::ProbeProgress& progress) {
    const ModelSpec& spec = model.model->spec();
    auto roles = std::make_shared<ProbeHeadRoles>();
    roles->probes = set;
    roles->layers = int(spec.layers);
    roles->heads = int(spec.heads);
    roles->scores = analysis::scoreProbeRoles(*model.model, analysis::generatedProbes(set, spec),
                                              {}, variant, progress);
    if (roles->scores.empty()) return nullptr;
    return roles;
}

QString probeSetPhrase(const analysis::GeneratedProbeSet& set) {
    return QStringLiteral("%1 generated probe%2 (seed %3, %4 random tokens repeated twice)")
        .arg(set.count)
        .arg(set.count == 1 ? "" : "s")
        .arg(set.seed)
        .arg(set.length);
}
} // namespace headlight::app
