#include "model/unexpected_tensors.h"

#include "model/model_family.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace headlight {

bool isLayerBuffer(const std::string& name, const std::string& before,
                   const std::vector<std::string>& afters) {
    if (!name.starts_with(before)) return false;
    std::size_t end = before.size();
    while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end])))
        ++end;
    if (end == before.size()) return false;
    const std::string rest = name.substr(end);
    return std::find(afters.begin(), afters.end(), rest) != afters.end();
}

bool ignoredOnLoad(Architecture architecture, const std::string& prefix, const std::string& name) {
    const ModelFamily& family = familyOf(architecture);
    if (std::any_of(family.taskHeads.begin(), family.taskHeads.end(),
                    [&](const std::string& head) { return name.starts_with(head); }))
        return true;
    return name.starts_with(prefix) && family.ignoredInBase(name.substr(prefix.size()));
}

void rejectUnexpectedTensors(const io::Checkpoint& checkpoint, Architecture architecture,
                             const std::string& prefix, const std::set<std::string>& read) {
    std::vector<std::string> unexpected;
    for (const std::string& name : checkpoint.names())
        if (!read.count(name) && !ignoredOnLoad(architecture, prefix, name))
            unexpected.push_back(name);
    if (unexpected.empty()) return;
    std::string more;
    if (unexpected.size() > 1) more = " and " + std::to_string(unexpected.size() - 1) + " more";
    throw io::CheckpointError(checkpoint.folder() + ": unexpected tensor '" + unexpected.front() +
                              "'" + more + ", which a " + architectureName(architecture) +
                              " model does not have (is this the architecture config.json names?)");
}
} // namespace headlight
