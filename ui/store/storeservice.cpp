#include "ui/store/storeservice.h"

#include "ui/store/storereader.h"

namespace trainbench::ui {

StoreService::StoreService(QObject* parent) : QObject(parent) {
    qRegisterMetaType<StoreInfo>();
    qRegisterMetaType<RunListPtr>();
    qRegisterMetaType<RunUpdatePtr>();
    qRegisterMetaType<TtaSnapshotPtr>();
    thread_.setObjectName(QStringLiteral("store reader"));
    reader_ = new StoreReader;
    reader_->moveToThread(&thread_);
    connect(&thread_, &QThread::finished, reader_, &QObject::deleteLater);
    connect(reader_, &StoreReader::opened, this, [this](const StoreInfo& info) {
        info_ = info;
        emit opened(info);
    });
    connect(reader_, &StoreReader::runsChanged, this, [this](const RunListPtr& runs) {
        runs_ = runs;
        emit runsChanged(runs);
    });
    connect(reader_, &StoreReader::failed, this, &StoreService::failed);
    connect(reader_, &StoreReader::runUpdated, this, &StoreService::runUpdated);
    connect(reader_, &StoreReader::editFailed, this, &StoreService::editFailed);
    connect(reader_, &StoreReader::timeToAccuracyRead, this, &StoreService::timeToAccuracyRead);
    thread_.start();
}

StoreService::~StoreService() {
    // An owner outliving this (or this itself) must not call back into a half-destroyed service.
    for (const auto& [owner, ids] : followers_) disconnect(owner, &QObject::destroyed, this, nullptr);
    followers_.clear();
    QMetaObject::invokeMethod(reader_, &StoreReader::stop, Qt::BlockingQueuedConnection);
    thread_.quit();
    thread_.wait();
}

void StoreService::open(const QString& path) {
    runs_.reset();
    QMetaObject::invokeMethod(reader_, [r = reader_, path] { r->open(path); }, Qt::QueuedConnection);
}

void StoreService::follow(QObject* owner, const QList<qint64>& ids) {
    QList<qint64> fresh;
    const QList<qint64> before = followers_.count(owner) ? followers_[owner] : QList<qint64>{};
    for (qint64 id : ids)
        if (!before.contains(id)) fresh.append(id);
    if (owner && !followers_.count(owner))
        connect(owner, &QObject::destroyed, this, [this, owner] {
            followers_.erase(owner);
            follow(nullptr, {});
        });
    if (owner) followers_[owner] = ids;
    QList<qint64> all;
    for (const auto& [o, list] : followers_)
        for (qint64 id : list)
            if (!all.contains(id)) all.append(id);
    QMetaObject::invokeMethod(reader_, [r = reader_, all, fresh] { r->follow(all, fresh); }, Qt::QueuedConnection);
}

void StoreService::refresh() { QMetaObject::invokeMethod(reader_, &StoreReader::poll, Qt::QueuedConnection); }

void StoreService::renameRun(qint64 id, const QString& name) {
    QMetaObject::invokeMethod(reader_, [r = reader_, id, name] { r->renameRun(id, name); }, Qt::QueuedConnection);
}

void StoreService::upgrade() {
    // Asked once: a change queued before the reader's opened() arrives must not ask again.
    info_.needsMigration = false;
    QMetaObject::invokeMethod(reader_, &StoreReader::upgrade, Qt::QueuedConnection);
}

quint64 StoreService::requestTimeToAccuracy(double target) {
    const quint64 request = ++ttaRequests_;
    QMetaObject::invokeMethod(reader_, [r = reader_, request, target] { r->readTimeToAccuracy(request, target); },
                              Qt::QueuedConnection);
    return request;
}

void StoreService::deleteRuns(const QList<qint64>& ids) {
    QMetaObject::invokeMethod(reader_, [r = reader_, ids] { r->deleteRuns(ids); }, Qt::QueuedConnection);
}

}  // namespace trainbench::ui
