// The experiment form is generated from the schema and round-trips every key: a value entered in a
// widget as a user would is written to the JSON exactly, and the JSON loaded into a fresh form shows
// it again. The keys are read from the schema, so a key added later is tested without a change here.
#include <cmath>
#include <functional>

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QRadioButton>
#include <QtTest>

#include <nlohmann/json.hpp>

#include "app/experiment/experiment.h"
#include "app/experiment/experimentschema.h"
#include "ui/pages/experiment/boolfield.h"
#include "ui/pages/experiment/choicefield.h"
#include "ui/pages/experiment/jsonformat.h"
#include "ui/pages/experiment/layerlisteditor.h"
#include "ui/pages/experiment/layerlistmodel.h"
#include "ui/pages/experiment/numberfield.h"
#include "ui/pages/experiment/numberspinbox.h"
#include "ui/pages/experiment/schemaform.h"
#include "ui/pages/experiment/textfield.h"

using namespace trainbench;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

struct Leaf {
    QString path;
    json schema;
};

// Every key the form has a field for, from the schema (sections recursed; the layer list and the
// sweep have their own editors and tests).
std::vector<Leaf> leaves(const json& section, const QString& path = {}) {
    std::vector<Leaf> out;
    for (const json& key : section["keys"]) {
        const QString p = (path.isEmpty() ? QString() : path + QLatin1Char('.')) + QString::fromStdString(key["key"].get<std::string>());
        if (key["type"] == "object") {
            for (Leaf& l : leaves(key, p)) out.push_back(std::move(l));
        } else if (key["type"] != "layers" && key["type"] != "sweep") {
            out.push_back({p, key});
        }
    }
    return out;
}

bool inRange(const json& key, double v) {
    if (key.contains("minimum")) {
        const double m = key["minimum"].get<double>();
        if (key.value("exclusive_minimum", false) ? v <= m : v < m) return false;
    }
    if (key.contains("maximum")) {
        const double m = key["maximum"].get<double>();
        if (key.value("exclusive_maximum", false) ? v >= m : v > m) return false;
    }
    return true;
}

// A value valid for the key (type, range, choices) that is not its default.
json nonDefault(const json& key) {
    const std::string type = key["type"];
    const json def = key.value("default", json());
    if (type == "boolean") return !(def.is_boolean() && def.get<bool>());
    if (type == "enum") {
        for (const json& c : key["choices"])
            if (c != def) return c;
    }
    if (type == "string") return "alt-value";
    if (type == "path") return "/tmp/alt/path";
    if (type == "integer") {
        const double base = def.is_number() ? def.get<double>() : key.value("minimum", 0.0);
        for (double c : {base + 1, base - 1, base + 2})
            if (inRange(key, c) && json(static_cast<std::int64_t>(c)) != def) return static_cast<std::int64_t>(c);
    }
    if (type == "number") {
        const double base = def.is_number() ? def.get<double>() : 0.0;
        for (double c : {base * 2, base / 2, 0.5, 0.25, base + 1})
            if (c != base && inRange(key, c)) return c;
    }
    return nullptr;
}

// Enters v the way a user would: clicks, typing, choosing.
void enter(ui::FieldWidget* field, const json& v) {
    if (auto* b = qobject_cast<ui::BoolField*>(field)) {
        do b->checkBox()->click();
        while (b->checkBox()->isChecked() != v.get<bool>());
    } else if (auto* n = qobject_cast<ui::NumberField*>(field)) {
        QTest::keyClicks(n->spinBox(), v.is_number_float() ? ui::NumberSpinBox::format(v.get<double>())
                                                           : QString::fromStdString(v.dump()));
    } else if (auto* c = qobject_cast<ui::ChoiceField*>(field)) {
        c->comboBox()->setCurrentIndex(c->comboBox()->findText(QString::fromStdString(v.get<std::string>())));
    } else if (auto* t = qobject_cast<ui::TextField*>(field)) {
        QTest::keyClicks(t->lineEdit(), QString::fromStdString(v.get<std::string>()));
    } else {
        QFAIL(qPrintable("no way to enter a value into " + field->keyPath()));
    }
}

