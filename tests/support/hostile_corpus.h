#pragma once
// The hostile-checkpoint corpus (docs/hardening.md): folders made from a valid golden model and
// corrupted one way each, with the pieces of the one-line message that must refuse them. The
// corpus is this code, not binary files: a case copies its golden into a folder and corrupts it
// there. The CLI test (tests/unit/test_hostile_checkpoints.cpp) and the window test
// (tests/gui/test_hostile_dialogs.cpp) run the same cases.

#include "golden.h"
#include "temp_files.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <sys/stat.h>
#include <vector>

namespace headlight::test {

inline QByteArray number(quint64 value) {
    return QByteArray::number(value);
}

// One tensor of a safetensors header, its fields kept as raw JSON text so that a case can write
// what no valid writer would: a dtype nobody knows, a shape past 2^64, a name that is not UTF-8.
struct Entry {
    QByteArray key; // the name as a JSON string literal, quotes included
    QByteArray dtype;
    QByteArray shape;
    QByteArray offsets;
    quint64 begin = 0, end = 0;

    void setOffsets(quint64 newBegin, quint64 newEnd) {
        begin = newBegin;
        end = newEnd;
        offsets = "[" + number(begin) + "," + number(end) + "]";
    }
};

// A safetensors file taken apart into its header entries (in data order) and its data section,
// to be corrupted and put back together.
struct Weights {
    QByteArray metadata; // the raw JSON value of __metadata__, or empty
    std::vector<Entry> entries;
    QByteArray data;

    static Weights read(const QString& path) {
        const QByteArray file = readFile(path);
        quint64 length = 0;
        std::memcpy(&length, file.constData(), 8);
        const QJsonObject header = QJsonDocument::fromJson(file.mid(8, qsizetype(length))).object();
        Weights weights;
        weights.data = file.mid(8 + qsizetype(length));
        for (auto it = header.begin(); it != header.end(); ++it) {
            const QJsonObject tensor = it.value().toObject();
            if (it.key() == "__metadata__") {
                weights.metadata = QJsonDocument(tensor).toJson(QJsonDocument::Compact);
                continue;
            }
            Entry entry;
            entry.key = "\"" + it.key().toUtf8() + "\"";
            entry.dtype = "\"" + tensor["dtype"].toString().toUtf8() + "\"";
            entry.shape = QJsonDocument(tensor["shape"].toArray()).toJson(QJsonDocument::Compact);
            const QJsonArray offsets = tensor["data_offsets"].toArray();
            entry.setOffsets(quint64(offsets[0].toDouble()), quint64(offsets[1].toDouble()));
            weights.entries.push_back(entry);
        }
        std::sort(weights.entries.begin(), weights.entries.end(),
                  [](const Entry& a, const Entry& b) { return a.begin < b.begin; });
        return weights;
    }

    Entry& entry(const QByteArray& name) {
        for (Entry& e : entries)
            if (e.key == "\"" + name + "\"") return e;
        qFatal("no tensor %s in the golden model", name.constData());
    }
    void remove(const QByteArray& name) {
        const Entry& doomed = entry(name);
        entries.erase(entries.begin() + (&doomed - entries.data()));
    }

