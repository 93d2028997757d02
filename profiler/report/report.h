#pragma once
// Reports of one or more runs: a self-contained HTML page (inline CSS, charts as inline SVG, no
// external resources), a PDF of the same (A4, charts drawn as vectors), and each chart on its own
// as SVG, PNG or CSV. The CLI (`trainbench-cli report`) and the GUI's export both call these.
//
//   ReportData data = collectReport(store, {RunId{3}, RunId{4}});  // reads the store once
//   writeHtml(data, "report.html");
//   writePdf(data, "report.pdf");
//   for (const Chart& c : reportCharts(data)) writeChartPng(c, c.id + ".png");
//
// Only what the store records is shown; a value it does not hold reads "not recorded". Every
// function throws ReportError naming what was wrong and where (the run, the output file).
// collectReport needs the RunStore's thread; the rest are pure functions of ReportData (safe on any
// thread). writePdf and writeChartPng need Qt Gui: with no QGuiApplication in the process (the CLI)
// they create one on the `offscreen` platform for the duration of the call — then call them from
// the main thread; with a QCoreApplication that is not a QGuiApplication they throw.
#include <string>
#include <vector>

#include "profiler/report/chart.h"
#include "profiler/report/reportdata.h"
#include "profiler/report/reporterror.h"
#include "profiler/store/runid.h"

namespace trainbench::profiler {

class RunStore;

// Reads the runs, in this order (a run given twice is read once). Throws ReportError "no run 7 in runs.db" for a missing run (and
// lets StoreError through when the store cannot be read).
ReportData collectReport(RunStore& store, const std::vector<RunId>& runs);
// The same by id or name, as the CLI takes them (RunStore::findRun).
ReportData collectReport(RunStore& store, const std::vector<std::string>& idsOrNames);

// The charts of the report, in the order it shows them: per run (loss, accuracy, step-time
// breakdown, throughput), then for 2+ runs the comparison (accuracy by step and by time, breakdown
// by run, scaling). Long series are downsampled to a few hundred points.
std::vector<Chart> reportCharts(const ReportData& data);

// The whole report as one HTML document (UTF-8).
std::string renderHtml(const ReportData& data);
// Written whole or not at all (temporary file, then rename).
void writeHtml(const ReportData& data, const std::string& path);
// The same content as an A4 PDF: text and tables laid out by QTextDocument, the charts drawn from
// the same SVG as vectors, page breaks between runs and never inside a chart.
void writePdf(const ReportData& data, const std::string& path);

// One chart: SVG text (pure C++), CSV of its series ("series,x,y", one row per point), PNG.
std::string chartSvg(const Chart& chart);
std::string chartCsv(const Chart& chart);
void writeChartSvg(const Chart& chart, const std::string& path);
void writeChartCsv(const Chart& chart, const std::string& path);
void writeChartPng(const Chart& chart, const std::string& path, int widthPixels = 1600);

}  // namespace trainbench::profiler
