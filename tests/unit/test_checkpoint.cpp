// Checkpoint folders: one model.safetensors, or shards listed by an index that is cross-checked
// against the shards; pickles refused unopened; path tricks in the index refused.
#include "error_of.h"
#include "io/checkpoint.h"
#include "temp_files.h"

#include <QDir>
#include <QFile>
#include <QTest>

using namespace headlight;
using namespace headlight::io;

namespace {
template <typename Action> QString errorOf(Action&& action) {
    return test::errorOf<CheckpointError>(std::forward<Action>(action));
}

TensorToWrite f32(const char* name, std::vector<float> values) {
    return {name, {static_cast<int64_t>(values.size())}, std::move(values), {}};
}

QByteArray indexJson(const QByteArray& weightMapMembers) {
    return R"({"metadata": {"total_size": 28}, "weight_map": {)" + weightMapMembers + "}}";
}
} // namespace

class TestCheckpoint : public QObject {
    Q_OBJECT

    test::ScratchDir root_;

    QString freshFolder() { return root_.freshFolder(); }

    // A folder with two shards, a and b in the first, c in the second, and `index` as its index.
    QString shardedFolder(const QByteArray& index) {
        const QString folder = freshFolder();
        writeSafetensors(QDir(folder).filePath("model-00001-of-00002.safetensors").toStdString(),
                         {f32("a", {1, 2}), f32("b", {3})});
        writeSafetensors(QDir(folder).filePath("model-00002-of-00002.safetensors").toStdString(),
                         {f32("c", {4, 5, 6, 7})});
        test::writeFile(QDir(folder).filePath("model.safetensors.index.json"), index);
        return folder;
    }

    QByteArray goodIndex() {
        return indexJson(R"("a": "model-00001-of-00002.safetensors",
                            "b": "model-00001-of-00002.safetensors",
                            "c": "model-00002-of-00002.safetensors")");
    }

    static QString openError(const QString& folder) {
        return errorOf([&] { Checkpoint checkpoint(folder.toStdString()); });
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(root_.isValid()); }

    void opensSingleFile() {
        const QString folder = freshFolder();
        writeSafetensors(QDir(folder).filePath("model.safetensors").toStdString(),
                         {f32("embeddings.weight", {1, 2, 3}), f32("bias", {0.5f})});
        test::writeFile(QDir(folder).filePath("config.json"), "{}");
        const Checkpoint checkpoint(folder.toStdString());
        QCOMPARE(checkpoint.folder(), folder.toStdString());
        QCOMPARE(checkpoint.names(), (std::vector<std::string>{"bias", "embeddings.weight"}));
        QVERIFY(checkpoint.contains("bias"));
        QCOMPARE(checkpoint.info("embeddings.weight").shape, std::vector<int64_t>{3});
        QCOMPARE(checkpoint.loadF32("embeddings.weight").values()[2], 3.0f);
    }

    // The Hugging Face cache keeps snapshots as symlinks into a blobs folder; they must work.
    void followsHubCacheSymlinks() {
        const QString blobs = freshFolder();
        const QString snapshot = freshFolder();
        const QString blob = QDir(blobs).filePath("4f1e9c");
        writeSafetensors(blob.toStdString(), {f32("wte.weight", {1, 2})});
        QVERIFY(QFile::link(blob, QDir(snapshot).filePath("model.safetensors")));
        QCOMPARE(Checkpoint(snapshot.toStdString()).loadF32("wte.weight").values()[1], 2.0f);
    }

    void opensShardedFolder() {
        const QString folder = shardedFolder(goodIndex());
        const Checkpoint checkpoint(folder.toStdString());
        QCOMPARE(checkpoint.names(), (std::vector<std::string>{"a", "b", "c"}));
        QCOMPARE(checkpoint.loadF32("a").values()[1], 2.0f);
        QCOMPARE(checkpoint.loadF32("c").values()[3], 7.0f);
        QCOMPARE(checkpoint.info("c").shape, std::vector<int64_t>{4});
        QVERIFY(!checkpoint.contains("d"));
    }

    void prefersSingleFileOverIndex() {
        const QString folder = shardedFolder("this index is never read");
        writeSafetensors(QDir(folder).filePath("model.safetensors").toStdString(),
                         {f32("only", {1})});
        QCOMPARE(Checkpoint(folder.toStdString()).names(), std::vector<std::string>{"only"});
    }

