// Headlight never touches the network: people open folders from strangers, and a loader that
// fetched a "remote code" file or phoned home would be the hole. Each run below is traced with
// strace (every thread and child process) and must create no AF_INET or AF_INET6 socket and
// connect to no such address; AF_UNIX sockets (D-Bus, X11) and AF_NETLINK (the Vulkan loader and
// udev enumerating devices) are local and allowed.
//
// Covered: start-up of the CLI, `devices`, `tokenize`, `inspect` on CPU and Vulkan (lavapipe)
// with a JSON summary and a safetensors dump (the export path), and the window itself under the
// offscreen platform, opening a checkpoint, for a few seconds.
#include "golden.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

namespace {

struct Traced {
    int exitCode = -1;
    QString output; // the traced program's stdout and stderr
    QString trace;  // strace's log: one line per socket/connect/openat call
};

// Runs `command` under strace. The trace goes to a file, not stderr, so the program's own output
// stays apart.
Traced traced(const QStringList& command, const QString& logPath) {
    const QString strace = QStandardPaths::findExecutable("strace");
    if (strace.isEmpty()) qFatal("strace is not installed (tools/setup.sh installs it)");
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    // Why: LeakSanitizer cannot run under ptrace and would fail an ASan-built binary at exit; the
    // asan suite finds leaks in every other test.
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    const QString asan = environment.value("ASAN_OPTIONS");
    environment.insert("ASAN_OPTIONS", (asan.isEmpty() ? "" : asan + ":") + "detect_leaks=0");
    process.setProcessEnvironment(environment);
    process.start(strace,
                  QStringList{"-f", "-qq", "-e", "trace=socket,connect,openat", "-o", logPath} +
                      command);
    Traced result;
    if (!process.waitForFinished(180000)) {
        process.kill();
        process.waitForFinished();
        result.output = "timed out";
        return result;
    }
    result.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    result.output = QString::fromUtf8(process.readAll());
    QFile log(logPath);
    if (log.open(QIODevice::ReadOnly)) result.trace = QString::fromUtf8(log.readAll());
    return result;
}

// The lines of the trace that create or reach an Internet socket.
QStringList networkCalls(const QString& trace) {
    static const QRegularExpression internet(
        R"(\b(socket\((AF_INET|AF_INET6|PF_INET|PF_INET6)\b|connect\(.*sa_family=AF_INET6?\b))");
    QStringList found;
    for (const QString& line : trace.split('\n'))
        if (internet.match(line).hasMatch()) found << line;
    return found;
}
} // namespace

class TestNoNetwork : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    int runNumber_ = 0;

    Traced run(const QStringList& command) {
        return traced(command, dir_.filePath(QString("trace-%1.log").arg(++runNumber_)));
    }

private Q_SLOTS:
    // The detector itself: a program that does open an Internet socket must be caught, or the
    // checks below would pass by seeing nothing.
    void detectsAnInternetSocket() {
        const QString bash = QStandardPaths::findExecutable("bash");
        QVERIFY(!bash.isEmpty());
        // bash's /dev/tcp opens an AF_INET socket and connects; nothing listens on port 9.
        const Traced run = traced({bash, "-c", "exec 3<>/dev/tcp/127.0.0.1/9 || true"},
                                  dir_.filePath("trace-detector.log"));
        QVERIFY2(!networkCalls(run.trace).isEmpty(), qPrintable(run.trace));
    }

    void cliCommandsStayOffline() {
        const QString bert = headlight::test::goldenRoot() + "/bert";
        const QString llama = headlight::test::goldenRoot() + "/llama";
        const QString binary = QStringLiteral(HEADLIGHT_BINARY);
        const QString dump = dir_.filePath("dump.safetensors");
        const QList<QStringList> commands = {
            {binary, "--version"},
            {binary, "devices", "--json"},
            {binary, "tokenize", "--model", bert, "--text", "Hello, world!", "--json"},
            {binary, "tokenize", "--model", llama, "--text", "Hello, world!"},
            {binary, "info", "--model", llama},
            {binary, "inspect", "--model", bert, "--text", "Hello, world!", "--json", "--dump",
             dump},
            {binary, "inspect", "--model", llama, "--ids", "1,2,3", "--json", "--backend",
             "vulkan"},
        };
        for (const QStringList& command : commands) {
            const Traced result = run(command);
            QVERIFY2(result.exitCode == 0, qPrintable(command.join(' ') + ": " + result.output));
            QVERIFY2(result.trace.contains("openat("), "strace traced nothing");
            QVERIFY2(networkCalls(result.trace).isEmpty(),
                     qPrintable(command.join(' ') + ":\n" + networkCalls(result.trace).join('\n')));
        }
        QVERIFY(QFile::exists(dump));
    }

    void windowStaysOffline() {
        qputenv("QT_QPA_PLATFORM", "offscreen");
        // Why timeout inside strace: killing strace would detach it and leave the window running;
        // timeout kills the window after 4 s and strace then ends with it. Why the shell around
        // it: strace re-raises its child's fatal signal on itself, so the status is reported by
        // the shell instead, where a crash (139) and the intended kill (137) stay apart.
        const Traced result = run({"/bin/sh", "-c", "timeout -s KILL 4 \"$@\"; echo \"exit $?\"",
                                   "sh", QStringLiteral(HEADLIGHT_BINARY), "--model",
                                   headlight::test::goldenRoot() + "/bert"});
        // 137: killed by timeout while running, as intended; anything else means it quit early.
        QVERIFY2(result.exitCode == 0 && result.output.contains("exit 137"),
                 qPrintable(QString("exit %1: %2").arg(result.exitCode).arg(result.output)));
        // Proof that the window got as far as a platform: Qt loaded the offscreen plugin.
        QVERIFY2(result.trace.contains("libqoffscreen.so"),
                 "the offscreen platform plugin was not loaded");
        QVERIFY2(networkCalls(result.trace).isEmpty(),
                 qPrintable(networkCalls(result.trace).join('\n')));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestNoNetwork)
#include "test_no_network.moc"
