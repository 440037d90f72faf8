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

// Why a refusal was given: stderr's one line, when every line after it is one of the command's
// usage lines (printed after a mistake in the arguments themselves); otherwise all of stderr, so
// that a second line of any other kind fails the caller's check for one line.
inline QString refusalReason(const CliResult& result, const QString& command) {
    QStringList lines = result.err.split(QLatin1Char('\n'));
    if (lines.size() < 2 || !lines.last().isEmpty()) return result.err;
    lines.removeLast();
    for (const QString& line : lines.mid(1))
        if (!line.startsWith("usage: headlight " + command + " ") &&
            !line.startsWith("       headlight " + command + " "))
            return result.err;
    return lines.first();
}
} // namespace headlight::test
