// Unmounted virtual threads (issue 29 item 4, `inspect threads --virtual`; JDK 21+): starts
// VTHREADS virtual threads (default 10,000). Most park on a latch that is never opened
// ("vt-park-N", started with Thread.ofVirtual: the root container's set); a tenth sleep
// ("vt-sleep-N"); a tenth wait in an executor's container (Executors.
// newVirtualThreadPerTaskExecutor: a registered container's set, "vt-exec-N"); PINNED of them
// ("vt-pinned-N") sleep inside synchronized (pinned to their carriers on JDK 21-23, unmounted
// from JDK 24, JEP 491). Compiled by the JDK 17 javac of the tests: the JDK 21 API is called
// through reflection. Prints READY once every thread has parked; exits when stdin closes.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

public class ManyVirtualThreads {
    static final CountDownLatch never = new CountDownLatch(1);
    static final Object[] locks = new Object[64];

    static void park(CountDownLatch started) {
        started.countDown();
        try {
            never.await();
        } catch (InterruptedException e) {
            // exit
        }
    }

    static void sleep(CountDownLatch started) {
        started.countDown();
        try {
            Thread.sleep(Long.MAX_VALUE);
        } catch (InterruptedException e) {
            // exit
        }
    }

    static void pinned(int i, CountDownLatch started) {
        synchronized (locks[i]) {
            sleep(started);
        }
    }

    public static void main(String[] args) throws Exception {
        int total = Integer.getInteger("vthreads", 10_000);
        int pinned = Integer.getInteger("pinned", 2);
        for (int i = 0; i < locks.length; i++) {
            locks[i] = new Object();
        }
        Class<?> builderClass = Class.forName("java.lang.Thread$Builder");
        Method ofVirtual = Thread.class.getMethod("ofVirtual");
        Method name = builderClass.getMethod("name", String.class);
        Method start = builderClass.getMethod("start", Runnable.class);
        ExecutorService exec = (ExecutorService) Executors.class
                .getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        // The pinned threads start last, one at a time, once every other thread has parked: a
        // pinned sleep holds its carrier without compensation (JDK 21-23), and JDK 21.0.8's
        // ForkJoinPool was seen (1 start in 14, 2 cores) to leave thousands of queued virtual
        // threads unstarted behind two pinned carriers while its other two workers idled.
        CountDownLatch started = new CountDownLatch(total - Math.min(pinned, total));
        for (int i = pinned; i < total; i++) {
            final int n = i;
            if (i % 10 == 1) {
                start.invoke(name.invoke(ofVirtual.invoke(null), "vt-sleep-" + i),
                        (Runnable) () -> sleep(started));
            } else if (i % 10 == 2) {
                exec.submit(() -> park(started));
            } else {
                start.invoke(name.invoke(ofVirtual.invoke(null), "vt-park-" + i),
                        (Runnable) () -> park(started));
            }
        }
        started.await();
        for (int i = 0; i < Math.min(pinned, total); i++) {
            final int n = i;
            CountDownLatch one = new CountDownLatch(1);
            start.invoke(name.invoke(ofVirtual.invoke(null), "vt-pinned-" + i),
                    (Runnable) () -> pinned(n, one));
            one.await();
        }
        Thread.sleep(300);
        System.out.println("READY");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        while (in.readLine() != null) {
            // wait for stdin to close
        }
        System.exit(0);
    }
}
