// `headlight --help`, `COMMAND --help`, `--version` and argument mistakes, as a user runs them:
// every command lists each of its options (the spellings scripts use) with a description and an
// example, the usage lines name only declared options, and a mistake in the arguments prints a
// one-line reason, then the usage lines, and exits non-zero.
#include "cli_runner.h"

#include <QProcess>
#include <QRegularExpression>
#include <QTest>
#include <map>

using namespace headlight;
using test::runHeadlight;

namespace {

// Every option each command takes (what it took before the table existed, plus variants'
// --markdown and --write-docs, export's --scenario, about and reproduce), with -h and --help added
// to all.
const std::map<QString, QStringList> kOptions = {
    {"about", {"--backend", "--vulkan-device"}},
    {"convert", {"--model", "--out"}},
    {"devices", {"--backend", "--vulkan-device", "--json"}},
    {"export", {"--list-views",    "--checkpoints", "--revision-filter",
                "--frame-ms",      "--model",       "--revision",
                "--text",          "--text-file",   "--texts",
                "--variant",       "--view",        "--layer",
                "--head",          "--region",      "--pool",
                "--overlay",       "--lambda",      "--sae",
                "--feature",       "--scan",        "--labels",
                "--dpi",           "--size",        "--backend",
                "--vulkan-device", "--out",         "--scene",
                "--scenario"}},
    {"features",
     {"--model", "--revision", "--sae", "--hook", "--text", "--ids", "--top", "--json", "--dump",
      "--labels", "--scan", "--out", "--contexts", "--shard", "--backend", "--vulkan-device"}},
    {"figures",
     {"--corpus", "--out", "--models", "--format", "--dpi", "--backend", "--vulkan-device",
      "--shard", "--variants"}},
    {"heads",
     {"--model", "--revision", "--probe", "--seed", "--probes", "--length", "--pattern",
      "--circuits", "--variant", "--backend", "--vulkan-device", "--json"}},
    {"info", {"--model", "--revision", "--tokens", "--weights", "--json"}},
    {"inspect",
     {"--model",
      "--revision",
      "--text",
      "--text-pair",
      "--no-special-tokens",
      "--ids",
      "--token-type-ids",
      "--attention-mask",
      "--variant",
      "--ablate",
      "--ablation-corpus",
      "--replace-text",
      "--backend",
      "--vulkan-device",
      "--weights",
      "--repeat",
      "--dump",
      "--layers",
      "--heads",
      "--sae",
      "--clamp",
      "--steer",
      "--splice",
      "--steering-vector",
      "--strength",
      "--json"}},
    {"merge", {"--out", "--format", "--dpi"}},
    {"patch",
     {"--model", "--revision", "--clean", "--corrupt", "--target", "--foil", "--grid", "--out",
      "--figure", "--backend", "--vulkan-device"}},
    {"reproduce", {}},
    {"sinks",
     {"--model", "--revision", "--text", "--ids", "--top", "--variant", "--backend",
      "--vulkan-device", "--json"}},
    {"steer",
     {"--model", "--revision", "--positive", "--negative", "--hook", "--out", "--method",
      "--backend", "--vulkan-device"}},
    {"tokenize",
     {"--model", "--revision", "--text", "--text-pair", "--no-special-tokens", "--json"}},
    {"variants", {"--json", "--markdown", "--write-docs"}},
};

// The lines of `text` from the one after `heading` to the next blank line.
QStringList section(const QString& text, const QString& heading) {
    const QStringList lines = text.split('\n');
    const qsizetype start = lines.indexOf(heading);
    if (start < 0) return {};
    QStringList body;
    for (qsizetype i = start + 1; i < lines.size() && !lines[i].isEmpty(); ++i)
        body << lines[i];
    return body;
}

// "  --model DIR   the checkpoint folder" -> {"--model", "the checkpoint folder"}.
std::map<QString, QString> listedOptions(const QString& help) {
    std::map<QString, QString> listed;
    static const QRegularExpression row(R"(^  (-h, --help|--[a-z-]+)( [^ ]+)?\s{2,}(\S.*)$)");
    for (const QString& line : section(help, "options:")) {
        const QRegularExpressionMatch match = row.match(line);
        if (match.hasMatch()) listed[match.captured(1)] = match.captured(3);
    }
    return listed;
}

QStringList usageLines(const QString& text, const QString& command) {
    QStringList usage;
    for (const QString& line : text.split('\n'))
        if (line.startsWith("usage: headlight " + command + " ") ||
            line.startsWith("       headlight " + command + " "))
            usage << line;
    return usage;
}
} // namespace

