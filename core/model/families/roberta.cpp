// RoBERTa (modeling_roberta.py): BERT's encoder, but position ids count from padding_idx + 1 and
// padding tokens sit at padding_idx (create_position_ids_from_input_ids).
#include "model/families/layout_helpers.h"
#include "model/families/shared_readers.h"
#include "model/model_family.h"

namespace headlight {
namespace {
constexpr families::EncoderLayerNames kRobertaLayer{
    "encoder.layer.",       "attention.self.query",   "attention.self.key",
    "attention.self.value", "attention.output.dense", "attention.output.LayerNorm",
    "intermediate.dense",   "output.dense",           "output.LayerNorm"};

void readConfig(const ConfigReader& config, ModelSpec& spec) {
    families::readBertConfig(config, spec, true);
    if (spec.padTokenId < 0) config.fail("roberta needs pad_token_id: position ids start after it");
    spec.positionOffset = spec.padTokenId + 1;
    if (spec.maxPositions <= spec.positionOffset)
        config.fail("max_position_embeddings " + std::to_string(spec.maxPositions) +
                    " leaves no positions after the padding offset " +
                    std::to_string(spec.positionOffset));
}

HostWeights readWeights(const io::Checkpoint& checkpoint, const ModelSpec& spec,
                        std::set<std::string>& read) {
    return families::readEncoderWeights(checkpoint, spec, kRobertaLayer, read);
}

bool ignoredInBase(const std::string& name) {
    return name.starts_with("pooler.") || name == "embeddings.position_ids" ||
           name == "embeddings.token_type_ids";
}

std::vector<int32_t> positionIds(const ModelSpec& spec, std::span<const int32_t> ids,
                                 std::span<const uint8_t>) {
    const int32_t padding = spec.positionOffset - 1;
    std::vector<int32_t> positions(ids.size());
    int32_t seen = 0;
    for (std::size_t t = 0; t < ids.size(); ++t) {
        const bool real = ids[t] != spec.padTokenId;
        seen += real;
        positions[t] = real ? seen + padding : padding;
    }
    return positions;
}
} // namespace

const ModelFamily kRobertaFamily{Architecture::Roberta,
                                 "roberta",
                                 "Roberta",
                                 "RoBERTa",
                                 "hidden_size",
                                 "num_attention_heads",
                                 readConfig,
                                 readWeights,
                                 families::taskHeads(),
                                 ignoredInBase,
                                 positionIds,
                                 nullptr,
                                 families::encoderEmbeddingTables};
} // namespace headlight
