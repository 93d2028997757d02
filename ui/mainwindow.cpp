#include "ui/mainwindow.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>
#include <QStyle>
#include <QStyleFactory>
#include <QSysInfo>
#include <QDir>
#include <QHBoxLayout>
#include <QVBoxLayout>

#include "profiler/report/report.h"
#include "profiler/store/runstore.h"
#include "ui/dialogs/aboutdialog.h"
#include "ui/dialogs/storeupgradeprompt.h"
#include "ui/pages/compare/comparepage.h"
#include "ui/pages/dashboard/dashboardpage.h"
#include "ui/pages/experiment/experimentpage.h"
#include "ui/pages/plan/planpage.h"
#include "ui/pages/inference/inferencepage.h"
#include "ui/pages/runspage.h"
#include "ui/store/storeservice.h"

static void initResources() { Q_INIT_RESOURCE(trainbench); }

namespace trainbench::ui {

namespace {

QPalette darkPalette() {
    QPalette p;
    const QColor window(0x2b, 0x2d, 0x30), base(0x1f, 0x20, 0x22), text(0xe6, 0xe6, 0xe6), accent(0x3b, 0x82, 0xc4);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, window);
    p.setColor(QPalette::ToolTipBase, base);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, QColor(0x90, 0x90, 0x90));
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::red);
    p.setColor(QPalette::Highlight, accent);
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, accent.lighter(130));
    p.setColor(QPalette::Disabled, QPalette::Text, QColor(0x80, 0x80, 0x80));
    p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(0x80, 0x80, 0x80));
    p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(0x80, 0x80, 0x80));
    return p;
}

}  // namespace

