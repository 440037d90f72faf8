#include "atlas_page.h"

#include "analysis/atlas_variant.h"
#include "atlas_export.h"
#include "counted.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QLabel>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

namespace headlight::app {
namespace {

constexpr int kSideWidth = 250; // the strongest keys and the read-outs beside the map

QString regionText(const analysis::AtlasRegion& r) {
    return QStringLiteral("%1:%2,%3:%4").arg(r.q0).arg(r.q1).arg(r.k0).arg(r.k1);
}

QString roundTripped(double value) {
    return QString::number(value, 'g', 17); // round-trips, so --size gives the same page
}

QLabel* sideLabel(QWidget* parent, const QString& name) {
    auto* label = new QLabel(parent);
    label->setObjectName(name);
    label->setWordWrap(true);
    label->setFixedWidth(kSideWidth);
    return label;
}

// "Layer 1, head 2 (longformer mask)": the subject, and the variant whose weights are drawn.
QString drawnSubject(const AtlasResult& result) {
    QString subject = atlasSubject(result.layer, result.head);
    if (const auto& rule = result.atlas->input().variant)
        subject += QStringLiteral(" (%1)").arg(QString::fromStdString(rule->name));
    return subject;
}
} // namespace

AtlasPage::AtlasPage(QWidget* parent)
    : QWidget(parent)
    , runner_(new AtlasRunner(this))
    , view_(new AtlasView(this)) {
    setObjectName(QStringLiteral("atlasPage"));
    queryLabel_ = new QLabel(tr("Strongest keys: click a query row"), this);
    queryLabel_->setWordWrap(true);
    keys_ = new QListWidget(this);
    keys_->setObjectName(QStringLiteral("strongestKeys"));
    QFont listFont = keys_->font();
    listFont.setPixelSize(15);
    keys_->setFont(listFont);
    keys_->setToolTip(tr("Double-click or press Enter to centre the map on the cell"));
    maskLabel_ = sideLabel(this, QStringLiteral("atlasMaskShare"));
    maskLabel_->hide();
    readout_ = sideLabel(this, QStringLiteral("atlasReadout"));
    readout_->setMinimumHeight(3 * fontMetrics().lineSpacing());
    readout_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    auto* side = new QVBoxLayout;
    side->addWidget(maskLabel_);
    side->addWidget(queryLabel_);
    side->addWidget(keys_, 1);
    side->addWidget(readout_);
    auto* body = new QHBoxLayout;
    body->addWidget(view_, 1);
    body->addLayout(side);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(createBar());
    layout->addLayout(body, 1);
    keys_->setFixedWidth(kSideWidth);
    queryLabel_->setFixedWidth(kSideWidth);

    connect(runner_, &AtlasRunner::finished, this, &AtlasPage::onFinished);
    connect(runner_, &AtlasRunner::failed, this, &AtlasPage::onFailed);
    connect(runner_, &AtlasRunner::progress, this,
            [this](double share) { progress_->setValue(int(share * 100.0)); });
    connect(runner_, &AtlasRunner::planned, this,
            [this](const QString& plan) { Q_EMIT message(tr("Memory plan: %1").arg(plan)); });
    connect(runner_, &AtlasRunner::busyChanged, this, [this](bool busy) {
        progress_->setVisible(busy);
        cancel_->setVisible(busy);
        progress_->setValue(0);
    });
    connect(view_, &AtlasView::querySelected, this, &AtlasPage::showStrongestKeys);
    connect(view_, &AtlasView::pictureShown, this, &AtlasPage::showMaskShare);
    connect(view_, &AtlasView::readoutChanged, readout_, &QLabel::setText);
    connect(keys_, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
        view_->centreOn(view_->selectedQuery(), item->data(Qt::UserRole).toLongLong());
    });
    view_->clear(tr("The Atlas draws one head's attention for texts of any length.\nOpen a "
                    "model, then type or open a text file (File ▸ Open text file…)."));
}

