package io.flexlink.bench;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import io.flexlink.DataType;
import io.flexlink.FlexLinkException;
import io.flexlink.Result;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Draws the plot of a run from its {@code --json} file, for runs made where the JRE has no
 * {@code java.desktop} module (a jlinked runtime on a GPU host): {@code flexlink-perf --replot RUN.json
 * --plot RUN.png}.
 */
final class Replot {
    private Replot() {
    }

    static void replot(Path json, Path png) throws IOException {
        JsonObject doc;
        try {
            doc = JsonParser.parseString(Files.readString(json, StandardCharsets.UTF_8)).getAsJsonObject();
        } catch (JsonParseException | IllegalStateException e) {
            throw new FlexLinkException(Result.INVALID_ARGUMENT, "--replot: " + json + " is not a flexlink-perf JSON "
                    + "report (" + e.getMessage() + ")");
        }
        List<String> aux = new ArrayList<>();
        for (JsonElement p : doc.getAsJsonArray("aux_paths")) {
            aux.add(p.getAsString());
        }
        // runs written before vs_basis existed compared busbw
        Row.Basis basis = Row.Basis.parse(text(doc.get("vs_basis")));
        List<Row> rows = new ArrayList<>();
        for (JsonElement e : doc.getAsJsonArray("results")) {
            JsonObject r = e.getAsJsonObject();
            String op = r.get("redop").getAsString();
            boolean noOp = "none".equals(op) || op.isEmpty(); // hypercube's redop is empty
            Row row = new Row(r.get("size").getAsLong(), r.get("count").getAsLong(),
                    DataType.parse(r.get("type").getAsString()), noOp ? null : PerfOp.parse(op),
                    r.get("root").getAsInt());
            if (noOp) {
                row.noOpName = op;
            }
            row.basis = basis;
            row.outOfPlace = run(r.getAsJsonObject("out_of_place"));
            row.inPlace = run(r.getAsJsonObject("in_place"));
            if (present(r.get("baseline"))) {
                row.baseline = run(r.getAsJsonObject("baseline"));
            }
            JsonObject shares = present(r.get("shares")) ? r.getAsJsonObject("shares") : null;
            row.shares = new double[aux.size()];
            for (int i = 0; i < aux.size(); i++) {
                row.shares[i] = shares == null ? Double.NaN : num(shares.get(aux.get(i)));
            }
            rows.add(row);
        }
        JsonObject env = doc.getAsJsonObject("environment");
        String title = doc.get("collective").getAsString() + ", " + env.get("ranks").getAsInt() + " ranks, "
                + env.get("backend").getAsString() + " backend";
        PlotWriter.write(png, title, rows, aux);
    }

    private static boolean present(JsonElement e) {
        return e != null && !e.isJsonNull();
    }

    private static String text(JsonElement e) {
        return present(e) ? e.getAsString() : null;
    }

    private static Row.Run run(JsonObject m) {
        JsonElement wrong = m.get("nwrong");
        return new Row.Run(num(m.get("time")), num(m.get("alg_bw")), num(m.get("bus_bw")),
                present(wrong) ? wrong.getAsLong() : -1);
    }

    private static double num(JsonElement e) {
        return present(e) ? e.getAsDouble() : Double.NaN;
    }
}
