// `headlight features` as a user runs it: with the golden SAEs of tests/data/sae (tools/golden/
// make_sae_goldens.py) its --json lists each token's strongest features with the activations of
// the float64 PyTorch reference within 1e-4 (NaN fails) and the reconstruction quality the
// reference computed; --dump writes feature_acts, sae_in and sae_out as the reference has them;
// an SAE of the wrong width, a hook the trace cannot give and a missing cfg.json are refused in
// one line with exit code 1; a missing expected-average factor is reported in the JSON's notes.
// A Gemma Scope 1 params.npz outside its release's path needs --hook and then gives the
// reference's features; a Gemma Scope 2 transcoder reports its reconstruction of the MLP output.
#include "cli_runner.h"
#include "compare.h"
#include "golden_json.h"
#include "hub_cache_fixture.h"
#include "io/safetensors.h"
#include "temp_files.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>

using namespace headlight;
using test::runHeadlight;

namespace {

const QString kFeaturesData = QStringLiteral(HEADLIGHT_TEST_DATA "/sae/");
const QString kFeaturesModels = QStringLiteral(HEADLIGHT_TEST_DATA "/models/");

QJsonObject featuresGoldenCase(const QString& name) {
    const QJsonObject golden = test::readJsonObject(kFeaturesData + "golden.json");
    for (const QJsonValue& c : golden["cases"].toArray())
        if (c.toObject()["name"].toString() == name) return c.toObject();
    qFatal("no golden case %s", qPrintable(name));
}

QString featuresIds() {
    return test::joinedIds(test::readJsonObject(kFeaturesData + "golden.json")["ids"], ',');
}

bool featuresClose(double ours, double expected, double tolerance) {
    return std::isfinite(ours) && std::isfinite(expected) && std::abs(ours - expected) <= tolerance;
}
} // namespace

