// File ▸ Open from Hugging Face cache… under the offscreen platform, on a fake cache
// (HF_HUB_CACHE pointed at a temporary folder with real relative symlinks): the dialog lists
// every cached model with its architecture, size on disk, dtype and whether Headlight can run it
// (and why not); the filter box narrows the rows; Open is offered for runnable models only and
// loads the model by its id, which Open recent then remembers and reopens.
#include "hub_cache_dialog.h"
#include "hub_cache_fixture.h"
#include "main_window.h"

#include <QDialogButtonBox>
#include <QLineEdit>
#include <QMenuBar>
#include <QPushButton>
#include <QSettings>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTest>

using namespace headlight;

namespace {
enum Column { Id, ArchitectureColumn, Size, Dtypes, Runs };

int rowOf(const app::HubCacheDialog& dialog, const QString& id) {
    for (int row = 0; row < dialog.table()->rowCount(); ++row)
        if (dialog.table()->item(row, Id)->text() == id) return row;
    return -1;
}

QStringList visibleIds(const app::HubCacheDialog& dialog) {
    QStringList ids;
    for (int row = 0; row < dialog.table()->rowCount(); ++row)
        if (!dialog.table()->isRowHidden(row)) ids << dialog.table()->item(row, Id)->text();
    return ids;
}

QAction* menuAction(QWidget* menuOwner, const QString& text) {
    for (QAction* action : menuOwner->findChildren<QAction*>())
        if (action->text() == text) return action;
    return nullptr;
}
} // namespace

class TestHubCacheDialog : public QObject {
    Q_OBJECT

    test::ScratchDir scratch_;
    std::unique_ptr<test::FakeHubCache> cache_;

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        QVERIFY(scratch_.isValid());
        cache_ = std::make_unique<test::FakeHubCache>(scratch_.filePath("hub"));
        const QString models = QStringLiteral(HEADLIGHT_TEST_DATA "/models");
        cache_->addModel("test-org/tiny-bert", models + "/bert");
        cache_->addModel("test-org/tiny-gpt2", models + "/gpt2_plain");
        cache_->addModel("test-org/tiny-llama", models + "/llama");
        // A model whose weights blob was deleted: listed, with the reason it cannot run.
        cache_->addModel("broken/dangling", models + "/bert");
        QVERIFY(QFile::remove(cache_->blobOf("broken/dangling", "model.safetensors")));
        qputenv("HF_HUB_CACHE", cache_->root().toUtf8());
    }

    void listsEveryCachedModel() {
        app::HubCacheDialog dialog;
        QCOMPARE(visibleIds(dialog), QStringList({"broken/dangling", "test-org/tiny-bert",
                                                  "test-org/tiny-gpt2", "test-org/tiny-llama"}));
        QTableWidget* table = dialog.table();
        const int bert = rowOf(dialog, "test-org/tiny-bert");
        QCOMPARE(table->item(bert, ArchitectureColumn)->text(), QString("bert · BertModel"));
        QCOMPARE(table->item(bert, Dtypes)->text(), QString("F32"));
        QCOMPARE(table->item(bert, Runs)->text(), QString("yes"));
        qint64 bytes = 0;
        for (const QFileInfo& file :
             QDir(cache_->repoFolder("test-org/tiny-bert") + "/blobs").entryInfoList(QDir::Files))
            bytes += file.size();
        QCOMPARE(table->item(bert, Size)->text(), QLocale().formattedDataSize(bytes));
        const int gpt2 = rowOf(dialog, "test-org/tiny-gpt2");
        QCOMPARE(table->item(gpt2, ArchitectureColumn)->text(), QString("gpt2 · GPT2Model"));
        QCOMPARE(table->item(gpt2, Dtypes)->text(), QString("BF16"));
        const int llama = rowOf(dialog, "test-org/tiny-llama");
        QCOMPARE(table->item(llama, ArchitectureColumn)->text(),
                 QString("llama · LlamaForCausalLM"));
        const QString broken = table->item(rowOf(dialog, "broken/dangling"), Runs)->text();
        QVERIFY2(
            broken.startsWith("no: model.safetensors links to ../../blobs/") &&
                broken.endsWith("which does not exist (a dangling link: the blob was deleted)"),
            qPrintable(broken));
    }

    void theFilterNarrowsTheRows() {
        app::HubCacheDialog dialog;
        dialog.filter()->setText("GPT2");
        QCOMPARE(visibleIds(dialog), QStringList({"test-org/tiny-gpt2"}));
        // The architecture column matches too ("LlamaForCausalLM"), and the id column by its parts.
        dialog.filter()->setText("causallm");
        QCOMPARE(visibleIds(dialog), QStringList({"test-org/tiny-llama"}));
        dialog.filter()->setText("test-org/tiny-b");
        QCOMPARE(visibleIds(dialog), QStringList({"test-org/tiny-bert"}));
        dialog.filter()->setText("broken");
        QCOMPARE(visibleIds(dialog), QStringList({"broken/dangling"}));
        dialog.filter()->clear();
        QCOMPARE(visibleIds(dialog).size(), 4);
    }

    void openIsOfferedForRunnableModelsOnly() {
        app::HubCacheDialog dialog;
        QCOMPARE(dialog.table()->currentRow(), rowOf(dialog, "test-org/tiny-bert"));
        QVERIFY(dialog.openButton()->isEnabled());
        dialog.table()->selectRow(rowOf(dialog, "broken/dangling"));
        QVERIFY(!dialog.openButton()->isEnabled());
        dialog.filter()->setText("gpt2"); // hides the selection: the shown runnable row is chosen
        QCOMPARE(dialog.table()->currentRow(), rowOf(dialog, "test-org/tiny-gpt2"));
        QVERIFY(dialog.openButton()->isEnabled());
        dialog.filter()->setText("broken");
        QVERIFY(!dialog.openButton()->isEnabled());
        dialog.filter()->setText("no such model");
        QVERIFY(!dialog.openButton()->isEnabled());
    }

    void openLoadsByIdAndRecentFilesRememberIt() {
        app::MainWindow window({});
        window.show();
        QAction* open = menuAction(window.menuBar(), "Open from &Hugging Face cache…");
        QVERIFY(open);
        open->trigger();
        auto* dialog = window.findChild<app::HubCacheDialog*>();
        QVERIFY(dialog);
        dialog->table()->selectRow(rowOf(*dialog, "test-org/tiny-gpt2"));
        dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Open)->click();
        QTRY_VERIFY_WITH_TIMEOUT(window.session().current() &&
                                     window.session().current()->repoId == "test-org/tiny-gpt2",
                                 60000);
        QCOMPARE(window.windowTitle(), QString("Headlight — test-org/tiny-gpt2"));
        QCOMPARE(QFileInfo(window.session().current()->folder).canonicalFilePath(),
                 QFileInfo(cache_->snapshot("test-org/tiny-gpt2")).canonicalFilePath());
        QCOMPARE(QSettings().value("recentFolders").toStringList().first(),
                 QString("test-org/tiny-gpt2"));

        window.openCheckpoint(QStringLiteral(HEADLIGHT_TEST_DATA "/models/bert"));
        QTRY_VERIFY_WITH_TIMEOUT(
            window.session().current() && window.session().current()->repoId.isEmpty(), 60000);
        QAction* recent = menuAction(window.menuBar(), "test-org/tiny-gpt2");
        QVERIFY(recent);
        recent->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(window.session().current() &&
                                     window.session().current()->repoId == "test-org/tiny-gpt2",
                                 60000);
    }
};

QTEST_MAIN(TestHubCacheDialog)
#include "test_hub_cache_dialog.moc"