QWidget* AtlasPage::createBar() {
    auto* bar = new QWidget(this);
    info_ = new QLabel(bar);
    info_->setObjectName(QStringLiteral("atlasInfo"));
    QFont infoFont = info_->font();
    infoFont.setPixelSize(15);
    info_->setFont(infoFont);
    // Why ignored: a long line (a variant's name, the timings) would widen the window past a
    // 1366-pixel screen; what is cut off is in the tooltip.
    info_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    pooling_ = new QComboBox(bar);
    pooling_->addItem(tr("Mean of each tile"));
    pooling_->addItem(tr("Max of each tile"));
    pooling_->setToolTip(tr("How a tile of many tokens shows the weights it covers"));
    overlay_ = new QCheckBox(tr("Mask outline"), bar);
    overlay_->setObjectName(QStringLiteral("atlasOverlay"));
    overlay_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_M));
    overlay_->setToolTip(tr("Outline the mask the map obeys (the variant's band, blocks, random "
                            "blocks or LSH buckets, else the model's causal rule and window) and "
                            "tell the attention outside it (Ctrl+Shift+M)"));
    progress_ = new QProgressBar(bar);
    progress_->setRange(0, 100);
    progress_->setMaximumWidth(200);
    progress_->hide();
    cancel_ = new QPushButton(tr("Cancel"), bar);
    cancel_->hide();
    canvasButton_ = new QPushButton(tr("Open on canvas"), bar);
    canvasButton_->setToolTip(tr("Draw this atlas on the GPU canvas (Ctrl+Shift+G)"));
    canvasButton_->setEnabled(false);
    connect(canvasButton_, &QPushButton::clicked, this, &AtlasPage::openOnCanvas);
    auto* row = new QHBoxLayout(bar);
    row->setContentsMargins(0, 4, 0, 4);
    row->addWidget(info_, 1);
    row->addWidget(progress_);
    row->addWidget(cancel_);
    row->addWidget(new QLabel(tr("Tiles:"), bar));
    row->addWidget(pooling_);
    row->addWidget(overlay_);
    row->addWidget(canvasButton_);
    connect(pooling_, &QComboBox::currentIndexChanged, this, [this](int index) {
        view_->setPooling(index == 1 ? analysis::TilePooling::Max : analysis::TilePooling::Mean);
    });
    connect(overlay_, &QCheckBox::toggled, this, [this](bool on) {
        view_->setOverlay(on);
        showMaskShare();
    });
    connect(cancel_, &QPushButton::clicked, this, [this] {
        runner_->cancel();
        requestedLayer_ = -1; // so that the same request runs again when asked
        Q_EMIT message(tr("Atlas cancelled"));
    });
    return bar;
}

void AtlasPage::setModel(std::shared_ptr<const LoadedModel> model) {
    model_ = std::move(model);
    runner_->setModel(model_);
    result_.reset();
    canvasButton_->setEnabled(false);
    requestedLayer_ = -1;
    view_->clear(tr("Running the model…"));
    keys_->clear();
}

void AtlasPage::setVariant(const QJsonObject& json, const variants::VariantSpec& spec) {
    variantJson_ = json;
    runner_->setVariant(spec);
}

void AtlasPage::show(const QString& text, int layer, int head) {
    if (!model_) return;
    if (text == requestedText_ && layer == requestedLayer_ && head == requestedHead_ &&
        variantJson_ == requestedVariant_)
        return;
    requestedVariant_ = variantJson_;
    requestedText_ = text;
    requestedLayer_ = layer;
    requestedHead_ = head;
    runner_->request(text, layer, head);
    setInfo(result_ ? result_->tokens : 0, tr("running the model…"));
}

void AtlasPage::setColormap(render::Colormap map) {
    view_->setColormap(map);
}

void AtlasPage::setInfo(int64_t tokens, const QString& detail) {
    QStringList parts;
    if (tokens > 0) parts << counted(tokens, tr("token"));
    if (model_) parts << tr("position limit: %1").arg(positionLimitText(*model_));
    if (!detail.isEmpty()) parts << detail;
    info_->setText(parts.join(QStringLiteral("  ·  ")));
    info_->setToolTip(info_->text());
}

void AtlasPage::onFinished(std::shared_ptr<const AtlasResult> result) {
    result_ = std::move(result);
    shownVariant_ = requestedVariant_; // a stale result never arrives: this is the newest request
    view_->setAtlas(result_->atlas, result_->labels);
    canvasButton_->setEnabled(true);
    keys_->clear();
    queryLabel_->setText(tr("Strongest keys: click a query row"));
    setInfo(result_->tokens, tr("%1 · forward %2 s, atlas %3 s")
                                 .arg(drawnSubject(*result_))
                                 .arg(result_->forwardMs / 1000.0, 0, 'f', 2)
                                 .arg(result_->atlasMs / 1000.0, 0, 'f', 2));
}

void AtlasPage::onFailed(const QString& reason, int64_t tokens) {
    requestedLayer_ = -1; // the same request may succeed later (another model, less text)
    result_.reset();
    canvasButton_->setEnabled(false);
    keys_->clear();
    view_->clear(tr("No atlas: %1").arg(reason));
    showMaskShare();
    setInfo(tokens, tr("not drawn"));
    Q_EMIT failed(reason);
}

