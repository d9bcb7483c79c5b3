package io.flexlink.bench;

import io.flexlink.config.ByteSizes;
import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.FieldPosition;
import java.text.NumberFormat;
import java.text.ParsePosition;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * --plot FILE.png: out-of-place busbw of FlexLink (and of the baseline) against size on a log-2 axis
 * (algbw on one rank, where busbw is 0: the rows' {@link Row.Basis}), with each auxiliary path's share on a
 * second axis (dashed). One series per type/operation/root, at most {@link #MAX_COMBOS} of them.
 */
final class PlotWriter {
    static final int WIDTH = 900;
    static final int HEIGHT = 500;
    static final int MAX_COMBOS = 6;

    private PlotWriter() {
    }

    static void write(Path file, String title, List<Row> rows, List<String> auxPaths) throws IOException {
        System.setProperty("java.awt.headless", "true");
        Map<String, XYSeries[]> combos = new LinkedHashMap<>();
        Map<String, TreeMap<Long, double[]>> shares = new LinkedHashMap<>();
        for (String p : auxPaths) {
            shares.put(p, new TreeMap<>());
        }
        boolean single = countCombos(rows) == 1;
        Row.Basis basis = rows.isEmpty() ? Row.Basis.BUSBW : rows.get(0).basis;
        for (Row r : rows) {
            if (r.bytes <= 0) {
                continue;
            }
            String key = r.type.ncclName() + " " + r.opName() + (r.root >= 0 ? " root " + r.root : "");
            XYSeries[] s = combos.get(key);
            if (s == null && combos.size() < MAX_COMBOS) {
                s = new XYSeries[] {new XYSeries(single ? "FlexLink" : "FlexLink " + key, true, true),
                        new XYSeries(single ? "baseline (called directly)" : "baseline " + key, true, true)};
                combos.put(key, s);
            }
            if (s != null) {
                s[0].add(r.bytes, basis.of(r.outOfPlace));
                if (r.baseline != null) {
                    s[1].add(r.bytes, basis.of(r.baseline));
                }
            }
            for (int i = 0; i < auxPaths.size() && i < r.shares.length; i++) {
                double[] acc = shares.get(auxPaths.get(i)).computeIfAbsent(r.bytes, b -> new double[2]);
                acc[0] += r.shares[i];
                acc[1]++;
            }
        }
        XYSeriesCollection bw = new XYSeriesCollection();
        for (XYSeries[] s : combos.values()) {
            bw.addSeries(s[0]);
            if (s[1].getItemCount() > 0) {
                bw.addSeries(s[1]);
            }
        }
        XYSeriesCollection sh = new XYSeriesCollection();
        for (Map.Entry<String, TreeMap<Long, double[]>> e : shares.entrySet()) {
            XYSeries s = new XYSeries("share " + e.getKey(), true, true);
            for (Map.Entry<Long, double[]> p : e.getValue().entrySet()) {
                s.add((double) p.getKey(), p.getValue()[0] / p.getValue()[1]);
            }
            sh.addSeries(s);
        }

        LogAxis x = new LogAxis("size (bytes)");
        x.setBase(2);
        x.setSmallestValue(1);
        x.setNumberFormatOverride(new SizeFormat());
        // ticks on whole powers of 2, at most about 12 of them
        double lo = Double.MAX_VALUE;
        double hi = 1;
        for (Row r : rows) {
            if (r.bytes > 0) {
                lo = Math.min(lo, r.bytes);
                hi = Math.max(hi, r.bytes);
            }
        }
        double powers = lo == Double.MAX_VALUE ? 1 : Math.log(hi / lo) / Math.log(2);
        x.setTickUnit(new NumberTickUnit(Math.max(1, Math.ceil(powers / 12))), false, true);
        NumberAxis y = new NumberAxis(basis.label() + " (GB/s)");
        y.setAutoRangeIncludesZero(true);
        XYPlot plot = new XYPlot(bw, x, y, new XYLineAndShapeRenderer(true, true));
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        if (sh.getSeriesCount() > 0) {
            NumberAxis shareAxis = new NumberAxis("auxiliary share");
            shareAxis.setRange(0, 1);
            plot.setRangeAxis(1, shareAxis);
            plot.setDataset(1, sh);
            plot.mapDatasetToRangeAxis(1, 1);
            XYLineAndShapeRenderer dashed = new XYLineAndShapeRenderer(true, false);
            for (int i = 0; i < sh.getSeriesCount(); i++) {
                dashed.setSeriesStroke(i, new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f,
                        new float[] {6f, 4f}, 0f));
            }
            plot.setRenderer(1, dashed);
        }
        String t = title + (combos.size() < countCombos(rows) ? " (first " + MAX_COMBOS + " type/op series)" : "");
        JFreeChart chart = new JFreeChart(t, JFreeChart.DEFAULT_TITLE_FONT, plot, true);
        chart.setBackgroundPaint(Color.WHITE);
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        ChartUtils.saveChartAsPNG(file.toFile(), chart, WIDTH, HEIGHT);
    }

    private static int countCombos(List<Row> rows) {
        java.util.Set<String> keys = new java.util.HashSet<>();
        for (Row r : rows) {
            if (r.bytes > 0) {
                keys.add(r.type + "/" + r.opName() + "/" + r.root);
            }
        }
        return keys.size();
    }

    /** Tick labels as sizes: 1K, 64K, 16M. */
    private static final class SizeFormat extends NumberFormat {
        private static final long serialVersionUID = 1L;

        @Override
        public StringBuffer format(double number, StringBuffer toAppendTo, FieldPosition pos) {
            return toAppendTo.append(ByteSizes.format(Math.round(number)));
        }

        @Override
        public StringBuffer format(long number, StringBuffer toAppendTo, FieldPosition pos) {
            return toAppendTo.append(ByteSizes.format(number));
        }

        @Override
        public Number parse(String source, ParsePosition parsePosition) {
            return null;
        }
    }
}