class TestFeaturesCli : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private Q_SLOTS:
    void jsonMatchesTheReference_data() {
        QTest::addColumn<QString>("name");
        for (const char* name : {"gpt2_plain_topk_post2", "qwen2_jumprelu_post2"})
            QTest::newRow(name) << QString(name);
    }

    void jsonMatchesTheReference() {
        QFETCH(QString, name);
        const QJsonObject golden = featuresGoldenCase(name);
        const QString dump = dir_.filePath(name + ".safetensors");
        const auto run =
            runHeadlight({"features", "--model", kFeaturesModels + golden["model"].toString(),
                          "--sae", kFeaturesData + name, "--ids", featuresIds(), "--top", "3",
                          "--backend", "cpu", "--json", "--dump", dump});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QJsonObject root = QJsonDocument::fromJson(run.out.toUtf8()).object();
        QCOMPARE(root["backend"].toString(), QString("cpu"));
        const QJsonObject sae = root["sae"].toObject();
        QCOMPARE(sae["architecture"].toString(), golden["architecture"].toString());
        QCOMPARE(sae["hook"].toString(), golden["hook"].toString());
        QCOMPARE(sae["d_sae"].toInt(), golden["d_sae"].toInt());
        QCOMPARE(root["notes"].toArray().size(), 0);
        const QJsonObject quality = root["reconstruction"].toObject();
        QVERIFY(featuresClose(quality["variance_explained"].toDouble(NAN),
                              golden["variance_explained"].toDouble(), 1e-4));
        QVERIFY(featuresClose(quality["mse"].toDouble(NAN), golden["mse"].toDouble(), 1e-4));
        QCOMPARE(quality["l0"].toDouble(NAN), golden["l0"].toDouble());

        const io::SafetensorsFile expected(
            (kFeaturesData + "expected/" + name + ".safetensors").toStdString());
        const Tensor want = expected.loadF32("feature_acts");
        const int64_t width = want.dim(1);
        const QJsonArray tokens = root["tokens"].toArray();
        QCOMPARE(tokens.size(), qsizetype(want.dim(0)));
        for (qsizetype t = 0; t < tokens.size(); ++t) {
            // the reference's three strongest features of this token, strongest first
            std::vector<int> order(static_cast<std::size_t>(width));
            for (int f = 0; f < int(width); ++f)
                order[std::size_t(f)] = f;
            const float* row = want.data() + t * width;
            std::stable_sort(order.begin(), order.end(),
                             [&](int a, int b) { return row[a] > row[b]; });
            const QJsonArray listed = tokens[t].toObject()["features"].toArray();
            const auto firing = std::count_if(row, row + width, [](float v) { return v != 0.0f; });
            QCOMPARE(tokens[t].toObject()["l0"].toInt(), int(firing));
            QCOMPARE(listed.size(), qsizetype(std::min<int64_t>(3, firing)));
            for (qsizetype i = 0; i < listed.size(); ++i) {
                const QJsonObject feature = listed[i].toObject();
                QCOMPARE(feature["id"].toInt(-1), order[std::size_t(i)]);
                QVERIFY2(
                    featuresClose(feature["activation"].toDouble(NAN), row[order[std::size_t(i)]],
                                  1e-4),
                    qPrintable(
                        QStringLiteral("token %1 feature %2").arg(t).arg(order[std::size_t(i)])));
            }
        }

        const io::SafetensorsFile written(dump.toStdString());
        for (const char* tensor : {"feature_acts", "sae_in", "sae_out"})
            QVERIFY2(test::maxAbsDiff(written.loadF32(tensor), expected.loadF32(tensor)) <= 1e-4,
                     tensor);
    }

    // A release of several SAEs in the Hugging Face cache, laid out as huggingface_hub writes
    // it (one folder per SAE, real relative links into blobs/), opens by ORG/NAME/FOLDER and
    // gives the same features as the folder itself.
    void aReleaseFolderInTheCacheOpensByItsId() {
        const QString folder = QStringLiteral("blocks.0.hook_resid_pre");
        test::FakeHubCache cache(dir_.filePath("hub"));
        cache.addSubfolder("test-org/tiny-saes", kFeaturesData + "gpt2_plain_standard_pre0",
                           folder);
        const QByteArray previous = qgetenv("HF_HUB_CACHE");
        qputenv("HF_HUB_CACHE", cache.root().toUtf8());
        const QStringList common{"features", "--model",     kFeaturesModels + "gpt2_plain",
                                 "--ids",    featuresIds(), "--backend",
                                 "cpu",      "--json"};
        const auto cached =
            runHeadlight(common + QStringList{"--sae", "test-org/tiny-saes/" + folder});
        const auto missing =
            runHeadlight(common + QStringList{"--sae", "test-org/tiny-saes/blocks.9"});
        qputenv("HF_HUB_CACHE", previous);
        const auto direct =
            runHeadlight(common + QStringList{"--sae", kFeaturesData + "gpt2_plain_standard_pre0"});
        QVERIFY2(cached.exitCode == 0, qPrintable(cached.err));
        QVERIFY2(direct.exitCode == 0, qPrintable(direct.err));
        const QJsonObject a = QJsonDocument::fromJson(cached.out.toUtf8()).object();
        const QJsonObject b = QJsonDocument::fromJson(direct.out.toUtf8()).object();
        QVERIFY(!a["tokens"].toArray().isEmpty());
        QCOMPARE(a["tokens"], b["tokens"]);
        QCOMPARE(a["reconstruction"], b["reconstruction"]);
        QVERIFY2(a["sae"].toObject()["folder"].toString().endsWith("snapshots/" + test::kRevision +
                                                                   "/" + folder),
                 qPrintable(a["sae"].toObject()["folder"].toString()));
        QCOMPARE(missing.exitCode, 1);
        QVERIFY2(missing.err.count('\n') == 1 &&
                     missing.err.contains("the cached test-org/tiny-saes has no folder blocks.9"),
                 qPrintable(missing.err));
    }

    void textOutputListsEveryToken() {
        const auto run = runHeadlight({"features", "--model", kFeaturesModels + "gpt2_plain",
                                       "--sae", kFeaturesData + "gpt2_plain_standard_pre0",
                                       "--text", "Hello, world!", "--backend", "cpu"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY(run.out.contains("sae: " + kFeaturesData +
                                 "gpt2_plain_standard_pre0 (standard, "
                                 "d_in 32, d_sae 48, blocks.0.hook_resid_pre)"));
        QVERIFY(run.out.contains("reconstruction: variance explained "));
        QVERIFY(run.out.contains("    0  Hello"));
    }

    void refusesInOneLine_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("sae");
        QTest::addColumn<QString>("reason");
        QTest::newRow("width") << "gpt2_plain" << kFeaturesData + "qwen2_jumprelu_post2"
                               << "the SAE reads 48 values per token at blocks.2.hook_resid_post "
                                  "but the model gives 32 there";
        QTest::newRow("hook_z width")
            << "qwen2" << kFeaturesData + "gemma-scope-2b-pt-att/layer_0/width_56/average_l0_11"
            << "the SAE reads 64 values per token at blocks.0.attn.hook_z but the model gives 48 "
               "there";
        QTest::newRow("Gemma norm elsewhere")
            << "qwen2" << kFeaturesData + "gemma-scope-2-1b-pt/transcoder/layer_1_width_64_l0_small"
            << "the SAE reads model.layers.1.pre_feedforward_layernorm.output, a norm only Gemma 2 "
               "and 3 blocks have";
        QTest::newRow("post-norm block")
            << "opt_post_ln" << kFeaturesData + "gemma2_standard_resid_mid1"
            << "the SAE reads blocks.1.hook_resid_mid: the model's blocks give no such tensor at "
               "this hook (only pre-norm blocks of one residual stream do";
        QTest::newRow("too deep") << "gpt2" << kFeaturesData + "gpt2_plain_topk_post2"
                                  << "the SAE reads blocks.2.hook_resid_post but the model has 2 "
                                     "blocks: the supported hooks are blocks.L.hook_resid_pre, "
                                     "hook_resid_mid, hook_resid_post, hook_attn_out, "
                                     "hook_mlp_out and blocks.L.attn.hook_z (or Gemma Scope 2's "
                                     "model.layers.L names), L from 0 to 1";
        QTest::newRow("no cfg") << "gpt2_plain" << kFeaturesData + "expected"
                                << "has no cfg.json";
    }

    void refusesInOneLine() {
        QFETCH(QString, model);
        QFETCH(QString, sae);
        QFETCH(QString, reason);
        const auto run = runHeadlight({"features", "--model", kFeaturesModels + model, "--sae", sae,
                                       "--ids", "1,2,3", "--backend", "cpu"});
        QCOMPARE(run.exitCode, 1);
        const QString line = test::refusalReason(run, "features");
        QVERIFY2(line.startsWith("headlight features: ") && line.contains(reason),
                 qPrintable(run.err));
        QVERIFY2(!line.contains('\n'), qPrintable(run.err));
        QVERIFY(run.out.isEmpty());
    }

    // params.npz copied out of its release's path: refused without --hook, read with it.
    void gemmaScope1NeedsItsHookOutsideItsRelease() {
        const QString folder = dir_.filePath("copied-npz");
        QDir().mkpath(folder);
        QVERIFY(QFile::copy(kFeaturesData + "gemma-scope-2b-pt-res/layer_1/width_48/average_l0_12/"
                                            "params.npz",
                            folder + "/params.npz"));
        const QStringList command = {"features",    "--model",   kFeaturesModels + "gemma2",
                                     "--sae",       folder,      "--ids",
                                     featuresIds(), "--backend", "cpu",
                                     "--json"};
        auto run = runHeadlight(command);
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(test::refusalReason(run, "features").contains("give it with --hook"),
                 qPrintable(run.err));
        run = runHeadlight(command + QStringList{"--hook", "blocks.1.hook_resid_post"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QJsonObject json = QJsonDocument::fromJson(run.out.toUtf8()).object();
        const QJsonObject golden = featuresGoldenCase("gemma2_gemma_scope_res1");
        QCOMPARE(json["sae"].toObject()["layout"].toString(), QString("gemma-scope"));
        QCOMPARE(json["sae"].toObject()["hook"].toString(), QString("blocks.1.hook_resid_post"));
        QVERIFY(featuresClose(json["reconstruction"].toObject()["mse"].toDouble(),
                              golden["mse"].toDouble(), 1e-4));
        QCOMPARE(json["reconstruction"].toObject()["l0"].toDouble(), golden["l0"].toDouble());
    }

    // A transcoder's reconstruction is of its output hook (the MLP's post-normed output), as
    // the reference computed it.
    void aTranscoderReportsTheMlpOutput() {
        const auto run = runHeadlight(
            {"features", "--model", kFeaturesModels + "gemma3", "--sae",
             kFeaturesData + "gemma-scope-2-1b-pt/transcoder/layer_1_width_64_l0_small", "--ids",
             featuresIds(), "--backend", "cpu", "--json"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QJsonObject json = QJsonDocument::fromJson(run.out.toUtf8()).object();
        const QJsonObject sae = json["sae"].toObject();
        QVERIFY(sae["transcoder"].toBool() && sae["affine_skip"].toBool());
        QCOMPARE(sae["hook_out"].toString(),
                 QString("model.layers.1.post_feedforward_layernorm.output"));
        const QJsonObject golden = featuresGoldenCase("gemma3_gemma_scope_2_transcoder1");
        const QJsonObject quality = json["reconstruction"].toObject();
        QVERIFY(featuresClose(quality["variance_explained"].toDouble(),
                              golden["variance_explained"].toDouble(), 1e-4));
        QVERIFY(featuresClose(quality["mse"].toDouble(), golden["mse"].toDouble(), 1e-4));
    }

    void notesAMissingScalingFactor() {
        const QString folder = dir_.filePath("unscaled");
        QDir().mkpath(folder);
        const QString source = kFeaturesData + "qwen2_jumprelu_post2/";
        for (const char* file : {"cfg.json", "sae_weights.safetensors"})
            QVERIFY(QFile::copy(source + file, folder + "/" + file));
        const auto run = runHeadlight({"features", "--model", kFeaturesModels + "qwen2", "--sae",
                                       folder, "--ids", "1,2,3", "--backend", "cpu", "--json"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QJsonArray notes =
            QJsonDocument::fromJson(run.out.toUtf8()).object()["notes"].toArray();
        QCOMPARE(notes.size(), 1);
        QVERIFY(notes[0].toString().contains("expected_average_only_in but the folder has no "
                                             "scaling factor"));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestFeaturesCli)
#include "test_features_cli.moc"
