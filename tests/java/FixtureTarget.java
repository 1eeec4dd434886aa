// The JVM of the recorded thread-dump fixture (testdata/threads/, scripts/record-thread-fixture.sh;
// issue 39 item 5): a few platform threads in known places (a Java-level deadlock, an Object.wait
// inside two monitors, a sleep holding a monitor, a thread blocked on that monitor, a park) and a
// few virtual threads (one pinned in a synchronized sleep, three unmounted in sleeps). Small on
// purpose: the fixture holds only the pages a dump of it reads. Compiled by the JDK 17 javac of
// the tests, so the JDK 21 API is called through reflection. Prints READY once every thread has
// reached its place (after a full GC, so the heap is compact); exits when stdin closes.
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

public class FixtureTarget {
    static final Object outer = new Object();
    static final Object inner = new Object();
    static final Object deadA = new Object();
    static final Object deadB = new Object();
    static final Object held = new Object();
    static final Object pin = new Object();

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

    static void objectWait() {
        synchronized (outer) {
            synchronized (inner) {
                try {
                    inner.wait();
                } catch (InterruptedException e) {
                    // exit
                }
            }
        }
    }

    static void lockBoth(Object first, Object second, CountDownLatch both) {
        synchronized (first) {
            both.countDown();
            try {
                both.await();
            } catch (InterruptedException e) {
                return;
            }
            synchronized (second) {
                inner.hashCode();
            }
        }
    }

    static void sleepForever() {
        try {
            Thread.sleep(Long.MAX_VALUE);
        } catch (InterruptedException e) {
            // exit
        }
    }

    static void sleepHolding() {
        synchronized (held) {
            sleepForever();
        }
    }

    static void blockOnHeld() {
        synchronized (held) {
            inner.hashCode();
        }
    }

    static void parkForever() {
        while (true) {
            LockSupport.park(outer);
        }
    }

    static void pinned() {
        synchronized (pin) {
            sleepForever();
        }
    }

    static Thread startVirtual(String name, Runnable r) throws Exception {
        Class<?> builder = Class.forName("java.lang.Thread$Builder");
        Object b = Thread.class.getMethod("ofVirtual").invoke(null);
        b = builder.getMethod("name", String.class).invoke(b, name);
        return (Thread) builder.getMethod("start", Runnable.class).invoke(b, r);
    }

    public static void main(String[] args) throws Exception {
        Thread waiter = start("fx-object-wait", FixtureTarget::objectWait);
        CountDownLatch both = new CountDownLatch(2);
        Thread d1 = start("fx-deadlock-1", () -> lockBoth(deadA, deadB, both));
        Thread d2 = start("fx-deadlock-2", () -> lockBoth(deadB, deadA, both));
        Thread sleeper = start("fx-sleep-holding", FixtureTarget::sleepHolding);
        waitFor(sleeper, Thread.State.TIMED_WAITING);
        Thread blocked = start("fx-blocked", FixtureTarget::blockOnHeld);
        Thread parker = start("fx-park", FixtureTarget::parkForever);
        Thread pinned = startVirtual("vt-pinned", FixtureTarget::pinned);
        Thread[] sleeping = new Thread[3];
        for (int i = 0; i < sleeping.length; i++) {
            sleeping[i] = startVirtual("vt-sleep-" + i, FixtureTarget::sleepForever);
        }
        waitFor(waiter, Thread.State.WAITING);
        waitFor(d1, Thread.State.BLOCKED);
        waitFor(d2, Thread.State.BLOCKED);
        waitFor(blocked, Thread.State.BLOCKED);
        waitFor(parker, Thread.State.WAITING);
        waitFor(pinned, Thread.State.TIMED_WAITING);
        for (Thread t : sleeping) {
            waitFor(t, Thread.State.TIMED_WAITING);
        }
        System.gc();
        Thread.sleep(200);
        System.out.println("READY");
        System.out.flush();
        while (System.in.read() != -1) {
            // wait for EOF
        }
        System.exit(0);
    }
}
