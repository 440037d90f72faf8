// The SHA-256 of a checkpoint's files for the exports' provenance (app/session/file_hashes.h),
// against coreutils' sha256sum: a file of several read blocks, and a hash stopped part-way (the
// window stops the background hash when the model is replaced or the window closes), which
// throws, naming the file, and leaves nothing cached.
#include "file_hashes.h"
#include "temp_files.h"

#include <QProcess>
#include <QTest>

using namespace headlight;

namespace {
QString sha256sum(const QString& path) {
    QProcess process;
    process.start("sha256sum", {path});
    if (!process.waitForFinished(60000)) return {};
    return QString::fromLatin1(process.readAllStandardOutput()).section(' ', 0, 0);
}

// 9 MiB and 5 bytes of a pattern that differs from block to block.
QByteArray patternBytes() {
    QByteArray bytes((9 << 20) + 5, Qt::Uninitialized);
    for (qsizetype i = 0; i < bytes.size(); ++i)
        bytes[i] = char((i * 2654435761u) >> 13);
    return bytes;
}
} // namespace

class TestFileHashes : public QObject {
    Q_OBJECT
    test::ScratchDir scratch_;

private Q_SLOTS:
    void aFileOfSeveralBlocksHashesAsSha256sumDoes() {
        const QString path = scratch_.freshPath(".safetensors");
        test::writeFile(path, patternBytes());
        const QString expected = sha256sum(path);
        QCOMPARE(expected.size(), 64);
        QCOMPARE(app::fileSha256(path), expected);
    }

    void aStoppedHashThrowsAndCachesNothing() {
        const QString path = scratch_.freshPath(".safetensors");
        test::writeFile(path, patternBytes());
        const std::atomic<bool> stop = true;
        try {
            app::fileSha256(path, &stop);
            QFAIL("a stopped hash returned");
        } catch (const app::FileHashError& error) {
            QCOMPARE(QString(error.what()), QStringLiteral("hashing %1 was stopped").arg(path));
        }
        QCOMPARE(app::fileSha256(path), sha256sum(path));
    }

    void anUnreadableFileIsNamed() {
        const QString path = scratch_.filePath("missing.safetensors");
        try {
            app::fileSha256(path);
            QFAIL("a missing file hashed");
        } catch (const app::FileHashError& error) {
            QVERIFY2(QString(error.what()).startsWith("cannot hash " + path + ": "), error.what());
        }
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestFileHashes)
#include "test_file_hashes.moc"
