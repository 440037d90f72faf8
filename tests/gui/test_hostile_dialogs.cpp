// Every hostile checkpoint of the corpus (tests/support/hostile_corpus.h) opened in the window as
// a user would open it: a dialog appears whose reason is the very line the CLI prints for the same
// folder, the model loaded before stays loaded, and after all of them the window still opens a
// good model. Cases the CLI reaches only through --text are left out: the window has no text
// input yet, and it loads a folder whose tokenizer files are broken as "ids only".
#include "cli_runner.h"
#include "golden.h"
#include "hostile_corpus.h"
#include "main_window.h"

#include <QDir>
#include <QLabel>
#include <QMessageBox>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

using namespace headlight;

namespace {

constexpr int kLoadTimeoutMs = 30000;

// The CLI prints control characters of a message escaped, to keep it one line (app/cli/cli.cpp);
// the dialog shows the message as it is. Escaping the dialog's text the same way compares the two.
QString escapedLikeTheCli(const QString& text) {
    QString line;
    for (const QChar c : text) {
        if (c == '\n')
            line += "\\n";
        else if (c == '\r')
            line += "\\r";
        else if (c.unicode() < 0x20 && c != '\t')
            line += QString("\\x%1").arg(c.unicode(), 2, 16, QChar('0'));
        else
            line += c;
    }
    return line;
}

QString statusText(const app::MainWindow& window) {
    QString text;
    for (QLabel* label : window.statusBar()->findChildren<QLabel*>())
        text += label->text();
    return text;
}
} // namespace

class TestHostileDialogs : public QObject {
    Q_OBJECT
    QTemporaryDir root_;
    std::unique_ptr<app::MainWindow> window_; // one window for every case, as a user would keep it

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(root_.isValid());
        window_ = std::make_unique<app::MainWindow>(app::LaunchOptions{});
        window_->show();
        QSignalSpy loaded(&window_->session(), &app::ModelSession::loaded);
        window_->openCheckpoint(test::goldenRoot() + "/gpt2");
        QVERIFY(loaded.wait(kLoadTimeoutMs));
    }

    void dialogGivesTheCliReason_data() {
        QTest::addColumn<int>("index");
        const auto cases = test::hostileCases();
        for (std::size_t i = 0; i < cases.size(); ++i)
            if (!cases[i].input.contains("--text")) QTest::newRow(cases[i].name) << int(i);
    }

    void dialogGivesTheCliReason() {
        QFETCH(int, index);
        const test::HostileCase hostile = test::hostileCases()[std::size_t(index)];
        const QDir folder(root_.filePath(QString::number(index)));
        QVERIFY(QDir().mkpath(folder.path()));
        test::copyGolden(hostile.model, folder);
        hostile.corrupt(folder);

        const QString prefix = "headlight inspect: ";
        const auto cli = test::runHeadlight(
            QStringList{"inspect", "--model", folder.path(), "--json"} + hostile.input, 60000);
        QCOMPARE(cli.exitCode, 1);
        QVERIFY2(cli.err.startsWith(prefix) && cli.err.count('\n') == 1, qPrintable(cli.err));
        const QString cliReason = cli.err.mid(prefix.size()).chopped(1);

        QSignalSpy failed(&window_->session(), &app::ModelSession::failed);
        window_->openCheckpoint(folder.path());
        QVERIFY(failed.wait(kLoadTimeoutMs));
        QMessageBox* dialog = window_->errorDialog();
        QVERIFY(dialog && dialog->isVisible());
        QCOMPARE(dialog->windowTitle(), QString("Cannot open checkpoint"));
        QCOMPARE(dialog->text(), "Headlight cannot open " + folder.path() + ".");
        const QString reason = escapedLikeTheCli(dialog->informativeText());
        QCOMPARE(reason, cliReason);
        qsizetype at = 0; // and it is the refusal this case was written for
        for (const QString& piece : hostile.expected) {
            const qsizetype found = reason.indexOf(piece, at);
            QVERIFY2(found >= 0, qPrintable("expected '" + piece + "' in: " + reason));
            at = found + piece.size();
        }

        QCOMPARE(window_->session().current()->model->spec().architecture, Architecture::Gpt2);
        QVERIFY2(statusText(*window_).startsWith("gpt2  ·  GPT-2 (gpt2) · "),
                 qPrintable(statusText(*window_)));
        dialog->accept();
        QTRY_VERIFY(!window_->errorDialog()); // closed and deleted, ready for the next
    }

    void goodModelLoadsAfterwards() {
        QSignalSpy loaded(&window_->session(), &app::ModelSession::loaded);
        window_->openCheckpoint(test::goldenRoot() + "/bert");
        QVERIFY(loaded.wait(kLoadTimeoutMs));
        QVERIFY(!window_->errorDialog());
        QVERIFY2(statusText(*window_).contains(
                     "bert  ·  BERT (bert) · 2 layers × 4 heads · hidden 32 · cpu"),
                 qPrintable(statusText(*window_)));
        QCOMPARE(window_->windowTitle(), QString("Headlight — bert"));
        QVERIFY(window_->session().current()->tokenizer != nullptr);
    }

    void cleanupTestCase() { window_.reset(); }
};

HEADLIGHT_TEST_MAIN(TestHostileDialogs)
#include "test_hostile_dialogs.moc"
