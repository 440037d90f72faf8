// Gemma Scope folders and the NumPy files under them. The .npy parser reads the header dict
// numpy writes and nothing else, in C and Fortran order, and refuses in one line a wrong magic or
// version, a header that runs past the file or is not that dict (unknown or repeated keys, a
// dtype other than a little-endian float, a bad shape) and elements that do not fill the shape
// exactly. The .npz reader adds the zip's refusals (compressed entries, entries that are not
// .npy, a CRC that does not match). Gemma Scope 1 takes its hook from the release's path or from
// --hook; Gemma Scope 2 from config.json, whose type, architecture and affine skip must agree
// with what Headlight computes and with the weights. NaN weights are refused as in SAELens
// folders.
#include "analysis/sae_hook.h"
#include "io/gemma_scope_folder.h"
#include "io/npy_array.h"
#include "io/npz_file.h"
#include "io/safetensors.h"
#include "io/torch_zip_archive.h"
#include "temp_files.h"

#include <QDir>
#include <QTest>
#include <cstring>
#include <limits>

using namespace headlight;

namespace {

const std::string kGemmaScopeData = HEADLIGHT_TEST_DATA "/sae/";

// An .npy file: the magic, version 1.0, the header padded to 64 bytes, then `elements`.
QByteArray npyBytes(const QByteArray& header, const QByteArray& elements, char major = 1) {
    QByteArray text = header;
    while ((10 + text.size() + 1) % 64 != 0)
        text.append(' ');
    text.append('\n');
    QByteArray out("\x93NUMPY", 6);
    out.append(major).append('\0');
    const auto length = quint16(text.size());
    out.append(char(length & 0xFF)).append(char(length >> 8));
    if (major != 1) out.append(2, '\0');
    return out + text + elements;
}

QByteArray floatBytes(const std::vector<float>& values) {
    return {reinterpret_cast<const char*>(values.data()), qsizetype(values.size() * 4)};
}

QString npyRefusal(const QByteArray& file) {
    try {
        io::parseNpy("a.npy", std::as_bytes(std::span(file.constData(), std::size_t(file.size()))));
    } catch (const io::CheckpointError& error) {
        return QString::fromUtf8(error.what());
    }
    return QStringLiteral("(read without a refusal)");
}

// `value` in `width` little-endian bytes; bytes past the eighth are 0 (a shift by 64 or more is
// undefined).
void appendLittle(QByteArray& out, quint64 value, int width) {
    for (int i = 0; i < width; ++i)
        out.append(i < 8 ? char((value >> (8 * i)) & 0xFF) : '\0');
}

// A zip of stored entries as numpy.savez lays them out (without ZIP64 records); `method` 8 marks
// them deflated without deflating them, which must be refused before any byte is read.
QByteArray zipOf(const std::vector<std::pair<QString, QByteArray>>& entries, int method = 0) {
    QByteArray out, directory;
    for (const auto& [name, data] : entries) {
        const uint32_t crc =
            io::crc32Of(std::as_bytes(std::span(data.constData(), std::size_t(data.size()))));
        const quint64 offset = quint64(out.size());
        for (QByteArray* part : {&out, &directory}) {
            const bool central = part == &directory;
            appendLittle(*part, central ? 0x02014b50 : 0x04034b50, 4);
            if (central) appendLittle(*part, 20, 2);
            appendLittle(*part, 20, 2);
            appendLittle(*part, 0, 2);
            appendLittle(*part, quint64(method), 2);
            appendLittle(*part, 0, 4);
            appendLittle(*part, crc, 4);
            appendLittle(*part, quint64(data.size()), 4);
            appendLittle(*part, quint64(data.size()), 4);
            appendLittle(*part, quint64(name.size()), 2);
            appendLittle(*part, 0, 2);
            if (central) appendLittle(*part, 0, 2 + 2 + 2 + 4);
            if (central) appendLittle(*part, offset, 4);
            part->append(name.toUtf8());
        }
        out.append(data);
    }
    const quint64 directoryOffset = quint64(out.size());
    out.append(directory);
    appendLittle(out, 0x06054b50, 4);
    appendLittle(out, 0, 4);
    appendLittle(out, entries.size(), 2);
    appendLittle(out, entries.size(), 2);
    appendLittle(out, quint64(directory.size()), 4);
    appendLittle(out, directoryOffset, 4);
    appendLittle(out, 0, 2);
    return out;
}

QByteArray npyOf(const std::vector<int>& shape, const std::vector<float>& values) {
    QByteArray dims;
    for (int d : shape)
        dims += QByteArray::number(d) + ", ";
    return npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }",
                    floatBytes(values));
}

