// Ctrl-C during `headlight inspect` (app/cli/cli_interrupt.h): a long pass prints its progress on
// stderr; SIGINT sent once it has started stops the command between layers with one line
// ("headlight inspect: cancelled"), a non-zero exit and no dump file.
#include "golden.h"

#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>

using namespace headlight;

namespace {
constexpr int kInterruptWaitMs = 120000; // a ceiling for a loaded CI machine, not a measurement

// 512 ids: a long pass, which shows its progress.
QString interruptIds() {
    QStringList ids;
    for (int i = 0; i < 512; ++i)
        ids << QString::number(3 + i * 7 % 700);
    return ids.join(',');
}
} // namespace

class TestCliInterrupt : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private Q_SLOTS:
    void interruptStopsInspectBetweenLayers() {
        const QString dump = dir_.filePath("interrupted.safetensors");
        QProcess process;
        // Why --repeat: the tiny golden Llama runs a pass in milliseconds, so the command runs
        // long enough for the signal to find it in a pass.
        process.start(QStringLiteral(HEADLIGHT_BINARY),
                      {"inspect", "--model", test::goldenRoot() + "/llama", "--backend", "cpu",
                       "--ids", interruptIds(), "--repeat", "100000", "--dump", dump});
        QVERIFY(process.waitForStarted(kInterruptWaitMs));
        process.setReadChannel(QProcess::StandardError);
        QByteArray err;
        while (!err.contains("layer 1 of 2") && process.waitForReadyRead(kInterruptWaitMs))
            err += process.readAllStandardError();
        QVERIFY2(err.contains("headlight inspect: layer 1 of 2"), err.constData());
        QCOMPARE(::kill(pid_t(process.processId()), SIGINT), 0);
        QVERIFY(process.waitForFinished(kInterruptWaitMs));
        err += process.readAllStandardError();
        QCOMPARE(process.exitStatus(), QProcess::NormalExit);
        QCOMPARE(process.exitCode(), 1);
        const QList<QByteArray> lines = err.trimmed().split('\n');
        QCOMPARE(lines.last(), QByteArray("headlight inspect: cancelled"));
        QVERIFY(!QFileInfo::exists(dump));
        QVERIFY(process.readAllStandardOutput().isEmpty());
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestCliInterrupt)
#include "test_cli_interrupt.moc"