MainWindow::MainWindow(const QString& storePath, QWidget* parent) : QMainWindow(parent) {
    initResources();
    setWindowTitle(QStringLiteral("trainbench"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/trainbench.svg")));
    systemPalette_ = QApplication::palette();
    systemStyle_ = QApplication::style()->name();
    store_ = new StoreService(this);
    launcher_ = new RunLauncher(this);

    experiment_ = new ExperimentPage;
    dashboard_ = new DashboardPage(*store_);
    runs_ = new RunsPage(*store_);
    compare_ = new ComparePage(*store_);
    plan_ = new PlanPage(*store_);
    inference_ = new InferencePage(*store_);
    stack_ = new QStackedWidget;
    nav_ = new QListWidget;
    nav_->setIconSize(QSize(28, 28));
    nav_->setViewMode(QListView::IconMode);
    nav_->setMovement(QListView::Static);
    nav_->setFlow(QListView::TopToBottom);
    nav_->setSpacing(6);
    nav_->setFixedWidth(104);
    nav_->setWordWrap(true);
    nav_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    nav_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    struct PageDef {
        QWidget* widget;
        const char* name;
        const char* icon;
        const char* tip;
    };
    const PageDef pages[] = {
        {experiment_, "Experiment", ":/icons/experiment.svg", "Set up an experiment file and run it (Ctrl+1)"},
        {dashboard_, "Dashboard", ":/icons/dashboard.svg", "The live dashboard of one run (Ctrl+2)"},
        {runs_, "Runs", ":/icons/runs.svg", "Every run in the store (Ctrl+3)"},
        {compare_, "Compare", ":/icons/compare.svg", "Two or more runs side by side (Ctrl+4)"},
        {plan_, "Plan", ":/icons/plan.svg",
         "Which configuration reaches a target accuracy within a deadline and a budget (Ctrl+5)"},
        {inference_, "Inference", ":/icons/inference.svg",
         "Load tests by server configuration: latency against throughput, precisions side by side (Ctrl+6)"},
    };
    for (const PageDef& p : pages) {
        auto* item = new QListWidgetItem(QIcon(QString::fromLatin1(p.icon)), tr(p.name));
        item->setToolTip(tr(p.tip));
        item->setTextAlignment(Qt::AlignHCenter);
        item->setSizeHint(QSize(92, 64));
        nav_->addItem(item);
        stack_->addWidget(p.widget);
    }
    connect(nav_, &QListWidget::currentRowChanged, stack_, &QStackedWidget::setCurrentIndex);
    // Above the pages: what the window will and will not do to the store (older or newer schema).
    storeBanner_ = new QLabel;
    storeBanner_->setObjectName(QStringLiteral("storeBanner"));
    storeBanner_->setWordWrap(true);
    storeBanner_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    storeBanner_->setStyleSheet(QStringLiteral(
        "QLabel { background: #fff4ce; color: #3d3100; border: 1px solid #e3c86b; border-radius: 4px; padding: 6px 10px; }"));
    storeBanner_->hide();
    auto* central = new QWidget;
    auto* outer = new QVBoxLayout(central);
    outer->setContentsMargins(4, 4, 4, 4);
    outer->addWidget(storeBanner_);
    auto* layout = new QHBoxLayout;
    layout->addWidget(nav_);
    layout->addWidget(stack_, 1);
    outer->addLayout(layout, 1);
    setCentralWidget(central);

    storeLabel_ = new QLabel;
    storeLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    statusBar()->addPermanentWidget(storeLabel_);

    connect(store_, &StoreService::opened, this, &MainWindow::onStoreOpened);
    connect(store_, &StoreService::failed, this, [this](const QString& m) {
        statusBar()->showMessage(tr("Run store: %1").arg(m));
        storeLabel_->setText(tr("no store: %1").arg(m));
    });
    connect(store_, &StoreService::runsChanged, this, &MainWindow::onRunsChanged);
    connect(experiment_, &ExperimentPage::runRequested, this, &MainWindow::launch);
    connect(experiment_, &ExperimentPage::titleChanged, this,
            [this](const QString& t) { nav_->item(0)->setToolTip(tr("Experiment: %1 (Ctrl+1)").arg(t)); });
    connect(runs_, &RunsPage::openRun, this, [this](qint64 id) {
        dashboard_->showRun(id);
        showPage(Page::Dashboard);
    });
    connect(inference_, &InferencePage::openRun, this, [this](qint64 id) {
        dashboard_->showRun(id);
        showPage(Page::Dashboard);
    });
    connect(runs_, &RunsPage::compareRuns, this, [this](const QList<qint64>& ids) {
        compare_->compare(ids);
        showPage(Page::Compare);
    });
    connect(runs_, &RunsPage::exportReport, this, &MainWindow::exportReport);
    connect(dashboard_, &DashboardPage::tryExperiment, this, [this](const QString& json) {
        experiment_->setJson(json);
        showPage(Page::Experiment);
        statusBar()->showMessage(tr("The run's experiment with the action's changes: check it, then Run (Ctrl+R)"), 8000);
    });
    connect(dashboard_, &DashboardPage::failed, this, [this](const QString& m) { statusBar()->showMessage(m, 8000); });
    connect(launcher_, &RunLauncher::launchFailed, this,
            [this](const QString& m) { QMessageBox::warning(this, tr("Run"), m); });
    connect(launcher_, &RunLauncher::launched, this, [this](const LaunchedRun& r) {
        awaitingRun_.append(r.pid);
        statusBar()->showMessage(tr("Started %1 (process %2)").arg(QFileInfo(r.experiment).fileName()).arg(r.pid), 5000);
    });
    connect(launcher_, &RunLauncher::finished, this, &MainWindow::onLaunchFinished);

    buildMenus();
    restoreSettings();
    openStore(storePath);
}

MainWindow::~MainWindow() = default;

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(experiment_->newAction());
    file->addAction(experiment_->openAction());
    file->addAction(experiment_->saveAction());
    file->addAction(experiment_->saveAsAction());
    file->addSeparator();
    QAction* openStoreAction = file->addAction(tr("Open run store…"), this, &MainWindow::chooseStore);
    openStoreAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    QAction* report = file->addAction(tr("Export report…"), this, [this] {
        QList<qint64> ids;
        if (currentPage() == Page::Dashboard && dashboard_->runId() > 0) ids = {dashboard_->runId()};
        else if (currentPage() == Page::Compare) ids = compare_->runs();
        else ids = runs_->selectedRuns();
        exportReport(ids);
    });
    report->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    report->setToolTip(tr("HTML or PDF report of the dashboard's run, the compared runs, or the selected runs"));
    file->addSeparator();
    QAction* quit = file->addAction(tr("Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    run->addAction(experiment_->runAction());
    QAction* refresh = run->addAction(tr("Refresh"), store_, &StoreService::refresh);
    refresh->setShortcut(QKeySequence::Refresh);
    QAction* stopAll = run->addAction(tr("Stop runs started here"), this, [this] { launcher_->stopAll(); });
    stopAll->setToolTip(tr("Ask every run this window started to stop after its current step"));

    QMenu* view = menuBar()->addMenu(tr("&View"));
    const char* names[] = {"&Experiment", "&Dashboard", "&Runs", "&Compare", "&Plan", "&Inference"};
    for (int i = 0; i < 6; ++i) {
        QAction* a = view->addAction(tr(names[i]), this, [this, i] { showPage(static_cast<Page>(i)); });
        a->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + i)));
    }
    view->addSeparator();
    QMenu* theme = view->addMenu(tr("Theme"));
    auto* group = new QActionGroup(this);
    const std::pair<const char*, Theme> themes[] = {{"System", Theme::System}, {"Light", Theme::Light}, {"Dark", Theme::Dark}};
    for (const auto& [name, t] : themes) {
        QAction* a = theme->addAction(tr(name), this, [this, t = t] { setTheme(t); });
        a->setCheckable(true);
        a->setChecked(t == theme_);
        a->setData(static_cast<int>(t));
        group->addAction(a);
    }

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("About trainbench"), this, [this] { AboutDialog(this).exec(); });
}

