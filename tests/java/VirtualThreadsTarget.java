// Mounted virtual threads (issue 29 item 4; JDK 21+): "vt-spin" runs pure Java (mounted, no
// frame anchor: walked from its carrier's registers); "vt-pinned" sleeps inside synchronized
// (pinned to its carrier on JDK 21-23; unmounted from JDK 24, JEP 491); 100 "vt-sleep-N" sleep
// unmounted (in no Thread.print dump). Compiled by the JDK 17 javac of the tests, so the JDK 21
// API is called through reflection. Prints READY once every thread is started; exits when stdin
// closes.
import java.io.BufferedReader;
import java.io.InputStreamReader;

public class VirtualThreadsTarget {
    static volatile long sink;
    static final Object lock = new Object();

    /** Pure Java, no calls: its carrier, stopped, is running Java code. */
    static void spin() {
        long x = 0;
        while (true) {
            x = x * 31 + (x >>> 7) + 1;
            sink = x;
        }
    }

    static void pinned() {
        synchronized (lock) {
            sleepForever();
        }
    }

    static void sleepForever() {
        try {
            Thread.sleep(Long.MAX_VALUE);
        } catch (InterruptedException e) {
            // exit
        }
    }

    static Thread startVirtual(String name, Runnable r) throws Exception {
        Class<?> builder = Class.forName("java.lang.Thread$Builder");
        Object b = Thread.class.getMethod("ofVirtual").invoke(null);
        b = builder.getMethod("name", String.class).invoke(b, name);
        return (Thread) builder.getMethod("start", Runnable.class).invoke(b, r);
    }

    public static void main(String[] args) throws Exception {
        startVirtual("vt-spin", VirtualThreadsTarget::spin);
        startVirtual("vt-pinned", VirtualThreadsTarget::pinned);
        for (int i = 0; i < 100; i++) {
            startVirtual("vt-sleep-" + i, VirtualThreadsTarget::sleepForever);
        }
        Thread.sleep(500);
        System.out.println("READY");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        while (in.readLine() != null) {
            // wait for stdin to close
        }
        System.exit(0);
    }
}
