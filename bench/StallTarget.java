// The JVM bench/bench.py measures: `threads` idle threads (first argument, default 100) plus one
// "spinner" thread that, during a measurement window, reads System.nanoTime() in a tight loop and
// records the longest gap between two consecutive reads. A gap longer than the loop's usual few
// tens of nanoseconds means the spinner did not run: it was descheduled, stopped by ptrace, or
// held at a safepoint. Outside a window the spinner is parked, so the JVM is idle while the
// benchmark times the tools against it.
//
// Protocol on stdin/stdout, one line each way:
//   "reset"  -> "ok"      a new window starts: statistics zeroed, the spinner is running when "ok" is printed
//   "report" -> "maxgap_ns=<n> over100us=<n> over1ms=<n> reads=<n> window_ns=<n> gaps=<s>:<len>,..."
//                         the window ends, the spinner parks, its statistics are printed; gaps lists
//                         every gap longer than 50 us (at most 4096): <s> is the System.nanoTime()
//                         (CLOCK_MONOTONIC on Linux) of the read before the gap, <len> its length in ns
//   "quit" or end of input: the JVM exits (so a benchmark that dies never leaves it behind).
// It prints "READY" once the threads run.
public class StallTarget {
    private static final Object LOCK = new Object();
    /** Window generation the spinner should run; bumped by "reset". */
    private static volatile long wanted = 0;
    /** Window generation the spinner is spinning in (0: none yet). */
    private static volatile long spinning = 0;
    /** Set to false to end the current window. */
    private static volatile boolean active = false;
    /** Window generation whose statistics are published below. */
    private static volatile long published = 0;
    private static volatile long maxGap, over100us, over1ms, reads, windowNs, gapCount;
    /** Gaps are listed from this length on, in nanoseconds. */
    private static final long LISTED_GAP_NS = 50_000L;
    private static final int MAX_LISTED = 4096;
    private static final long[] gapStart = new long[MAX_LISTED];
    private static final long[] gapLen = new long[MAX_LISTED];

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 100;
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(() -> {
                try {
                    Thread.sleep(Long.MAX_VALUE);
                } catch (InterruptedException e) {
                    // exit
                }
            }, "idle-" + i);
            t.setDaemon(true);
            t.start();
        }
        Thread spinner = new Thread(StallTarget::spin, "spinner");
        spinner.setDaemon(true);
        spinner.start();

        java.io.BufferedReader in =
                new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
        System.out.println("READY");
        System.out.flush();
        String line;
        while ((line = in.readLine()) != null) {
            line = line.trim();
            if (line.equals("reset")) {
                if (active) {
                    stopWindow();
                }
                long gen = wanted + 1;
                synchronized (LOCK) {
                    active = true;
                    wanted = gen;
                    LOCK.notifyAll();
                }
                while (spinning != gen) {
                    Thread.onSpinWait();
                }
                System.out.println("ok");
            } else if (line.equals("report")) {
                if (!active) {
                    System.out.println("error: no window (send reset first)");
                } else {
                    stopWindow();
                    StringBuilder b = new StringBuilder();
                    b.append("maxgap_ns=").append(maxGap).append(" over100us=").append(over100us)
                            .append(" over1ms=").append(over1ms).append(" reads=").append(reads)
                            .append(" window_ns=").append(windowNs).append(" gaps=");
                    for (int i = 0; i < gapCount; i++) {
                        if (i > 0) {
                            b.append(',');
                        }
                        b.append(gapStart[i]).append(':').append(gapLen[i]);
                    }
                    System.out.println(b);
                }
            } else if (line.equals("quit")) {
                break;
            } else {
                System.out.println("error: unknown command " + line);
            }
            System.out.flush();
        }
        System.exit(0);
    }

    private static void stopWindow() {
        long gen = wanted;
        active = false;
        while (published != gen) {
            Thread.onSpinWait();
        }
    }

    private static void spin() {
        long done = 0;
        while (true) {
            long gen;
            synchronized (LOCK) {
                while (wanted == done) {
                    try {
                        LOCK.wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                gen = wanted;
            }
            long start = System.nanoTime();
            long prev = start;
            long max = 0, c100 = 0, c1 = 0, n = 0;
            int listed = 0;
            spinning = gen;
            while (active) {
                long now = System.nanoTime();
                long gap = now - prev;
                if (gap > max) {
                    max = gap;
                }
                if (gap > LISTED_GAP_NS && listed < MAX_LISTED) {
                    gapStart[listed] = prev;
                    gapLen[listed] = gap;
                    listed++;
                }
                if (gap > 100_000L) {
                    c100++;
                    if (gap > 1_000_000L) {
                        c1++;
                    }
                }
                prev = now;
                n++;
            }
            maxGap = max;
            over100us = c100;
            over1ms = c1;
            reads = n;
            windowNs = prev - start;
            gapCount = listed;
            done = gen;
            published = gen;
        }
    }
}
