// pytorch_model.bin read by the restricted torch.save reader: tensors bit-identical to the
// safetensors copy of the same weights (views, tied weights, F16, BF16, pickle protocols 2 to 5,
// shards), forward passes identical to the safetensors checkpoint's, safetensors preferred when
// both exist, and every hostile archive or pickle of tests/data/torch/hostile refused with its
// reason. The fixtures are written by tools/golden/make_torch_fixtures.py with torch.save.
#include "cli_runner.h"
#include "error_of.h"
#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "io/torch_checkpoint.h"
#include "temp_files.h"

#include <QDir>
#include <QFile>
#include <QTest>
#include <cstring>

using namespace headlight;
using namespace headlight::io;

namespace {
const QString kTorchData = QStringLiteral(HEADLIGHT_TEST_DATA "/torch");
const QString kModels = QStringLiteral(HEADLIGHT_TEST_DATA "/models");

bool bitIdentical(const Tensor& a, const Tensor& b) {
    // An empty tensor has no data pointer, which memcmp may not be given.
    return a.shape() == b.shape() &&
           (a.size() == 0 || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// Every tensor of `expected` is in `actual` with the same dtype, shape and bits.
void compareTensors(const TensorFile& actual, const TensorFile& expected) {
    for (const auto& [name, info] : expected.tensors()) {
        QVERIFY2(actual.tensors().count(name), qPrintable(QString::fromStdString(name)));
        QCOMPARE(actual.info(name).dtype, info.dtype);
        QCOMPARE(actual.info(name).shape, info.shape);
        QVERIFY2(bitIdentical(actual.loadF32(name), expected.loadF32(name)),
                 qPrintable(QString::fromStdString(name)));
    }
}

// A checkpoint folder: config and tokenizer files of a golden model, plus `weights`.
QString folderWith(test::ScratchDir& scratch, const QString& model, const QStringList& weights) {
    const QString folder = scratch.freshFolder();
    const QDir source(kModels + "/" + model);
    for (const QString& name : source.entryList(QDir::Files))
        if (!name.endsWith(".safetensors") && !name.endsWith(".index.json") &&
            name != "golden.json")
            QFile::copy(source.filePath(name), QDir(folder).filePath(name));
    for (const QString& path : weights)
        QFile::copy(path, QDir(folder).filePath(QFileInfo(path).fileName()));
    return folder;
}

QByteArray dumpOf(const QString& folder, const QString& dump) {
    const auto run = test::runHeadlight(
        {"inspect", "--model", folder, "--text", "Hello, world! It's 3.14", "--dump", dump});
    if (run.exitCode != 0)
        qFatal("inspect failed on %s: %s", qPrintable(folder), qPrintable(run.err));
    return test::readFile(dump);
}
} // namespace

class TestTorchCheckpoint : public QObject {
    Q_OBJECT
    test::ScratchDir scratch_;

private Q_SLOTS:
    void tensorsMatchTheSafetensorsCopy_data() {
        QTest::addColumn<QString>("torchFile");
        QTest::addColumn<QString>("safetensorsFile");
        QTest::newRow("gpt2 state_dict")
            << kTorchData + "/gpt2/pytorch_model.bin" << kModels + "/gpt2/model.safetensors";
        QTest::newRow("bert F16, protocol 5") << kTorchData + "/bert_f16/pytorch_model.bin"
                                              << kTorchData + "/bert_f16/model.safetensors";
        for (int protocol = 2; protocol <= 5; ++protocol)
            QTest::newRow(qPrintable(QString("views, protocol %1").arg(protocol)))
                << kTorchData + QString("/views/protocol_%1.bin").arg(protocol)
                << kTorchData + "/views/expected.safetensors";
    }
    void tensorsMatchTheSafetensorsCopy() {
        QFETCH(QString, torchFile);
        QFETCH(QString, safetensorsFile);
        const TorchCheckpointFile actual(torchFile.toStdString());
        const SafetensorsFile expected(safetensorsFile.toStdString());
        compareTensors(actual, expected);
    }

    void viewsAndTiedWeightsAreReadExactly() {
        const TorchCheckpointFile gpt2((kTorchData + "/gpt2/pytorch_model.bin").toStdString());
        QCOMPARE(gpt2.tensors().size(), std::size_t(29)); // the 28 of the golden + lm_head
        const TensorInfo& tied = gpt2.info("lm_head.weight");
        const TensorInfo& embedding = gpt2.info("transformer.wte.weight");
        QCOMPARE(tied.begin, embedding.begin); // one storage
        QVERIFY(
            bitIdentical(gpt2.loadF32("lm_head.weight"), gpt2.loadF32("transformer.wte.weight")));
        // ln_1's weight and bias share one storage, the bias at element offset 32.
        QCOMPARE(gpt2.info("transformer.h.0.ln_1.bias").begin,
                 gpt2.info("transformer.h.0.ln_1.weight").begin + 32 * 4);
        // A transposed [32, 96] view spans its whole storage, read column by column.
        const TensorInfo& transposed = gpt2.info("transformer.h.0.attn.c_attn.weight");
        QCOMPARE(transposed.end - transposed.begin, uint64_t(32 * 96 * 4));

        const TorchCheckpointFile views((kTorchData + "/views/protocol_2.bin").toStdString());
        QCOMPARE(views.loadF32("transposed").values()[1], views.loadF32("base").values()[6]);
        QCOMPARE(views.info("empty").shape, (std::vector<int64_t>{0, 3}));
        QCOMPARE(views.info("scalar").shape, std::vector<int64_t>{});
        QCOMPARE(views.info("position_ids").dtype, DType::I64);
    }

    void shardedBinFolderMatchesShardedSafetensors() {
        const QString folder =
            folderWith(scratch_, "gpt2_plain",
                       {kTorchData + "/gpt2_plain/pytorch_model-00001-of-00002.bin",
                        kTorchData + "/gpt2_plain/pytorch_model-00002-of-00002.bin",
                        kTorchData + "/gpt2_plain/pytorch_model.bin.index.json"});
        const Checkpoint torch(folder.toStdString());
        const Checkpoint safetensors((kModels + "/gpt2_plain").toStdString());
        QCOMPARE(torch.names(), safetensors.names());
        for (const std::string& name : safetensors.names()) {
            QCOMPARE(torch.info(name).dtype, DType::BF16);
            QVERIFY2(bitIdentical(torch.loadF32(name), safetensors.loadF32(name)), name.c_str());
        }
    }

    void forwardPassesAreBitIdentical_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QStringList>("torchFiles");
        QTest::addColumn<QString>("safetensorsFolder");
        QTest::newRow("gpt2 (views, tied lm_head)")
            << "gpt2" << QStringList{kTorchData + "/gpt2/pytorch_model.bin"} << kModels + "/gpt2";
        QTest::newRow("gpt2_plain (BF16 shards)")
            << "gpt2_plain"
            << QStringList{kTorchData + "/gpt2_plain/pytorch_model-00001-of-00002.bin",
                           kTorchData + "/gpt2_plain/pytorch_model-00002-of-00002.bin",
                           kTorchData + "/gpt2_plain/pytorch_model.bin.index.json"}
            << kModels + "/gpt2_plain";
        QTest::newRow("bert (F16)")
            << "bert" << QStringList{kTorchData + "/bert_f16/pytorch_model.bin"} << QString();
    }
    void forwardPassesAreBitIdentical() {
        QFETCH(QString, model);
        QFETCH(QStringList, torchFiles);
        QFETCH(QString, safetensorsFolder);
        if (safetensorsFolder.isEmpty()) // the F16 copy of the same weights
            safetensorsFolder =
                folderWith(scratch_, model, {kTorchData + "/bert_f16/model.safetensors"});
        const QString torchFolder = folderWith(scratch_, model, torchFiles);
        const QByteArray fromTorch = dumpOf(torchFolder, scratch_.freshPath());
        const QByteArray fromSafetensors = dumpOf(safetensorsFolder, scratch_.freshPath());
        QVERIFY(fromTorch.size() > 1000);
        QVERIFY(fromTorch == fromSafetensors);
    }

    void safetensorsIsPreferredWhenBothExist() {
        const QString folder = folderWith(
            scratch_, "gpt2",
            {kModels + "/gpt2/model.safetensors", kTorchData + "/hostile/os_system.bin"});
        QVERIFY(QFile::rename(QDir(folder).filePath("os_system.bin"),
                              QDir(folder).filePath("pytorch_model.bin")));
        const Checkpoint checkpoint(folder.toStdString());
        QVERIFY(!checkpoint.contains("lm_head.weight"));
        QCOMPARE(checkpoint.names().size(), std::size_t(28));
    }

    void hostileFilesAreRefused_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("reason");
        const QString refusedGlobal =
            "' is refused: a state dict needs only collections.OrderedDict, "
            "torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter and torch's typed "
            "storages";
        const QString pickle = "archive/data.pkl byte ";
        const QString notReduce =
            " is refused: only OrderedDict(), _rebuild_tensor_v2 and _rebuild_parameter are "
            "modelled";
        const QString compressed =
            " is compressed (method 8); torch.save stores entries uncompressed, and only such "
            "are read";
        const std::pair<const char*, QString> cases[] = {
            {"os_system", pickle + "2: global 'os.system" + refusedGlobal},
            {"posix_system_by_pickle", pickle + "2: global 'posix.system" + refusedGlobal},
            {"builtins_eval", pickle + "29: global 'builtins.eval" + refusedGlobal},
            {"subprocess_popen", pickle + "32: global 'subprocess.Popen" + refusedGlobal},
            {"reduce_of_reduce", pickle + "30: REDUCE of an OrderedDict" + notReduce},
            {"reduce_of_storage_class", pickle + "23: REDUCE of torch.FloatStorage" + notReduce},
            {"build_on_tensor",
             pickle + "181: BUILD on a tensor is refused: only an OrderedDict's _metadata may be "
                      "set"},
            {"build_sets_class",
             pickle + "46: BUILD sets the attribute '__class__' of an OrderedDict; only "
                      "_metadata is allowed"},
            {"inst_opcode", pickle + "10: opcode INST (0x69) is not one a state dict needs"},
            {"persistent_id_not_storage",
             pickle + "38: a persistent id is a tuple of 5, not ('storage', StorageType, key, "
                      "location, numel)"},
            {"nested_state_dict",
             pickle + "178: the state dict's value for 'model' is an OrderedDict, not a tensor"},
            {"lightning_style_checkpoint",
             pickle + "180: the state dict's value for 'model' is an OrderedDict, not a tensor"},
            {"view_past_storage",
             pickle + "166: tensor 'w' (offset 1, shape [3, 4], stride [4, 1]) reaches element "
                      "12 of storage '0', which holds 12"},
            {"short_storage", "storage '0' declares 13 F32 elements but 'archive/data/0' holds "
                              "48 bytes"},
            {"storage_without_record", "storage '7' has no record 'archive/data/7'"},
            {"zip_bomb", "entry 'archive/data/0'" + compressed},
            {"deflated_pickle", "entry 'archive/data.pkl'" + compressed},
            {"encrypted", "entry 'archive/data.pkl' is encrypted"},
            {"path_traversal", "entry name 'archive/../../evil' is not a plain relative path "
                               "(absolute, '..', '\\' or empty parts)"},
            {"absolute_path", "entry name '/etc/cron.d/evil' is not a plain relative path "
                              "(absolute, '..', '\\' or empty parts)"},
            {"overlapping_entries", "entries 'archive/data/0' and 'archive/version' overlap"},
            {"duplicate_names", "entry 'archive/data/0' appears twice"},
            {"two_top_folders", "entries 'archive/data.pkl' and 'other/data/1' lie in different "
                                "top folders; torch.save writes one"},
            {"big_endian", "written on a big-endian machine (byteorder 'big'): re-save with a "
                           "current torch on a little-endian machine"},
            {"crc_mismatch", "entry 'archive/data.pkl' does not match its CRC-32 (corrupted)"},
            {"truncated", "no zip end-of-central-directory record"},
        };
        for (const auto& [name, reason] : cases)
            QTest::newRow(name) << kTorchData + "/hostile/" + name + ".bin" << reason;
        QTest::newRow("legacy") << kTorchData + "/legacy.bin"
                                << "a legacy torch.save file (not a zip archive), which "
                                   "Headlight does not read: re-save with a current torch";
    }
    void hostileFilesAreRefused() {
        QFETCH(QString, file);
        QFETCH(QString, reason);
        QCOMPARE(test::errorOf<CheckpointError>([&] { TorchCheckpointFile(file.toStdString()); }),
                 file + ": " + reason);
    }

