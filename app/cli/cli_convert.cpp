// `headlight convert --model DIR --out DIR2`: the weights of checkpoint folder DIR (any form
// Headlight reads: pytorch_model.bin, its shards, or safetensors) written as one
// DIR2/model.safetensors, each tensor in its stored dtype, with DIR's config and tokenizer files
// copied beside it. Every file is written to a temporary name and renamed when complete, so an
// interrupted run leaves no half-written file. Tied weights are written once per name.
#include "cli.h"
#include "cli_args.h"
#include "io/checkpoint.h"
#include "io/safetensors.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QTextStream>

namespace headlight::app {
namespace {
// What Hugging Face's from_pretrained reads beside the weights.
constexpr const char* kCopiedFiles[] = {
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
    "tokenizer.model",
};

void copyAtomically(const QString& from, const QString& to) {
    QFile source(from);
    if (!source.open(QIODevice::ReadOnly))
        throw CliError(from.toStdString() + ": cannot read (" + source.errorString().toStdString() +
                       ")");
    QSaveFile target(to);
    const QByteArray bytes = source.readAll();
    if (!target.open(QIODevice::WriteOnly) || target.write(bytes) != bytes.size() ||
        !target.commit())
        throw CliError(to.toStdString() + ": cannot write (" + target.errorString().toStdString() +
                       ")");
}

std::vector<io::TensorToWrite> storedTensors(const io::Checkpoint& checkpoint) {
    std::vector<io::TensorToWrite> tensors;
    for (const std::string& name : checkpoint.names()) {
        const io::TensorInfo& info = checkpoint.info(name);
        io::TensorToWrite tensor;
        tensor.name = name;
        tensor.shape = info.shape;
        tensor.storedDType = info.dtype;
        tensor.stored = checkpoint.storedBytes(name);
        tensors.push_back(std::move(tensor));
    }
    return tensors;
}

int runConvert(const CliArgs& parsed) {
    const QString model = parsed.required("--model");
    const QString out = parsed.required("--out");
    const io::Checkpoint checkpoint(model.toStdString());
    if (QFileInfo(out).exists() &&
        QFileInfo(out).canonicalFilePath() == QFileInfo(model).canonicalFilePath())
        throw CliError("--out is the model folder itself; give another folder");
    if (!QDir().mkpath(out)) throw CliError("cannot create the folder " + out.toStdString());

    const QString weights = QDir(out).filePath("model.safetensors");
    io::writeSafetensors(weights.toStdString(), storedTensors(checkpoint), {{"format", "pt"}});
    QStringList copied;
    for (const char* name : kCopiedFiles) {
        const QString source = QDir(model).filePath(name);
        if (!QFileInfo(source).isFile()) continue;
        copyAtomically(source, QDir(out).filePath(name));
        copied << name;
    }
    QTextStream(stdout) << "wrote " << weights << " (" << checkpoint.names().size()
                        << " tensors); copied "
                        << (copied.isEmpty() ? "nothing" : copied.join(", ")) << "\n";
    return 0;
}
} // namespace

CliCommand convertCommand() {
    return {
        QStringLiteral("convert"),
        QStringLiteral("write a checkpoint folder's weights (e.g. pytorch_model.bin) as "
                       "model.safetensors in a new folder, with its config and tokenizer files"),
        {QStringLiteral("--model DIR --out DIR2")},
        {},
        {{"--model", "DIR",
          "the checkpoint folder (pytorch_model.bin, its shards, or safetensors)"},
         {"--out", "DIR2", "the folder to write model.safetensors and the copied files into"}},
        {QStringLiteral("headlight convert --model ~/hub/gpt2 --out ~/hub/gpt2-safetensors")},
        &runConvert,
    };
}
} // namespace headlight::app
