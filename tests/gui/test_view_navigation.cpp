// The window finds its views: at 1280×800 the view bar shows every view (the figure views, the
// panel views, the GPU canvas and the Atlas) as a button inside the window, none hidden behind a
// scroll arrow or overlapping another, and one click on each opens it. Ctrl+K opens the palette:
// a few letters find a view, a built-in lesson, a zoo model or a command, and Enter runs it.
#include "classroom.h"
#include "default_model.h"
#include "main_window.h"
#include "view_bar.h"

#include <QAbstractButton>
#include <QLineEdit>
#include <QSet>
#include <QStandardPaths>
#include <QTest>
#include <QTreeWidget>
#include <algorithm>

using namespace headlight;

namespace {

const app::PaletteEntry* entryNamed(const std::vector<app::PaletteEntry>& entries,
                                    const QString& text) {
    const auto found = std::find_if(entries.begin(), entries.end(),
                                    [&](const app::PaletteEntry& e) { return e.text == text; });
    return found == entries.end() ? nullptr : &*found;
}

// The palette the window opened on Ctrl+K.
app::CommandPalette* openPalette(app::MainWindow& window) {
    window.activateWindow();
    if (!QTest::qWaitForWindowActive(&window)) return nullptr;
    QTest::keyClick(&window, Qt::Key_K, Qt::ControlModifier);
    app::CommandPalette* palette = nullptr;
    const auto visiblePalette = [&] {
        palette = window.findChild<app::CommandPalette*>();
        return palette && palette->isVisible();
    };
    if (!QTest::qWaitFor(visiblePalette, 5000) || !QTest::qWaitForWindowActive(palette))
        return nullptr;
    return palette;
}
} // namespace