class TestCliHelp : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyCommandListsItsOptions() {
        for (const auto& [command, options] : kOptions) {
            const test::CliResult run = runHeadlight({command, "--help"});
            QCOMPARE(run.exitCode, 0);
            QCOMPARE(run.err, QString());
            const std::map<QString, QString> listed = listedOptions(run.out);
            QStringList names;
            for (const auto& [flag, description] : listed) {
                names << flag;
                QVERIFY2(description.size() > 8, qPrintable(command + " " + flag));
            }
            QStringList expected = options;
            expected << "-h, --help";
            std::sort(expected.begin(), expected.end());
            QCOMPARE(names, expected);
            const QStringList examples =
                section(run.out, "example:") + section(run.out, "examples:");
            QVERIFY2(!examples.filter("  headlight " + command + " ").isEmpty(),
                     qPrintable(run.out));
            QCOMPARE(runHeadlight({command, "-h"}).out, run.out);
            QCOMPARE(runHeadlight({"help", command}).out, run.out);
        }
    }

    // The usage lines are written by hand beside the options: they must name only declared ones.
    void usageNamesOnlyDeclaredOptions() {
        static const QRegularExpression flag("--[a-z][a-z-]*");
        for (const auto& [command, options] : kOptions) {
            const QStringList usage = usageLines(runHeadlight({command, "--help"}).out, command);
            QVERIFY2(!usage.isEmpty(), qPrintable(command));
            for (const QString& line : usage)
                for (const QRegularExpressionMatch& m : flag.globalMatch(line))
                    QVERIFY2(options.contains(m.captured()),
                             qPrintable(command + ": " + m.captured()));
        }
    }

    void programHelpListsEveryCommand() {
        for (const QStringList& args : {QStringList{"--help"}, QStringList{"-h"}, {"help"}}) {
            const test::CliResult run = runHeadlight(args);
            QCOMPARE(run.exitCode, 0);
            const QStringList commands = section(run.out, "commands (headlight COMMAND --help "
                                                          "lists a command's options):");
            QCOMPARE(commands.size(), qsizetype(kOptions.size()));
            for (const auto& [command, options] : kOptions)
                QVERIFY2(!commands.filter(QRegularExpression("^  " + command + " +\\S")).isEmpty(),
                         qPrintable(command));
            for (const char* window : {"--model DIR", "--open FILE", "--present", "--backend"})
                QVERIFY2(run.out.contains(QString("  ") + window), window);
        }
    }

    void versionIsOneLine() {
        const test::CliResult run = runHeadlight({"--version"});
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(run.out, QStringLiteral("headlight " HEADLIGHT_VERSION "\n"));
    }

    void manPageHasEveryCommand() {
        const test::CliResult run = runHeadlight({"help", "--man"});
        QCOMPARE(run.exitCode, 0);
        QVERIFY(run.out.startsWith(".TH HEADLIGHT 1 "));
        for (const auto& [command, options] : kOptions) {
            QVERIFY2(run.out.contains("\n.SS " + command + "\n"), qPrintable(command));
            for (QString option : options)
                QVERIFY2(run.out.contains("\\fB" + option.replace("-", "\\-") + "\\fR"),
                         qPrintable(option));
        }
    }

    void mistakesPrintTheReasonThenTheUsage_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("reason");
        QTest::newRow("nothing") << QStringList{"export"}
                                 << "headlight export: --model is required";
        QTest::newRow("unknown") << QStringList{"tokenize", "--colour"}
                                 << "headlight tokenize: unknown argument '--colour'";
        QTest::newRow("near option") << QStringList{"tokenize", "--modle", "x"}
                                     << "headlight tokenize: unknown argument '--modle' (did you "
                                        "mean --model?)";
        QTest::newRow("no value") << QStringList{"inspect", "--model"}
                                  << "headlight inspect: --model needs a value";
        QTest::newRow("switch with a value")
            << QStringList{"tokenize", "--json=yes"} << "headlight tokenize: --json takes no value";
        QTest::newRow("stray word")
            << QStringList{"devices", "gpu"} << "headlight devices: unknown argument 'gpu'";
        QTest::newRow("no figure set")
            << QStringList{"figures"}
            << "headlight figures: give the figure set: realformer or variant-effect";
    }

    void mistakesPrintTheReasonThenTheUsage() {
        QFETCH(QStringList, args);
        QFETCH(QString, reason);
        const QString command = args.first();
        const test::CliResult run = runHeadlight(args);
        QCOMPARE(run.exitCode, 1);
        QCOMPARE(run.out, QString());
        const QStringList usage = usageLines(runHeadlight({command, "--help"}).out, command);
        QCOMPARE(run.err, reason + "\n" + usage.join('\n') + "\n");
    }

    void helpWinsOverAMistake() {
        const test::CliResult run = runHeadlight({"export", "--colour", "--help"});
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(run.out, runHeadlight({"export", "--help"}).out);
    }

    // A mistyped command or window option is refused before any window exists, so it is
    // reported with no display too (QT_QPA_PLATFORM=xcb with no DISPLAY aborted in QApplication).
    void unknownWordsAreRefusedBeforeTheWindow_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("reason");
        QTest::newRow("near command")
            << QStringList{"inpsect", "--model", "x"}
            << "headlight: unknown command 'inpsect' (did you mean inspect?); `headlight --help` "
               "lists the commands";
        QTest::newRow("far command") << QStringList{"foo"}
                                     << "headlight: unknown command 'foo'; `headlight --help` "
                                        "lists the commands";
        QTest::newRow("near option") << QStringList{"--modle", "x"}
                                     << "headlight: unknown option '--modle' (did you mean "
                                        "--model?)";
        QTest::newRow("switch with a value")
            << QStringList{"--present=yes"} << "headlight: --present takes no value";
        QTest::newRow("no value") << QStringList{"--screenshot"}
                                  << "headlight: --screenshot needs a value";
    }

    void unknownWordsAreRefusedBeforeTheWindow() {
        QFETCH(QStringList, args);
        QFETCH(QString, reason);
        QProcess process;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert("QT_QPA_PLATFORM", "xcb");
        environment.remove("DISPLAY");
        process.setProcessEnvironment(environment);
        process.start(QStringLiteral(HEADLIGHT_BINARY), args);
        QVERIFY(process.waitForFinished(60000));
        QCOMPARE(process.exitStatus(), QProcess::NormalExit);
        QCOMPARE(process.exitCode(), 2);
        QCOMPARE(QString::fromUtf8(process.readAllStandardError()), reason + "\n");
    }

    // "--flag=value" reads as "--flag value", and a zoo model's name works in --model as in a
    // scene's "model".
    void flagEqualsValueAndZooNames() {
        const test::CliResult spaced =
            runHeadlight({"tokenize", "--model", "pre_ln", "--text", "a b", "--json"});
        QVERIFY2(spaced.exitCode == 0, qPrintable(spaced.err));
        QVERIFY(spaced.out.contains("\"ids\""));
        const test::CliResult equals =
            runHeadlight({"tokenize", "--model=pre_ln", "--text=a b", "--json"});
        QVERIFY2(equals.exitCode == 0, qPrintable(equals.err));
        QCOMPARE(equals.out, spaced.out);
    }

    void helpForAnUnknownCommandFails() {
        const test::CliResult run = runHeadlight({"help", "frobnicate"});
        QCOMPARE(run.exitCode, 1);
        QCOMPARE(run.err, QString("headlight help: unknown command 'frobnicate'\n"
                                  "usage: headlight help [COMMAND | --man]\n"));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestCliHelp)
#include "test_cli_help.moc"