// What the widget shows, as the JSON value it stands for.
json shown(ui::FieldWidget* field) {
    if (auto* b = qobject_cast<ui::BoolField*>(field)) return b->checkBox()->isChecked();
    if (auto* n = qobject_cast<ui::NumberField*>(field)) return json::parse(n->spinBox()->text().toStdString());
    if (auto* c = qobject_cast<ui::ChoiceField*>(field)) return c->comboBox()->currentText().toStdString();
    if (auto* t = qobject_cast<ui::TextField*>(field)) return t->lineEdit()->text().toStdString();
    return nullptr;
}

json nested(const QString& path, const json& value) {
    json out = value;
    const QStringList steps = path.split(QLatin1Char('.'));
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) out = json{{it->toStdString(), out}};
    return out;
}

QString text(const json& j) { return QString::fromStdString(j.dump()); }

}  // namespace

class ExperimentFormTest : public QObject {
    Q_OBJECT

private slots:
    void everyLeafKeyRoundTripsThroughTheWidgets() {
        const json schema = app::experimentSchemaJson();
        const std::vector<Leaf> keys = leaves(schema);
        QVERIFY2(keys.size() > 60, "the schema has more keys than this");
        for (const Leaf& leaf : keys) {
            const json value = nonDefault(leaf.schema);
            QVERIFY2(!value.is_null(), qPrintable("no valid non-default value for " + leaf.path));
            ui::SchemaForm form(schema);
            ui::FieldWidget* field = form.field(leaf.path);
            QVERIFY2(field, qPrintable("no field for " + leaf.path));
            QVERIFY2(!field->isSet(), qPrintable(leaf.path));
            QSignalSpy edited(&form, &ui::SchemaForm::edited);
            enter(field, value);
            QVERIFY2(!edited.isEmpty(), qPrintable(leaf.path + ": entering a value is an edit"));
            // The JSON holds exactly that key with that value, nothing else (defaults stay out).
            const json written(form.toJson());
            QVERIFY2(written == nested(leaf.path, value), qPrintable(leaf.path + ": wrote " + text(written) + ", entered " + text(value)));
            // Loaded into a fresh form, the widget shows it.
            ui::SchemaForm fresh(schema);
            fresh.setJson(form.toJson());
            ui::FieldWidget* again = fresh.field(leaf.path);
            QVERIFY2(again->isSet(), qPrintable(leaf.path));
            QVERIFY2(again->value() == value, qPrintable(leaf.path + ": " + text(again->value())));
            QVERIFY2(shown(again) == value, qPrintable(leaf.path + ": the widget shows " + text(shown(again))));
            QVERIFY2(json(fresh.toJson()) == written, qPrintable(leaf.path));
        }
    }

    void unsetFieldsShowTheirDefaultAndEveryFieldHasATooltip() {
        ui::SchemaForm form(app::experimentSchemaJson());
        for (ui::FieldWidget* f : form.fields()) {
            QVERIFY2(f->label()->toolTip().contains(QString::fromStdString(f->schema()["description"].get<std::string>()).toHtmlEscaped()),
                     qPrintable(f->keyPath()));
            QVERIFY2(f->editor()->toolTip().contains(QStringLiteral("Default:")), qPrintable(f->keyPath()));
        }
        auto* batch = qobject_cast<ui::NumberField*>(form.field(QStringLiteral("train.batch_size")));
        QVERIFY(batch);
        QCOMPARE(batch->spinBox()->text(), QString());
        QVERIFY(batch->editor()->toolTip().contains(QStringLiteral("&gt;= 1 and &lt;= 65536")));
        auto* type = qobject_cast<ui::ChoiceField*>(form.field(QStringLiteral("optimizer.type")));
        QCOMPARE(type->comboBox()->placeholderText(), QStringLiteral("default: adam"));
        QCOMPARE(json(form.toJson()), json::object());
    }