class TestViewNavigation : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    // The table's rows: one per ViewKind in its order, each with exactly one builder, the single
    // figures (what `headlight export` draws as one figure) first, and distinct ids and labels.
    void everyViewHasOneRowWithOneBuilder() {
        QSet<QString> ids, names;
        for (int i = 0; i < app::kAllViewCount; ++i) {
            const app::ViewRow& row = app::viewRow(app::ViewKind(i));
            QCOMPARE(int(row.kind), i);
            QVERIFY2((row.figure != nullptr) != (row.panels != nullptr), row.id);
            QCOMPARE(row.figure != nullptr, i < app::kViewCount);
            QCOMPARE(app::isPanelView(app::ViewKind(i)), i >= app::kViewCount);
            QVERIFY(!QString(row.summary).isEmpty() && !app::viewGroupName(row.group).isEmpty());
            ids << app::viewId(app::ViewKind(i));
            names << app::viewName(app::ViewKind(i));
        }
        QCOMPARE(ids.size(), app::kAllViewCount);
        QCOMPARE(names.size(), app::kAllViewCount);
    }

    void everyViewIsOneClickAwayAt1280By800() {
        app::MainWindow window({});
        window.resize(1280, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        app::ViewBar* bar = window.workspace()->viewBar();
        QCOMPARE(bar->count(), app::kAllViewCount + 2); // the GPU canvas and the Atlas
        std::vector<QRect> places;
        for (int i = 0; i < bar->count(); ++i) {
            QAbstractButton* button = bar->button(i);
            QVERIFY2(button->isVisible(), qPrintable(button->text()));
            const QRect place(button->mapTo(&window, QPoint(0, 0)), button->size());
            QVERIFY2(window.rect().contains(place), qPrintable(button->text()));
            for (const QRect& other : places)
                QVERIFY2(!other.intersects(place), qPrintable(button->text()));
            places.push_back(place);
        }
        // Three rows at most, so that the figure keeps the height a projector needs.
        QVERIFY2(bar->height() <= 3 * places.front().height() + 8,
                 qPrintable(QString::number(bar->height())));
        for (int i = bar->count() - 1; i >= 0; --i) {
            QTest::mouseClick(bar->button(i), Qt::LeftButton);
            QCOMPARE(bar->currentIndex(), i);
            QVERIFY(bar->button(i)->isChecked());
            if (i < app::kAllViewCount) QCOMPARE(window.workspace()->view(), app::ViewKind(i));
        }
        QCOMPARE(window.workspace()->view(), app::ViewKind::Heatmap);
    }

    void theBarFollowsViewsChosenElsewhere() {
        app::MainWindow window({});
        window.workspace()->setView(app::ViewKind::LogitLens);
        app::ViewBar* bar = window.workspace()->viewBar();
        QCOMPARE(bar->currentIndex(), int(app::ViewKind::LogitLens));
        QVERIFY(bar->button(int(app::ViewKind::LogitLens))->isChecked());
        QVERIFY(!bar->button(int(app::ViewKind::Heatmap))->isChecked());
    }

    void paletteRanksAPrefixThenWordStartsThenInsideThenLettersInOrder() {
        QCOMPARE(app::paletteMatch("", "Heatmap"), 0);
        QCOMPARE(app::paletteMatch("head r", "Head roles"), 100 + 3 + 3);
        QCOMPARE(app::paletteMatch("roles", "Head roles"), 3);
        QCOMPARE(app::paletteMatch("oles", "Head roles"), 2);
        QCOMPARE(app::paletteMatch("hrl", "Head roles"), 1);
        QCOMPARE(app::paletteMatch("ROLES head", "Head roles"), 6); // any order, any case
        QCOMPARE(app::paletteMatch("head x", "Head roles"), -1);    // every word must match
        QCOMPARE(app::paletteMatch("lor", "Head roles"), -1);       // letters out of order
        QVERIFY(app::paletteMatch("ent", "Entropy") > app::paletteMatch("ent", "Experts · View"));
    }

    void paletteOffersViewsLessonsZooModelsAndCommands() {
        app::MainWindow window({});
        new app::Classroom(&window);
        const std::vector<app::PaletteEntry> entries = window.paletteEntries();
        const app::PaletteEntry* heatmap = entryNamed(entries, "Heatmap");
        QVERIFY(heatmap);
        QCOMPARE(heatmap->where, QStringLiteral("View · Ctrl+1"));
        for (int i = 0; i < app::kAllViewCount; ++i)
            QVERIFY2(entryNamed(entries, app::viewName(app::ViewKind(i))),
                     qPrintable(app::viewName(app::ViewKind(i))));
        QVERIFY(entryNamed(entries, "Open checkpoint folder…"));
        QVERIFY(!entryNamed(entries, "Find a view, lesson, model or command…")); // not itself
        const auto lessons =
            std::count_if(entries.begin(), entries.end(), [](const app::PaletteEntry& e) {
                return e.where == QStringLiteral("File ▸ Built-in lessons");
            });
        QVERIFY2(lessons >= 8, qPrintable(QString::number(lessons)));
        QVERIFY(app::resourcesFolder());
        const auto models =
            std::count_if(entries.begin(), entries.end(), [](const app::PaletteEntry& e) {
                return e.text.startsWith(QStringLiteral("Open zoo model: "));
            });
        QVERIFY2(models >= 10, qPrintable(QString::number(models)));
        QVERIFY(entryNamed(entries, "Open zoo model: pre_ln"));
    }

    void ctrlKThenAFewLettersAndEnterOpensTheView() {
        app::MainWindow window({});
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        app::CommandPalette* palette = openPalette(window);
        QVERIFY(palette);
        QCOMPARE(palette->focusWidget(), palette->filter()); // typing goes to the filter
        QTest::keyClicks(palette->filter(), "head rol");
        QVERIFY(palette->list()->topLevelItemCount() >= 1);
        QCOMPARE(palette->list()->currentItem()->text(0), QStringLiteral("Head roles"));
        QTest::keyClick(palette->filter(), Qt::Key_Return);
        QTRY_COMPARE(window.workspace()->view(), app::ViewKind::HeadRoles);
        QTRY_VERIFY(!window.findChild<app::CommandPalette*>());

        // Down moves the choice from the filter; the second match runs.
        palette = openPalette(window);
        QVERIFY(palette);
        QTest::keyClicks(palette->filter(), "jsd");
        QVERIFY(palette->list()->topLevelItemCount() >= 2);
        const QString second = palette->list()->topLevelItem(1)->text(0);
        QTest::keyClick(palette->filter(), Qt::Key_Down);
        QCOMPARE(palette->list()->currentItem()->text(0), second);
        QTest::keyClick(palette->filter(), Qt::Key_Return);
        QTRY_COMPARE(app::viewName(window.workspace()->view()), second);
    }

    void aQueryThatFindsNothingRunsNothing() {
        app::MainWindow window({});
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        const app::ViewKind before = window.workspace()->view();
        app::CommandPalette* palette = openPalette(window);
        QVERIFY(palette);
        QTest::keyClicks(palette->filter(), "qqzzxx");
        QCOMPARE(palette->list()->topLevelItemCount(), 0);
        QVERIFY(!palette->runSelected());
        QVERIFY(palette->isVisible());
        QCOMPARE(window.workspace()->view(), before);
    }
};

HEADLIGHT_TEST_MAIN(TestViewNavigation)
#include "test_view_navigation.moc"
