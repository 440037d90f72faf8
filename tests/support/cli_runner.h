#pragma once
// Runs the built `headlight` binary as a user would and captures its exit code and output.

#include <QProcess>
#include <QStringList>
#include <QTest>

namespace headlight::test {

struct CliResult {
    int exitCode = -1;
    QString out;
    QString err;
};

inline CliResult runHeadlight(const QStringList& args, int timeoutMs = 120000) {
    QProcess process;
    process.start(QStringLiteral(HEADLIGHT_BINARY), args);
    CliResult result;
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        result.err = "timed out";
        return result;
    }
    result.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    result.out = QString::fromUtf8(process.readAllStandardOutput());
    result.err = QString::fromUtf8(process.readAllStandardError());
    return result;
}
} // namespace headlight::test
