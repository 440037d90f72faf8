#include "model/families/lm_heads.h"

#include "model/weight_reader.h"

namespace headlight::families {
namespace {
// The head's [V, D] matrix `name`, left in its mapped file in the stored dtype where it can be
// (as the token embedding is), else widened: an 8B model's head is 2.1 GB as f32.
void readHeadMatrix(const WeightReader& reader, const std::string& name, const ModelSpec& spec,
                    HostLmHead& head) {
    head.stored = reader.mapped(name, {spec.vocabSize, spec.hidden});
    if (!head.stored.valid()) head.weight = reader.get(name, {spec.vocabSize, spec.hidden});
}

// An untied head's weight [V, D] under `name`, or no head, with `absence` saying why.
HostLmHead untiedHead(const io::Checkpoint& checkpoint, const ModelSpec& spec,
                      std::set<std::string>& read, const std::string& name,
                      const std::string& absence) {
    HostLmHead head;
    if (!checkpoint.contains(name)) {
        head.absence = absence;
        return head;
    }
    head.kind = HostLmHead::Kind::Untied;
    readHeadMatrix(WeightReader(checkpoint, "", read), name, spec, head);
    return head;
}
} // namespace

HostLmHead readCausalLmHead(const io::Checkpoint& checkpoint, const ModelSpec& spec,
                            std::set<std::string>& read) {
    if (spec.tieEmbeddings) return readTiedHead(checkpoint, spec, read);
    return untiedHead(checkpoint, spec, read, "lm_head.weight",
                      "this checkpoint has no LM head: tie_word_embeddings is false and it "
                      "stores no lm_head.weight");
}

HostLmHead readEmbedOutHead(const io::Checkpoint& checkpoint, const ModelSpec& spec,
                            std::set<std::string>& read) {
    return untiedHead(checkpoint, spec, read, "embed_out.weight",
                      "this checkpoint has no LM head: it stores no embed_out.weight (a "
                      "GPTNeoXModel, not GPTNeoXForCausalLM)");
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
    // Tied, HF makes the decoder the word embedding whatever decoder.weight holds: it is still
    // checked when stored, then dropped.
    if (!spec.tieEmbeddings || checkpoint.contains(p + "decoder.weight"))
        readHeadMatrix(r, "decoder.weight", spec, head);
    if (spec.tieEmbeddings) {
        head.weight = Tensor();
        head.stored = {};
    }
    return head;
}

HostLmHead readTiedHead(const io::Checkpoint&, const ModelSpec&, std::set<std::string>&) {
    HostLmHead head;
    head.kind = HostLmHead::Kind::Tied;
    return head;
}
} // namespace headlight::families