void MainWindow::showPage(Page page) {
    nav_->setCurrentRow(static_cast<int>(page));
    stack_->setCurrentIndex(static_cast<int>(page));
}

MainWindow::Page MainWindow::currentPage() const { return static_cast<Page>(stack_->currentIndex()); }

void MainWindow::openStore(const QString& path) {
    storePath_ = path;
    storeLabel_->setText(tr("opening %1…").arg(path));
    store_->open(path);
}

void MainWindow::chooseStore() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open run store"), QFileInfo(store_->info().path).absolutePath(),
                                                      tr("Run stores (*.db *.sqlite);;All files (*)"));
    if (!path.isEmpty()) openStore(path);
}

void MainWindow::onStoreOpened(const StoreInfo& info) {
    QString text = tr("%1 · schema %2").arg(QDir::toNativeSeparators(info.path)).arg(info.schemaVersion);
    if (!info.exists) text = tr("%1 · no runs yet").arg(QDir::toNativeSeparators(info.path));
    if (info.needsMigration) text += tr(" · older schema, not changed");
    showStoreBanner(info);
    if (info.readOnly) {
        text += tr(" · read-only");
        QMessageBox* box = new QMessageBox(QMessageBox::Information, tr("Read-only run store"), info.readOnlyReason,
                                           QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    }
    storeLabel_->setText(text);
    storeLabel_->setToolTip(info.readOnly ? info.readOnlyReason
                            : !info.exists ? tr("No run store at this path yet: the first run you start creates it")
                                           : tr("The run store this window shows (schema version %1; this program knows up "
                                                "to %2)").arg(info.schemaVersion).arg(info.binarySchemaVersion));
    QSettings().setValue(QStringLiteral("store/last"), info.path);
    emit storeOpened(info);
}

void MainWindow::showStoreBanner(const StoreInfo& info) {
    if (info.needsMigration) {
        storeBanner_->setText(
            tr("<b>This run store was written by an older trainbench</b> (schema %1; this one uses schema %2). "
               "It is shown as it is and the file is not changed. Renaming or deleting a run, or starting a run in "
               "this store, first asks to upgrade it.")
                .arg(info.schemaVersion)
                .arg(info.binarySchemaVersion));
    } else if (info.readOnly) {
        storeBanner_->setText(tr("<b>Read-only run store.</b> %1").arg(info.readOnlyReason.toHtmlEscaped()));
    }
    storeBanner_->setVisible(info.needsMigration || info.readOnly);
}

void MainWindow::onRunsChanged(const RunListPtr& list) {
    if (!list) return;
    // A launched process's run has appeared (or, for a sweep, its next run): show it.
    const std::string host = QSysInfo::machineHostName().toStdString();
    for (const profiler::RunRow& r : list->runs) {  // newest first
        if (r.host != host) continue;
        auto it = runOfPid_.find(r.pid);
        const bool awaited = awaitingRun_.contains(r.pid);
        if (!awaited && (it == runOfPid_.end() || it->second >= r.id.value)) continue;
        awaitingRun_.removeAll(r.pid);
        runOfPid_[r.pid] = r.id.value;
        dashboard_->showRun(r.id.value);
        showPage(Page::Dashboard);
    }
}

void MainWindow::launch(const QString& experimentFile) {
    // The run process writes to the store, and would upgrade an older schema: ask first.
    if (!StoreUpgradePrompt::confirm(this, *store_, tr("start a run in it"))) return;
    // The store the window shows (or is opening): the run records there and appears here.
    launcher_->launch(experimentFile, storePath_);
}

void MainWindow::onLaunchFinished(const LaunchedRun& run, const QString& logTail) {
    awaitingRun_.removeAll(run.pid);
    store_->refresh();
    if (runOfPid_.count(run.pid)) return;  // it recorded a run: the store tells how it ended
    // It ended before recording a run: an invalid experiment, a missing dataset, ...
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Run did not start"),
                                tr("%1 ended before it recorded a run.").arg(QFileInfo(run.experiment).fileName()),
                                QMessageBox::Ok, this);
    box->setInformativeText(tr("Its output is in %1").arg(run.logPath));
    box->setDetailedText(logTail);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::exportReport(const QList<qint64>& ids) {
    if (ids.isEmpty()) {
        QMessageBox::information(this, tr("Export report"), tr("Select one or more runs on the Runs page first."));
        return;
    }
    QSettings settings;
    const QString folder = settings.value(QStringLiteral("report/folder"),
                                          QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation)).toString();
    const QString suggested = ids.size() == 1 ? QStringLiteral("run-%1.html").arg(ids.front())
                                              : QStringLiteral("runs-%1.html").arg(ids.size());
    QString filter;
    QString path = QFileDialog::getSaveFileName(this, tr("Export report"), folder + QLatin1Char('/') + suggested,
                                                tr("HTML report (*.html);;PDF report (*.pdf)"), &filter);
    if (path.isEmpty()) return;
    const bool pdf = path.endsWith(QStringLiteral(".pdf"), Qt::CaseInsensitive) || filter.contains(QStringLiteral("PDF"));
    if (pdf && !path.endsWith(QStringLiteral(".pdf"), Qt::CaseInsensitive)) path += QStringLiteral(".pdf");
    settings.setValue(QStringLiteral("report/folder"), QFileInfo(path).absolutePath());
    startReport(ids, path, pdf);
}