    QByteArray header() const {
        QByteArray json = "{";
        if (!metadata.isEmpty()) json += "\"__metadata__\":" + metadata;
        for (const Entry& e : entries)
            json += QByteArray(json.size() > 1 ? "," : "") + e.key + ":{\"dtype\":" + e.dtype +
                    ",\"shape\":" + e.shape + ",\"data_offsets\":" + e.offsets + "}";
        return json + "}";
    }
    QByteArray file() const {
        const QByteArray text = header();
        return littleEndian64(quint64(text.size())) + text + data;
    }
    void setFloat(const QByteArray& name, qsizetype index, float value) {
        std::memcpy(data.data() + entry(name).begin + index * 4, &value, 4);
    }
};

// What a case does to its copy of the golden folder.
using Corruption = std::function<void(const QDir&)>;

inline Corruption onWeights(std::function<void(Weights&)> edit) {
    return [edit](const QDir& folder) {
        const QString path = folder.filePath("model.safetensors");
        Weights weights = Weights::read(path);
        edit(weights);
        writeFile(path, weights.file());
    };
}

inline Corruption onFileBytes(const char* name, std::function<void(QByteArray&)> edit) {
    return [name, edit](const QDir& folder) {
        QByteArray bytes = readFile(folder.filePath(name));
        edit(bytes);
        writeFile(folder.filePath(name), bytes);
    };
}

inline Corruption onJson(const char* name, std::function<void(QJsonObject&)> edit) {
    return [name, edit](const QDir& folder) {
        QJsonObject json = QJsonDocument::fromJson(readFile(folder.filePath(name))).object();
        edit(json);
        writeFile(folder.filePath(name), QJsonDocument(json).toJson());
    };
}

inline Corruption replaceFile(const char* name, QByteArray contents) {
    return [name, contents](const QDir& folder) { writeFile(folder.filePath(name), contents); };
}

// The header length prefix of model.safetensors, set to `length`.
inline Corruption headerLength(quint64 length) {
    return onFileBytes("model.safetensors",
                       [length](QByteArray& file) { file.replace(0, 8, littleEndian64(length)); });
}

struct HostileCase {
    const char* name;
    const char* model; // the golden folder it starts from
    Corruption corrupt;
    QStringList expected; // pieces of the one stderr line, in order
    QStringList input = {"--ids", "2,10,11,3"};
};

inline const QByteArray kBias = "embeddings.LayerNorm.bias";     // [32] at [0, 128)
inline const QByteArray kWeight = "embeddings.LayerNorm.weight"; // [32] at [128, 256)
inline const QByteArray kQuery = "encoder.layer.0.attention.self.query.weight";

inline std::vector<HostileCase> hostileCases() {
    return {
        // The file itself.
        {"truncated to 4 bytes",
         "bert",
         onFileBytes("model.safetensors", [](QByteArray& file) { file.truncate(4); }),
         {"model.safetensors: file is 4 bytes, too short for the 8-byte header length"}},
        {"truncated in the data",
         "bert",
         onFileBytes("model.safetensors", [](QByteArray& file) { file.chop(1000); }),
         {"model.safetensors: tensor '", "': byte range [", ") lies outside the ",
          "-byte data section"}},
        {"header length beyond the file",
         "bert",
         headerLength(200'000),
         {"model.safetensors: header length 200000 runs past the end of the file (",
          "bytes follow"}},
        {"header of 100 MB claimed",
         "bert",
         headerLength(100'000'001),
         {"model.safetensors: header length 100000001 exceeds the 100 MB limit"}},
        {"header length of 2^64 - 1",
         "bert",
         headerLength(std::numeric_limits<quint64>::max()),
         {"header length 18446744073709551615 exceeds the 100 MB limit"}},
        {"model.safetensors is a FIFO",
         "bert",
         [](const QDir& folder) {
             QFile::remove(folder.filePath("model.safetensors"));
             if (::mkfifo(QFile::encodeName(folder.filePath("model.safetensors")).constData(),
                          0600) != 0)
                 qFatal("mkfifo failed");
         },
         {"model.safetensors: not a regular file"}},
        {"model.safetensors links to /dev/zero",
         "bert",
         [](const QDir& folder) {
             QFile::remove(folder.filePath("model.safetensors"));
             QFile::link("/dev/zero", folder.filePath("model.safetensors"));
         },
         {"model.safetensors: not a regular file"}},

        // The header's text.
        {"header is not UTF-8",
         "bert",
         onFileBytes("model.safetensors",
                     [](QByteArray& file) { file[file.indexOf("LayerNorm")] = char(0xFF); }),
         {"model.safetensors: header is not valid UTF-8 (byte ", " of the header)"}},
        {"header is not JSON",
         "bert",
         onFileBytes("model.safetensors",
                     [](QByteArray& file) {
                         quint64 length = 0;
                         std::memcpy(&length, file.constData(), 8);
                         file[file.lastIndexOf('}', 8 + qsizetype(length))] = ' ';
                     }),
         {"model.safetensors: header is not valid JSON (byte ",
          " of the header: expected '}' or ',' in an object)"}},
        {"header is a JSON array",
         "bert",
         onFileBytes("model.safetensors",
                     [](QByteArray& file) {
                         quint64 length = 0;
                         std::memcpy(&length, file.constData(), 8);
                         file.replace(8, qsizetype(length), QByteArray(qsizetype(length), ' '));
                         file[8] = '[';
                         file[8 + qsizetype(length) - 1] = ']';
                     }),
         {"model.safetensors: header is an array, not a JSON object"}},

        // The tensor table.
        {"duplicate tensor names",
         "bert",
         onWeights([](Weights& w) {
             const Entry copy = w.entry(kBias);
             w.entries.push_back(copy);
         }),
         {"model.safetensors: duplicate tensor name 'embeddings.LayerNorm.bias' in the header"}},
        {"duplicate name with a newline in it",
         "bert",
         onWeights([](Weights& w) {
             w.entry(kBias).key = "\"evil\\nname\"";
             const Entry copy = w.entry("evil\\nname");
             w.entries.push_back(copy);
         }),
         {"duplicate tensor name 'evil\\nname' in the header"}},
        {"overlapping ranges",
         "bert",
         onWeights([](Weights& w) { w.entry(kWeight).setOffsets(64, 192); }),
         {"model.safetensors: tensors 'embeddings.LayerNorm.bias' [0, 128) and "
          "'embeddings.LayerNorm.weight' [64, 192) overlap"}},
        {"range beyond the data section",
         "bert",
         onWeights([](Weights& w) {
             const quint64 size = quint64(w.data.size());
             w.entry(kBias).setOffsets(size, size + 128);
         }),
         {"model.safetensors: tensor 'embeddings.LayerNorm.bias': byte range [",
          ") lies outside the "}},
        {"range that ends before it begins",
         "bert",
         onWeights([](Weights& w) { w.entry(kBias).offsets = "[128,0]"; }),
         {"tensor 'embeddings.LayerNorm.bias': data_offsets [128, 0] end before they begin"}},
        {"shape times dtype is not the range",
         "bert",
         onWeights([](Weights& w) { w.entry(kBias).shape = "[33]"; }),
         {"model.safetensors: tensor 'embeddings.LayerNorm.bias' byte range [0, 128) does not "
          "match shape [33] × F32 (132 bytes)"}},
        {"dtype size is not the range",
         "bert",
         onWeights([](Weights& w) { w.entry(kBias).dtype = "\"F16\""; }),
         {"does not match shape [32] × F16 (64 bytes)"}},
        {"shape elements overflow 64 bits",
         "bert",
         onWeights([](Weights& w) { w.entry(kBias).shape = "[4294967296,4294967296,4294967296]"; }),
         {"tensor 'embeddings.LayerNorm.bias': shape [4294967296, 4294967296, 4294967296] "
          "overflows 64 bits"}},
        {"shape bytes overflow 64 bits",
         "bert",
         onWeights([](Weights& w) { w.entry(kBias).shape = "[2147483648,2147483648]"; }),
         {"shape [2147483648, 2147483648] × F32 overflows 64 bits"}},
        {"dimension beyond 2^53",
         "bert",
         onWeights([](Weights& w) { w.entry(kBias).shape = "[18446744073709551616]"; }),
         {"shape[0] must be an integer from 0 to 2^53, not 18446744073709551616"}},
        {"negative dimension",
         "bert",
         onWeights([](Weights& w) { w.entry(kBias).shape = "[-32]"; }),
         {"shape[0] must be an integer from 0 to 2^53, not -32"}},
        {"unknown dtype",
         "bert",
         onWeights([](Weights& w) { w.entry(kBias).dtype = "\"F8_E4M3\""; }),
         {"tensor 'embeddings.LayerNorm.bias': unknown dtype 'F8_E4M3' (supported: F64, F32"}},

        // The tensors against config.json.
        {"missing tensor",
         "bert",
         onWeights([](Weights& w) { w.remove("encoder.layer.1.output.dense.weight"); }),
         {": missing tensor 'encoder.layer.1.output.dense.weight'"}},
        {"no tensor of the architecture",
         "bert",
         onWeights([](Weights& w) { w.remove("embeddings.word_embeddings.weight"); }),
         {"no tensor 'embeddings.word_embeddings.weight', 'bert.embeddings.word_embeddings.weight'",
          "is this the architecture config.json names?"}},
        {"wrong shape for the config",
         "bert",
         onJson("config.json", [](QJsonObject& c) { c["intermediate_size"] = 48; }),
         {"tensor 'encoder.layer.0.intermediate.dense.weight' has shape [64, 32] but config.json "
          "implies [48, 32]"}},
        {"vocab_size disagrees with the embedding",
         "bert",
         onJson("config.json", [](QJsonObject& c) { c["vocab_size"] = 500; }),
         {"tensor 'embeddings.word_embeddings.weight' has shape [387, 32] but config.json implies "
          "[500, 32]"}},
        {"tokenizer vocabulary larger than the embedding",
         "bert",
         onFileBytes("vocab.txt", [](QByteArray& vocab) { vocab += "hostileword\n"; }),
         {"token id 387 is outside the vocabulary of 387"},
         {"--text", "hostileword"}},
        {"NaN weight",
         "bert",
         onWeights([](Weights& w) { w.setFloat(kQuery, 5, std::nanf("")); }),
         {"tensor 'encoder.layer.0.attention.self.query.weight' contains NaN or Inf values"}},
        {"Inf weight",
         "gpt2",
         onWeights([](Weights& w) {
             w.setFloat("transformer.h.0.mlp.c_fc.weight", 0,
                        -std::numeric_limits<float>::infinity());
         }),
         {"tensor 'transformer.h.0.mlp.c_fc.weight' contains NaN or Inf values"}},

        // config.json.
        {"a billion layers",
         "bert",
         onJson("config.json", [](QJsonObject& c) { c["num_hidden_layers"] = 1'000'000'000; }),
         {"config.json: num_hidden_layers 1000000000 is out of range (1 to 10000)"}},
        {"hidden size of 10^15",
         "llama",
         onJson("config.json", [](QJsonObject& c) { c["hidden_size"] = 1e15; }),
         {"config.json: hidden_size 1e+15 is out of range (1 to 1000000)"}},
        {"fractional heads",
         "gpt2",
         onJson("config.json", [](QJsonObject& c) { c["n_head"] = 2.5; }),
         {"config.json: n_head must be an integer, not 2.5"}},
        {"eps that underflows a float",
         "bert",
         onJson("config.json", [](QJsonObject& c) { c["layer_norm_eps"] = 1e-196; }),
         {"config.json: layer_norm_eps 1e-196 is out of range for a 32-bit float"}},
        {"unknown architecture",
         "bert",
         onJson("config.json", [](QJsonObject& c) { c["model_type"] = "mamba"; }),
         {"config.json: unsupported architecture 'mamba' (supported: bert, roberta"}},
        {"config.json is not JSON",
         "bert",
         replaceFile("config.json", "{\"model_type\": \"bert\""),
         {"config.json: invalid JSON at byte "}},
        {"no config.json",
         "bert",
         [](const QDir& folder) { QFile::remove(folder.filePath("config.json")); },
         {"config.json: file does not exist"}},

        // Weights in other forms.
        {"legacy torch.save pickle",
         "bert",
         [](const QDir& folder) {
             QFile::remove(folder.filePath("model.safetensors"));
             // A bare pickle (protocol 2), torch's pre-1.6 format: refused, never unpickled.
             writeFile(folder.filePath("pytorch_model.bin"), QByteArray("\x80\x02}q\x00.", 6));
         },
         {"pytorch_model.bin: a legacy torch.save file (not a zip archive), which Headlight does "
          "not read: re-save with a current torch"}},
        {"pickle under a name Hugging Face does not load",
         "bert",
         [](const QDir& folder) {
             QFile::remove(folder.filePath("model.safetensors"));
             writeFile(folder.filePath("model.pt"), QByteArray("\x80\x02}q\x00.", 6));
         },
         {"only PyTorch pickle weights (model.pt) found; Headlight never executes "
          "pickles — convert them to safetensors"}},
        {"pytorch_model.bin calling os.system",
         "bert",
         [](const QDir& folder) {
             QFile::remove(folder.filePath("model.safetensors"));
             QFile::copy(HEADLIGHT_TEST_DATA "/torch/hostile/os_system.bin",
                         folder.filePath("pytorch_model.bin"));
         },
         {"pytorch_model.bin: archive/data.pkl byte 2: global 'os.system' is refused"}},
        {"shard index escapes the folder",
         "gpt2_plain",
         onFileBytes("model.safetensors.index.json",
                     [](QByteArray& index) {
                         index.replace("\"model-00002-of-00002.safetensors\"",
                                       "\"../model-00002-of-00002.safetensors\"");
                     }),
         {"model.safetensors.index.json: weight_map entry for '",
          "' names '../model-00002-of-00002.safetensors', not a .safetensors file in the folder"}},

        {"index is a folder",
         "gpt2_plain",
         [](const QDir& folder) {
             QFile::remove(folder.filePath("model.safetensors.index.json"));
             folder.mkdir("model.safetensors.index.json");
         },
         {"model.safetensors.index.json: not a regular file"}},
        {"shard is a FIFO",
         "gpt2_plain",
         [](const QDir& folder) {
             const QString shard = folder.filePath("model-00002-of-00002.safetensors");
             QFile::remove(shard);
             if (::mkfifo(QFile::encodeName(shard).constData(), 0600) != 0) qFatal("mkfifo failed");
         },
         {"model-00002-of-00002.safetensors: not a regular file"}},

        // Tokenizer files, reached with --text.
        {"vocab.txt is not UTF-8",
         "bert",
         onFileBytes("vocab.txt",
                     [](QByteArray& vocab) { vocab[vocab.indexOf("the")] = char(0xC0); }),
         {"vocab.txt line ", ": not valid UTF-8"},
         {"--text", "hello"}},
        {"vocab.txt without [CLS]",
         "bert",
         onFileBytes("vocab.txt", [](QByteArray& vocab) { vocab.replace("[CLS]", "[XLS]"); }),
         {"vocab.txt: the special token '[CLS]' is not in the vocabulary"},
         {"--text", "hello"}},
        {"merges.txt line with three tokens",
         "gpt2",
         onFileBytes("merges.txt", [](QByteArray& merges) { merges.replace("Ġ t\n", "Ġ t x\n"); }),
         {"merges.txt line 2: expected two tokens separated by a space"},
         {"--text", "hello"}},
        {"vocab.json id is not an integer",
         "gpt2",
         onFileBytes("vocab.json",
                     [](QByteArray& vocab) { vocab.replace("\"!\": 0", "\"!\": 0.5"); }),
         {"vocab.json: the id of '!' is not a non-negative integer"},
         {"--text", "hello"}},
        {"tokenizer.json is not JSON",
         "llama",
         onFileBytes("tokenizer.json", [](QByteArray& json) { json.chop(json.size() / 2); }),
         {"tokenizer.json: invalid JSON at line "},
         {"--text", "hello"}},
        {"tokenizer.json of an unsupported model",
         "llama",
         onFileBytes(
             "tokenizer.json",
             [](QByteArray& json) { json.replace("\"type\": \"BPE\"", "\"type\": \"Unigram\""); }),
         {"tokenizer.json: model: unsupported model 'Unigram'"},
         {"--text", "hello"}},
        {"tokenizer_config.json is not JSON",
         "bert",
         replaceFile("tokenizer_config.json", "{,}"),
         {"tokenizer_config.json: invalid JSON at line 1, column "},
         {"--text", "hello"}},
        {"no tokenizer files",
         "bert",
         [](const QDir& folder) { QFile::remove(folder.filePath("vocab.txt")); },
         {": no tokenizer files (tokenizer.json, vocab.txt, or vocab.json + merges.txt)"},
         {"--text", "hello"}},
    };
}

inline void copyGolden(const QString& model, const QDir& destination) {
    const QDir source(goldenRoot() + "/" + model);
    for (const QString& name : source.entryList(QDir::Files))
        if (name != "golden.json" &&
            !QFile::copy(source.filePath(name), destination.filePath(name)))
            qFatal("cannot copy %s", qPrintable(source.filePath(name)));
}
} // namespace headlight::test
