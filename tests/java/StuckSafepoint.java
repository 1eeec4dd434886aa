// A JVM whose safepoint never completes (issue 28, "where jcmd fails"): thread "t-counted" runs
// nested counted int loops, compiled by C2 under -XX:-UseCountedLoopSafepoints, so it has no
// safepoint poll; "t-gc" asks for a safepoint (System.gc()) that then waits for it forever.
// Named threads parked in known places (sleep, park, Object.wait) are the ones compared with
// jcmd's dump taken before the safepoint began.
//
// Run with -XX:-TieredCompilation -Xbatch -XX:-UseCountedLoopSafepoints: the warm-up then
// returns only once C2 compiled counted() (no background compilation).
//
// Protocol: prints READY once counted() is compiled and the parked threads are in place; on the
// line "stick" on stdin starts t-counted, and 100 ms later t-gc, which prints "GC DONE" if the
// collection ever ends. Exits when stdin closes (if it can: a stuck VM cannot; tests kill it).
import java.util.concurrent.locks.LockSupport;

public class StuckSafepoint {
    static volatile long sink;
    static final Object monitor = new Object();

    /** Nested counted int loops: with n = Integer.MAX_VALUE they run for ages without a poll. */
    static long counted(int n) {
        long x = 0;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                x = x * 31 + (j ^ i);
            }
        }
        return x;
    }

    static Thread start(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    static void waitFor(Thread t, Thread.State want) throws InterruptedException {
        for (int i = 0; i < 2000 && t.getState() != want; i++) {
            Thread.sleep(5);
        }
        if (t.getState() != want) {
            throw new IllegalStateException(t.getName() + " never reached " + want);
        }
    }

    public static void main(String[] args) throws Exception {
        // Warm up: enough calls for C2 to compile counted() as a whole method.
        for (int k = 0; k < 30000; k++) {
            sink += counted(8);
        }
        Thread sleeper = start("t-sleep", () -> {
            try {
                Thread.sleep(Long.MAX_VALUE);
            } catch (InterruptedException e) {
                // exit
            }
        });
        Thread parker = start("t-park", () -> {
            while (true) {
                LockSupport.park(monitor);
            }
        });
        Thread waiter = start("t-object-wait", () -> {
            synchronized (monitor) {
                try {
                    monitor.wait();
                } catch (InterruptedException e) {
                    // exit
                }
            }
        });
        waitFor(sleeper, Thread.State.TIMED_WAITING);
        waitFor(parker, Thread.State.WAITING);
        waitFor(waiter, Thread.State.WAITING);
        Thread.sleep(200);
        System.out.println("READY");
        System.out.flush();
        java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.equals("stick")) {
                start("t-counted", () -> {
                    sink = counted(Integer.MAX_VALUE);
                });
                start("t-gc", () -> {
                    try {
                        Thread.sleep(100);
                    } catch (InterruptedException e) {
                        return;
                    }
                    System.gc();
                    System.out.println("GC DONE");
                    System.out.flush();
                });
            }
        }
        System.exit(0);
    }
}