void MainWindow::startReport(const QList<qint64>& ids, const QString& path, bool pdf) {
    statusBar()->showMessage(tr("Writing %1…").arg(QFileInfo(path).fileName()));
    // A job: its own store connection, off the GUI thread; the result comes back queued.
    const std::string db = store_->info().path.toStdString();
    std::vector<profiler::RunId> runs;
    for (qint64 id : ids) runs.push_back(profiler::RunId{id});
    reports_.start(
        [db, runs, path, pdf] {
            QString error;
            try {
                auto store = profiler::RunStore::open(db, profiler::OpenMode::ReadOnly);
                const profiler::ReportData report = profiler::collectReport(store, runs);
                if (pdf) profiler::writePdf(report, path.toStdString());
                else profiler::writeHtml(report, path.toStdString());
            } catch (const std::exception& e) {
                error = QString::fromUtf8(e.what());
            }
            return error;
        },
        [this, path](const QString& error) { reportFinished(path, error); });
}

void MainWindow::reportFinished(const QString& path, const QString& error) {
    if (!error.isEmpty()) {
        statusBar()->clearMessage();
        QMessageBox::warning(this, tr("Export report"), error);
        return;
    }
    statusBar()->showMessage(tr("Wrote %1").arg(QDir::toNativeSeparators(path)), 10000);
    emit reportWritten(path);
}