    // TensorFlow-era names load under the names Hugging Face gives them; a checkpoint holding
    // both spellings of one tensor is ambiguous and refused.
    void loadsLegacyNormNamesAsHuggingFaceRenamesThem() {
        const QString folder = freshFolder();
        const QString file = QDir(folder).filePath("model.safetensors");
        writeSafetensors(file.toStdString(), {f32("embeddings.LayerNorm.gamma", {1, 2}),
                                              f32("embeddings.LayerNorm.beta", {3, 4})});
        const Checkpoint checkpoint(folder.toStdString());
        QCOMPARE(checkpoint.names(), (std::vector<std::string>{"embeddings.LayerNorm.bias",
                                                               "embeddings.LayerNorm.weight"}));
        QCOMPARE(checkpoint.loadF32("embeddings.LayerNorm.bias").values()[1], 4.0f);
        QVERIFY(!checkpoint.contains("embeddings.LayerNorm.gamma"));
        writeSafetensors(file.toStdString(), {f32("ln.gamma", {1}), f32("ln.weight", {2})});
        QCOMPARE(openError(folder),
                 folder + ": tensors 'ln.gamma' and 'ln.weight' both load as 'ln.weight'");
    }

    void reportsMissingTensor() {
        const QString folder = shardedFolder(goodIndex());
        const Checkpoint checkpoint(folder.toStdString());
        QCOMPARE(errorOf([&] { checkpoint.info("encoder.layer.0.weight"); }),
                 folder + ": missing tensor 'encoder.layer.0.weight'");
        QCOMPARE(errorOf([&] { checkpoint.loadF32("x"); }), folder + ": missing tensor 'x'");
    }

    void refusesPickleOnlyFolders() {
        const QString folder = freshFolder();
        // A pickle header (protocol 2): it must never be opened, let alone unpickled.
        test::writeFile(QDir(folder).filePath("pytorch_model.bin"),
                        QByteArray("\x80\x02}q\x00.", 6));
        test::writeFile(QDir(folder).filePath("config.json"), "{}");
        QCOMPARE(openError(folder),
                 folder +
                     ": only PyTorch pickle weights (pytorch_model.bin) found; Headlight never "
                     "executes pickles — convert them to safetensors (e.g. with the "
                     "safetensors convert script)");

        const QString other = freshFolder();
        for (const char* name : {"model.pt", "last.ckpt", "weights.pth"})
            test::writeFile(QDir(other).filePath(name), "pickle");
        QCOMPARE(openError(other),
                 other + ": only PyTorch pickle weights (last.ckpt, model.pt, weights.pth) found; "
                         "Headlight never executes pickles — convert them to safetensors (e.g. "
                         "with the safetensors convert script)");
    }

    void refusesFoldersWithoutWeights() {
        const QString empty = freshFolder();
        QCOMPARE(openError(empty), empty + ": no weights found (expected model.safetensors or "
                                           "model.safetensors.index.json)");
        const QString unindexed = freshFolder();
        writeSafetensors(QDir(unindexed).filePath("adapter_model.safetensors").toStdString(), {});
        test::writeFile(QDir(unindexed).filePath("pytorch_model.bin"), "pickle");
        QCOMPARE(openError(unindexed),
                 unindexed +
                     ": no model.safetensors or model.safetensors.index.json (found "
                     "adapter_model.safetensors, which Hugging Face would not load either)");
    }

    void refusesMissingFolderAndFiles() {
        const QString missing = root_.filePath("does-not-exist");
        QCOMPARE(openError(missing), missing + ": folder does not exist");
        const QString file = root_.filePath("plain-file");
        test::writeFile(file, "x");
        QCOMPARE(openError(file), file + ": not a folder");
    }