// A 2 → 3 JumpReLU SAE's arrays, every value finite.
std::vector<std::pair<QString, QByteArray>> gemmaScopeArrays() {
    return {{"W_enc.npy", npyOf({2, 3}, {1, -1, 2, 0, 1, -1})},
            {"W_dec.npy", npyOf({3, 2}, {1, 0, 0, 2, 1, 1})},
            {"b_enc.npy", npyOf({3}, {0, 0.5f, 0})},
            {"b_dec.npy", npyOf({2}, {0.5f, -0.5f})},
            {"threshold.npy", npyOf({3}, {0.5f, 1, 0.25f})}};
}

QString folderRefusal(const QString& folder, const std::string& hook = {}) {
    try {
        io::readSaeFolder(folder.toStdString(), hook);
    } catch (const io::SaeFolderError& error) {
        return QString::fromUtf8(error.what());
    }
    return QStringLiteral("(read without a refusal)");
}
} // namespace

class TestGemmaScopeFolder : public QObject {
    Q_OBJECT
    test::ScratchDir scratch_;

    QString npzFolder(const QString& path, const QByteArray& npz) {
        const QString folder = scratch_.filePath(path);
        QDir().mkpath(folder);
        test::writeFile(folder + "/params.npz", npz);
        return folder;
    }

private Q_SLOTS:
    void parsesNpyInBothOrders() {
        const std::vector<float> columnMajor = {1, 4, 2, 5, 3, 6}; // [[1, 2, 3], [4, 5, 6]]
        const QByteArray fortran = npyBytes(
            "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", floatBytes(columnMajor));
        const auto bytes =
            std::as_bytes(std::span(fortran.constData(), std::size_t(fortran.size())));
        const io::NpyArray array = io::parseNpy("f.npy", bytes);
        QCOMPARE(array.shape, (std::vector<int64_t>{2, 3}));
        QVERIFY(array.fortranOrder);
        QCOMPARE(io::npyToF32(array), (std::vector<float>{1, 2, 3, 4, 5, 6}));
        // version 2.0 (a 4-byte header length), half precision, a scalar-free 1-D shape
        const QByteArray half = npyBytes("{'shape': (2,), 'fortran_order': False, 'descr': '<f2'}",
                                         QByteArray("\x00\x3c\x00\xc0", 4), 2);
        const io::NpyArray h = io::parseNpy(
            "h.npy", std::as_bytes(std::span(half.constData(), std::size_t(half.size()))));
        QCOMPARE(io::npyToF32(h), (std::vector<float>{1.0f, -2.0f}));
    }