void MainWindow::setTheme(Theme theme) {
    theme_ = theme;
    if (theme == Theme::System) {
        if (QApplication::style()->name() != systemStyle_) QApplication::setStyle(QStyleFactory::create(systemStyle_));
        QApplication::setPalette(systemPalette_);
    } else {
        QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
        QApplication::setPalette(theme == Theme::Dark ? darkPalette() : QApplication::style()->standardPalette());
    }
    QSettings().setValue(QStringLiteral("view/theme"), static_cast<int>(theme));
}

void MainWindow::changeEvent(QEvent* event) {
    // The desktop's palette changed (e.g. the user switched to dark): follow it in System mode.
    if (event->type() == QEvent::ApplicationPaletteChange && theme_ == Theme::System) systemPalette_ = QApplication::palette();
    QMainWindow::changeEvent(event);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (onClose_ == OnClose::Ask && experiment_->isModified()) {
        const auto answer = QMessageBox::question(this, tr("Unsaved experiment"),
                                                  tr("The experiment %1 has unsaved changes. Close anyway?").arg(experiment_->title()),
                                                  QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Cancel);
        if (answer != QMessageBox::Discard) {
            event->ignore();
            return;
        }
    }
    const auto& running = launcher_->running();
    if (!running.empty()) {
        OnClose what = onClose_;
        if (what == OnClose::Ask) {
            QMessageBox box(QMessageBox::Question, tr("Runs still running"),
                            tr("%n run(s) started here are still running.", nullptr, static_cast<int>(running.size())), {}, this);
            box.setInformativeText(tr("Left running, they keep recording to the store and show up here next time."));
            QPushButton* stop = box.addButton(tr("Stop them"), QMessageBox::DestructiveRole);
            QPushButton* leave = box.addButton(tr("Leave them running"), QMessageBox::AcceptRole);
            box.addButton(QMessageBox::Cancel);
            box.setDefaultButton(leave);
            box.exec();
            if (box.clickedButton() == stop) what = OnClose::StopRuns;
            else if (box.clickedButton() == leave) what = OnClose::LeaveRunning;
            else {
                event->ignore();
                return;
            }
        }
        if (what == OnClose::StopRuns) launcher_->stopAll();
    }
    saveSettings();
    event->accept();
}

void MainWindow::saveSettings() const {
    QSettings s;
    s.setValue(QStringLiteral("window/geometry"), saveGeometry());
    s.setValue(QStringLiteral("window/state"), saveState());
    s.setValue(QStringLiteral("window/page"), static_cast<int>(currentPage()));
}

void MainWindow::restoreSettings() {
    QSettings s;
    if (!restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray())) resize(1280, 820);
    restoreState(s.value(QStringLiteral("window/state")).toByteArray());
    showPage(static_cast<Page>(std::clamp(s.value(QStringLiteral("window/page"), 2).toInt(), 0, 5)));
    const int theme = s.value(QStringLiteral("view/theme"), 0).toInt();
    if (theme != 0) setTheme(static_cast<Theme>(theme));
    for (QAction* a : findChildren<QAction*>())
        if (a->isCheckable() && a->data().isValid() && a->actionGroup()) a->setChecked(a->data().toInt() == static_cast<int>(theme_));
    const QString last = ExperimentPage::recentFiles().value(0);
    if (!last.isEmpty() && QFileInfo::exists(last)) experiment_->loadFile(last);
}

}  // namespace trainbench::ui