void AtlasPage::showStrongestKeys(int64_t query) {
    keys_->clear();
    const analysis::AttentionAtlas* atlas = view_->atlas();
    if (!atlas || query < 0) return;
    const QStringList& labels = view_->labels();
    queryLabel_->setText(
        tr("Strongest keys of query #%1 “%2”:").arg(query).arg(labels.value(int(query))));
    for (const auto& [key, weight] : atlas->strongestKeys(query, kStrongestKeys)) {
        auto* item = new QListWidgetItem(QStringLiteral("#%1  “%2”  %3")
                                             .arg(key)
                                             .arg(labels.value(int(key)))
                                             .arg(double(weight), 0, 'f', 4),
                                         keys_);
        item->setData(Qt::UserRole, qlonglong(key));
        item->setData(Qt::UserRole + 1, double(weight));
    }
}

void AtlasPage::showMaskShare() {
    const AtlasPicture* picture = view_->picture();
    const bool shown = overlay_->isChecked() && view_->atlas() && picture && picture->masked;
    maskLabel_->setVisible(shown);
    if (!shown) return;
    const analysis::AtlasRegion& r = picture->tiles.region;
    maskLabel_->setText(tr("Mask outline: %1 of the attention of queries %2–%3 × keys %4–%5")
                            .arg(outsideMaskText(picture->masked->outsideShare()))
                            .arg(r.q0)
                            .arg(r.q1 - 1)
                            .arg(r.k0)
                            .arg(r.k1 - 1));
}

QStringList AtlasPage::exportCommand(const QString& fileName, const QString& variantFile,
                                     const render::ExportOptions& options) const {
    const LoadedModel& model = *result_->model;
    const bool mean = result_->head == analysis::AttentionAtlas::kAllHeads;
    QStringList command{QStringLiteral("export"),
                        QStringLiteral("--view"),
                        QStringLiteral("atlas"),
                        QStringLiteral("--model"),
                        model.folder,
                        QStringLiteral("--text"),
                        result_->text,
                        QStringLiteral("--layer"),
                        QString::number(result_->layer),
                        QStringLiteral("--head"),
                        mean ? QStringLiteral("mean") : QString::number(result_->head),
                        QStringLiteral("--region"),
                        regionText(view_->visibleRegion()),
                        QStringLiteral("--pool"),
                        view_->pooling() == analysis::TilePooling::Max ? QStringLiteral("max")
                                                                       : QStringLiteral("mean"),
                        QStringLiteral("--backend"),
                        QString::fromLatin1(backendName(model.backend->kind())),
                        QStringLiteral("--dpi"),
                        QString::number(options.dpi),
                        QStringLiteral("--size"),
                        roundTripped(options.inches.width()) + QLatin1Char('x') +
                            roundTripped(options.inches.height())};
    if (!variantFile.isEmpty()) command << QStringLiteral("--variant") << variantFile;
    if (view_->overlay()) command << QStringLiteral("--overlay") << QStringLiteral("mask");
    return command << QStringLiteral("--out") << fileName;
}

void AtlasPage::exportRegion(const QString& path, render::ExportOptions options) const {
    if (!result_ || !view_->atlas())
        throw std::runtime_error("the Atlas has nothing drawn yet; wait for its pass to finish");
    const LoadedModel& model = *result_->model;
    QString variantFile;
    if (!shownVariant_.isEmpty()) {
        const QFileInfo out(path);
        variantFile =
            out.absoluteDir().filePath(out.completeBaseName() + QStringLiteral("-variant.json"));
        QFile file(variantFile);
        if (!file.open(QIODevice::WriteOnly) ||
            file.write(QJsonDocument(shownVariant_).toJson()) < 0)
            throw std::runtime_error("cannot write the variant spec " +
                                     QDir::toNativeSeparators(variantFile).toStdString() + ": " +
                                     file.errorString().toStdString());
    }
    const AtlasExport drawn =
        atlasExport(*view_->atlas(), view_->visibleRegion(), view_->pooling(), result_->labels,
                    result_->layer, view_->overlay(), view_->colormap());
    io::Scenario scenario = atlasScenario(model, result_->text, result_->layer, result_->head);
    scenario.backend = model.backend->kind();
    scenario.variant = shownVariant_;
    const QStringList command = exportCommand(QFileInfo(path).fileName(), variantFile, options);
    options.caption = atlasCaption(model, result_->text, result_->tokens);
    if (!variantFile.isEmpty()) options.caption.variant = QFileInfo(variantFile).completeBaseName();
    options.provenance = atlasProvenance(model, scenario, drawn.figure, command);
    writeAtlasExport(path, drawn, options, command);
}
} // namespace headlight::app
