// A JVM that allocates hard, for `inspect top`'s tests: one thread allocates 8 KiB arrays at
// about the rate given as the first argument (MiB/s, default 200), keeping the last 2,000 of them
// alive so young collections have survivors to copy. Prints READY, and exits when its standard
// input closes (as Target does). With a second argument, a file: every 100 ms it writes
// "<epoch ms> <bytes this thread allocated>" there (com.sun.management.ThreadMXBean), the
// program's own account of its allocation.
import java.io.FileWriter;
import java.lang.management.ManagementFactory;

public class Alloc {
    static volatile boolean done;

    public static void main(String[] args) throws Exception {
        double mibPerSecond = args.length > 0 ? Double.parseDouble(args[0]) : 200;
        String report = args.length > 1 ? args[1] : null;
        Thread allocator = new Thread(() -> {
            com.sun.management.ThreadMXBean threads =
                    (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            long self = Thread.currentThread().getId();
            byte[][] ring = new byte[2000][];
            long start = System.nanoTime();
            long allocated = 0;
            long lastReport = 0;
            int i = 0;
            while (!done) {
                ring[i++ % ring.length] = new byte[8192];
                allocated += 8192;
                if (i % 128 == 0) {
                    // Ahead of the schedule: sleep until it catches up.
                    double due = allocated / (mibPerSecond * 1024 * 1024) * 1e9;
                    long ahead = (long) due - (System.nanoTime() - start);
                    if (ahead > 1_000_000) {
                        try {
                            Thread.sleep(ahead / 1_000_000);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                    long now = System.currentTimeMillis();
                    if (report != null && now - lastReport >= 100) {
                        lastReport = now;
                        try (FileWriter w = new FileWriter(report, true)) {
                            w.write(now + " " + threads.getThreadAllocatedBytes(self) + "\n");
                        } catch (Exception e) {
                            // the test reads what was written
                        }
                    }
                }
            }
        }, "allocator");
        allocator.setDaemon(true);
        allocator.start();
        System.out.println("READY");
        System.out.flush();
        while (System.in.read() != -1) {
            // wait for EOF
        }
        done = true;
    }
}
