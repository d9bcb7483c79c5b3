package io.flexlink.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The facade test programs compile unchanged against bytedeco's nccl: only their import differs. */
class FacadeProgramCompileTest {
    static final List<Path> SOURCES = List.of(Path.of("src/test/java/io/flexlink/cuda/facade/NcclProgram.java"),
            Path.of("src/test/java/io/flexlink/cuda/facade/SplitProgram.java"),
            Path.of("src/test/java/io/flexlink/cuda/facade/PreMulSumProgram.java"),
            Path.of("src/test/java/io/flexlink/cuda/facade/LifecycleProgram.java"));
    static final String OURS = "import static io.flexlink.cuda.FlexNccl.*;";
    static final String THEIRS = "import static org.bytedeco.cuda.global.nccl.*;";

    @TempDir
    Path dir;

    @Test
    void compilesWithEitherImport() throws Exception {
        for (Path s : SOURCES) {
            compilesWithEitherImport(s);
        }
    }

    private void compilesWithEitherImport(Path sourceFile) throws Exception {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assumeTrue(javac != null && Files.exists(sourceFile), "needs a JDK and the module's sources");
        String source = Files.readString(sourceFile);
        String name = sourceFile.getFileName().toString();
        assertTrue(source.contains(OURS));
        assertEquals(1, source.split("FlexNccl", -1).length - 1 - countInComments(source),
                name + ": one FlexLink mention, the import");
        for (String variant : List.of(source, source.replace(OURS, THEIRS))) {
            Path pkg = Files.createDirectories(dir.resolve(name).resolve(variant == source ? "ours" : "theirs"));
            Path file = pkg.resolve(name);
            Files.writeString(file, variant);
            String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
            StringWriter out = new StringWriter();
            boolean ok = javac.getTask(out, null, null, List.of("-proc:none", "-classpath", cp, "-d",
                    pkg.resolve("classes").toString()), null,
                    javac.getStandardFileManager(null, null, null).getJavaFileObjects(file)).call();
            assertTrue(ok, name + ": " + (variant == source ? "FlexNccl" : "bytedeco") + " variant does not compile:\n"
                    + out);
        }
    }

    private static int countInComments(String source) {
        int n = 0;
        for (String line : source.split("\n")) {
            String t = line.strip();
            if ((t.startsWith("*") || t.startsWith("//") || t.startsWith("/*")) && t.contains("FlexNccl")) {
                n += t.split("FlexNccl", -1).length - 1;
            }
        }
        return n;
    }
}
