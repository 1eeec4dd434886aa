// A JVM whose threads burn CPU in known proportions, for `inspect hot` and `inspect record`:
// "burner" runs 3 units of work in a() then 1 in b() (the same loop: 75% / 25% of its time), "looper" runs a C2-compiled
// counted loop (no safepoint poll inside) over and over, and `parked` threads (first argument,
// default 500) park forever. A second argument runs that many burners (default 1). Prints READY
// once all run; then, with -Dhot.report=true, a line "rounds N" every 100 ms (all burners'
// rounds so far: its throughput, for bench/bench_record.py); exits when its standard input
// closes.
import java.util.concurrent.locks.LockSupport;

public class HotTarget {
    static volatile long sink;
    static volatile long rounds;

    // a() does three units of work, b() one, each unit the same compiled `work` (the test keeps
    // it out of line: -XX:CompileCommand=dontinline,HotTarget::work), so their times are 3:1
    // whatever the JIT did to a() and b(). No call out of compiled code inside (a call such as
    // System.nanoTime's has no frame anchor for a walk from outside to start from).
    static long work(long x) {
        for (int i = 0; i < 1_000_000; i++) {
            x = x * 31 + i;
        }
        return x;
    }

    static long a(int units) {
        long x = 1;
        for (int u = 0; u < units; u++) {
            x = work(x);
        }
        return x;
    }

    static long b(int units) {
        long x = 2;
        for (int u = 0; u < units; u++) {
            x = work(x);
        }
        return x;
    }

    static long counted(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += (i * 31L) ^ s;
        }
        return s;
    }

    public static void main(String[] args) throws Exception {
        int parked = args.length > 0 ? Integer.parseInt(args[0]) : 500;
        int burners = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        java.util.concurrent.atomic.AtomicLong total = new java.util.concurrent.atomic.AtomicLong();
        for (int i = 0; i < burners; i++) {
            boolean first = i == 0;
            Thread burner = new Thread(() -> {
                while (true) {
                    sink += a(3);
                    sink += b(1);
                    if (first) {
                        rounds++;
                    }
                    total.incrementAndGet();
                }
            }, i == 0 ? "burner" : "burner-" + i);
            burner.setDaemon(true);
            burner.start();
        }
        Thread looper = new Thread(() -> {
            while (true) {
                sink += counted(200_000_000);
            }
        }, "looper");
        looper.setDaemon(true);
        looper.start();
        for (int i = 0; i < parked; i++) {
            Thread t = new Thread(LockSupport::park, "parked-" + i);
            t.setDaemon(true);
            t.start();
        }
        // Let C2 compile the loops: READY once the burner has run 200 rounds compiled-fast (a
        // round is about 4 ms compiled, far longer interpreted), or after a minute.
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (rounds < 200 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        Thread.sleep(1000);
        System.out.println("READY");
        System.out.flush();
        if (Boolean.getBoolean("hot.report")) {
            Thread report = new Thread(() -> {
                while (true) {
                    System.out.println("rounds " + total.get() + " " + System.nanoTime());
                    System.out.flush();
                    try {
                        Thread.sleep(100);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "report");
            report.setDaemon(true);
            report.start();
        }
        while (System.in.read() != -1) {
            // wait for EOF
        }
    }
}
