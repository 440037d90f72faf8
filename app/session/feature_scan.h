#pragma once
// Each SAE feature's strongest contexts over a corpus, and how often it fires there: the feature
// page's top contexts and density (docs/features.md). A scan keeps, per feature, the k strongest
// activations in one strict order (stronger first, then the earlier text, then the earlier
// position), so shards of a corpus (`features --scan --shard i/n`) merge into exactly what one
// scan over the whole corpus keeps: each shard keeps every entry of the whole top k that falls in
// its texts. The file is JSON (docs/features.md lists its keys), written atomically.

#include "shard_place.h"
#include "tensor/tensor.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <functional>
#include <stdexcept>
#include <vector>

namespace headlight {
class TransformerModel;
namespace tokenize {
class Tokenizer;
}
} // namespace headlight

namespace headlight::app {

struct AttachedSae;
struct PreparedText;

// The text shown around a context's token: up to this many tokens before and after it, cut to
// this many characters (a byte-level model's tokens are single characters, a BPE model's words).
constexpr int kContextBefore = 24;
constexpr int kContextAfter = 6;
constexpr int kContextCharsBefore = 40;
constexpr int kContextCharsAfter = 16;

struct FeatureContext {
    int64_t text = 0;     // the corpus line, 0-based over the whole corpus
    int64_t position = 0; // the token in that text
    float activation = 0.0f;
    QString before, token, after; // the text around the token, as the page shows it
};

struct FeatureScan {
    QString file; // the file it was read from or kept in; empty until then
    // What the shards of one scan share: model, SAE, hook, corpus and its SHA-256, the contexts
    // kept per feature and the shard count.
    QJsonObject settings;
    ShardPlace place; // {0, 1} for a whole corpus or a merge
    int64_t texts = 0;
    int64_t tokens = 0;
    QStringList failed;                           // "text N: reason" for each text skipped
    std::vector<int64_t> fired;                   // [d_sae] tokens the feature fired on (> 0)
    std::vector<std::vector<FeatureContext>> top; // [d_sae] strongest first

    int contexts() const; // settings' contexts per feature
    QString corpusName() const;
};

class FeatureScanError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// An empty scan of `dSae` features keeping `contexts` each.
FeatureScan emptyFeatureScan(int dSae, int contexts, QJsonObject settings);
// Adds text number `text`: its features [T, d_sae] and the prepared text they were read from.
void addScannedText(FeatureScan& scan, int64_t text, const Tensor& features,
                    const PreparedText& prepared, const QString& source);

// `texts` from corpus number `firstIndex` on through the model, read at the SAE's hook and
// encoded. `progress(done, total)` after each text; returning false stops the scan (the result
// then holds the texts done). A text the tokenizer, the model or the hook refuses is recorded in
// `failed` and skipped; a hook the model lacks throws std::invalid_argument before any text.
struct FeatureScanRequest {
    QStringList texts;
    int64_t firstIndex = 0;
    int contexts = 10;
    QJsonObject settings; // contexts, d_sae and hook are set here
    ShardPlace place;
    std::function<bool(int64_t done, int64_t total)> progress;
};
FeatureScan scanFeatures(const TransformerModel& model, const tokenize::Tokenizer* tokenizer,
                         const AttachedSae& sae, const FeatureScanRequest& request);

// Atomic (a temporary file renamed over `path`). Throws FeatureScanError.
void writeFeatureScan(const QString& path, const FeatureScan& scan);
// Throws FeatureScanError (one line, naming the file) for a file that is not a whole scan.
FeatureScan readFeatureScan(const QString& path);
// All n shards of one scan -> the scan of the whole corpus, place 0/1. Throws FeatureScanError
// naming the files when settings differ, or a shard is missing or given twice.
FeatureScan mergeFeatureScans(const std::vector<FeatureScan>& shards, const QStringList& paths);
} // namespace headlight::app