    void refusesPathTricksInIndex_data() {
        QTest::addColumn<QByteArray>("shard");
        QTest::newRow("parent") << QByteArray("../outside.safetensors");
        QTest::newRow("absolute") << QByteArray("/tmp/outside.safetensors");
        QTest::newRow("subfolder") << QByteArray("sub/model.safetensors");
        QTest::newRow("backslash") << QByteArray("..\\\\outside.safetensors");
        QTest::newRow("drive letter") << QByteArray("C:model.safetensors");
        QTest::newRow("pickle") << QByteArray("pytorch_model.bin");
        QTest::newRow("bare suffix") << QByteArray(".safetensors");
        QTest::newRow("empty") << QByteArray("");
    }
    void refusesPathTricksInIndex() {
        QFETCH(QByteArray, shard);
        const QString folder = freshFolder();
        // The target exists and is valid, so only the name check can stop it.
        writeSafetensors(root_.filePath("outside.safetensors").toStdString(), {f32("a", {1})});
        const QString index = QDir(folder).filePath("model.safetensors.index.json");
        test::writeFile(index, indexJson("\"a\": \"" + shard + "\""));
        const QString shown = QString::fromUtf8(shard).replace("\\\\", "\\");
        QCOMPARE(openError(folder), index + ": weight_map entry for 'a' names '" + shown +
                                        "', not a .safetensors file in the folder");
    }

    void refusesIndexedTensorMissingFromShard() {
        const QString folder = shardedFolder(indexJson(R"("a": "model-00001-of-00002.safetensors",
                                                          "c": "model-00001-of-00002.safetensors")"));
        QCOMPARE(openError(folder),
                 QDir(folder).filePath("model.safetensors.index.json") +
                     ": tensor 'c' is listed in 'model-00001-of-00002.safetensors' "
                     "but that shard does not contain it");
    }

    void refusesTensorInTwoShards() {
        const QString folder = shardedFolder(goodIndex());
        writeSafetensors(QDir(folder).filePath("model-00002-of-00002.safetensors").toStdString(),
                         {f32("c", {4}), f32("a", {9})});
        QCOMPARE(openError(folder), folder + ": tensor 'a' is in both " +
                                        QDir(folder).filePath("model-00001-of-00002.safetensors") +
                                        " and " +
                                        QDir(folder).filePath("model-00002-of-00002.safetensors"));
    }

    void refusesMissingShard() {
        const QString folder = shardedFolder(goodIndex());
        QVERIFY(QFile::remove(QDir(folder).filePath("model-00002-of-00002.safetensors")));
        QCOMPARE(openError(folder), QDir(folder).filePath("model.safetensors.index.json") +
                                        ": shard 'model-00002-of-00002.safetensors' is missing");
    }

    void reportsCorruptShardByItsPath() {
        const QString folder = shardedFolder(goodIndex());
        const QString shard = QDir(folder).filePath("model-00002-of-00002.safetensors");
        test::writeFile(shard, "short");
        QCOMPARE(openError(folder),
                 shard + ": file is 5 bytes, too short for the 8-byte header length");
    }

    void refusesMalformedIndex_data() {
        QTest::addColumn<QByteArray>("index");
        QTest::addColumn<QString>("problem");
        QTest::newRow("invalid JSON")
            << QByteArray("{\"weight_map\": {")
            << "not valid JSON (byte 16: expected a string key in an object)";
        QTest::newRow("not an object") << QByteArray("[]") << "not a JSON object";
        QTest::newRow("no weight_map") << QByteArray("{\"metadata\": {}}") << "has no weight_map";
        QTest::newRow("empty weight_map")
            << QByteArray("{\"weight_map\": {}}") << "weight_map is empty";
        QTest::newRow("weight_map array")
            << QByteArray("{\"weight_map\": []}") << "weight_map is not an object";
        QTest::newRow("two weight_maps")
            << QByteArray("{\"weight_map\": {}, \"weight_map\": {}}") << "weight_map appears twice";
        QTest::newRow("file not a string")
            << indexJson("\"a\": 1") << "weight_map entry for 'a' is not a file name";
        QTest::newRow("listed twice")
            << indexJson(
                   R"("a": "model-00001-of-00002.safetensors", "a": "model-00002-of-00002.safetensors")")
            << "tensor 'a' is listed twice in weight_map";
    }
    void refusesMalformedIndex() {
        QFETCH(QByteArray, index);
        QFETCH(QString, problem);
        const QString folder = shardedFolder(index);
        QCOMPARE(openError(folder),
                 QDir(folder).filePath("model.safetensors.index.json") + ": " + problem);
    }
};

QTEST_GUILESS_MAIN(TestCheckpoint)
#include "test_checkpoint.moc"