    void resetLeavesTheKeyOut() {
        ui::SchemaForm form(app::experimentSchemaJson());
        form.setJson(ordered_json::parse(R"({"train": {"epochs": 3, "batch_size": 64}})"));
        form.field(QStringLiteral("train.epochs"))->reset();
        QCOMPARE(text(json(form.toJson())), QStringLiteral(R"({"train":{"batch_size":64}})"));
    }

    void layersRoundTripWithAddAndReorder() {
        const json schema = app::experimentSchemaJson();
        ui::SchemaForm form(schema);
        ui::LayerListEditor* layers = form.layerEditor();
        QVERIFY(layers);
        layers->addLayer(QStringLiteral("conv2d"));
        QCOMPARE(layers->layerFields().front()->keyPath(), QStringLiteral("model.layers[0].filters"));
        enter(layers->layerFields().front(), 32);  // filters
        layers->addLayer(QStringLiteral("flatten"));
        layers->addLayer(QStringLiteral("relu"));
        layers->moveCurrent(-1);  // relu before flatten
        layers->setCurrentRow(2);
        layers->addLayer(QStringLiteral("dense"));  // after the selected layer
        enter(layers->layerFields().front(), 10);  // units
        QVERIFY(form.oneOfButton(QStringLiteral("model.layers"))->isChecked());
        const std::string expected =
            R"({"model":{"layers":[{"type":"conv2d","filters":32},{"type":"relu"},{"type":"flatten"},{"type":"dense","units":10}]}})";
        QCOMPARE(QString::fromStdString(form.toJson().dump()), QString::fromStdString(expected));  // ordered: "type" first, as people write layers

        ui::SchemaForm fresh(schema);
        fresh.setJson(form.toJson());
        QCOMPARE(fresh.toJson().dump(), expected);
        QVERIFY(fresh.oneOfButton(QStringLiteral("model.layers"))->isChecked());
        QCOMPARE(fresh.layerEditor()->model()->rowCount(), 4);
        QCOMPARE(fresh.layerEditor()->model()->index(3).data().toString(), QStringLiteral("dense  units 10"));
        fresh.layerEditor()->setCurrentRow(0);
        QCOMPARE(fresh.layerEditor()->typeBox()->currentText(), QStringLiteral("conv2d"));
        QCOMPARE(shown(fresh.layerEditor()->layerFields().front()), json(32));
        // The parser reads the same model.
        const app::Experiment x = app::parseExperiment(fresh.toJson().dump(), "t.json");
        QCOMPARE(x.model.layers.size(), std::size_t(4));
    }

    void layerKeysActInTheListOnly() {
        ui::SchemaForm form(app::experimentSchemaJson());
        form.setJson(ordered_json::parse(R"({"model": {"layers": [{"type": "flatten"}, {"type": "dense", "units": 10}]}})"));
        form.setCurrentIndex(2);
        form.show();
        QVERIFY(QTest::qWaitForWindowActive(&form));
        ui::LayerListEditor* layers = form.layerEditor();
        layers->setCurrentRow(1);
        layers->view()->setFocus();
        QTest::keyClick(layers->view(), Qt::Key_Up, Qt::AltModifier);
        QCOMPARE(form.toJson()["model"]["layers"][0]["type"], "dense");
        // Delete in the units field edits the number, it does not remove the layer.
        ui::FieldWidget* units = layers->layerFields().front();
        units->editor()->setFocus();
        QTest::keyClick(units->editor(), Qt::Key_End);
        QTest::keyClick(units->editor(), Qt::Key_Backspace);
        QTest::keyClick(units->editor(), Qt::Key_Delete);
        QCOMPARE(layers->model()->rowCount(), 2);
        layers->view()->setFocus();
        QTest::keyClick(layers->view(), Qt::Key_Delete);
        QCOMPARE(layers->model()->rowCount(), 1);
        QCOMPARE(form.toJson()["model"]["layers"][0]["type"], "flatten");
    }

