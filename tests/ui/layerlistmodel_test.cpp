// The layer list model under QAbstractItemModelTester: inserts, removals, moves and resets keep
// the model consistent, and rows read as the layers they are.
#include <QAbstractItemModelTester>
#include <QtTest>

#include "app/experiment/experimentschema.h"
#include "ui/pages/experiment/layerlistmodel.h"

using namespace trainbench;
using nlohmann::ordered_json;

class LayerListModelTest : public QObject {
    Q_OBJECT

private slots:
    void editsKeepTheModelConsistent() {
        const auto schema = app::experimentSchemaJson();
        ui::LayerListModel model(schema["keys"][4]["keys"][1]["layer_types"]);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setLayers({ordered_json{{"type", "flatten"}}, ordered_json{{"type", "dense"}, {"units", 10}}});
        QCOMPARE(model.rowCount(), 2);
        model.insertLayer(0, ordered_json{{"type", "conv2d"}, {"filters", 8}});
        model.insertLayer(1, ordered_json{{"type", "relu"}});
        QCOMPARE(model.index(0).data().toString(), QStringLiteral("conv2d  filters 8"));
        QCOMPARE(model.index(3).data().toString(), QStringLiteral("dense  units 10"));
        model.moveLayer(3, 0);
        QCOMPARE(model.index(0).data().toString(), QStringLiteral("dense  units 10"));
        QCOMPARE(model.index(1).data().toString(), QStringLiteral("conv2d  filters 8"));
        model.moveLayer(0, 3);
        QCOMPARE(model.index(3).data().toString(), QStringLiteral("dense  units 10"));
        model.moveLayer(1, 2);
        QCOMPARE(model.layers()[1]["type"], "flatten");
        QCOMPARE(model.layers()[2]["type"], "relu");
        model.setIssues({QString(), QStringLiteral("[1].units: missing")});
        QCOMPARE(model.index(1).data(Qt::ToolTipRole).toString(), QStringLiteral("[1].units: missing"));
        QVERIFY(model.index(1).data(Qt::ForegroundRole).isValid());
        QVERIFY(model.index(0).data(Qt::ToolTipRole).toString().contains(QStringLiteral("convolution")));
        model.removeLayer(0);
        model.removeLayer(2);
        QCOMPARE(model.rowCount(), 2);
        model.setLayer(0, ordered_json{{"type", "dropout"}, {"rate", 0.5}});
        QCOMPARE(model.index(0).data().toString(), QStringLiteral("dropout  rate 0.5"));
        model.setLayers({});
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_MAIN(LayerListModelTest)
#include "layerlistmodel_test.moc"
