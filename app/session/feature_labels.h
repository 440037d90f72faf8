#pragma once
// Feature descriptions from a Neuronpedia export read offline: the files
// v1/MODEL/SOURCE/explanations/batch-N.jsonl.gz of its public datasets, one JSON object per line
// with "modelId", "layer" (the source, e.g. "6-res-jb"), "index" (the feature, a string) and
// "description" (docs/features.md). A feature with several explanations keeps the first, in
// batch order. Nothing is fetched: the user downloads the files.

#include <QString>
#include <map>
#include <stdexcept>

namespace headlight::app {

struct FeatureLabels {
    QString path;                        // the file or folder read
    QString source;                      // "MODEL/SOURCE" as the export names them
    std::map<int, QString> descriptions; // by feature
    int explanations = 0;                // lines read

    QString of(int feature) const; // empty when the export has none
};

class FeatureLabelsError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A .jsonl.gz or .jsonl file, or a folder of them (read in natural order: batch-2 before
// batch-10). Throws FeatureLabelsError with a one-line reason naming the file: unreadable, not
// gzip, truncated, over 1 GiB inflated, a line that is not an explanation, or two sources.
FeatureLabels readFeatureLabels(const QString& path);
} // namespace headlight::app
