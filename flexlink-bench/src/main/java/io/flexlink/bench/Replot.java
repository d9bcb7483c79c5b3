package io.flexlink.bench;

import io.flexlink.DataType;
import io.flexlink.ReduceOp;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Draws the plot of a run from its {@code --json} file, for runs made where the JRE has no
 * {@code java.desktop} module (a jlinked runtime on a GPU host): {@code flexlink-perf --replot RUN.json
 * --plot RUN.png}.
 */
final class Replot {
    private Replot() {
    }

    @SuppressWarnings("unchecked")
    static void replot(Path json, Path png) throws IOException {
        Map<String, Object> doc = (Map<String, Object>) MiniJson.parse(Files.readString(json, StandardCharsets.UTF_8));
        List<String> aux = new ArrayList<>();
        for (Object p : (List<Object>) doc.get("aux_paths")) {
            aux.add((String) p);
        }
        // runs written before vs_basis existed compared busbw
        Row.Basis basis = Row.Basis.parse((String) doc.get("vs_basis"));
        List<Row> rows = new ArrayList<>();
        for (Object o : (List<Object>) doc.get("results")) {
            Map<String, Object> r = (Map<String, Object>) o;
            String op = (String) r.get("redop");
            Row row = new Row(num(r.get("size")).longValue(), num(r.get("count")).longValue(),
                    DataType.parse((String) r.get("type")), "none".equals(op) ? null : ReduceOp.parse(op),
                    num(r.get("root")).intValue());
            row.basis = basis;
            row.outOfPlace = run((Map<String, Object>) r.get("out_of_place"));
            row.inPlace = run((Map<String, Object>) r.get("in_place"));
            if (r.get("baseline") != null) {
                row.baseline = run((Map<String, Object>) r.get("baseline"));
            }
            Map<String, Object> shares = (Map<String, Object>) r.get("shares");
            row.shares = new double[aux.size()];
            for (int i = 0; i < aux.size(); i++) {
                Object v = shares == null ? null : shares.get(aux.get(i));
                row.shares[i] = v == null ? Double.NaN : num(v).doubleValue();
            }
            rows.add(row);
        }
        Map<String, Object> env = (Map<String, Object>) doc.get("environment");
        String title = doc.get("collective") + ", " + num(env.get("ranks")).intValue() + " ranks, "
                + env.get("backend") + " backend";
        PlotWriter.write(png, title, rows, aux);
    }

    private static Row.Run run(Map<String, Object> m) {
        Object wrong = m.get("nwrong");
        return new Row.Run(num(m.get("time")).doubleValue(), num(m.get("alg_bw")).doubleValue(),
                num(m.get("bus_bw")).doubleValue(), wrong == null ? -1 : num(wrong).longValue());
    }

    private static Number num(Object o) {
        return o == null ? Double.NaN : (Number) o;
    }
}
