// A JVM that reports its own java.lang.management values, the JMX twins of what `inspect serve
// --names ...` exports from PerfData. Prints READY, then reads commands from standard input, one
// per line, and answers each with one line:
//   gc      System.gc() until the heap settles, then "OK"
//   report  one line of JSON: memory pools, heap/non-heap totals, collectors, threads, classes,
//           compilation, runtime identity and process CPU time; each collector with the pools'
//           usage after its last collection; the wall time of every `gc` command's System.gc()
// It exits when its standard input closes. Only java.lang.management (and the JDK's own
// com.sun.management for process CPU time): no library. Compiles with --release 8.
import java.lang.management.ClassLoadingMXBean;
import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryUsage;
import java.lang.management.OperatingSystemMXBean;
import java.lang.management.RuntimeMXBean;
import java.lang.management.ThreadMXBean;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.List;

public class MxReport {
    static volatile Object sink;
    // How long the `gc` commands' System.gc() calls took, all told: the collections they asked
    // for ran within that time.
    static long gcCallsNanos;

    public static void main(String[] args) throws Exception {
        // Some garbage and some live data so every pool has something in it.
        List<byte[]> live = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            live.add(new byte[16 * 1024]);
            sink = new byte[64 * 1024];
        }
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 0;
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(() -> {
                try {
                    Thread.sleep(Long.MAX_VALUE);
                } catch (InterruptedException e) {
                    // exit
                }
            }, "idle-" + i);
            t.setDaemon(i % 2 == 0);
            t.start();
        }
        System.out.println("READY");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            line = line.trim();
            if (line.equals("gc")) {
                long began = System.nanoTime();
                System.gc();
                System.gc();
                gcCallsNanos += System.nanoTime() - began;
                System.out.println("OK");
            } else if (line.equals("report")) {
                System.out.println(report());
            } else {
                System.out.println("ERROR unknown command " + line);
            }
            System.out.flush();
        }
        sink = live;
        System.exit(0); // the idle threads that are not daemons would keep it alive
    }

    static String q(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }

    static String usage(MemoryUsage u) {
        if (u == null) {
            return "null";
        }
        return "{\"init\":" + u.getInit() + ",\"used\":" + u.getUsed() + ",\"committed\":"
                + u.getCommitted() + ",\"max\":" + u.getMax() + "}";
    }

    static String report() {
        StringBuilder b = new StringBuilder("{");
        MemoryMXBean mem = ManagementFactory.getMemoryMXBean();
        b.append("\"heap\":").append(usage(mem.getHeapMemoryUsage()));
        b.append(",\"nonheap\":").append(usage(mem.getNonHeapMemoryUsage()));
        b.append(",\"pools\":[");
        String sep = "";
        for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
            b.append(sep).append("{\"name\":").append(q(p.getName()))
                    .append(",\"type\":").append(q(p.getType().name()))
                    .append(",\"usage\":").append(usage(p.getUsage()))
                    .append(",\"collection_usage\":").append(usage(p.getCollectionUsage()))
                    .append("}");
            sep = ",";
        }
        b.append("],\"collectors\":[");
        sep = "";
        for (GarbageCollectorMXBean g : ManagementFactory.getGarbageCollectorMXBeans()) {
            b.append(sep).append("{\"name\":").append(q(g.getName()))
                    .append(",\"count\":").append(g.getCollectionCount())
                    .append(",\"time_ms\":").append(g.getCollectionTime())
                    .append(",\"pools\":[");
            String s2 = "";
            for (String n : g.getMemoryPoolNames()) {
                b.append(s2).append(q(n));
                s2 = ",";
            }
            // The usage of every pool when the last collection ended (HotSpot's
            // GCMemoryManager::gc_end records all pools, non-heap ones included).
            b.append("]");
            com.sun.management.GcInfo last = g instanceof com.sun.management.GarbageCollectorMXBean
                    ? ((com.sun.management.GarbageCollectorMXBean) g).getLastGcInfo() : null;
            if (last != null) {
                b.append(",\"last_end_ms\":").append(last.getEndTime()).append(",\"after_last\":{");
                String s3 = "";
                for (java.util.Map.Entry<String, MemoryUsage> e : last.getMemoryUsageAfterGc().entrySet()) {
                    b.append(s3).append(q(e.getKey())).append(":").append(usage(e.getValue()));
                    s3 = ",";
                }
                b.append("}");
            }
            b.append("}");
            sep = ",";
        }
        ThreadMXBean t = ManagementFactory.getThreadMXBean();
        b.append("],\"threads\":{\"live\":").append(t.getThreadCount())
                .append(",\"daemon\":").append(t.getDaemonThreadCount())
                .append(",\"peak\":").append(t.getPeakThreadCount())
                .append(",\"started\":").append(t.getTotalStartedThreadCount()).append("}");
        ClassLoadingMXBean c = ManagementFactory.getClassLoadingMXBean();
        b.append(",\"classes\":{\"loaded\":").append(c.getLoadedClassCount())
                .append(",\"total_loaded\":").append(c.getTotalLoadedClassCount())
                .append(",\"unloaded\":").append(c.getUnloadedClassCount()).append("}");
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        b.append(",\"compilation\":");
        if (jit == null) {
            b.append("null");
        } else {
            b.append("{\"name\":").append(q(jit.getName())).append(",\"time_ms\":")
                    .append(jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : -1)
                    .append("}");
        }
        RuntimeMXBean rt = ManagementFactory.getRuntimeMXBean();
        b.append(",\"gc_calls_ms\":").append(gcCallsNanos / 1e6);
        b.append(",\"runtime\":{\"vm_name\":").append(q(rt.getVmName()))
                .append(",\"vm_vendor\":").append(q(rt.getVmVendor()))
                .append(",\"vm_version\":").append(q(rt.getVmVersion()))
                .append(",\"spec_version\":").append(q(rt.getSpecVersion()))
                .append(",\"java_version\":").append(q(System.getProperty("java.version")))
                .append(",\"java_vendor\":").append(q(System.getProperty("java.vendor")))
                .append(",\"runtime_name\":").append(q(System.getProperty("java.runtime.name")))
                .append(",\"runtime_version\":").append(q(System.getProperty("java.runtime.version")))
                .append(",\"start_time_ms\":").append(rt.getStartTime())
                .append(",\"uptime_ms\":").append(rt.getUptime()).append("}");
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        b.append(",\"os\":{\"processors\":").append(os.getAvailableProcessors());
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
            b.append(",\"process_cpu_ns\":")
                    .append(((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime());
        }
        if (os instanceof com.sun.management.UnixOperatingSystemMXBean) {
            com.sun.management.UnixOperatingSystemMXBean u = (com.sun.management.UnixOperatingSystemMXBean) os;
            b.append(",\"open_fds\":").append(u.getOpenFileDescriptorCount())
                    .append(",\"max_fds\":").append(u.getMaxFileDescriptorCount());
        }
        b.append("}}");
        return b.toString();
    }
}
