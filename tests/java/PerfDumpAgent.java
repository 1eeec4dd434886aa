// A Java agent that copies the VM's own PerfData region to a file: the reference for targets
// whose region no outside tool can read (-XX:+PerfDisableSharedMem has no hsperfdata file, so
// jcmd PerfCounter.print cannot see it). Loaded into a running JVM by LoadAgent through the attach
// API; the agent argument is the output file, written whole and then renamed into place.
//
// jdk.internal.perf.Perf.attach(0) returns a ByteBuffer over the VM's own region
// (src/hotspot/share/prims/perf.cpp); java.base does not export jdk.internal.perf, so the agent
// first opens it to its own module with Instrumentation.redefineModule.
import java.lang.instrument.Instrumentation;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Set;

public class PerfDumpAgent {
    public static void agentmain(String args, Instrumentation inst) throws Exception {
        Module base = Object.class.getModule();
        Module me = PerfDumpAgent.class.getModule();
        inst.redefineModule(base, Set.of(), Map.of("jdk.internal.perf", Set.of(me)),
                Map.of("jdk.internal.perf", Set.of(me)), Set.of(), Map.of());
        Class<?> perfClass = Class.forName("jdk.internal.perf.Perf");
        Object perf = perfClass.getMethod("getPerf").invoke(null);
        ByteBuffer region;
        try {
            // JDK 17+: attach(int lvmid).
            Method attach = perfClass.getMethod("attach", int.class);
            region = (ByteBuffer) attach.invoke(perf, 0);
        } catch (NoSuchMethodException e) {
            // JDK 11: attach(int lvmid, String mode).
            Method attach = perfClass.getMethod("attach", int.class, String.class);
            region = (ByteBuffer) attach.invoke(perf, 0, "r");
        }
        byte[] copy = new byte[region.capacity()];
        region.duplicate().position(0).get(copy);
        Path out = Paths.get(args);
        Path tmp = Paths.get(args + ".part");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE)) {
            ByteBuffer src = ByteBuffer.wrap(copy);
            while (src.hasRemaining()) {
                ch.write(src);
            }
        }
        Files.move(tmp, out, StandardCopyOption.ATOMIC_MOVE);
    }
}