    void changingALayersTypeKeepsTheKeysTheNewTypeHas() {
        ui::SchemaForm form(app::experimentSchemaJson());
        form.setJson(ordered_json::parse(R"({"model": {"layers": [{"type": "conv2d", "filters": 8, "stride": 2}]}})"));
        ui::LayerListEditor* layers = form.layerEditor();
        layers->setCurrentRow(0);
        layers->typeBox()->setCurrentIndex(layers->typeBox()->findText(QStringLiteral("maxpool2d")));
        emit layers->typeBox()->activated(layers->typeBox()->currentIndex());
        QCOMPARE(form.toJson()["model"]["layers"][0].dump(), std::string(R"({"type":"maxpool2d","stride":2})"));
        layers->removeCurrent();
        QVERIFY(!layers->isSet());
    }

    void presetAndLayersAreOneChoice() {
        ui::SchemaForm form(app::experimentSchemaJson());
        form.setJson(ordered_json::parse(R"({"model": {"layers": [{"type": "flatten"}, {"type": "dense", "units": 10}]}})"));
        enter(form.field(QStringLiteral("model.preset")), "cnn");
        // Choosing a preset makes the file use it; the layers stay in the editor, out of the file.
        QCOMPARE(form.toJson().dump(), std::string(R"({"model":{"preset":"cnn"}})"));
        form.oneOfButton(QStringLiteral("model.layers"))->click();
        QCOMPARE(form.toJson()["model"].size(), std::size_t(1));
        QVERIFY(form.toJson()["model"].contains("layers"));
    }

    void keysTheFormDoesNotKnowAreKept() {
        ui::SchemaForm form(app::experimentSchemaJson());
        form.setJson(ordered_json::parse(R"({"train": {"bach_size": 64, "epochs": "two"}, "colour": "red"})"));
        enter(form.field(QStringLiteral("train.max_steps")), 5);
        // The typo, the wrongly typed value and the unknown section survive an edit in the form.
        QCOMPARE(json(form.toJson()), json::parse(R"({"train": {"epochs": "two", "max_steps": 5, "bach_size": 64}, "colour": "red"})"));
        QVERIFY(form.field(QStringLiteral("train.epochs"))->isSet());
        // Typing into it replaces what the file held.
        auto* epochs = qobject_cast<ui::NumberField*>(form.field(QStringLiteral("train.epochs")));
        QTest::keyClicks(epochs->spinBox(), QStringLiteral("2"));
        QCOMPARE(form.toJson()["train"]["epochs"].dump(), std::string("2"));
    }

    void shippedExperimentsComeBackOutEquivalent() {
        const QDir dir(QStringLiteral(TRAINBENCH_SOURCE_DIR "/experiments"));
        const QStringList files = dir.entryList({QStringLiteral("*.json")}, QDir::Files);
        QVERIFY(files.size() >= 3);
        for (const QString& name : files) {
            const std::string path = dir.filePath(name).toStdString();
            QFile file(dir.filePath(name));
            QVERIFY(file.open(QIODevice::ReadOnly));
            const std::string original = file.readAll().toStdString();
            ui::SchemaForm form(app::experimentSchemaJson());
            form.setJson(ordered_json::parse(original));
            const std::string out = ui::formatExperimentJson(form.toJson());
            const json a = app::parseExperiment(original, path).resolved;
            const json b = app::parseExperiment(out, path).resolved;
            QVERIFY2(a == b, qPrintable(name + ":\n" + QString::fromStdString(out)));
        }
    }
};

QTEST_MAIN(ExperimentFormTest)
#include "experimentform_test.moc"