    void refusesHostileNpy_data() {
        QTest::addColumn<QByteArray>("file");
        QTest::addColumn<QString>("reason");
        const QByteArray six = floatBytes({1, 2, 3, 4, 5, 6});
        const QByteArray good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
        QTest::newRow("magic") << QByteArray("PK\x03\x04 not npy at all") << "no \\x93NUMPY magic";
        QByteArray version = npyBytes(good, six);
        version[6] = 9;
        QTest::newRow("version") << version << ".npy format version 9 is not 1, 2 or 3";
        QByteArray longHeader = npyBytes(good, six);
        longHeader[8] = char(0xFF);
        longHeader[9] = char(0x7F);
        QTest::newRow("header past the end") << longHeader << "runs past the";
        QTest::newRow("not a dict") << npyBytes("['descr', '<f4']", six) << "expected '{' at byte";
        QTest::newRow("unknown key")
            << npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'x': 1}", six)
            << "key 'x' is unknown or repeated";
        QTest::newRow("repeated key")
            << npyBytes("{'descr': '<f4', 'descr': '<f4', 'shape': (6,)}", six)
            << "key 'descr' is unknown or repeated";
        QTest::newRow("missing key") << npyBytes("{'descr': '<f4', 'shape': (6,)}", six)
                                     << "the header lacks descr, fortran_order or shape";
        QTest::newRow("big-endian")
            << npyBytes("{'descr': '>f4', 'fortran_order': False, 'shape': (6,)}", six)
            << "dtype '>f4' is not a little-endian float";
        QTest::newRow("integers") << npyBytes(
                                         "{'descr': '<i4', 'fortran_order': False, 'shape': (6,)}",
                                         six)
                                  << "dtype '<i4' is not a little-endian float";
        QTest::newRow("object arrays")
            << npyBytes("{'descr': '|O', 'fortran_order': False, 'shape': (6,)}", six)
            << "dtype '|O' is not a little-endian float";
        QTest::newRow("negative dimension")
            << npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-6,)}", six)
            << "a dimension that is not a non-negative integer";
        QTest::newRow("huge dimension")
            << npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999,)}", six)
            << "a dimension above 2^40";
        QTest::newRow("overflowing shape")
            << npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, "
                        "1099511627776)}",
                        six)
            << "its shape holds more elements than any file can";
        QTest::newRow("bad order")
            << npyBytes("{'descr': '<f4', 'fortran_order': 1, 'shape': (6,)}", six)
            << "fortran_order is not True or False";
        QTest::newRow("truncated") << npyBytes(good, six.left(20))
                                   << "needs 24 bytes of elements but 20 follow the header";
        QTest::newRow("padded") << npyBytes(good, six + "xxxx")
                                << "needs 24 bytes of elements but 28 follow the header";
        QTest::newRow("text after")
            << npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (6,)} extra", six)
            << "text after the header's dict";
    }

    void refusesHostileNpy() {
        QFETCH(QByteArray, file);
        QFETCH(QString, reason);
        const QString message = npyRefusal(file);
        QVERIFY2(message.startsWith("a.npy: ") && message.contains(reason), qPrintable(message));
        QVERIFY2(!message.contains('\n'), qPrintable(message));
    }

    void refusesHostileNpz() {
        auto arrays = gemmaScopeArrays();
        const QString release = "gemma-scope-2b-pt-res/layer_0/width_3/average_l0_1";
        QString message = folderRefusal(npzFolder("compressed/" + release, zipOf(arrays, 8)));
        QVERIFY2(message.contains("'W_enc.npy' is compressed (method 8)"), qPrintable(message));
        const QByteArray whole = zipOf(arrays);
        message = folderRefusal(npzFolder("truncated/" + release, whole.left(whole.size() - 30)));
        QVERIFY2(message.contains("params.npz: no zip end-of-central-directory record"),
                 qPrintable(message));
        QByteArray corrupt = whole;
        corrupt[120] = char(corrupt[120] ^ 0x55); // one of W_enc.npy's elements
        message = folderRefusal(npzFolder("crc/" + release, corrupt));
        QVERIFY2(message.contains("does not match its CRC-32"), qPrintable(message));
        arrays.push_back({"notes.txt", "hello"});
        message = folderRefusal(npzFolder("not npy/" + release, zipOf(arrays)));
        QVERIFY2(message.contains("entry 'notes.txt' is not an .npy array"), qPrintable(message));
        arrays.back() = {"scaling_factor.npy", npyOf({3}, {1, 1, 1})};
        message = folderRefusal(npzFolder("unknown/" + release, zipOf(arrays)));
        QVERIFY2(message.contains("holds 'scaling_factor', which no Gemma Scope JumpReLU SAE"),
                 qPrintable(message));
        arrays.pop_back();
        arrays[2].second = npyOf({3}, {0, std::numeric_limits<float>::quiet_NaN(), 0});
        message = folderRefusal(npzFolder("nan/" + release, zipOf(arrays)));
        QVERIFY2(message.contains("'b_enc' holds a value that is not finite (nan at element 1)"),
                 qPrintable(message));
        arrays = gemmaScopeArrays();
        arrays[1].second = npyOf({2, 3}, {1, 0, 0, 2, 1, 1});
        message = folderRefusal(npzFolder("shape/" + release, zipOf(arrays)));
        QVERIFY2(message.contains("'W_dec' is [2, 3], not [3, 2] as d_in and d_sae make it"),
                 qPrintable(message));
        QVERIFY(!message.contains('\n'));
    }

    // The hook from the release's name and layer_L, as SAELens's get_gemma_2_config_from_hf
    // takes it from the repository and folder names; --hook where the path does not say.
    void takesTheHookFromThePathOrHook() {
        const QByteArray npz = zipOf(gemmaScopeArrays());
        const auto hookOf = [&](const QString& path) {
            return io::readSaeFolder(npzFolder(path, npz).toStdString()).config.hookName;
        };
        QCOMPARE(hookOf("hub/models--google--gemma-scope-9b-pt-res/snapshots/abc/layer_20/"
                        "width_16k/average_l0_71"),
                 std::string("blocks.20.hook_resid_post"));
        QCOMPARE(hookOf("gemma-scope-2b-pt-mlp-canonical/layer_3/width_16k/canonical"),
                 std::string("blocks.3.hook_mlp_out"));
        QCOMPARE(hookOf("gemma-scope-2b-pt-att/layer_0/width_16k/average_l0_5"),
                 std::string("blocks.0.attn.hook_z"));
        const QString bare = npzFolder("copied", npz);
        QString message = folderRefusal(bare);
        QVERIFY2(message.contains("names no hook") &&
                     message.contains("give it with --hook, e.g. --hook "
                                      "blocks.12.hook_resid_post"),
                 qPrintable(message));
        const io::SaeFolder given = io::readSaeFolder(bare.toStdString(), "blocks.1.hook_mlp_out");
        QCOMPARE(given.config.hookName, std::string("blocks.1.hook_mlp_out"));
        QCOMPARE(given.config.layout, std::string("gemma-scope"));
        QCOMPARE(given.sae.architecture, analysis::SaeArchitecture::JumpRelu);
        QCOMPARE(given.config.architecture, analysis::SaeArchitecture::JumpRelu);
        QVERIFY(!given.config.applyBDecToInput);
        QVERIFY(!given.sae.applyBDecToInput);
        QCOMPARE(given.sae.dIn, 2);
        QCOMPARE(given.sae.dSae, 3);
        message = folderRefusal(npzFolder("gemma-scope-2b-pt-res/layer_4/width_3/x", npz),
                                "blocks.4.hook_mlp_out");
        QVERIFY2(message.contains("--hook 'blocks.4.hook_mlp_out' differs from the hook the "
                                  "release's path names, blocks.4.hook_resid_post"),
                 qPrintable(message));
        message = folderRefusal(npzFolder("gemma-scope-2b-pt-res/embedding/width_4k/x", npz));
        QVERIFY2(message.contains("an embedding SAE (hook_embed"), qPrintable(message));
        // and on a SAELens folder, --hook must be the cfg's
        message =
            folderRefusal(QString::fromStdString(kGemmaScopeData + "gpt2_plain_jumprelu_pre1"),
                          "blocks.0.hook_resid_pre");
        QVERIFY2(message.contains("differs from the hook the SAE folder names, "
                                  "blocks.1.hook_resid_pre"),
                 qPrintable(message));
    }

    void readsGemmaScope2() {
        const io::SaeFolder transcoder = io::readSaeFolder(
            kGemmaScopeData + "gemma-scope-2-1b-pt/transcoder/layer_1_width_64_l0_small");
        QCOMPARE(transcoder.config.layout, std::string("gemma-scope-2"));
        QCOMPARE(transcoder.config.hookName,
                 std::string("model.layers.1.pre_feedforward_layernorm.output"));
        QCOMPARE(transcoder.config.hookOutName,
                 std::string("model.layers.1.post_feedforward_layernorm.output"));
        QVERIFY(transcoder.config.affineSkip);
        QCOMPARE(transcoder.sae.wSkip.shape(), (std::vector<int64_t>{32, 32}));
        const io::SaeFolder sae = io::readSaeFolder(
            kGemmaScopeData + "gemma-scope-2-1b-pt/resid_post/layer_2_width_48_l0_small");
        QCOMPARE(sae.config.hookName, std::string("model.layers.2.output"));
        QVERIFY(sae.config.hookOutName.empty() && sae.sae.wSkip.empty());
    }

    void refusesGemmaScope2Configs_data() {
        QTest::addColumn<QByteArray>("from");
        QTest::addColumn<QByteArray>("to");
        QTest::addColumn<QString>("reason");
        QTest::newRow("crosscoder")
            << QByteArray("\"type\": \"transcoder\"") << QByteArray("\"type\": \"crosscoder\"")
            << "type 'crosscoder' is not sae or transcoder";
        QTest::newRow("architecture") << QByteArray("\"jump_relu\"") << QByteArray("\"topk\"")
                                      << "architecture 'topk' is not jump_relu";
        QTest::newRow("no skip") << QByteArray("\"affine_connection\": true")
                                 << QByteArray("\"affine_connection\": false")
                                 << "holds affine_skip_connection, which the config does not ask";
        QTest::newRow("same hooks")
            << QByteArray("model.layers.1.post_feedforward_layernorm.output")
            << QByteArray("model.layers.1.pre_feedforward_layernorm.output")
            << "type transcoder but hf_hook_point_out is the same as hf_hook_point_in";
        QTest::newRow("garbled") << QByteArray("{") << QByteArray("[") << "config.json: not JSON (";
    }

    void refusesGemmaScope2Configs() {
        QFETCH(QByteArray, from);
        QFETCH(QByteArray, to);
        QFETCH(QString, reason);
        const QString source = QString::fromStdString(
            kGemmaScopeData + "gemma-scope-2-1b-pt/transcoder/layer_1_width_64_l0_small");
        const QString folder = scratch_.filePath("gs2-" + QString(QTest::currentDataTag()));
        QDir().mkpath(folder);
        QFile::copy(source + "/params.safetensors", folder + "/params.safetensors");
        QByteArray config = test::readFile(source + "/config.json");
        QVERIFY(config.contains(from));
        test::writeFile(folder + "/config.json", config.replace(from, to));
        const QString message = folderRefusal(folder);
        QVERIFY2(message.contains(reason), qPrintable(message));
        QVERIFY2(!message.contains('\n'), qPrintable(message));
    }

    // x = (1, 2); p = x·W_enc + b_enc = (1, 1.5, 0); thresholds (0.5, 1, 0.25): f = (1, 1.5, 0);
    // x̂ = f·W_dec + b_dec + x·W_skip = (1, 3) + (0.5, -0.5) + (2, 1) = (3.5, 3.5), with W_skip =
    // [[0, 1], [1, 0]]; b_dec is not subtracted from the input.
    void encodesATranscoderByHand() {
        analysis::SparseAutoencoder sae;
        sae.architecture = analysis::SaeArchitecture::JumpRelu;
        sae.dIn = 2;
        sae.dSae = 3;
        sae.applyBDecToInput = false;
        sae.wEnc = Tensor({2, 3}, {1, -1, 2, 0, 1, -1});
        sae.wDec = Tensor({3, 2}, {1, 0, 0, 2, 1, 1});
        sae.bEnc = Tensor({3}, {0, 0.5f, 0});
        sae.bDec = Tensor({2}, {0.5f, -0.5f});
        sae.threshold = Tensor({3}, {0.5f, 1, 0.25f});
        sae.wSkip = Tensor({2, 2}, {0, 1, 1, 0});
        analysis::SaeEncoding e = analysis::encodeAndDecode(sae, Tensor({1, 2}, {1, 2}));
        QCOMPARE(e.features.values()[0], 1.0f);
        QCOMPARE(e.features.values()[1], 1.5f);
        QCOMPARE(e.features.values()[2], 0.0f);
        QCOMPARE(e.output.values()[0], 3.5f);
        QCOMPARE(e.output.values()[1], 3.5f);
        e.target = Tensor({1, 2}, {3.5f, 1.5f}); // quality against the target: (0 + 4) / 2
        QCOMPARE(analysis::reconstructionQuality(e).meanSquaredError, 2.0);
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestGemmaScopeFolder)
#include "test_gemma_scope_folder.moc"
