#include "model/families/lm_heads.h"

#include "model/weight_reader.h"

namespace headlight::families {

HostLmHead readCausalLmHead(const io::Checkpoint& checkpoint, const ModelSpec& spec,
                            std::set<std::string>& read) {
    HostLmHead head;
    if (spec.tieEmbeddings) {
        head.kind = HostLmHead::Kind::Tied;
        return head;
    }
    if (!checkpoint.contains("lm_head.weight")) {
        head.absence = "this checkpoint has no LM head: tie_word_embeddings is false and it "
                       "stores no lm_head.weight";
        return head;
    }
    head.kind = HostLmHead::Kind::Untied;
    head.weight =
        WeightReader(checkpoint, "", read).get("lm_head.weight", {spec.vocabSize, spec.hidden});
    return head;
}

HostLmHead readEmbedOutHead(const io::Checkpoint& checkpoint, const ModelSpec& spec,
                            std::set<std::string>& read) {
    HostLmHead head;
    if (!checkpoint.contains("embed_out.weight")) {
        head.absence = "this checkpoint has no LM head: it stores no embed_out.weight (a "
                       "GPTNeoXModel, not GPTNeoXForCausalLM)";
        return head;
    }
    head.kind = HostLmHead::Kind::Untied;
    head.weight =
        WeightReader(checkpoint, "", read).get("embed_out.weight", {spec.vocabSize, spec.hidden});
    return head;
}

HostLmHead readBiasedLmHead(const io::Checkpoint& checkpoint, const ModelSpec& spec,
                            std::set<std::string>& read) {
    HostLmHead head = readCausalLmHead(checkpoint, spec, read);
    if (head.kind == HostLmHead::Kind::Untied)
        head.bias = WeightReader(checkpoint, "", read).get("lm_head.bias", {spec.vocabSize});
    return head;
}

HostLmHead readBertMaskedLmHead(const io::Checkpoint& checkpoint, const ModelSpec& spec,
                                std::set<std::string>& read) {
    HostLmHead head;
    const std::string p = "cls.predictions.";
    if (!checkpoint.contains(p + "transform.dense.weight")) {
        head.absence = "this checkpoint has no masked-LM head (cls.predictions.*): it is a base "
                       "model, not BertForMaskedLM";
        return head;
    }
    const WeightReader r(checkpoint, p, read);
    head.kind = HostLmHead::Kind::MaskedLm;
    head.transform = r.linear("transform.dense", spec.hidden, spec.hidden);
    head.transformNorm = r.layerNorm("transform.LayerNorm", spec.hidden);
    // Why both names: HF ties decoder.bias to cls.predictions.bias; older files store either.
    head.bias = checkpoint.contains(p + "bias") ? r.get("bias", {spec.vocabSize})
                                                : r.get("decoder.bias", {spec.vocabSize});
    if (checkpoint.contains(p + "decoder.bias") && checkpoint.contains(p + "bias"))
        r.get("decoder.bias", {spec.vocabSize});
    // Tied, HF makes the decoder the word embedding whatever decoder.weight holds.
    const Tensor decoder = r.optional("decoder.weight", {spec.vocabSize, spec.hidden});
    if (!spec.tieEmbeddings)
        head.weight =
            decoder.empty() ? r.get("decoder.weight", {spec.vocabSize, spec.hidden}) : decoder;
    return head;
}

HostLmHead readTiedHead(const io::Checkpoint&, const ModelSpec&, std::set<std::string>&) {
    HostLmHead head;
    head.kind = HostLmHead::Kind::Tied;
    return head;
}
} // namespace headlight::families