    // The hostile files are made from one archive; these controls, by the same hand-written
    // zip writer and pickle, load, so every refusal above is its corruption's doing.
    void controlsLoad() {
        for (const char* name : {"control", "control_zip64", "hand_written_pickle"}) {
            const TorchCheckpointFile file(
                (kTorchData + "/hostile/" + name + ".bin").toStdString());
            const Tensor w = file.loadF32("w");
            QCOMPARE(std::vector<float>(w.values().begin(), w.values().end()),
                     (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
        }
    }

    // convert writes one model.safetensors in the stored dtypes plus the config and tokenizer
    // files, and the converted folder runs the same forward pass.
    void convertRoundTrip_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QStringList>("torchFiles");
        QTest::newRow("gpt2") << "gpt2" << QStringList{kTorchData + "/gpt2/pytorch_model.bin"};
        QTest::newRow("gpt2_plain (BF16 shards)")
            << "gpt2_plain"
            << QStringList{kTorchData + "/gpt2_plain/pytorch_model-00001-of-00002.bin",
                           kTorchData + "/gpt2_plain/pytorch_model-00002-of-00002.bin",
                           kTorchData + "/gpt2_plain/pytorch_model.bin.index.json"};
    }
    void convertRoundTrip() {
        QFETCH(QString, model);
        QFETCH(QStringList, torchFiles);
        const QString source = folderWith(scratch_, model, torchFiles);
        const QString out = scratch_.freshPath(QString());
        const auto run = test::runHeadlight({"convert", "--model", source, "--out", out});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY2(run.out.startsWith("wrote " + QDir(out).filePath("model.safetensors") + " ("),
                 qPrintable(run.out));
        QStringList expectedFiles{"model.safetensors"};
        for (const QString& name : QDir(source).entryList(QDir::Files))
            if (!name.startsWith("pytorch_model")) expectedFiles << name;
        expectedFiles.sort();
        QCOMPARE(QDir(out).entryList(QDir::Files, QDir::Name), expectedFiles); // no temp files
        const Checkpoint original(source.toStdString());
        const SafetensorsFile converted(QDir(out).filePath("model.safetensors").toStdString());
        QCOMPARE(converted.tensors().size(), original.names().size());
        for (const std::string& name : original.names()) {
            QCOMPARE(converted.info(name).dtype, original.info(name).dtype);
            QVERIFY(bitIdentical(converted.loadF32(name), original.loadF32(name)));
        }
        QVERIFY(dumpOf(out, scratch_.freshPath()) == dumpOf(source, scratch_.freshPath()));
    }

    void convertRefusesHostileWeightsAndWritesNothing() {
        const QString source =
            folderWith(scratch_, "bert", {kTorchData + "/hostile/os_system.bin"});
        QVERIFY(QFile::rename(QDir(source).filePath("os_system.bin"),
                              QDir(source).filePath("pytorch_model.bin")));
        const QString out = scratch_.freshPath(QString());
        const auto run = test::runHeadlight({"convert", "--model", source, "--out", out});
        QCOMPARE(run.exitCode, 1);
        QVERIFY(
            run.err.startsWith("headlight convert: " + QDir(source).filePath("pytorch_model.bin") +
                               ": archive/data.pkl byte 2: global 'os.system' is refused"));
        QVERIFY(!QFileInfo::exists(out));
    }

    void hostileFileThroughTheCliIsOneLine() {
        const QString folder =
            folderWith(scratch_, "bert", {kTorchData + "/hostile/builtins_eval.bin"});
        QVERIFY(QFile::rename(QDir(folder).filePath("builtins_eval.bin"),
                              QDir(folder).filePath("pytorch_model.bin")));
        const auto run =
            test::runHeadlight({"inspect", "--model", folder, "--ids", "2,3", "--json"});
        QCOMPARE(run.exitCode, 1);
        QVERIFY(run.out.isEmpty());
        QCOMPARE(run.err, "headlight inspect: " + QDir(folder).filePath("pytorch_model.bin") +
                              ": archive/data.pkl byte 29: global 'builtins.eval" +
                              "' is refused: a state dict needs only collections.OrderedDict, "
                              "torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter "
                              "and torch's typed storages\n");
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestTorchCheckpoint)
#include "test_torch_checkpoint.moc"
